package bookkeeping

import (
	"bufio"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// SAFTFileName is the Norwegian naming rule of a SAF-T Financial file:
// SAF-T Financial_<organization number>_<creation time>_<file>_<files>.xml.
// Kadens writes one file per export.
func SAFTFileName(orgNumber string, created time.Time) string {
	return fmt.Sprintf("SAF-T Financial_%s_%s_1_1.xml", orgNumber, created.Format("20060102150405"))
}

// SAFTTotals are what an export wrote: entries and the sums of debits and
// credits in minor units (the ledger's, for the check that they agree).
type SAFTTotals struct {
	Entries       int64
	Debit, Credit int64
}

// WriteSAFT streams an organization's SAF-T Financial file (v1.30) for
// the accounting dates [from, to] to w: the header with its selection
// criteria, the master files (accounts with grouping codes and balances,
// customers with their balance accounts, the tax table with standard tax
// codes) and the general ledger entries, read row by row so memory stays
// flat. Amounts are in the organization's currency; entries in another
// currency are refused (Kadens has no exchange rates).
func WriteSAFT(ctx context.Context, st *store.Store, orgID, from, to string, created time.Time, out io.Writer) (SAFTTotals, error) {
	var tot SAFTTotals
	for _, d := range []string{from, to} {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			return tot, fmt.Errorf("bookkeeping: SAF-T period %q is not a date", d)
		}
	}
	org, err := st.Organization(ctx, orgID)
	if err != nil {
		return tot, err
	}
	c, err := GetChart(ctx, st, orgID)
	if err != nil {
		return tot, err
	}
	cur, ok := money.LookupCurrency(org.Currency)
	if !ok {
		return tot, fmt.Errorf("bookkeeping: currency %q", org.Currency)
	}
	amt := func(minor int64) string { return money.FormatMinor(minor, cur) }
	tenant, _ := tenancy.From(ctx)
	w := bufio.NewWriterSize(out, 64<<10)
	el := func(name, value string) {
		w.WriteString("<" + name + ">")
		_ = xml.EscapeText(w, []byte(value))
		w.WriteString("</" + name + ">")
	}
	// Totals first: the header of GeneralLedgerEntries precedes the entries.
	if err := st.Reader().QueryRow(ctx, `SELECT COUNT(DISTINCT e.id), COALESCE(SUM(CASE WHEN l.amount > 0 THEN l.amount ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN l.amount < 0 THEN -l.amount ELSE 0 END), 0)
		FROM books_entries e JOIN books_lines l ON l.entry_id = e.id
		WHERE e.tenant_id = $1 AND e.organization_id = $2 AND e.accounting_date >= $3 AND e.accounting_date <= $4`,
		tenant, orgID, from, to).Scan(&tot.Entries, &tot.Debit, &tot.Credit); err != nil {
		return tot, fmt.Errorf("bookkeeping: SAF-T totals: %w", err)
	}
	balances, err := accountBalances(ctx, st, tenant, orgID, from, to)
	if err != nil {
		return tot, err
	}
	orgNumber := org.OrganizationNumber
	if orgNumber == "" {
		orgNumber = "0"
	}
	w.WriteString(xml.Header + `<AuditFile xmlns="urn:StandardAuditFile-Taxation-Financial:NO">`)
	w.WriteString("<Header>")
	el("AuditFileVersion", "1.30")
	el("AuditFileCountry", org.Country)
	el("AuditFileDateCreated", created.Format(time.DateOnly))
	el("SoftwareCompanyName", "Kadens")
	el("SoftwareID", "Kadens")
	el("SoftwareVersion", "1")
	w.WriteString("<Company>")
	el("RegistrationNumber", orgNumber)
	el("Name", org.Name)
	// The contact person is required; Kadens keeps none per organization
	// yet, so the organization stands for it.
	w.WriteString("<Contact><ContactPerson>")
	el("FirstName", "Regnskap")
	el("LastName", truncate(org.Name, 70))
	w.WriteString("</ContactPerson></Contact></Company>")
	el("DefaultCurrencyCode", org.Currency)
	// The selection is by dates (the schema's other choice is by periods).
	w.WriteString("<SelectionCriteria>")
	el("SelectionStartDate", from)
	el("SelectionEndDate", to)
	w.WriteString("</SelectionCriteria>")
	el("TaxAccountingBasis", "A")
	w.WriteString("</Header><MasterFiles><GeneralLedgerAccounts>")
	for _, a := range c.Accounts {
		b := balances[a.Number]
		w.WriteString("<Account>")
		el("AccountID", a.Number)
		el("AccountDescription", a.Name)
		el("GroupingCategory", a.GroupingCategory)
		el("GroupingCode", a.GroupingCode)
		el("AccountType", "GL")
		if b.opening >= 0 {
			el("OpeningDebitBalance", amt(b.opening))
		} else {
			el("OpeningCreditBalance", amt(-b.opening))
		}
		if b.closing >= 0 {
			el("ClosingDebitBalance", amt(b.closing))
		} else {
			el("ClosingCreditBalance", amt(-b.closing))
		}
		w.WriteString("</Account>")
	}
	w.WriteString("</GeneralLedgerAccounts>")
	if err := writeCustomers(ctx, st, tenant, orgID, from, to, c.ReceivableAccount, w, el, amt); err != nil {
		return tot, err
	}
	w.WriteString("<TaxTable><TaxTableEntry>")
	el("TaxType", "MVA")
	el("Description", "Merverdiavgift")
	for _, v := range c.VATCodes {
		w.WriteString("<TaxCodeDetails>")
		el("TaxCode", v.TaxCode)
		el("TaxPercentage", normRate(v.Rate))
		el("Country", org.Country)
		el("StandardTaxCode", v.TaxCode)
		el("BaseRate", "100")
		w.WriteString("</TaxCodeDetails>")
	}
	w.WriteString("</TaxTableEntry></TaxTable></MasterFiles>")
	w.WriteString("<GeneralLedgerEntries>")
	el("NumberOfEntries", strconv.FormatInt(tot.Entries, 10))
	el("TotalDebit", amt(tot.Debit))
	el("TotalCredit", amt(tot.Credit))
	journal := ""
	err = eachEntry(ctx, st, tenant, orgID, from, to, func(e Entry) error {
		if e.Journal != journal {
			if journal != "" {
				w.WriteString("</Journal>")
			}
			journal = e.Journal
			w.WriteString("<Journal>")
			el("JournalID", e.Journal)
			el("Description", journalDescription[e.Journal])
			el("Type", "GL")
		}
		d, _ := time.Parse(time.DateOnly, e.Date)
		w.WriteString("<Transaction>")
		el("TransactionID", e.Journal+"-"+strconv.FormatInt(e.Number, 10))
		el("Period", strconv.Itoa(int(d.Month())))
		el("PeriodYear", strconv.Itoa(d.Year()))
		el("TransactionDate", e.Date)
		el("SourceID", "kadens")
		el("Description", truncate(e.Description+noteSuffix(e.Note), 256))
		el("SystemEntryDate", e.PostedAt.UTC().Format(time.DateOnly))
		el("GLPostingDate", e.Date)
		for i, l := range e.Lines {
			if l.Currency != org.Currency {
				return fmt.Errorf("bookkeeping: SAF-T: entry %s-%d is in %s, the organization keeps books in %s", e.Journal, e.Number, l.Currency, org.Currency)
			}
			w.WriteString("<Line>")
			el("RecordID", strconv.Itoa(i+1))
			el("AccountID", l.Account)
			el("SourceDocumentID", truncate(strings.ReplaceAll(e.SourceID, "-", ""), 35))
			if l.CustomerID != "" {
				el("CustomerID", strings.ReplaceAll(l.CustomerID, "-", ""))
			}
			el("Description", truncate(e.Description, 256))
			kind := "DebitAmount"
			a := l.Amount
			if a < 0 {
				kind, a = "CreditAmount", -a
			}
			w.WriteString("<" + kind + ">")
			el("Amount", amt(a))
			w.WriteString("</" + kind + ">")
			if l.TaxCode != "" {
				w.WriteString("<TaxInformation>")
				el("TaxType", "MVA")
				el("TaxCode", l.TaxCode)
				el("TaxPercentage", l.VATRate)
				if l.Amount >= 0 {
					w.WriteString("<DebitTaxAmount>")
				} else {
					w.WriteString("<CreditTaxAmount>")
				}
				el("Amount", amt(a))
				if l.Amount >= 0 {
					w.WriteString("</DebitTaxAmount>")
				} else {
					w.WriteString("</CreditTaxAmount>")
				}
				w.WriteString("</TaxInformation>")
			}
			w.WriteString("</Line>")
		}
		w.WriteString("</Transaction>")
		return nil
	})
	if err != nil {
		return tot, err
	}
	if journal != "" {
		w.WriteString("</Journal>")
	}
	w.WriteString("</GeneralLedgerEntries></AuditFile>\n")
	return tot, w.Flush()
}

var journalDescription = map[string]string{JournalSales: "Sales: invoices and credit notes", JournalBank: "Bank: payments received",
	JournalRecognition: "Revenue recognition"}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

type balance struct{ opening, closing int64 }

func accountBalances(ctx context.Context, st *store.Store, tenant, orgID, from, to string) (map[string]balance, error) {
	rows, err := st.Reader().Query(ctx, `SELECT l.account,
		COALESCE(SUM(CASE WHEN e.accounting_date < $3 THEN l.amount ELSE 0 END), 0), COALESCE(SUM(l.amount), 0)
		FROM books_entries e JOIN books_lines l ON l.entry_id = e.id
		WHERE e.tenant_id = $1 AND e.organization_id = $2 AND e.accounting_date <= $4 GROUP BY l.account`, tenant, orgID, from, to)
	if err != nil {
		return nil, fmt.Errorf("bookkeeping: balances: %w", err)
	}
	defer rows.Close()
	out := map[string]balance{}
	for rows.Next() {
		var a string
		var b balance
		if err := rows.Scan(&a, &b.opening, &b.closing); err != nil {
			return nil, err
		}
		out[a] = b
	}
	return out, rows.Err()
}

func writeCustomers(ctx context.Context, st *store.Store, tenant, orgID, from, to, receivable string, w *bufio.Writer,
	el func(string, string), amt func(int64) string) error {
	rows, err := st.Reader().Query(ctx, `SELECT l.customer_id, COALESCE(MAX(s.name), ''),
		COALESCE(SUM(CASE WHEN e.accounting_date < $3 THEN l.amount ELSE 0 END), 0), COALESCE(SUM(l.amount), 0)
		FROM books_entries e JOIN books_lines l ON l.entry_id = e.id
		LEFT JOIN subscribers s ON s.tenant_id = e.tenant_id AND CAST(s.id AS TEXT) = l.customer_id
		WHERE e.tenant_id = $1 AND e.organization_id = $2 AND e.accounting_date <= $4 AND l.account = $5 AND l.customer_id <> ''
		GROUP BY l.customer_id ORDER BY l.customer_id`, tenant, orgID, from, to, receivable)
	if err != nil {
		return fmt.Errorf("bookkeeping: customers: %w", err)
	}
	defer rows.Close()
	open := false
	for rows.Next() {
		var id, name string
		var b balance
		if err := rows.Scan(&id, &name, &b.opening, &b.closing); err != nil {
			return err
		}
		if !open {
			w.WriteString("<Customers>")
			open = true
		}
		if name == "" {
			name = id
		}
		w.WriteString("<Customer>")
		el("Name", truncate(name, 256))
		el("CustomerID", strings.ReplaceAll(id, "-", ""))
		w.WriteString("<BalanceAccount>")
		el("AccountID", receivable)
		if b.opening >= 0 {
			el("OpeningDebitBalance", amt(b.opening))
		} else {
			el("OpeningCreditBalance", amt(-b.opening))
		}
		if b.closing >= 0 {
			el("ClosingDebitBalance", amt(b.closing))
		} else {
			el("ClosingCreditBalance", amt(-b.closing))
		}
		w.WriteString("</BalanceAccount></Customer>")
	}
	if open {
		w.WriteString("</Customers>")
	}
	return rows.Err()
}

// eachEntry calls fn for each entry of the period in journal and number
// order, reading row by row (an entry's lines at a time in memory).
func eachEntry(ctx context.Context, st *store.Store, tenant, orgID, from, to string, fn func(Entry) error) error {
	rows, err := st.Reader().Query(ctx, `SELECT e.id, e.journal, e.number, e.accounting_date, e.source_kind, e.source_id,
		e.description, e.note, e.posted_at, l.account, l.amount, l.currency, l.vat_rate, l.tax_code, l.product_id, l.customer_id
		FROM books_entries e JOIN books_lines l ON l.entry_id = e.id
		WHERE e.tenant_id = $1 AND e.organization_id = $2 AND e.accounting_date >= $3 AND e.accounting_date <= $4
		ORDER BY e.journal, e.number, l.line_no`, tenant, orgID, from, to)
	if err != nil {
		return fmt.Errorf("bookkeeping: entries: %w", err)
	}
	defer rows.Close()
	var cur Entry
	for rows.Next() {
		var e Entry
		var l Line
		var postedAt time.Time
		posted := store.AnyTime{T: &postedAt}
		if err := rows.Scan(&e.ID, &e.Journal, &e.Number, &e.Date, &e.SourceKind, &e.SourceID, &e.Description, &e.Note, &posted,
			&l.Account, &l.Amount, &l.Currency, &l.VATRate, &l.TaxCode, &l.ProductID, &l.CustomerID); err != nil {
			return err
		}
		if e.ID != cur.ID {
			if cur.ID != "" {
				if err := fn(cur); err != nil {
					return err
				}
			}
			e.OrganizationID, e.PostedAt = orgID, postedAt
			cur = e
		}
		cur.Lines = append(cur.Lines, l)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if cur.ID != "" {
		return fn(cur)
	}
	return nil
}
