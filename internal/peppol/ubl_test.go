package peppol_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/peppol/peppoltest"
	"github.com/kadens/kadens/internal/store"
)

var update = flag.Bool("update", false, "rewrite the golden UBL files")

var oslo = mustZone("Europe/Oslo")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func nok(minor int64) catalog.Amount {
	return catalog.NewAmount(minor, money.Currency{Code: "NOK", Digits: 2})
}
func dkk(minor int64) catalog.Amount {
	return catalog.NewAmount(minor, money.Currency{Code: "DKK", Digits: 2})
}

// norwegianInvoice is a Norwegian publisher's monthly invoice to a
// Norwegian company: a zero-rated newspaper line and a digital service at
// 25 %, prices including VAT.
func norwegianInvoice() store.Invoice {
	start := time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC) // 1 November, Oslo
	end := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)   // 1 December, Oslo
	prod1, prod2 := "0190a3c2-0000-7000-8000-000000000001", "0190a3c2-0000-7000-8000-000000000002"
	return store.Invoice{
		ID: "0190a3c2-0000-7000-8000-0000000000aa", InvoiceNumber: 123, Currency: "NOK", PricesIncludeVAT: true,
		IssueDate: "2026-11-01", DueDate: "2026-11-15", PeriodStart: &start, PeriodEnd: &end,
		Seller: store.Seller{Name: "Fjordposten AS", OrganizationNumber: "123456785", Country: "NO",
			Address:       store.Address{Line1: "Kaigata 1", PostalCode: "5003", City: "Bergen", Country: "NO"},
			BankAccount:   store.BankAccount{AccountNumber: "15030123457", IBAN: "NO8315030123457", BIC: "DNBANOKK"},
			VATRegistered: true, BusinessRegister: true},
		Buyer: store.Buyer{SubscriberNumber: 4711, Name: "Kunde Eksempel AS & Sønn",
			Address: store.Address{Line1: "Storgata 10", PostalCode: "0155", City: "Oslo", Country: "NO"}, Country: "NO",
			InvoiceContact: &store.Contact{Name: "Kari Nordmann", Email: "faktura@kunde.example"}},
		Lines: []billing.Line{
			{LineNumber: 1, Kind: billing.LineProduct, ProductID: &prod1, Description: "Fjordposten papir og digital, månedlig",
				PeriodStart: &start, PeriodEnd: &end, Quantity: 1, UnitPrice: nok(39900), Discount: nok(0),
				VATRate: catalog.PercentOf(0), Net: nok(39900), VAT: nok(0), Gross: nok(39900)},
			{LineNumber: 2, Kind: billing.LineProduct, ProductID: &prod2, Description: "Lydavis (digital tjeneste)",
				PeriodStart: &start, PeriodEnd: &end, Quantity: 3, UnitPrice: nok(3333), Discount: nok(0),
				VATRate: catalog.PercentOf(25), Net: nok(8000), VAT: nok(2000), Gross: nok(10000)},
		},
		Net: nok(47900), VAT: nok(2000), Gross: nok(49900), KID: "000422026112",
	}
}

// norwegianCreditNote credits half of the digital line of
// norwegianInvoice.
func norwegianCreditNote() store.CreditNote {
	inv := norwegianInvoice()
	start := time.Date(2026, 11, 15, 23, 0, 0, 0, time.UTC)
	return store.CreditNote{ID: "0190a3c2-0000-7000-8000-0000000000cc", CreditNoteNumber: 7, InvoiceID: inv.ID,
		InvoiceNumber: inv.InvoiceNumber, Currency: "NOK", Reason: "Cancellation", IssueDate: "2026-11-16",
		Lines: []billing.CreditLine{{LineNumber: 1, InvoiceLineNumber: 2, Description: "Lydavis (digital tjeneste)",
			PeriodStart: &start, PeriodEnd: inv.PeriodEnd, VATRate: catalog.PercentOf(25), Net: nok(4000), VAT: nok(1000), Gross: nok(5000)}},
		Net: nok(4000), VAT: nok(1000), Gross: nok(5000)}
}

// danishInvoice is a Danish seller's invoice to a Danish company (CVR),
// net prices, 25 % VAT, paid by SEPA credit transfer.
func danishInvoice() store.Invoice {
	cph := mustZone("Europe/Copenhagen")
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, cph)
	end := time.Date(2027, 11, 1, 0, 0, 0, 0, cph)
	prod := "0190a3c2-0000-7000-8000-000000000003"
	charge := "0190a3c2-0000-7000-8000-000000000004"
	return store.Invoice{
		ID: "0190a3c2-0000-7000-8000-0000000000dd", InvoiceNumber: 9001, Currency: "DKK",
		IssueDate: "2026-10-18", DueDate: "2026-11-01", PeriodStart: &start, PeriodEnd: &end,
		Seller: store.Seller{Name: "Nyhedsbrevet ApS", OrganizationNumber: "13585628", Country: "DK",
			Address:       store.Address{Line1: "Vesterbrogade 2", PostalCode: "1620", City: "København V", Country: "DK"},
			BankAccount:   store.BankAccount{IBAN: "DK5000400440116243", BIC: "DABADKKK"},
			VATRegistered: true},
		Buyer: store.Buyer{SubscriberNumber: 17, Name: "Kommune Eksempel", Email: "einvoice@kommune.example",
			Address: store.Address{Line1: "Rådhuspladsen 1", PostalCode: "1550", City: "København", Country: "DK"}, Country: "DK"},
		Lines: []billing.Line{
			{LineNumber: 1, Kind: billing.LineProduct, ProductID: &prod, Description: "Fagblad, årsabonnement, 2 brugere",
				PeriodStart: &start, PeriodEnd: &end, Quantity: 2, UnitPrice: dkk(120000), Discount: dkk(0),
				VATRate: catalog.PercentOf(25), Net: dkk(240000), VAT: dkk(60000), Gross: dkk(300000)},
			{LineNumber: 2, Kind: billing.LineCharge, AccountItemID: &charge, Description: "Ekstra forsendelse",
				Quantity: 1, UnitPrice: dkk(3999), Discount: dkk(0),
				VATRate: catalog.PercentOf(25), Net: dkk(3999), VAT: dkk(1000), Gross: dkk(4999)},
		},
		Net: dkk(243999), VAT: dkk(61000), Gross: dkk(304999), KID: "000900170",
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", name, got)
	}
}

// goldenCases generate the documents of testdata/golden.
func goldenCases() []struct {
	name string
	gen  func() ([]byte, error)
} {
	no := norwegianInvoice()
	buyerNO := peppol.ParticipantID{Scheme: peppol.SchemeNorwayOrg, Value: "987654325"}
	return []struct {
		name string
		gen  func() ([]byte, error)
	}{
		{"no-invoice.xml", func() ([]byte, error) { return peppol.Invoice(no, peppol.Options{Buyer: buyerNO, Location: oslo}) }},
		{"no-creditnote.xml", func() ([]byte, error) {
			return peppol.CreditNote(norwegianCreditNote(), no, peppol.Options{Buyer: buyerNO, Location: oslo})
		}},
		{"dk-invoice.xml", func() ([]byte, error) {
			return peppol.Invoice(danishInvoice(), peppol.Options{Buyer: peppol.ParticipantID{Scheme: peppol.SchemeCVR, Value: "13585628"},
				Location: mustZone("Europe/Copenhagen")})
		}},
	}
}

func TestGoldenUBL(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.gen()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, got)
			peppoltest.ValidateUBL(t, tc.name, got)
		})
	}
}

// ublTotals reads back what the rules check: the totals and subtotals.
type ublTotals struct {
	TaxAmount string `xml:"TaxTotal>TaxAmount"`
	Subtotals []struct {
		Taxable  string `xml:"TaxableAmount"`
		Tax      string `xml:"TaxAmount"`
		Category string `xml:"TaxCategory>ID"`
		Percent  string `xml:"TaxCategory>Percent"`
	} `xml:"TaxTotal>TaxSubtotal"`
	LineExtension string `xml:"LegalMonetaryTotal>LineExtensionAmount"`
	TaxInclusive  string `xml:"LegalMonetaryTotal>TaxInclusiveAmount"`
	Rounding      string `xml:"LegalMonetaryTotal>PayableRoundingAmount"`
	Payable       string `xml:"LegalMonetaryTotal>PayableAmount"`
	PaymentCode   string `xml:"PaymentMeans>PaymentMeansCode"`
	PaymentID     string `xml:"PaymentMeans>PaymentID"`
	Account       string `xml:"PaymentMeans>PayeeFinancialAccount>ID"`
	Endpoints     []struct {
		Scheme string `xml:"schemeID,attr"`
		Value  string `xml:",chardata"`
	} `xml:"AccountingSupplierParty>Party>EndpointID"`
}

// roundedPerLineInvoice is an invoice of three lines at 25 % whose VAT
// was rounded per line.
func roundedPerLineInvoice() ([]byte, error) {
	inv := norwegianInvoice()
	inv.PricesIncludeVAT = false
	inv.Lines = nil
	var net, vat int64
	for i := range 3 {
		// 0.02 net → 0.005 VAT, rounded per line to 0.01.
		inv.Lines = append(inv.Lines, billing.Line{LineNumber: i + 1, Kind: billing.LineCharge, Description: "Gebyr",
			Quantity: 1, UnitPrice: nok(2), Discount: nok(0), VATRate: catalog.PercentOf(25), Net: nok(2), VAT: nok(1), Gross: nok(3)})
		net, vat = net+2, vat+1
	}
	inv.Net, inv.VAT, inv.Gross = nok(net), nok(vat), nok(net+vat)
	return peppol.Invoice(inv, peppol.Options{Buyer: peppol.ParticipantID{Scheme: peppol.SchemeNorwayOrg, Value: "987654325"}, Location: oslo})
}

// TestVATPerCategoryRoundedOnce: three lines at 25 % whose VAT was
// rounded per line (3 × 0.25 of 0.01 … ) sum differently from VAT on their
// summed net; the subtotal is computed once and the difference is the
// rounding amount, so the payable amount stays the invoice's gross.
func TestVATPerCategoryRoundedOnce(t *testing.T) {
	doc, err := roundedPerLineInvoice()
	if err != nil {
		t.Fatal(err)
	}
	var got ublTotals
	if err := xml.Unmarshal(doc, &got); err != nil {
		t.Fatal(err)
	}
	// 0.06 × 25 % = 0.015 → 0.02 once, not 0.03 from the lines.
	if got.TaxAmount != "0.02" || len(got.Subtotals) != 1 || got.Subtotals[0].Tax != "0.02" || got.Subtotals[0].Taxable != "0.06" {
		t.Errorf("tax %s, subtotals %+v; want 0.02 on 0.06", got.TaxAmount, got.Subtotals)
	}
	if got.TaxInclusive != "0.08" || got.Rounding != "0.01" || got.Payable != "0.09" {
		t.Errorf("inclusive %s rounding %s payable %s; want 0.08, 0.01, 0.09", got.TaxInclusive, got.Rounding, got.Payable)
	}
	peppoltest.ValidateUBL(t, "rounding.xml", doc)
}

// categoryCases are one-line invoices at each VAT rate, from a seller
// registered for VAT or not.
var categoryCases = []struct {
	rate       int64
	registered bool
	want       string
	percent    string
	err        bool
}{
	{25, true, peppol.CategoryStandard, "25", false},
	{15, true, peppol.CategoryStandard, "15", false},
	{0, true, peppol.CategoryZeroRated, "0", false},
	{0, false, peppol.CategoryOutside, "", false},
	{25, false, "", "", true},
}

// categoryInvoice is norwegianInvoice's first line alone at rate.
func categoryInvoice(rate int64, registered bool) ([]byte, error) {
	inv := norwegianInvoice()
	inv.Seller.VATRegistered = registered
	l := inv.Lines[0]
	l.VATRate = catalog.PercentOf(rate)
	l.VAT = nok(money.VATFromNet(l.Net.Minor, l.VATRate.Decimal()))
	l.Gross = nok(l.Net.Minor + l.VAT.Minor)
	inv.Lines = []billing.Line{l}
	inv.Net, inv.VAT, inv.Gross = l.Net, l.VAT, l.Gross
	return peppol.Invoice(inv, peppol.Options{Buyer: peppol.ParticipantID{Scheme: "0192", Value: "987654325"}, Location: oslo})
}

func TestCategories(t *testing.T) {
	for _, tc := range categoryCases {
		doc, err := categoryInvoice(tc.rate, tc.registered)
		if tc.err {
			if !errors.Is(err, peppol.ErrNotRepresentable) {
				t.Errorf("rate %d registered %v: err %v, want peppol.ErrNotRepresentable", tc.rate, tc.registered, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Category string `xml:"InvoiceLine>Item>ClassifiedTaxCategory>ID"`
			Percent  string `xml:"InvoiceLine>Item>ClassifiedTaxCategory>Percent"`
			Reason   string `xml:"TaxTotal>TaxSubtotal>TaxCategory>TaxExemptionReason"`
		}
		if err := xml.Unmarshal(doc, &got); err != nil {
			t.Fatal(err)
		}
		if got.Category != tc.want || got.Percent != tc.percent {
			t.Errorf("rate %d registered %v: %s %q; want %s %q", tc.rate, tc.registered, got.Category, got.Percent, tc.want, tc.percent)
		}
		if got.Category == peppol.CategoryOutside && (got.Reason == "" || bytes.Contains(doc, []byte("MVA<"))) {
			t.Errorf("O needs an exemption reason (BR-O-10) and no seller VAT id (BR-O-02):\n%s", doc)
		}
		peppoltest.ValidateUBL(t, "category.xml", doc)
	}
}

func TestPaymentMeans(t *testing.T) {
	no := norwegianInvoice()
	doc, err := peppol.Invoice(no, peppol.Options{Buyer: peppol.ParticipantID{Scheme: peppol.SchemeNorwayOrg, Value: "987654325"}, Location: oslo})
	if err != nil {
		t.Fatal(err)
	}
	var got ublTotals
	if err := xml.Unmarshal(doc, &got); err != nil {
		t.Fatal(err)
	}
	if got.PaymentCode != "30" || got.PaymentID != no.KID || got.Account != "15030123457" {
		t.Errorf("Norwegian payment means %s %s %s; want 30, the KID, the account number", got.PaymentCode, got.PaymentID, got.Account)
	}
	if len(got.Endpoints) != 1 || got.Endpoints[0].Scheme != "0192" || got.Endpoints[0].Value != "123456785" {
		t.Errorf("seller endpoint %+v", got.Endpoints)
	}
	doc, err = peppol.Invoice(danishInvoice(), peppol.Options{Buyer: peppol.ParticipantID{Scheme: peppol.SchemeCVR, Value: "13585628"}})
	if err != nil {
		t.Fatal(err)
	}
	got = ublTotals{}
	if err := xml.Unmarshal(doc, &got); err != nil {
		t.Fatal(err)
	}
	if got.PaymentCode != "58" || got.Account != "DK5000400440116243" {
		t.Errorf("Danish payment means %s %s; want 58 to the IBAN (DK-R-005 forbids 30)", got.PaymentCode, got.Account)
	}
}

func TestNotRepresentable(t *testing.T) {
	inv := norwegianInvoice()
	inv.Seller.Country = "FI"
	if _, err := peppol.Invoice(inv, peppol.Options{}); !errors.Is(err, peppol.ErrNotRepresentable) {
		t.Errorf("Finnish seller: %v, want peppol.ErrNotRepresentable", err)
	}
	inv = norwegianInvoice()
	inv.Seller.VATRegistered = false
	if _, err := peppol.Invoice(inv, peppol.Options{}); !errors.Is(err, peppol.ErrNotRepresentable) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("VAT from an unregistered seller: %v, want peppol.ErrNotRepresentable naming line 2", err)
	}
}

// escapedInvoice has markup in a line's description.
func escapedInvoice() ([]byte, error) {
	inv := norwegianInvoice()
	inv.Lines[0].Description = `<b>"Avis" & co</b>`
	return peppol.Invoice(inv, peppol.Options{Buyer: peppol.ParticipantID{Scheme: peppol.SchemeNorwayOrg, Value: "987654325"}, Location: oslo})
}

// TestInvoiceEscapes: text from merchants and subscribers is escaped.
func TestInvoiceEscapes(t *testing.T) {
	doc, err := escapedInvoice()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("&lt;b&gt;&#34;Avis&#34; &amp; co&lt;/b&gt;")) {
		t.Errorf("description not escaped:\n%s", doc)
	}
	peppoltest.ValidateUBL(t, "escape.xml", doc)
}

// TestReferenceSamplesValidate: the schema check accepts known-good BIS 3
// documents (samples that pass the official rules), so a failure of ours
// is ours, and rejects one with an element out of order.
func TestReferenceSamplesValidate(t *testing.T) {
	files, _ := filepath.Glob("testdata/reference/*.xml")
	if len(files) != 2 {
		t.Fatalf("reference samples: %v", files)
	}
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		peppoltest.ValidateUBL(t, filepath.Base(f), doc)
		if strings.Contains(f, "creditnote") {
			// A document-level DueDate is Invoice-only.
			bad := strings.Replace(string(doc), "<cbc:CreditNoteTypeCode>", "<cbc:DueDate>2026-11-30</cbc:DueDate><cbc:CreditNoteTypeCode>", 1)
			switch err := peppoltest.CheckUBL([]byte(bad)); {
			case errors.Is(err, peppoltest.ErrNoXmllint), errors.Is(err, peppoltest.ErrNoStandards):
				// ValidateUBL above said why it skipped.
			case err == nil:
				t.Errorf("a credit note with a DueDate passed the schema check")
			}
		}
	}
}
