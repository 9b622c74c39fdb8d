package invoicedoc_test

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/invoicedoc"
	"github.com/kadens/kadens/internal/invoicedoc/pdftext"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
)

var oslo, _ = time.LoadLocation("Europe/Oslo")

func nok(minor int64) catalog.Amount {
	c, _ := money.LookupCurrency("NOK")
	return catalog.NewAmount(minor, c)
}

func pct(s string) catalog.Percent {
	p, err := catalog.ParsePercentText(s)
	if err != nil {
		panic(err)
	}
	return p
}

// sample is an invoice with a hostile seller name, Norwegian letters, two
// VAT rates and amounts above a thousand.
func sample() store.Invoice {
	start := time.Date(2027, 2, 1, 0, 0, 0, 0, oslo).UTC()
	end := time.Date(2027, 3, 1, 0, 0, 0, 0, oslo).UTC()
	return store.Invoice{
		ID: "0195f0a0-0000-7000-8000-000000000001", InvoiceNumber: 1042, Currency: "NOK", PricesIncludeVAT: true,
		Status: billing.InvoiceOverdue, IssuedAt: time.Date(2027, 1, 18, 12, 0, 0, 0, time.UTC),
		IssueDate: "2027-01-18", DueDate: "2027-02-01", PeriodStart: &start, PeriodEnd: &end,
		Seller: store.Seller{Name: `Blåbær & Søn <script>alert(1)</script>`, OrganizationNumber: "923609016", Country: "NO",
			LogoURL: "https://cdn.example.com/logo.png"},
		Buyer: store.Buyer{Name: "Kari Nordmann", SubscriberNumber: 7, Email: "kari@example.no",
			Address:        store.Address{Line1: "Storgata 1", PostalCode: "0155", City: "Oslo"},
			InvoiceContact: &store.Contact{Role: store.ContactInvoice, Name: "Ola Økonomi", Email: "faktura@example.no"}},
		Lines: []billing.Line{
			{LineNumber: 1, Description: "Nordavis Digital – årsabonnement", PeriodStart: &start, PeriodEnd: &end, Quantity: 1,
				UnitPrice: nok(123450), Discount: nok(0), VATRate: pct("0"), Net: nok(123450), VAT: nok(0), Gross: nok(123450)},
			{LineNumber: 2, Description: "Magasin", PeriodStart: &start, PeriodEnd: &end, Quantity: 2,
				UnitPrice: nok(4900), Discount: nok(980), VATRate: pct("12.5"), Net: nok(7840), VAT: nok(980), Gross: nok(8820)},
		},
		VATTotals: []billing.VATTotal{
			{VATRate: pct("12.5"), Net: nok(7840), VAT: nok(980), Gross: nok(8820)},
			{VATRate: pct("0"), Net: nok(123450), VAT: nok(0), Gross: nok(123450)},
		},
		Net: nok(131290), VAT: nok(980), Gross: nok(132270), KID: billing.KID(1042, billing.KIDMod11),
	}
}

func TestFormatAmount(t *testing.T) {
	nokC, _ := money.LookupCurrency("NOK")
	isk, _ := money.LookupCurrency("ISK")
	kwd, _ := money.LookupCurrency("KWD")
	for _, tc := range []struct {
		minor int64
		c     money.Currency
		lang  string
		want  string
	}{
		{123450, nokC, "en", "1,234.50"},
		{123450, nokC, "nb", "1\u00a0234,50"},
		{-123450, nokC, "en", "-1,234.50"},
		{5, nokC, "en", "0.05"},
		{99999, nokC, "nb", "999,99"},
		{123456789012, nokC, "en", "1,234,567,890.12"},
		{1234567, isk, "en", "1,234,567"},
		{1234567, isk, "nb", "1\u00a0234\u00a0567"},
		{1234567, kwd, "en", "1,234.567"},
		{0, nokC, "nb", "0,00"},
	} {
		if got := invoicedoc.FormatAmount(tc.minor, tc.c, tc.lang); got != tc.want {
			t.Errorf("FormatAmount(%d, %s, %s) = %q, want %q", tc.minor, tc.c.Code, tc.lang, got, tc.want)
		}
	}
}

func renderHTML(t *testing.T, inv store.Invoice, o invoicedoc.Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := invoicedoc.HTML(&b, inv, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHTML(t *testing.T) {
	inv := sample()
	page := renderHTML(t, inv, invoicedoc.Options{Location: oslo})
	for _, want := range []string{
		`<html lang="en">`,
		`<dd class="invoice-number">1042</dd>`,
		`<dd class="due-date">2027-02-01</dd>`,
		`<dd class="issue-date">2027-01-18</dd>`,
		`<div class="kid">` + inv.KID + `</div>`,
		`<img class="logo" src="https://cdn.example.com/logo.png"`,
		// Escaped, never markup.
		`Blåbær &amp; Søn &lt;script&gt;alert(1)&lt;/script&gt;`,
		"Nordavis Digital – årsabonnement",
		`<div class="period">2027-02-01 – 2027-02-28</div>`,
		// Line: quantity, unit price, discount, rate, net, VAT, gross.
		`<td class="num">2</td>`, `<td class="num">49.00</td>`, `<td class="num">9.80</td>`, `<td class="num">12.5%</td>`,
		// VAT summary per rate, highest first.
		`<tr><td class="num">12.5%</td><td class="num">78.40</td><td class="num">9.80</td><td class="num">88.20</td></tr>`,
		`<tr><td class="num">0%</td><td class="num">1,234.50</td><td class="num">0.00</td><td class="num">1,234.50</td></tr>`,
		`<td class="num">1,312.90</td>`, `<div class="amount">NOK 1,322.70</div>`,
		`<span class="status overdue">Overdue</span>`,
		"Kari Nordmann", "Storgata 1", "0155 Oslo", "Customer number 7", "Ola Økonomi", "faktura@example.no",
		"Organization number 923609016", "Unit prices and discounts include VAT.",
		"@media print", "size: A4",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Fatal("the seller name became a script element")
	}
	if strings.Index(page, "12.5%</td><td") > strings.Index(page, ">0%</td><td") {
		t.Error("VAT summary is not in the stored order (highest rate first)")
	}
}

func TestHTMLNorwegian(t *testing.T) {
	page := renderHTML(t, sample(), invoicedoc.Options{Lang: invoicedoc.Norwegian, Location: oslo})
	for _, want := range []string{
		`<html lang="nb">`, "<h1>Faktura</h1>", `<dd class="due-date">01.02.2027</dd>`, "Forfallsdato", "MVA-spesifikasjon",
		`<td class="num">1` + "\u00a0" + `234,50</td>`, `<td class="num">12,5` + "\u00a0" + `%</td>`, "Forfalt",
		"01.02.2027 – 28.02.2027", "Å betale",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("Norwegian HTML lacks %q", want)
		}
	}
	if err := invoicedoc.HTML(io.Discard, sample(), invoicedoc.Options{Lang: "de"}); err == nil {
		t.Fatal("unknown language rendered")
	}
}

// TestHTMLLogoURLIsSanitized: a logo URL that is not http(s) (the API
// refuses them, but a document must not trust its input) is neutralised.
func TestHTMLLogoURLIsSanitized(t *testing.T) {
	inv := sample()
	inv.Seller.LogoURL = `javascript:alert(1)`
	page := renderHTML(t, inv, invoicedoc.Options{})
	if strings.Contains(page, "javascript:") {
		t.Fatal("javascript: URL in the page")
	}
	inv.Seller.LogoURL = `https://x.example/a.png" onerror="alert(1)`
	if page := renderHTML(t, inv, invoicedoc.Options{}); strings.Contains(page, `" onerror="`) {
		t.Fatal("the logo URL broke out of its attribute")
	}
}

func TestPDF(t *testing.T) {
	inv := sample()
	var b bytes.Buffer
	if err := invoicedoc.PDF(&b, inv, invoicedoc.Options{Location: oslo}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("%PDF-")) {
		t.Fatalf("not a PDF: %.20q", b.Bytes())
	}
	text := PDFText(t, b.Bytes())
	for _, want := range []string{
		inv.KID, "Invoice", "1042", "2027-02-01", "Blåbær & Søn <script>alert(1)</script>", "Nordavis Digital – årsabonnement",
		"1,234.50", "88.20", "NOK 1,322.70", "Ola Økonomi", "Overdue", "2027-02-01 – 2027-02-28", "12.5%",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("PDF text lacks %q", want)
		}
	}
	var again bytes.Buffer
	if err := invoicedoc.PDF(&again, inv, invoicedoc.Options{Location: oslo}); err != nil || !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Errorf("rendering the same invoice twice gave different PDFs (%v)", err)
	}
}

// TestPDFManyLines: a long invoice continues on further pages.
func TestPDFManyLines(t *testing.T) {
	inv := sample()
	for i := range 80 {
		l := inv.Lines[1]
		l.Description = "Tillegg " + strconv.Itoa(i+1)
		inv.Lines = append(inv.Lines, l)
	}
	var b bytes.Buffer
	if err := invoicedoc.PDF(&b, inv, invoicedoc.Options{Lang: invoicedoc.Norwegian}); err != nil {
		t.Fatal(err)
	}
	text := PDFText(t, b.Bytes())
	for _, want := range []string{"Tillegg 80", "Side 3", inv.KID, "Å betale"} {
		if !strings.Contains(text, want) {
			t.Errorf("PDF text lacks %q", want)
		}
	}
}

// PDFText extracts the text of a rendered PDF.
func PDFText(t *testing.T, pdf []byte) string {
	t.Helper()
	text, err := pdftext.Text(pdf)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// payable is sample() from a seller with everything a payer needs: a
// Norwegian AS registered for VAT, with an address and a bank account,
// billing a buyer in Sweden.
func payable() store.Invoice {
	inv := sample()
	inv.Seller = store.Seller{Name: "Nordavis AS", OrganizationNumber: "923609016", Country: "NO",
		Address:       store.Address{Line1: "Akersgata 55", PostalCode: "0180", City: "Oslo", Country: "NO"},
		BankAccount:   store.BankAccount{AccountNumber: "86011117947", IBAN: "NO9386011117947", BIC: "DNBANOKK"},
		VATRegistered: true, BusinessRegister: true}
	inv.Buyer.Address = store.Address{Line1: "Drottninggatan 1", PostalCode: "111 51", City: "Stockholm", Country: "SE"}
	return inv
}

func TestPayableInvoice(t *testing.T) {
	inv := payable()
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{invoicedoc.Norwegian, []string{"Organisasjonsnummer 923609016 MVA", "Foretaksregisteret", "Akersgata 55", "0180 Oslo", "Norge",
			"Drottninggatan 1", "111 51 Stockholm", "Sverige", "Kontonummer", "8601.11.17947", "IBAN NO93 8601 1117 947", "BIC DNBANOKK", inv.KID}},
		{invoicedoc.English, []string{"Organization number 923609016 MVA", "Foretaksregisteret", "Akersgata 55", "0180 Oslo", "Norway",
			"Sweden", "Account number", "8601.11.17947", "IBAN NO93 8601 1117 947", "BIC DNBANOKK", inv.KID}},
	} {
		page := renderHTML(t, inv, invoicedoc.Options{Lang: tc.lang, Location: oslo})
		var b bytes.Buffer
		if err := invoicedoc.PDF(&b, inv, invoicedoc.Options{Lang: tc.lang, Location: oslo}); err != nil {
			t.Fatal(err)
		}
		text := PDFText(t, b.Bytes())
		for _, want := range tc.want {
			if !strings.Contains(page, want) {
				t.Errorf("%s HTML lacks %q", tc.lang, want)
			}
			if !strings.Contains(text, want) {
				t.Errorf("%s PDF lacks %q", tc.lang, want)
			}
		}
		if !strings.Contains(page, `<div class="account">8601.11.17947</div>`) {
			t.Errorf("%s HTML has no account number in the payment box", tc.lang)
		}
		// The KID and the account number are in the same box, and no
		// payment value is cut short.
		if strings.Contains(text, "…") {
			t.Errorf("%s PDF cut text short:\n%s", tc.lang, text)
		}
	}
}

// TestSellerRegistrations: MVA and Foretaksregisteret are Norwegian marks,
// printed only for a Norwegian seller that is registered; invoices issued
// before sellers had accounts print no payment details.
func TestSellerRegistrations(t *testing.T) {
	for _, tc := range []struct {
		name          string
		seller        store.Seller
		want, wantNot []string
	}{
		{"not VAT-registered", store.Seller{Name: "Kari Konsult", OrganizationNumber: "974760673", Country: "NO"},
			[]string{"Organisasjonsnummer 974760673", "Norge"}, []string{"974760673 MVA", "Foretaksregisteret"}},
		{"Swedish, VAT-registered", store.Seller{Name: "Nordavis AB", OrganizationNumber: "5560000000", Country: "SE", VATRegistered: true,
			BankAccount: store.BankAccount{IBAN: "SE4550000000058398257466"}},
			[]string{"Organisasjonsnummer 5560000000", "Sverige", "IBAN SE45 5000 0000 0583 9825 7466"},
			[]string{"5560000000 MVA", "Foretaksregisteret", "BIC", `class="account"`}},
		{"issued before migration 00017", store.Seller{Name: "Nordavis AS", OrganizationNumber: "923609016", Country: "NO"},
			[]string{"Organisasjonsnummer 923609016", "Norge"}, []string{"Kontonummer", "IBAN", "923609016 MVA"}},
	} {
		inv := sample()
		inv.Seller = tc.seller
		page := renderHTML(t, inv, invoicedoc.Options{Lang: invoicedoc.Norwegian})
		for _, w := range tc.want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: HTML lacks %q", tc.name, w)
			}
		}
		for _, w := range tc.wantNot {
			if strings.Contains(page, w) {
				t.Errorf("%s: HTML has %q", tc.name, w)
			}
		}
	}
}
