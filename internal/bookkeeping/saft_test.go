package bookkeeping_test

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/bookkeeping"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/standardstest"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestSAFT: the SAF-T Financial file of a quarter with invoices, a
// payment, a credit note and recognition runs validates against the
// Norwegian v1.30 XSD (xmllint), its tax codes are standard tax codes and
// its accounts' grouping codes are in the næringsspesifikasjon code list,
// and its totals are the ledger's.
func TestSAFT(t *testing.T) {
	xsd := standardstest.Path(t, "saf-t/Norwegian_SAF-T_Financial_Schema_v_1.30.xsd")
	taxCodes := codeList(t, standardstest.Path(t, "saf-t/Standard_Tax_Codes.csv"), 0)
	grouping := codeList(t, standardstest.Path(t, "saf-t/naeringsspesifikasjon.csv"), 0, 3)
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("KADENS_TEST_REQUIRE_XMLLINT") == "1" {
			t.Fatal("xmllint is required (KADENS_TEST_REQUIRE_XMLLINT=1) but not found")
		}
		t.Skip("skipped: xmllint not found (apt-get install libxml2-utils)")
	}
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBooks(t, s, "books-saft")
		ids := b.issue(t, s, b.pkg, local(2027, 1, 5), local(2027, 1, 5), local(2027, 2, 1))
		ids = append(ids, b.issue(t, s, b.yearly, local(2027, 1, 20), local(2027, 2, 1))...)
		inv, _ := s.Invoice(b.ctx, ids[0])
		if _, _, err := invoicing.RecordPayment(b.ctx, s, invoicing.NewPayment{PaymentDemandID: inv.PaymentDemandID, Status: store.PaymentSucceeded,
			Amount: inv.Gross.Minor, Currency: "NOK", PaidAt: local(2027, 1, 25), PaidAtGiven: true, Provider: "Invoice", ProviderReference: "p1",
			Now: local(2027, 1, 25)}); err != nil {
			t.Fatal(err)
		}
		if _, err := invoicing.CreditInvoice(b.ctx, s, ids[1], "Goodwill", local(2027, 2, 10), func(inv store.Invoice, _ map[int]int64) ([]billing.CreditRequest, error) {
			return []billing.CreditRequest{{Line: inv.Lines[1].LineNumber, Gross: 5000}}, nil
		}); err != nil {
			t.Fatal(err)
		}
		postAll(t, s, b.ctx)
		for _, d := range []string{"2027-01-31", "2027-02-28", "2027-03-31"} {
			if _, err := bookkeeping.Recognize(b.ctx, s, b.org, d, t0); err != nil {
				t.Fatal(err)
			}
		}
		checkBooks(t, s, b)
		if _, err := s.UpdateOrganization(b.ctx, mustOrg(t, s, b), t0); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		created := time.Date(2027, 4, 2, 10, 30, 0, 0, time.UTC)
		tot, err := bookkeeping.WriteSAFT(b.ctx, s, b.org, "2027-01-01", "2027-03-31", created, &buf)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, "-")
		cmd.Stdin = bytes.NewReader(buf.Bytes())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("not valid SAF-T Financial 1.30: %v\n%s\n%s", err, out, buf.String()[:min(4000, buf.Len())])
		}
		var doc struct {
			Accounts []struct {
				Category string `xml:"GroupingCategory"`
				Code     string `xml:"GroupingCode"`
			} `xml:"MasterFiles>GeneralLedgerAccounts>Account"`
			TaxCodes []string `xml:"MasterFiles>TaxTable>TaxTableEntry>TaxCodeDetails>StandardTaxCode"`
			Entries  int64    `xml:"GeneralLedgerEntries>NumberOfEntries"`
			Debit    string   `xml:"GeneralLedgerEntries>TotalDebit"`
			Credit   string   `xml:"GeneralLedgerEntries>TotalCredit"`
			Lines    []struct {
				Debit  string `xml:"DebitAmount>Amount"`
				Credit string `xml:"CreditAmount>Amount"`
			} `xml:"GeneralLedgerEntries>Journal>Transaction>Line"`
		}
		if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		for _, a := range doc.Accounts {
			if !grouping[a.Category+";"+a.Code] {
				t.Errorf("grouping %s %s is not in naeringsspesifikasjon.csv", a.Category, a.Code)
			}
		}
		for _, c := range doc.TaxCodes {
			if !taxCodes[c] {
				t.Errorf("tax code %s is not a standard tax code", c)
			}
		}
		// The file's totals are the ledger's, and its lines add up to them.
		entries, err := bookkeeping.Entries(b.ctx, s, b.org, "2027-01-01", "2027-03-31")
		if err != nil {
			t.Fatal(err)
		}
		var debit, credit int64
		for _, e := range entries {
			for _, l := range e.Lines {
				if l.Amount > 0 {
					debit += l.Amount
				} else {
					credit -= l.Amount
				}
			}
		}
		if tot.Entries != int64(len(entries)) || doc.Entries != tot.Entries || tot.Debit != debit || tot.Credit != credit || debit != credit {
			t.Errorf("totals %+v, file %d entries; ledger %d entries, debit %d credit %d", tot, doc.Entries, len(entries), debit, credit)
		}
		var lineDebit, lineCredit int64
		for _, l := range doc.Lines {
			lineDebit += minor(t, l.Debit)
			lineCredit += minor(t, l.Credit)
		}
		if minor(t, doc.Debit) != debit || minor(t, doc.Credit) != credit || lineDebit != debit || lineCredit != credit {
			t.Errorf("file totals %s/%s, lines %d/%d; ledger %d/%d", doc.Debit, doc.Credit, lineDebit, lineCredit, debit, credit)
		}
		if name := bookkeeping.SAFTFileName("923609016", created); name != "SAF-T Financial_923609016_20270402103000_1_1.xml" {
			t.Errorf("file name %q", name)
		}
	})
}

func mustOrg(t *testing.T, s *store.Store, b *books) store.Organization {
	t.Helper()
	o, err := s.Organization(b.ctx, b.org)
	if err != nil {
		t.Fatal(err)
	}
	o.OrganizationNumber = "923609016"
	return o
}

func minor(t *testing.T, s string) int64 {
	t.Helper()
	if s == "" {
		return 0
	}
	whole, frac, _ := strings.Cut(s, ".")
	var n int64
	for _, r := range whole + (frac + "00")[:2] {
		n = n*10 + int64(r-'0')
	}
	return n
}

// codeList reads a semicolon-separated code list into the set of its
// columns' values joined by ";".
func codeList(t *testing.T, path string, cols ...int) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))))
	r.Comma, r.FieldsPerRecord, r.LazyQuotes = ';', -1, true
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, rec := range recs[1:] {
		var parts []string
		for _, c := range cols {
			if c < len(rec) {
				parts = append(parts, rec[c])
			}
		}
		out[strings.Join(parts, ";")] = true
	}
	return out
}
