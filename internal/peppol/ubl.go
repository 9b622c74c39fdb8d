package peppol

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
)

// Fixed identifiers of Peppol BIS Billing 3.0.
const (
	CustomizationID = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0"
	ProfileID       = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"

	nsInvoice    = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
	nsCreditNote = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
	nsCAC        = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
	nsCBC        = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
)

// ContentType is the media type of the UBL documents.
const ContentType = "application/xml"

// VAT category codes (UNCL5305) Kadens writes.
const (
	CategoryStandard  = "S" // a rate above 0
	CategoryZeroRated = "Z" // 0 % from a VAT-registered seller (Norwegian news media: "fritatt")
	CategoryOutside   = "O" // the seller is not registered for VAT
)

// ErrNotRepresentable: the document cannot be written as Peppol BIS
// Billing 3.0 (a seller country without a Peppol legal-entity scheme, VAT
// charged by a seller not registered for it, a currency with more than
// two decimals).
var ErrNotRepresentable = errors.New("peppol: document cannot be written as Peppol BIS Billing 3.0")

// Options are what an invoice record does not carry itself.
type Options struct {
	// Buyer is the recipient's participant id (from the EHF/OIO payment
	// agreement): the buyer's EndpointID.
	Buyer ParticipantID
	// Location is the organization's time zone: period dates are its
	// calendar dates. Nil means UTC.
	Location *time.Location
}

// ---- the document model, fields in UBL 2.1 schema order ----

type amount struct {
	Currency string `xml:"currencyID,attr"`
	Value    string `xml:",chardata"`
}

type quantity struct {
	Unit  string `xml:"unitCode,attr"`
	Value string `xml:",chardata"`
}

type idWithScheme struct {
	Scheme string `xml:"schemeID,attr,omitempty"`
	Value  string `xml:",chardata"`
}

type ublPeriod struct {
	Start string `xml:"cbc:StartDate"`
	End   string `xml:"cbc:EndDate"`
}

type country struct {
	Code string `xml:"cbc:IdentificationCode"`
}

type address struct {
	Street     string  `xml:"cbc:StreetName,omitempty"`
	Additional string  `xml:"cbc:AdditionalStreetName,omitempty"`
	City       string  `xml:"cbc:CityName,omitempty"`
	PostalZone string  `xml:"cbc:PostalZone,omitempty"`
	Country    country `xml:"cac:Country"`
}

type taxScheme struct {
	ID string `xml:"cbc:ID"`
}

type partyTaxScheme struct {
	CompanyID string    `xml:"cbc:CompanyID"`
	TaxScheme taxScheme `xml:"cac:TaxScheme"`
}

type legalEntity struct {
	RegistrationName string        `xml:"cbc:RegistrationName"`
	CompanyID        *idWithScheme `xml:"cbc:CompanyID,omitempty"`
}

type contact struct {
	Name  string `xml:"cbc:Name,omitempty"`
	Phone string `xml:"cbc:Telephone,omitempty"`
	Email string `xml:"cbc:ElectronicMail,omitempty"`
}

type partyName struct {
	Name string `xml:"cbc:Name"`
}

type party struct {
	Endpoint    idWithScheme     `xml:"cbc:EndpointID"`
	Name        *partyName       `xml:"cac:PartyName,omitempty"`
	Address     address          `xml:"cac:PostalAddress"`
	TaxSchemes  []partyTaxScheme `xml:"cac:PartyTaxScheme"`
	LegalEntity legalEntity      `xml:"cac:PartyLegalEntity"`
	Contact     *contact         `xml:"cac:Contact,omitempty"`
}

type partyWrap struct {
	Party party `xml:"cac:Party"`
}

type branch struct {
	ID string `xml:"cbc:ID"`
}

type financialAccount struct {
	ID     string  `xml:"cbc:ID"`
	Branch *branch `xml:"cac:FinancialInstitutionBranch,omitempty"`
}

type paymentMeans struct {
	Code      string           `xml:"cbc:PaymentMeansCode"`
	DueDate   string           `xml:"cbc:PaymentDueDate,omitempty"`
	PaymentID string           `xml:"cbc:PaymentID,omitempty"`
	Account   financialAccount `xml:"cac:PayeeFinancialAccount"`
}

type taxCategory struct {
	ID              string    `xml:"cbc:ID"`
	Percent         string    `xml:"cbc:Percent,omitempty"`
	ExemptionReason string    `xml:"cbc:TaxExemptionReason,omitempty"`
	TaxScheme       taxScheme `xml:"cac:TaxScheme"`
}

type taxSubtotal struct {
	Taxable  amount      `xml:"cbc:TaxableAmount"`
	Tax      amount      `xml:"cbc:TaxAmount"`
	Category taxCategory `xml:"cac:TaxCategory"`
}

type taxTotal struct {
	Tax       amount        `xml:"cbc:TaxAmount"`
	Subtotals []taxSubtotal `xml:"cac:TaxSubtotal"`
}

type monetaryTotal struct {
	LineExtension amount  `xml:"cbc:LineExtensionAmount"`
	TaxExclusive  amount  `xml:"cbc:TaxExclusiveAmount"`
	TaxInclusive  amount  `xml:"cbc:TaxInclusiveAmount"`
	Rounding      *amount `xml:"cbc:PayableRoundingAmount,omitempty"`
	Payable       amount  `xml:"cbc:PayableAmount"`
}

type classifiedTax struct {
	ID        string    `xml:"cbc:ID"`
	Percent   string    `xml:"cbc:Percent,omitempty"`
	TaxScheme taxScheme `xml:"cac:TaxScheme"`
}

type item struct {
	Name     string        `xml:"cbc:Name"`
	Category classifiedTax `xml:"cac:ClassifiedTaxCategory"`
}

type price struct {
	Amount       amount    `xml:"cbc:PriceAmount"`
	BaseQuantity *quantity `xml:"cbc:BaseQuantity,omitempty"`
}

type invoiceLine struct {
	ID            string     `xml:"cbc:ID"`
	Quantity      quantity   `xml:"cbc:InvoicedQuantity"`
	LineExtension amount     `xml:"cbc:LineExtensionAmount"`
	Period        *ublPeriod `xml:"cac:InvoicePeriod,omitempty"`
	Item          item       `xml:"cac:Item"`
	Price         price      `xml:"cac:Price"`
}

type creditNoteLine struct {
	ID            string     `xml:"cbc:ID"`
	Quantity      quantity   `xml:"cbc:CreditedQuantity"`
	LineExtension amount     `xml:"cbc:LineExtensionAmount"`
	Period        *ublPeriod `xml:"cac:InvoicePeriod,omitempty"`
	Item          item       `xml:"cac:Item"`
	Price         price      `xml:"cac:Price"`
}

type invoiceDocRef struct {
	ID        string `xml:"cbc:ID"`
	IssueDate string `xml:"cbc:IssueDate,omitempty"`
}

type billingReference struct {
	Invoice invoiceDocRef `xml:"cac:InvoiceDocumentReference"`
}

type invoiceDoc struct {
	XMLName         xml.Name      `xml:"Invoice"`
	NS              string        `xml:"xmlns,attr"`
	NSCAC           string        `xml:"xmlns:cac,attr"`
	NSCBC           string        `xml:"xmlns:cbc,attr"`
	CustomizationID string        `xml:"cbc:CustomizationID"`
	ProfileID       string        `xml:"cbc:ProfileID"`
	ID              string        `xml:"cbc:ID"`
	IssueDate       string        `xml:"cbc:IssueDate"`
	DueDate         string        `xml:"cbc:DueDate"`
	TypeCode        string        `xml:"cbc:InvoiceTypeCode"`
	Currency        string        `xml:"cbc:DocumentCurrencyCode"`
	BuyerReference  string        `xml:"cbc:BuyerReference"`
	Period          *ublPeriod    `xml:"cac:InvoicePeriod,omitempty"`
	Supplier        partyWrap     `xml:"cac:AccountingSupplierParty"`
	Customer        partyWrap     `xml:"cac:AccountingCustomerParty"`
	PaymentMeans    *paymentMeans `xml:"cac:PaymentMeans,omitempty"`
	TaxTotal        taxTotal      `xml:"cac:TaxTotal"`
	Totals          monetaryTotal `xml:"cac:LegalMonetaryTotal"`
	Lines           []invoiceLine `xml:"cac:InvoiceLine"`
}

type creditNoteDoc struct {
	XMLName          xml.Name         `xml:"CreditNote"`
	NS               string           `xml:"xmlns,attr"`
	NSCAC            string           `xml:"xmlns:cac,attr"`
	NSCBC            string           `xml:"xmlns:cbc,attr"`
	CustomizationID  string           `xml:"cbc:CustomizationID"`
	ProfileID        string           `xml:"cbc:ProfileID"`
	ID               string           `xml:"cbc:ID"`
	IssueDate        string           `xml:"cbc:IssueDate"`
	TypeCode         string           `xml:"cbc:CreditNoteTypeCode"`
	Note             string           `xml:"cbc:Note,omitempty"`
	Currency         string           `xml:"cbc:DocumentCurrencyCode"`
	BuyerReference   string           `xml:"cbc:BuyerReference"`
	Period           *ublPeriod       `xml:"cac:InvoicePeriod,omitempty"`
	BillingReference billingReference `xml:"cac:BillingReference"`
	Supplier         partyWrap        `xml:"cac:AccountingSupplierParty"`
	Customer         partyWrap        `xml:"cac:AccountingCustomerParty"`
	TaxTotal         taxTotal         `xml:"cac:TaxTotal"`
	Totals           monetaryTotal    `xml:"cac:LegalMonetaryTotal"`
	Lines            []creditNoteLine `xml:"cac:CreditNoteLine"`
}

// builder writes the amounts of one document in its currency.
type builder struct {
	cur money.Currency
	loc *time.Location
}

func newBuilder(currency string, loc *time.Location) (builder, error) {
	cur, ok := money.LookupCurrency(currency)
	if !ok {
		return builder{}, fmt.Errorf("peppol: unknown currency %q", currency)
	}
	if cur.Digits > 2 {
		// BR-DEC rules allow at most two decimals on amounts.
		return builder{}, fmt.Errorf("%w: %s has %d decimals", ErrNotRepresentable, currency, cur.Digits)
	}
	if loc == nil {
		loc = time.UTC
	}
	return builder{cur: cur, loc: loc}, nil
}

func (b builder) amt(minor int64) amount {
	return amount{Currency: b.cur.Code, Value: money.FormatMinor(minor, b.cur)}
}

// period is start..end (end exclusive, as Kadens stores periods) as the
// inclusive calendar dates UBL wants, in the organization's zone.
func (b builder) period(start, end *time.Time) *ublPeriod {
	if start == nil || end == nil {
		return nil
	}
	s, e := start.In(b.loc), end.In(b.loc)
	last := e
	if e.Hour() == 0 && e.Minute() == 0 && e.Second() == 0 && e.Nanosecond() == 0 {
		if d := e.AddDate(0, 0, -1); !d.Before(s) {
			last = d
		}
	}
	return &ublPeriod{Start: s.Format(time.DateOnly), End: last.Format(time.DateOnly)}
}

// category is the VAT category of a line at rate from seller: S above 0 %;
// at 0 % Z (zero-rated: Norwegian news media are "fritatt", VAT-free with
// the right to deduct, which EN 16931 calls zero rated, not exempt); O for
// a seller not registered for VAT, who cannot charge any.
func category(rate catalog.Percent, vatRegistered bool) (taxCategory, error) {
	vat := taxScheme{ID: "VAT"}
	switch {
	case !vatRegistered && !rate.IsZero():
		return taxCategory{}, fmt.Errorf("%w: VAT at %s %% from a seller not registered for VAT", ErrNotRepresentable, rate)
	case !vatRegistered:
		return taxCategory{ID: CategoryOutside, ExemptionReason: "Not subject to VAT", TaxScheme: vat}, nil
	case rate.IsZero():
		return taxCategory{ID: CategoryZeroRated, Percent: "0", TaxScheme: vat}, nil
	}
	return taxCategory{ID: CategoryStandard, Percent: rate.String(), TaxScheme: vat}, nil
}

// sellerParty is the AccountingSupplierParty of seller s as at issue.
func sellerParty(s store.Seller) (party, error) {
	scheme, ok := countryScheme(s.Country)
	if !ok {
		return party{}, fmt.Errorf("%w: seller country %q has no Peppol organization scheme (NO, DK and SE do)", ErrNotRepresentable, s.Country)
	}
	number := onlyDigits(s.OrganizationNumber)
	if number == "" {
		return party{}, fmt.Errorf("%w: the seller has no organization number", ErrNotRepresentable)
	}
	p := party{
		Endpoint:    idWithScheme{Scheme: scheme, Value: number},
		Name:        &partyName{Name: s.Name},
		Address:     postal(s.Address, s.Country),
		LegalEntity: legalEntity{RegistrationName: s.Name, CompanyID: &idWithScheme{Scheme: scheme, Value: number}},
	}
	if s.VATRegistered {
		p.TaxSchemes = append(p.TaxSchemes, partyTaxScheme{CompanyID: vatID(s.Country, number), TaxScheme: taxScheme{ID: "VAT"}})
	}
	if s.Country == "NO" && s.BusinessRegister {
		// NO-R-002: Norwegian AS/ASA print "Foretaksregisteret".
		p.TaxSchemes = append(p.TaxSchemes, partyTaxScheme{CompanyID: "Foretaksregisteret", TaxScheme: taxScheme{ID: "TAX"}})
	}
	return p, nil
}

// vatID is a seller's VAT identifier from its organization number.
func vatID(country, number string) string {
	switch country {
	case "NO":
		return "NO" + number + "MVA" // NO-R-001
	case "SE":
		return "SE" + number + "01"
	}
	return country + number
}

// buyerParty is the AccountingCustomerParty: the subscriber as at issue,
// reached at participant id.
func buyerParty(b store.Buyer, id ParticipantID, sellerCountry string) party {
	name := b.Name
	if name == "" {
		name = "Subscriber " + strconv.FormatInt(b.SubscriberNumber, 10)
	}
	country := b.Address.Country
	for _, c := range []string{b.Country, schemeCountry(id.Scheme), sellerCountry} {
		if country == "" {
			country = c
		}
	}
	p := party{
		Endpoint:    idWithScheme(id),
		Name:        &partyName{Name: name},
		Address:     postal(b.Address, country),
		LegalEntity: legalEntity{RegistrationName: name},
	}
	if schemeCountry(id.Scheme) != "" {
		p.LegalEntity.CompanyID = &idWithScheme{Scheme: id.Scheme, Value: id.Value}
	}
	c := contact{Email: b.Email, Phone: b.Phone}
	if ic := b.InvoiceContact; ic != nil {
		c = contact{Name: ic.Name, Email: ic.Email, Phone: ic.Phone}
	}
	if c != (contact{}) {
		p.Contact = &c
	}
	return p
}

func postal(a store.Address, fallbackCountry string) address {
	code := a.Country
	if code == "" {
		code = fallbackCountry
	}
	return address{Street: a.Line1, Additional: a.Line2, City: a.City, PostalZone: a.PostalCode, Country: country{Code: code}}
}

func onlyDigits(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			out = append(out, s[i])
		}
	}
	return string(out)
}

// linePrice expresses a line of net amount net and quantity qty so that
// quantity × price / base quantity is exactly net (PEPPOL-EN16931-R120)
// and the price is not negative (BR-27): the net unit price when it is a
// whole number of minor units, else the line's net per qty units. A
// negative line (an allowance) has a negative quantity.
func (b builder) linePrice(net, qty int64) (quantity, price) {
	if qty < 1 {
		qty = 1
	}
	abs, sign := net, int64(1)
	if net < 0 {
		abs, sign = -net, -1
	}
	q := quantity{Unit: "C62", Value: strconv.FormatInt(sign*qty, 10)}
	if abs%qty == 0 {
		return q, price{Amount: b.amt(abs / qty)}
	}
	return q, price{Amount: b.amt(abs), BaseQuantity: &quantity{Unit: "C62", Value: strconv.FormatInt(qty, 10)}}
}

// vatLine is what the VAT breakdown needs of a line.
type vatLine struct {
	net  int64
	rate catalog.Percent
	cat  taxCategory
}

// taxes is the document's TaxTotal and LegalMonetaryTotal. VAT is
// computed once per category and rate, on the sum of the lines' net
// amounts (BR-CO-17, BR-S-09), not summed from the lines' own rounded VAT
// as Kadens' invoices are. The two can differ by a few minor units; the
// difference goes into PayableRoundingAmount so the payable amount is
// exactly what the invoice asks for (its gross).
func (b builder) taxes(lines []vatLine, gross int64) (taxTotal, monetaryTotal) {
	type group struct {
		cat  taxCategory
		rate catalog.Percent
		net  int64
	}
	var groups []*group
	var lineExt int64
	for _, l := range lines {
		lineExt += l.net
		i := slices.IndexFunc(groups, func(g *group) bool { return g.cat.ID == l.cat.ID && g.rate.Equal(l.rate) })
		if i < 0 {
			groups = append(groups, &group{cat: l.cat, rate: l.rate})
			i = len(groups) - 1
		}
		groups[i].net += l.net
	}
	slices.SortStableFunc(groups, func(x, y *group) int { return y.rate.Decimal().Cmp(x.rate.Decimal()) })
	var tt taxTotal
	var vat int64
	for _, g := range groups {
		tax := categoryVAT(g.net, g.rate)
		vat += tax
		tt.Subtotals = append(tt.Subtotals, taxSubtotal{Taxable: b.amt(g.net), Tax: b.amt(tax), Category: g.cat})
	}
	tt.Tax = b.amt(vat)
	mt := monetaryTotal{LineExtension: b.amt(lineExt), TaxExclusive: b.amt(lineExt), TaxInclusive: b.amt(lineExt + vat),
		Payable: b.amt(gross)}
	if r := gross - (lineExt + vat); r != 0 {
		ra := b.amt(r)
		mt.Rounding = &ra
	}
	return tt, mt
}

// categoryVAT is taxable × rate / 100 in minor units, rounded as the
// BR-CO-17 rule computes it: round(x × 100) div 100 in XPath, i.e. half up
// (toward positive infinity). For a positive amount that is Kadens' half
// away from zero; for a negative one (a category holding only an
// allowance) a tie rounds toward zero.
func categoryVAT(taxable int64, rate catalog.Percent) int64 {
	x := decimal.NewFromInt(taxable).Mul(rate.Decimal()).Div(decimal.NewFromInt(100))
	return x.Add(decimal.New(5, -1)).Floor().IntPart()
}

// paymentMeans says how to pay seller s: code 30 (credit transfer) to the
// Norwegian account number with the KID as payment id, or 58 (SEPA credit
// transfer) to the IBAN, the only one of the two Danish suppliers may use
// (DK-R-005). Nil when the seller has no account (the due date still
// satisfies BR-CO-25).
func paymentMeansOf(s store.Seller, kid string) *paymentMeans {
	acct := s.BankAccount
	switch {
	case s.Country != "DK" && acct.AccountNumber != "":
		return &paymentMeans{Code: "30", PaymentID: kid, Account: financialAccount{ID: acct.AccountNumber}}
	case acct.IBAN != "":
		pm := &paymentMeans{Code: "58", PaymentID: kid, Account: financialAccount{ID: acct.IBAN}}
		if acct.BIC != "" {
			pm.Account.Branch = &branch{ID: acct.BIC}
		}
		return pm
	}
	return nil
}

func buyerReference(b store.Buyer) string {
	if b.SubscriberNumber > 0 {
		return strconv.FormatInt(b.SubscriberNumber, 10)
	}
	return b.SubscriberID
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(8 << 10)
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("peppol: encode UBL: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// Invoice writes inv as a Peppol BIS Billing 3.0 UBL Invoice.
func Invoice(inv store.Invoice, opt Options) ([]byte, error) {
	b, err := newBuilder(inv.Currency, opt.Location)
	if err != nil {
		return nil, err
	}
	seller, err := sellerParty(inv.Seller)
	if err != nil {
		return nil, err
	}
	doc := invoiceDoc{
		NS: nsInvoice, NSCAC: nsCAC, NSCBC: nsCBC,
		CustomizationID: CustomizationID, ProfileID: ProfileID,
		ID: strconv.FormatInt(inv.InvoiceNumber, 10), IssueDate: inv.IssueDate, DueDate: inv.DueDate,
		TypeCode: "380", Currency: inv.Currency, BuyerReference: buyerReference(inv.Buyer),
		Period:       b.period(inv.PeriodStart, inv.PeriodEnd),
		Supplier:     partyWrap{Party: seller},
		Customer:     partyWrap{Party: buyerParty(inv.Buyer, opt.Buyer, inv.Seller.Country)},
		PaymentMeans: paymentMeansOf(inv.Seller, inv.KID),
	}
	vl := make([]vatLine, 0, len(inv.Lines))
	doc.Lines = make([]invoiceLine, 0, len(inv.Lines))
	for _, l := range inv.Lines {
		cat, err := category(l.VATRate, inv.Seller.VATRegistered)
		if err != nil {
			return nil, fmt.Errorf("invoice %d line %d: %w", inv.InvoiceNumber, l.LineNumber, err)
		}
		q, p := b.linePrice(l.Net.Minor, l.Quantity)
		doc.Lines = append(doc.Lines, invoiceLine{ID: strconv.Itoa(l.LineNumber), Quantity: q, LineExtension: b.amt(l.Net.Minor),
			Period: b.period(l.PeriodStart, l.PeriodEnd),
			Item:   item{Name: lineName(l.Description, l.Kind), Category: classified(cat)}, Price: p})
		vl = append(vl, vatLine{net: l.Net.Minor, rate: l.VATRate, cat: cat})
	}
	doc.TaxTotal, doc.Totals = b.taxes(vl, inv.Gross.Minor)
	return marshal(doc)
}

// CreditNote writes cn, a credit note of inv, as a Peppol BIS Billing 3.0
// UBL CreditNote referring to the invoice. Amounts are positive, as a
// credit note's are.
func CreditNote(cn store.CreditNote, inv store.Invoice, opt Options) ([]byte, error) {
	if cn.InvoiceID != inv.ID {
		return nil, fmt.Errorf("peppol: credit note %s is not of invoice %s", cn.ID, inv.ID)
	}
	b, err := newBuilder(cn.Currency, opt.Location)
	if err != nil {
		return nil, err
	}
	seller, err := sellerParty(inv.Seller)
	if err != nil {
		return nil, err
	}
	doc := creditNoteDoc{
		NS: nsCreditNote, NSCAC: nsCAC, NSCBC: nsCBC,
		CustomizationID: CustomizationID, ProfileID: ProfileID,
		ID: strconv.FormatInt(cn.CreditNoteNumber, 10), IssueDate: cn.IssueDate, TypeCode: "381",
		Note: cn.Reason, Currency: cn.Currency, BuyerReference: buyerReference(inv.Buyer),
		BillingReference: billingReference{Invoice: invoiceDocRef{ID: strconv.FormatInt(inv.InvoiceNumber, 10), IssueDate: inv.IssueDate}},
		Supplier:         partyWrap{Party: seller},
		Customer:         partyWrap{Party: buyerParty(inv.Buyer, opt.Buyer, inv.Seller.Country)},
	}
	var first, last *time.Time
	vl := make([]vatLine, 0, len(cn.Lines))
	for _, l := range cn.Lines {
		cat, err := category(l.VATRate, inv.Seller.VATRegistered)
		if err != nil {
			return nil, fmt.Errorf("credit note %d line %d: %w", cn.CreditNoteNumber, l.LineNumber, err)
		}
		q, p := b.linePrice(l.Net.Minor, 1)
		doc.Lines = append(doc.Lines, creditNoteLine{ID: strconv.Itoa(l.LineNumber), Quantity: q, LineExtension: b.amt(l.Net.Minor),
			Period: b.period(l.PeriodStart, l.PeriodEnd),
			Item:   item{Name: lineName(l.Description, ""), Category: classified(cat)}, Price: p})
		vl = append(vl, vatLine{net: l.Net.Minor, rate: l.VATRate, cat: cat})
		if l.PeriodStart != nil && l.PeriodEnd != nil {
			if first == nil || l.PeriodStart.Before(*first) {
				first = l.PeriodStart
			}
			if last == nil || l.PeriodEnd.After(*last) {
				last = l.PeriodEnd
			}
		}
	}
	// The document period covers the lines' periods (R110/R111).
	doc.Period = b.period(first, last)
	doc.TaxTotal, doc.Totals = b.taxes(vl, cn.Gross.Minor)
	return marshal(doc)
}

func classified(c taxCategory) classifiedTax {
	return classifiedTax{ID: c.ID, Percent: c.Percent, TaxScheme: c.TaxScheme}
}

// lineName is the item name of a line (required, never empty: R008).
func lineName(description, kind string) string {
	if description != "" {
		return description
	}
	switch kind {
	case billing.LineCharge:
		return "Charge"
	case billing.LineAllowance:
		return "Allowance"
	}
	return "Subscription"
}
