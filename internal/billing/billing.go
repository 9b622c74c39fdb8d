// Package billing holds the rules of Kadens' billing documents: what a
// subscription period's invoice contains (lines per product, charges billed
// in arrears, allowances applied), how net, VAT and gross are computed and
// rounded, when an invoice falls due, which statuses invoices and payment
// demands have, and the KID payment reference. It is pure: no I/O and no
// clock. The store gathers the inputs inside the engine's transaction, calls
// Build, and persists the result (see docs/BILLING.md).
package billing

import (
	"fmt"
	"slices"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
)

// Invoice statuses. Issued, PartiallyPaid, Paid and Credited are stored;
// Overdue is derived (an Issued or PartiallyPaid invoice whose due time has
// passed on the tenant's clock), like a subscription's status.
const (
	InvoiceIssued        = "Issued"
	InvoicePartiallyPaid = "PartiallyPaid"
	InvoicePaid          = "Paid"
	InvoiceOverdue       = "Overdue"
	InvoiceCredited      = "Credited"
)

// Payment demand statuses. Open, PartiallyPaid, Paid and Credited are
// stored; Overdue is derived as for invoices.
const (
	DemandOpen          = "Open"
	DemandPartiallyPaid = "PartiallyPaid"
	DemandPaid          = "Paid"
	DemandOverdue       = "Overdue"
	DemandCredited      = "Credited"
)

// InvoiceStatuses lists every invoice status a client may filter on.
var InvoiceStatuses = []string{InvoiceIssued, InvoicePartiallyPaid, InvoicePaid, InvoiceOverdue, InvoiceCredited}

// DemandStatuses lists every payment demand status a client may filter on.
var DemandStatuses = []string{DemandOpen, DemandPartiallyPaid, DemandPaid, DemandOverdue, DemandCredited}

// Status returns the status shown for a stored invoice or demand status at
// now: an unsettled document (Issued/Open or PartiallyPaid) is Overdue once
// now is after its due time.
func Status(stored string, dueAt, now time.Time) string {
	switch stored {
	case InvoiceIssued, DemandOpen, InvoicePartiallyPaid:
		if now.After(dueAt) {
			return InvoiceOverdue
		}
	}
	return stored
}

// Line kinds.
const (
	LineProduct           = "Product"
	LineAdditionalProduct = "AdditionalProduct"
	LineCharge            = "Charge"
	LineAllowance         = "Allowance"
)

// Account item kinds: what a merchant adds to a subscriber account between
// invoices.
const (
	ItemCharge    = "Charge"
	ItemAllowance = "Allowance"
)

// Line is one invoice line. UnitPrice and Discount are in the seller's
// price convention (gross when the invoice's pricesIncludeVat, else net);
// Net + VAT = Gross always holds exactly. Quantity × UnitPrice − Discount
// is the line's price in that convention.
type Line struct {
	LineNumber    int             `json:"lineNumber"`
	Kind          string          `json:"kind" enum:"Product,AdditionalProduct,Charge,Allowance"`
	ProductID     *string         `json:"productId"`
	AccountItemID *string         `json:"accountItemId" description:"The charge or allowance the line bills or applies."`
	Description   string          `json:"description"`
	PeriodStart   *time.Time      `json:"periodStart"`
	PeriodEnd     *time.Time      `json:"periodEnd"`
	Quantity      int64           `json:"quantity"`
	UnitPrice     catalog.Amount  `json:"unitPrice"`
	Discount      catalog.Amount  `json:"discount"`
	VATRate       catalog.Percent `json:"vatRate"`
	Net           catalog.Amount  `json:"net"`
	VAT           catalog.Amount  `json:"vat"`
	Gross         catalog.Amount  `json:"gross"`
}

// VATTotal sums the lines of one VAT rate.
type VATTotal struct {
	VATRate catalog.Percent `json:"vatRate"`
	Net     catalog.Amount  `json:"net"`
	VAT     catalog.Amount  `json:"vat"`
	Gross   catalog.Amount  `json:"gross"`
}

// Item is an outstanding charge or allowance of the subscriber account.
// Remaining is the gross amount still to bill (charge) or to apply
// (allowance), in minor units; VATRate splits it into net and VAT.
type Item struct {
	ID          string
	Kind        string
	Description string
	Remaining   int64
	VATRate     catalog.Percent
}

// Use is how much of an item an invoice billed or applied (gross minor
// units, positive).
type Use struct {
	ItemID string
	Kind   string
	Amount int64
}

// Input is everything a period invoice is built from.
type Input struct {
	Currency         money.Currency
	PricesIncludeVAT bool
	Package          catalog.SubscriptionPackage
	PeriodStart      time.Time
	PeriodEnd        time.Time
	// Items are the account's outstanding charges and allowances, oldest
	// first.
	Items []Item
}

// Document is a built invoice: its lines, VAT summary, totals, and which
// account items it consumed.
type Document struct {
	Lines     []Line
	VATTotals []VATTotal
	Net       int64
	VAT       int64
	Gross     int64
	Uses      []Use
}

// Build computes the invoice of one subscription period.
//
//   - One line per product of the package (included products, then
//     additional products), for the period, priced at the product's share
//     of the package price (catalog.Merge divides the total exactly).
//     Included products show Units as quantity when their full amount
//     divides evenly by it, else quantity 1 at the full amount.
//   - Net and VAT are computed per line and rounded half away from zero:
//     with prices including VAT the price is gross and is split
//     (money.SplitGross); otherwise it is net and VAT is added
//     (money.VATFromNet).
//   - Every outstanding charge becomes a line billed in arrears (its
//     amount is gross; its VAT rate splits it).
//   - Allowances, oldest first, become negative lines that reduce the
//     invoice total, never below zero; what an allowance cannot apply now
//     stays on the account for the next invoice.
func Build(in Input) (Document, error) {
	if in.Currency.Code == "" {
		return Document{}, fmt.Errorf("billing: no currency")
	}
	var doc Document
	amt := func(minor int64) catalog.Amount { return catalog.NewAmount(minor, in.Currency) }
	ps, pe := in.PeriodStart.UTC(), in.PeriodEnd.UTC()
	add := func(l Line, net, vat, gross int64) {
		l.LineNumber = len(doc.Lines) + 1
		l.Net, l.VAT, l.Gross = amt(net), amt(vat), amt(gross)
		doc.Lines = append(doc.Lines, l)
		doc.Net += net
		doc.VAT += vat
		doc.Gross += gross
	}
	split := func(price int64, rate catalog.Percent) (net, vat, gross int64) {
		if in.PricesIncludeVAT {
			net, vat = money.SplitGross(price, rate.Decimal())
			return net, vat, price
		}
		vat = money.VATFromNet(price, rate.Decimal())
		return price, vat, price + vat
	}
	product := func(kind string, p catalog.Line, units int) {
		full, price := p.FullAmount.Minor, p.Amount.Minor
		qty, unit := int64(1), full
		if units > 1 && full%int64(units) == 0 {
			qty, unit = int64(units), full/int64(units)
		}
		id := p.ProductID
		net, vat, gross := split(price, p.VATRate)
		add(Line{Kind: kind, ProductID: &id, Description: p.Name, PeriodStart: &ps, PeriodEnd: &pe,
			Quantity: qty, UnitPrice: amt(unit), Discount: amt(full - price), VATRate: p.VATRate}, net, vat, gross)
	}
	for _, p := range in.Package.Products {
		product(LineProduct, p, in.Package.Units)
	}
	for _, p := range in.Package.AdditionalProducts {
		product(LineAdditionalProduct, p, 1)
	}
	// gross shown in the seller's convention for a gross amount at rate.
	shown := func(gross int64, rate catalog.Percent) (unit, net, vat int64) {
		net, vat = money.SplitGross(gross, rate.Decimal())
		if in.PricesIncludeVAT {
			return gross, net, vat
		}
		return net, net, vat
	}
	for _, it := range in.Items {
		if it.Kind != ItemCharge || it.Remaining <= 0 {
			continue
		}
		id := it.ID
		unit, net, vat := shown(it.Remaining, it.VATRate)
		add(Line{Kind: LineCharge, AccountItemID: &id, Description: it.Description, Quantity: 1,
			UnitPrice: amt(unit), Discount: amt(0), VATRate: it.VATRate}, net, vat, it.Remaining)
		doc.Uses = append(doc.Uses, Use{ItemID: it.ID, Kind: ItemCharge, Amount: it.Remaining})
	}
	for _, it := range in.Items {
		if it.Kind != ItemAllowance || it.Remaining <= 0 || doc.Gross <= 0 {
			continue
		}
		apply := min(it.Remaining, doc.Gross)
		id := it.ID
		unit, net, vat := shown(-apply, it.VATRate)
		add(Line{Kind: LineAllowance, AccountItemID: &id, Description: it.Description, Quantity: 1,
			UnitPrice: amt(unit), Discount: amt(0), VATRate: it.VATRate}, net, vat, -apply)
		doc.Uses = append(doc.Uses, Use{ItemID: it.ID, Kind: ItemAllowance, Amount: apply})
	}
	doc.VATTotals = vatTotals(doc.Lines, in.Currency)
	return doc, nil
}

// vatTotals sums lines per VAT rate, highest rate first.
func vatTotals(lines []Line, c money.Currency) []VATTotal {
	type sum struct {
		rate            catalog.Percent
		net, vat, gross int64
	}
	var sums []*sum
	for _, l := range lines {
		i := slices.IndexFunc(sums, func(s *sum) bool { return s.rate.Equal(l.VATRate) })
		if i < 0 {
			sums = append(sums, &sum{rate: l.VATRate})
			i = len(sums) - 1
		}
		sums[i].net += l.Net.Minor
		sums[i].vat += l.VAT.Minor
		sums[i].gross += l.Gross.Minor
	}
	slices.SortFunc(sums, func(a, b *sum) int { return b.rate.Decimal().Cmp(a.rate.Decimal()) })
	out := make([]VATTotal, len(sums))
	for i, s := range sums {
		out[i] = VATTotal{VATRate: s.rate, Net: catalog.NewAmount(s.net, c), VAT: catalog.NewAmount(s.vat, c), Gross: catalog.NewAmount(s.gross, c)}
	}
	return out
}

// DueAt is when the invoice of a period issued at issuedAt falls due: at
// the period's start when that is after the issue time (renewals, issued
// minimumDueDays ahead, and orders starting in the future), otherwise
// termsDays local calendar days after the issue time (an order whose first
// period has already begun, or a plan with minimumDueDays 0).
func DueAt(issuedAt, periodStart time.Time, termsDays int, loc *time.Location) time.Time {
	if periodStart.After(issuedAt) {
		return periodStart.UTC()
	}
	return issuedAt.In(loc).AddDate(0, 0, termsDays).UTC()
}

// LocalDate renders t as a calendar date in loc ("2027-01-31"), as printed
// on invoices.
func LocalDate(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.DateOnly) }
