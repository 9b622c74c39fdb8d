// Package sie4test_test reads Kadens' SIE 4 files back with a reader of
// its own, written from the SIE format's description rather than from the
// writer: items are lines of a #LABEL and blank-separated fields, a field
// may be quoted (with \" inside), {} is an object list, a voucher's
// #TRANS items stand between a line of { and a line of }; the file is
// CP437; #KSUMMA's CRC-32 covers label names and field contents.
package sie4test_test

import (
	"bufio"
	"bytes"
	"hash/crc32"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"

	"github.com/kadens/kadens/internal/bookkeeping"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

type item struct {
	label  string
	fields []string
}

type sieFile struct {
	items    []item
	vouchers [][]item // the #TRANS items of each #VER
	checksum uint32   // computed by the reader
	stated   string   // the closing #KSUMMA's value
}

// fields splits a line after its label.
func fields(t *testing.T, s string) []string {
	var out []string
	for s = strings.TrimLeft(s, " \t"); s != ""; s = strings.TrimLeft(s, " \t") {
		switch s[0] {
		case '"':
			var b strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i == len(s) {
				t.Fatalf("unterminated quote in %q", s)
			}
			out, s = append(out, b.String()), s[i+1:]
		case '{':
			end := strings.IndexByte(s, '}')
			if end < 0 {
				t.Fatalf("unterminated list in %q", s)
			}
			out, s = append(out, s[1:end]), s[end+1:]
		default:
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			out, s = append(out, s[:end]), s[end:]
		}
	}
	return out
}

func read(t *testing.T, raw []byte) sieFile {
	t.Helper()
	text, err := charmap.CodePage437.NewDecoder().Bytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	var f sieFile
	sum := crc32.NewIEEE()
	enc := charmap.CodePage437.NewEncoder()
	summing, inVoucher := false, false
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch strings.TrimSpace(line) {
		case "{":
			inVoucher = true
			f.vouchers = append(f.vouchers, nil)
			continue
		case "}":
			inVoucher = false
			continue
		case "":
			continue
		}
		label, rest, _ := strings.Cut(line, " ")
		it := item{label: label, fields: fields(t, rest)}
		if label == "#KSUMMA" {
			if !summing {
				summing = true
				continue
			}
			f.stated = it.fields[0]
			summing = false
			continue
		}
		if summing {
			b, _ := enc.String(label)
			sum.Write([]byte(b))
			for _, v := range it.fields {
				b, _ := enc.String(v)
				sum.Write([]byte(b))
			}
		}
		if inVoucher {
			f.vouchers[len(f.vouchers)-1] = append(f.vouchers[len(f.vouchers)-1], it)
		} else {
			f.items = append(f.items, it)
		}
	}
	f.checksum = sum.Sum32()
	return f
}

func minor(t *testing.T, s string) int64 {
	t.Helper()
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	n, err := strconv.ParseInt(whole+(frac + "00")[:2], 10, 64)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	if neg {
		return -n
	}
	return n
}

// TestSIERoundTrip: a Swedish organization's year as SIE 4E and 4I, read
// back: the checksum the reader computes equals #KSUMMA, every voucher
// balances, the vouchers are the ledger's entries, and per account IB +
// the transactions = UB (balance accounts) or = RES (result accounts), equal
// to the ledger's balances; 4I carries no balances.
func TestSIERoundTrip(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		ctx := seed.Tenant(t, s, "sie", t0)
		sek, _ := money.LookupCurrency("SEK")
		org, err := s.CreateOrganization(ctx, store.Organization{Name: "Tidningshuset Åkersberga AB", OrganizationNumber: "556677-8899",
			Country: "SE", Currency: "SEK", TimeZone: "Europe/Stockholm"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		chart, _ := bookkeeping.Example("SE")
		if err := bookkeeping.SetChart(ctx, s, org.ID, chart, t0); err != nil {
			t.Fatal(err)
		}
		paper, _ := catalogdb.CreateProduct(ctx, s, catalog.Product{Name: "Tidning", Category: "print", VATRate: catalog.PercentOf(6), Active: true}, t0)
		pod, _ := catalogdb.CreateProduct(ctx, s, catalog.Product{Name: "Podd", Category: "digital", VATRate: catalog.PercentOf(25), Active: true}, t0)
		plan, _ := catalogdb.CreateBillingPlan(ctx, s, catalog.BillingPlan{Name: "Månad", IntervalUnit: period.Month, IntervalCount: 1, PaymentTermsDays: 14}, t0)
		tmpl, err := catalogdb.CreatePackage(ctx, s, catalog.TemplatePackage{Name: "Tidning+podd", Currency: "SEK", Price: catalog.NewAmount(29900, sek), Units: 1,
			PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: paper.ID}, {ProductID: pod.ID}}, BillingPlans: []string{plan.ID},
			AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		in, _ := catalogdb.PackageForMerge(ctx, s, tmpl.ID)
		pkg, err := catalog.Merge(in)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "Åsa Öberg", Country: "SE", Contacts: []store.Contact{}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		loc, _ := time.LoadLocation("Europe/Stockholm")
		for m := time.January; m <= time.March; m++ {
			start := time.Date(2027, m, 1, 0, 0, 0, 0, loc)
			if err := s.InTx(ctx, func(tx *store.Tx) error {
				p, err := engine.Begin(engine.NewSeries{SubscriberID: sub.ID, OrganizationID: org.ID, TimeZone: "Europe/Stockholm", Package: pkg, Start: start}, start)
				if err != nil {
					return err
				}
				if err := tx.InsertSubscription(ctx, p); err != nil {
					return err
				}
				return invoicing.IssuePeriods(ctx, tx, []store.NewPeriod{{Sub: p, At: start}})
			}); err != nil {
				t.Fatal(err)
			}
		}
		invs, _, _ := s.ListInvoices(ctx, store.DocumentFilter{}, store.Page{Limit: 10})
		if _, _, err := invoicing.RecordPayment(ctx, s, invoicing.NewPayment{PaymentDemandID: invs[0].PaymentDemandID, Status: store.PaymentSucceeded,
			Amount: invs[0].Gross.Minor, Currency: "SEK", PaidAt: time.Date(2027, 1, 20, 12, 0, 0, 0, loc), PaidAtGiven: true,
			Provider: "Autogiro", ProviderReference: "ag", Now: time.Date(2027, 1, 20, 12, 0, 0, 0, loc)}); err != nil {
			t.Fatal(err)
		}
		evs, _, _ := s.ListEvents(ctx, store.EventFilter{}, store.Page{Limit: 100})
		for _, e := range evs {
			if err := bookkeeping.Post(ctx, s, e); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := bookkeeping.Recognize(ctx, s, org.ID, "2027-02-15", t0); err != nil {
			t.Fatal(err)
		}
		entries, err := bookkeeping.Entries(ctx, s, org.ID, "2027-01-01", "2027-12-31")
		if err != nil {
			t.Fatal(err)
		}
		ledger := map[string]int64{}
		for _, e := range entries {
			for _, l := range e.Lines {
				ledger[l.Account] += l.Amount
			}
		}

		var buf bytes.Buffer
		k, err := bookkeeping.WriteSIE(ctx, s, org.ID, "2027-01-01", "2027-12-31", false, t0, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(buf.Bytes(), []byte("\r\n")) || bytes.Contains(buf.Bytes(), []byte("Å")) {
			t.Error("not CRLF CP437")
		}
		f := read(t, buf.Bytes())
		if f.stated != strconv.FormatUint(uint64(f.checksum), 10) || f.checksum != k {
			t.Errorf("#KSUMMA %s, the reader computes %d, the writer said %d", f.stated, f.checksum, k)
		}
		want := map[string][]string{"#FLAGGA": {"0"}, "#FORMAT": {"PC8"}, "#SIETYP": {"4"}, "#ORGNR": {"556677-8899"},
			"#RAR": {"0", "20270101", "20271231"}, "#FNAMN": {"Tidningshuset Åkersberga AB"}}
		ib, ub, res := map[string]int64{}, map[string]int64{}, map[string]int64{}
		for _, it := range f.items {
			if w, ok := want[it.label]; ok {
				if strings.Join(it.fields, "|") != strings.Join(w, "|") {
					t.Errorf("%s %v, want %v", it.label, it.fields, w)
				}
				delete(want, it.label)
			}
			switch it.label {
			case "#IB":
				ib[it.fields[1]] = minor(t, it.fields[2])
			case "#UB":
				ub[it.fields[1]] = minor(t, it.fields[2])
			case "#RES":
				res[it.fields[1]] = minor(t, it.fields[2])
			}
		}
		if len(want) != 0 {
			t.Errorf("missing %v", want)
		}
		if len(f.vouchers) != len(entries) {
			t.Fatalf("%d vouchers for %d entries", len(f.vouchers), len(entries))
		}
		trans := map[string]int64{}
		for i, v := range f.vouchers {
			var sum int64
			for _, tr := range v {
				a := minor(t, tr.fields[2])
				sum += a
				trans[tr.fields[0]] += a
			}
			if sum != 0 || len(v) != len(entries[i].Lines) {
				t.Errorf("voucher %d: sum %d, %d transactions", i, sum, len(v))
			}
		}
		for _, a := range chart.Accounts {
			got := res[a.Number]
			if _, ok := ub[a.Number]; ok {
				got = ub[a.Number]
				if ib[a.Number]+trans[a.Number] != ub[a.Number] {
					t.Errorf("%s: IB %d + transactions %d ≠ UB %d", a.Number, ib[a.Number], trans[a.Number], ub[a.Number])
				}
			} else if res[a.Number] != trans[a.Number] {
				t.Errorf("%s: RES %d ≠ transactions %d", a.Number, res[a.Number], trans[a.Number])
			}
			if got != ledger[a.Number] {
				t.Errorf("%s: file %d, ledger %d", a.Number, got, ledger[a.Number])
			}
		}

		buf.Reset()
		if _, err := bookkeeping.WriteSIE(ctx, s, org.ID, "2027-01-01", "2027-12-31", true, t0, &buf); err != nil {
			t.Fatal(err)
		}
		fi := read(t, buf.Bytes())
		if fi.stated != strconv.FormatUint(uint64(fi.checksum), 10) || len(fi.vouchers) != len(entries) {
			t.Errorf("4I: checksum %s/%d, %d vouchers", fi.stated, fi.checksum, len(fi.vouchers))
		}
		for _, it := range fi.items {
			if it.label == "#IB" || it.label == "#UB" || it.label == "#RES" {
				t.Errorf("4I carries %s", it.label)
			}
		}
	})
}
