// Package invoicedoc renders an issued invoice for people: a printable HTML
// page and a PDF. It is pure: it formats the stored invoice (store.Invoice)
// and never reads the database, the clock or the network (the PDF shows no
// logo, because that would mean fetching the organization's logo URL).
// Amounts are formatted from integer minor units with the currency's
// decimals, in the conventions of the chosen language (see docs/BILLING.md,
// "Printable invoice").
package invoicedoc

import (
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/bankaccount"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/country"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
)

// Languages of the labels and number formats.
const (
	English   = "en"
	Norwegian = "nb"
)

// Languages lists the supported language codes, the default first.
var Languages = []string{English, Norwegian}

// Options say how to render an invoice.
type Options struct {
	// Lang is English (default) or Norwegian.
	Lang string
	// Location is the organization's time zone, in which period instants
	// are shown as local dates; nil means UTC. Issue and due dates are the
	// local dates stored on the invoice and need no zone.
	Location *time.Location
}

// view is an invoice as both renderers show it: every value already
// formatted.
type view struct {
	L                            labels
	Lang                         string
	Seller                       store.Seller
	Buyer                        store.Buyer
	Number                       int64
	IssueDate, DueDate, Period   string
	Status, StatusKey            string
	KID, Currency                string
	PricesNote                   string
	Lines                        []lineView
	VATTotals                    []vatView
	Net, VAT, Gross              string
	BuyerAddress, ContactAddress []string
	HasDiscount                  bool
	BuyerNumber                  string

	// SellerNumber is the organization number line ("Organisasjonsnummer
	// 923609016 MVA"), SellerRegister "Foretaksregisteret" where the law
	// asks for it, SellerAddress the postal address (or just the country).
	SellerNumber, SellerRegister string
	SellerAddress                []string
	// Where to pay: kontonummer in 4.2.5 groups, IBAN in groups of 4.
	AccountNumber, IBAN, BIC string
}

type lineView struct {
	Description, Period                    string
	Quantity, UnitPrice, Discount, VATRate string
	Net, VAT, Gross                        string
}

type vatView struct {
	Rate, Net, VAT, Gross string
}

// newView formats inv. inv.Status is shown as given: the caller derives
// Overdue first (billing.Status), as the JSON view does.
func newView(inv store.Invoice, o Options) (view, error) {
	lang := o.Lang
	if lang == "" {
		lang = English
	}
	l, ok := allLabels[lang]
	if !ok {
		return view{}, fmt.Errorf("invoicedoc: unknown language %q", lang)
	}
	cur, ok := money.LookupCurrency(inv.Currency)
	if !ok {
		return view{}, fmt.Errorf("invoicedoc: invoice %s: unknown currency %q", inv.ID, inv.Currency)
	}
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	f := formatter{lang: lang, cur: cur, loc: loc}
	v := view{
		L: l, Lang: lang, Seller: inv.Seller, Buyer: inv.Buyer, Number: inv.InvoiceNumber,
		IssueDate: f.date(inv.IssueDate), DueDate: f.date(inv.DueDate), Period: f.period(inv.PeriodStart, inv.PeriodEnd),
		Status: l.status(inv.Status), StatusKey: strings.ToLower(inv.Status), KID: inv.KID, Currency: inv.Currency,
		Net: f.amount(inv.Net), VAT: f.amount(inv.VAT), Gross: f.amount(inv.Gross),
		BuyerAddress: addressLines(inv.Buyer.Address, lang), BuyerNumber: fmt.Sprint(inv.Buyer.SubscriberNumber),
	}
	if inv.Buyer.InvoiceContact != nil {
		v.ContactAddress = addressLines(inv.Buyer.InvoiceContact.Address, lang)
	}
	v.SellerNumber, v.SellerRegister = sellerRegistration(inv.Seller, l)
	v.SellerAddress = addressLines(inv.Seller.Address, lang)
	if len(v.SellerAddress) == 0 {
		v.SellerAddress = addressLines(store.Address{Country: inv.Seller.Country}, lang)
	}
	if b := inv.Seller.BankAccount; b != (store.BankAccount{}) {
		v.AccountNumber = bankaccount.FormatKontonummer(b.AccountNumber)
		v.IBAN = bankaccount.FormatIBAN(b.IBAN)
		v.BIC = b.BIC
	}
	v.PricesNote = l.PricesExclVAT
	if inv.PricesIncludeVAT {
		v.PricesNote = l.PricesInclVAT
	}
	for _, ln := range inv.Lines {
		v.Lines = append(v.Lines, lineView{
			Description: ln.Description, Period: f.period(ln.PeriodStart, ln.PeriodEnd),
			Quantity: fmt.Sprint(ln.Quantity), UnitPrice: f.amount(ln.UnitPrice), Discount: f.amount(ln.Discount),
			VATRate: f.percent(ln.VATRate), Net: f.amount(ln.Net), VAT: f.amount(ln.VAT), Gross: f.amount(ln.Gross),
		})
	}
	for _, t := range inv.VATTotals {
		v.VATTotals = append(v.VATTotals, vatView{Rate: f.percent(t.VATRate), Net: f.amount(t.Net), VAT: f.amount(t.VAT), Gross: f.amount(t.Gross)})
	}
	return v, nil
}

// sellerRegistration returns the seller's organization number line and the
// register line. A Norwegian seller registered for VAT prints MVA after
// its number (bokføringsforskriften § 5-1-1 nr. 2), and one registered in
// the Register of Business Enterprises prints "Foretaksregisteret"
// (foretaksregisterloven § 10-2); both words are the legal marks, so they
// are printed as such in every language.
func sellerRegistration(s store.Seller, l labels) (number, register string) {
	norwegian := s.Country == "NO"
	if s.OrganizationNumber != "" {
		number = l.OrganizationNumber + " " + s.OrganizationNumber
		if norwegian && s.VATRegistered {
			number += " MVA"
		}
	}
	if norwegian && s.BusinessRegister {
		register = "Foretaksregisteret"
	}
	return number, register
}

// addressLines prints a postal address, the country as its name in lang.
func addressLines(a store.Address, lang string) []string {
	var out []string
	name := country.NameIn(a.Country, lang)
	if name == "" {
		name = a.Country
	}
	for _, s := range []string{a.Line1, a.Line2, strings.TrimSpace(a.PostalCode + " " + a.City), name} {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// formatter renders numbers and dates in one language.
type formatter struct {
	lang string
	cur  money.Currency
	loc  *time.Location
}

// amount formats a in the invoice currency's decimals: "1,234.50" in
// English, "1 234,50" in Norwegian (grouped with a no-break space, so an
// amount never wraps).
func (f formatter) amount(a catalog.Amount) string { return FormatAmount(a.Minor, f.cur, f.lang) }

// FormatAmount formats minor units of c the way the documents show them:
// the currency's decimals (money.FormatMinor), thousands grouped; English
// "1,234.50", Norwegian "1 234,50" (U+00A0 between groups).
func FormatAmount(minor int64, c money.Currency, lang string) string {
	s := money.FormatMinor(minor, c)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	group, point := ",", "."
	if lang == Norwegian {
		group, point = "\u00a0", ","
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(group)
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString(point)
		b.WriteString(frac)
	}
	return b.String()
}

func (f formatter) percent(p catalog.Percent) string {
	s := p.String()
	if f.lang == Norwegian {
		return strings.Replace(s, ".", ",", 1) + "\u00a0%"
	}
	return s + "%"
}

// date formats a stored local date (YYYY-MM-DD): ISO 8601 in English,
// DD.MM.YYYY in Norwegian.
func (f formatter) date(d string) string {
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return d
	}
	return f.day(t)
}

func (f formatter) day(t time.Time) string {
	if f.lang == Norwegian {
		return t.Format("02.01.2006")
	}
	return t.Format(time.DateOnly)
}

// period shows [start, end) as the local dates of its first and last day:
// a period ends at the local midnight that starts the next one.
func (f formatter) period(start, end *time.Time) string {
	if start == nil || end == nil {
		return ""
	}
	s, e := start.In(f.loc), end.In(f.loc)
	last := e
	if e.Hour() == 0 && e.Minute() == 0 && e.Second() == 0 && e.Nanosecond() == 0 {
		if d := e.AddDate(0, 0, -1); !d.Before(s) {
			last = d
		}
	}
	return f.day(s) + " – " + f.day(last)
}

// labels are the words of the documents in one language.
type labels struct {
	Invoice, InvoiceNumber, OrganizationNumber, IssueDate, DueDate, Period, Status string
	BillTo, CustomerNumber, InvoiceContact, Email, Phone                           string
	Description, Quantity, UnitPrice, Discount, VATRate, Net, VAT, Gross           string
	VATSummary, TotalNet, TotalVAT, TotalToPay, KID, KIDNote, Currency             string
	PricesInclVAT, PricesExclVAT, Page                                             string
	AccountNumber, IBAN, BIC                                                       string
	statuses                                                                       map[string]string
}

func (l labels) status(s string) string {
	if v, ok := l.statuses[s]; ok {
		return v
	}
	return s
}

var allLabels = map[string]labels{
	English: {
		Invoice: "Invoice", InvoiceNumber: "Invoice number", OrganizationNumber: "Organization number",
		IssueDate: "Invoice date", DueDate: "Due date", Period: "Period", Status: "Status",
		BillTo: "Bill to", CustomerNumber: "Customer number", InvoiceContact: "Invoice contact", Email: "Email", Phone: "Phone",
		Description: "Description", Quantity: "Qty", UnitPrice: "Unit price", Discount: "Discount", VATRate: "VAT rate",
		Net: "Net", VAT: "VAT", Gross: "Gross", VATSummary: "VAT summary", TotalNet: "Total excl. VAT", TotalVAT: "Total VAT",
		TotalToPay: "Total to pay", KID: "KID", KIDNote: "Payment reference: quote the KID when you pay.", Currency: "Currency",
		PricesInclVAT: "Unit prices and discounts include VAT.", PricesExclVAT: "Unit prices and discounts exclude VAT.",
		Page: "Page", AccountNumber: "Account number", IBAN: "IBAN", BIC: "BIC",
		statuses: map[string]string{billing.InvoiceIssued: "Issued", billing.InvoicePartiallyPaid: "Partially paid",
			billing.InvoicePaid: "Paid", billing.InvoiceOverdue: "Overdue", billing.InvoiceCredited: "Credited"},
	},
	Norwegian: {
		Invoice: "Faktura", InvoiceNumber: "Fakturanummer", OrganizationNumber: "Organisasjonsnummer",
		IssueDate: "Fakturadato", DueDate: "Forfallsdato", Period: "Periode", Status: "Status",
		BillTo: "Fakturamottaker", CustomerNumber: "Kundenummer", InvoiceContact: "Fakturakontakt", Email: "E-post", Phone: "Telefon",
		Description: "Beskrivelse", Quantity: "Antall", UnitPrice: "Enhetspris", Discount: "Rabatt", VATRate: "MVA-sats",
		Net: "Netto", VAT: "MVA", Gross: "Brutto", VATSummary: "MVA-spesifikasjon", TotalNet: "Sum eks. MVA", TotalVAT: "Sum MVA",
		TotalToPay: "Å betale", KID: "KID", KIDNote: "Oppgi KID ved betaling.", Currency: "Valuta",
		PricesInclVAT: "Enhetspriser og rabatter er inkl. MVA.", PricesExclVAT: "Enhetspriser og rabatter er eks. MVA.",
		Page: "Side", AccountNumber: "Kontonummer", IBAN: "IBAN", BIC: "BIC",
		statuses: map[string]string{billing.InvoiceIssued: "Utstedt", billing.InvoicePartiallyPaid: "Delvis betalt",
			billing.InvoicePaid: "Betalt", billing.InvoiceOverdue: "Forfalt", billing.InvoiceCredited: "Kreditert"},
	},
}
