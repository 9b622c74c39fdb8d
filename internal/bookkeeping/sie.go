package bookkeeping

import (
	"bufio"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/encoding/charmap"

	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// SIE voucher series of the journals.
var sieSeries = map[string]string{JournalSales: "A", JournalBank: "B", JournalRecognition: "C"}

// WriteSIE writes an organization's SIE 4 file of the financial year
// [from, to] to out: type 4E (export, with opening and closing balances
// and results) or, with imports, 4I (the vouchers only, for import into
// another system). The file is CP437 (#FORMAT PC8) with CRLF line ends,
// and ends with #KSUMMA: CRC-32 (IEEE) over the encoded bytes of every
// item's label and field contents, without the separating blanks, the
// quotes around fields, the braces and the line ends, from the opening
// #KSUMMA to the closing one. It returns the checksum.
func WriteSIE(ctx context.Context, st *store.Store, orgID, from, to string, imports bool, created time.Time, out io.Writer) (uint32, error) {
	for _, d := range []string{from, to} {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			return 0, fmt.Errorf("bookkeeping: SIE year %q is not a date", d)
		}
	}
	org, err := st.Organization(ctx, orgID)
	if err != nil {
		return 0, err
	}
	c, err := GetChart(ctx, st, orgID)
	if err != nil {
		return 0, err
	}
	cur, ok := money.LookupCurrency(org.Currency)
	if !ok {
		return 0, fmt.Errorf("bookkeeping: currency %q", org.Currency)
	}
	tenant, _ := tenancy.From(ctx)
	bw := bufio.NewWriterSize(out, 64<<10)
	enc := charmap.CodePage437.NewEncoder()
	sum := crc32.NewIEEE()
	summing := false
	var werr error
	// item writes one line: label and fields; text fields are quoted.
	item := func(label string, fields ...sieField) {
		if werr != nil {
			return
		}
		var line strings.Builder
		line.WriteString(label)
		if summing {
			b, _ := enc.String(label)
			sum.Write([]byte(b))
		}
		for _, f := range fields {
			line.WriteByte(' ')
			switch {
			case f.list:
				line.WriteString("{}")
			case f.quoted:
				line.WriteString(`"` + strings.ReplaceAll(f.v, `"`, `\"`) + `"`)
			default:
				line.WriteString(f.v)
			}
			if summing {
				b, err := enc.String(f.v)
				if err != nil {
					werr = fmt.Errorf("bookkeeping: SIE: %q is not CP437: %w", f.v, err)
					return
				}
				sum.Write([]byte(b))
			}
		}
		b, err := enc.String(line.String())
		if err != nil {
			werr = fmt.Errorf("bookkeeping: SIE: %q is not CP437: %w", line.String(), err)
			return
		}
		bw.WriteString(b + "\r\n")
	}
	amount := func(minor int64) sieField { return sieField{v: money.FormatMinor(minor, cur)} }
	raw := func(s string) sieField { return sieField{v: s} }
	text := func(s string) sieField { return sieField{v: s, quoted: true} }
	date := func(d string) sieField { return sieField{v: strings.ReplaceAll(d, "-", "")} }

	item("#FLAGGA", raw("0"))
	item("#KSUMMA")
	summing = true
	item("#PROGRAM", text("Kadens"), text("1"))
	item("#FORMAT", raw("PC8"))
	item("#GEN", raw(created.Format("20060102")))
	item("#SIETYP", raw("4"))
	item("#FNAMN", text(org.Name))
	if org.OrganizationNumber != "" {
		item("#ORGNR", raw(org.OrganizationNumber))
	}
	item("#RAR", raw("0"), date(from), date(to))
	item("#VALUTA", raw(org.Currency))
	for _, a := range c.Accounts {
		item("#KONTO", raw(a.Number), text(a.Name))
		item("#KTYP", raw(a.Number), raw(sieType[a.Type]))
	}
	if !imports {
		balances, err := accountBalances(ctx, st, tenant, orgID, from, to)
		if err != nil {
			return 0, err
		}
		for _, a := range c.Accounts {
			b := balances[a.Number]
			switch a.Type {
			case Revenue, Expense:
				item("#RES", raw("0"), raw(a.Number), amount(b.closing-b.opening))
			default:
				item("#IB", raw("0"), raw(a.Number), amount(b.opening))
				item("#UB", raw("0"), raw(a.Number), amount(b.closing))
			}
		}
	}
	err = eachEntry(ctx, st, tenant, orgID, from, to, func(e Entry) error {
		item("#VER", text(sieSeries[e.Journal]), text(strconv.FormatInt(e.Number, 10)), date(e.Date), text(truncate(e.Description+noteSuffix(e.Note), 200)))
		bw.WriteString("{\r\n")
		for _, l := range e.Lines {
			if l.Currency != org.Currency {
				return fmt.Errorf("bookkeeping: SIE: entry %s-%d is in %s, the organization keeps books in %s", e.Journal, e.Number, l.Currency, org.Currency)
			}
			item("#TRANS", raw(l.Account), sieField{list: true}, amount(l.Amount))
		}
		bw.WriteString("}\r\n")
		return werr
	})
	if err != nil {
		return 0, err
	}
	summing = false
	if werr != nil {
		return 0, werr
	}
	k := sum.Sum32()
	item("#KSUMMA", raw(strconv.FormatUint(uint64(k), 10)))
	return k, bw.Flush()
}

type sieField struct {
	v            string
	quoted, list bool
}

// sieType is an account's #KTYP: T tillgång, S skuld (and equity), I
// intäkt, K kostnad.
var sieType = map[string]string{Asset: "T", Liability: "S", Equity: "S", Revenue: "I", Expense: "K"}
