package billing

import (
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/validation"
)

// Proration settings (a proration policy; product-decisions §5). Paid
// periods give an allowance for the time that will not be used; unpaid
// ones have their invoice credited down to the consumed time (which is
// what "charge for consumed time" amounts to for an invoice billed in
// advance).
const (
	ProrateAllowanceForRemaining = "GenerateAllowanceForRemainingTime"
	ProrateChargeForConsumed     = "GenerateChargeForConsumedTime"
	NoProration                  = "NoProration"
)

// Policy is a proration policy's two settings.
type Policy struct {
	Paid    string
	NotPaid string
}

// DefaultPolicy prorates both ways; it applies where no policy is set.
var DefaultPolicy = Policy{Paid: ProrateAllowanceForRemaining, NotPaid: ProrateChargeForConsumed}

// ProrationDays returns how many days of the period [start, end) are used
// when it ends early at at, and how many days it has, counted in local
// calendar days of loc. Billing ends at the start of at's local day: the
// day of a cancellation or plan change is not charged on the old period
// (a plan change's new period starts at that midnight, so no day is billed
// twice, and the result does not depend on the hour). A day with a DST
// change is one day like any other.
func ProrationDays(start, end, at time.Time, loc *time.Location) (used, total int) {
	total = period.Days(start, end, loc)
	if !at.After(start) {
		return 0, total
	}
	if !at.Before(end) {
		return total, total
	}
	return min(period.Days(start, at, loc), total), total
}

// CreditLine is one line of a credit note: the part of an invoice line it
// credits. Amounts are positive; Net + VAT = Gross.
type CreditLine struct {
	LineNumber        int             `json:"lineNumber"`
	InvoiceLineNumber int             `json:"invoiceLineNumber"`
	Description       string          `json:"description"`
	PeriodStart       *time.Time      `json:"periodStart"`
	PeriodEnd         *time.Time      `json:"periodEnd"`
	VATRate           catalog.Percent `json:"vatRate"`
	Net               catalog.Amount  `json:"net"`
	VAT               catalog.Amount  `json:"vat"`
	Gross             catalog.Amount  `json:"gross"`
}

// CreditRequest asks to credit Gross (minor units, positive) of invoice
// line Line.
type CreditRequest struct {
	Line  int
	Gross int64
}

// CreditDocument is a built credit note.
type CreditDocument struct {
	Lines     []CreditLine
	VATTotals []VATTotal
	Net       int64
	VAT       int64
	Gross     int64
}

// Creditable returns how much of each line of an invoice can still be
// credited (gross minor units by line number): positive lines only, less
// what earlier credit notes took.
func Creditable(lines []Line, credited map[int]int64) map[int]int64 {
	out := map[int]int64{}
	for _, l := range lines {
		if left := l.Gross.Minor - credited[l.LineNumber]; l.Gross.Minor > 0 && left > 0 {
			out[l.LineNumber] = left
		}
	}
	return out
}

// BuildCredit builds a credit note for an invoice's lines: each request
// credits part of one line, at the line's VAT rate (the gross is split
// with money.SplitGross, rounded half away from zero). A request for a
// line that does not exist, is not creditable, or asks more than is left
// fails with a validation error naming the request.
func BuildCredit(cur money.Currency, lines []Line, credited map[int]int64, reqs []CreditRequest) (CreditDocument, error) {
	left := Creditable(lines, credited)
	byNumber := map[int]Line{}
	for _, l := range lines {
		byNumber[l.LineNumber] = l
	}
	var (
		doc  CreditDocument
		errs validation.Errors
		seen = map[int]bool{}
	)
	for i, r := range reqs {
		field := fmt.Sprintf("lines[%d]", i)
		l, ok := byNumber[r.Line]
		switch {
		case !ok:
			errs.Add(field+".lineNumber", "the invoice has no line %d", r.Line)
			continue
		case seen[r.Line]:
			errs.Add(field+".lineNumber", "line %d is named twice", r.Line)
			continue
		case r.Gross <= 0:
			errs.Add(field+".amount", "must be more than zero")
			continue
		case r.Gross > left[r.Line]:
			errs.Add(field+".amount", "line %d has %s left to credit", r.Line, money.FormatMinor(left[r.Line], cur))
			continue
		}
		seen[r.Line] = true
		net, vat := money.SplitGross(r.Gross, l.VATRate.Decimal())
		doc.Lines = append(doc.Lines, CreditLine{LineNumber: len(doc.Lines) + 1, InvoiceLineNumber: l.LineNumber,
			Description: l.Description, PeriodStart: l.PeriodStart, PeriodEnd: l.PeriodEnd, VATRate: l.VATRate,
			Net: catalog.NewAmount(net, cur), VAT: catalog.NewAmount(vat, cur), Gross: catalog.NewAmount(r.Gross, cur)})
		doc.Net += net
		doc.VAT += vat
		doc.Gross += r.Gross
	}
	if err := errs.Err(); err != nil {
		return CreditDocument{}, err
	}
	if len(doc.Lines) == 0 {
		return CreditDocument{}, validation.Field("lines", "nothing to credit")
	}
	vl := make([]Line, len(doc.Lines))
	for i, l := range doc.Lines {
		vl[i] = Line{VATRate: l.VATRate, Net: l.Net, VAT: l.VAT, Gross: l.Gross}
	}
	doc.VATTotals = vatTotals(vl, cur)
	return doc, nil
}

// PeriodCredit returns the requests that credit the period lines (products)
// of an invoice for the unused part of the period: each line's creditable
// gross × (total − used) / total, rounded half away from zero per line.
// used = 0 credits the lines whole (a period that never started).
func PeriodCredit(lines []Line, credited map[int]int64, used, total int) ([]CreditRequest, error) {
	if total <= 0 || used < 0 || used > total {
		return nil, fmt.Errorf("billing: proration %d of %d days", used, total)
	}
	left := Creditable(lines, credited)
	var out []CreditRequest
	for _, l := range lines {
		if l.Kind != LineProduct && l.Kind != LineAdditionalProduct || left[l.LineNumber] == 0 {
			continue
		}
		g, err := money.Prorate(l.Gross.Minor, int64(total-used), int64(total))
		if err != nil {
			return nil, err
		}
		if g = min(g, left[l.LineNumber]); g > 0 {
			out = append(out, CreditRequest{Line: l.LineNumber, Gross: g})
		}
	}
	return out, nil
}

// PeriodAllowance is the allowance a paid period gives when it ends after
// used of total days: per VAT rate, the sum over its period lines of what
// is left of the line after earlier credit notes × (total − used) / total,
// rounded per line. Rates are in the order
// of the lines.
func PeriodAllowance(lines []Line, credited map[int]int64, used, total int) ([]RateAmount, error) {
	if total <= 0 || used < 0 || used > total {
		return nil, fmt.Errorf("billing: proration %d of %d days", used, total)
	}
	left := Creditable(lines, credited)
	var out []RateAmount
	for _, l := range lines {
		if l.Kind != LineProduct && l.Kind != LineAdditionalProduct || left[l.LineNumber] <= 0 {
			continue
		}
		// What credit notes already took off the line is not paid for, so
		// only the rest of it is prorated.
		g, err := money.Prorate(left[l.LineNumber], int64(total-used), int64(total))
		if err != nil {
			return nil, err
		}
		if g == 0 {
			continue
		}
		i := -1
		for j := range out {
			if out[j].VATRate.Equal(l.VATRate) {
				i = j
			}
		}
		if i < 0 {
			out = append(out, RateAmount{VATRate: l.VATRate})
			i = len(out) - 1
		}
		out[i].Gross += g
	}
	return out, nil
}

// RateAmount is a gross amount at one VAT rate.
type RateAmount struct {
	VATRate catalog.Percent
	Gross   int64
}

// GivenBack is what has been given back of each line of an invoice: what
// its credit notes took off the line (credited, by line number) plus the
// allowances a cancellation booked for the invoice's unused days
// (PeriodAllowance, one per VAT rate). What was given back once cannot be
// credited again, so Creditable, BuildCredit and the proration functions
// take this map rather than the credit notes' alone.
//
// An allowance is booked per VAT rate, not per line, so it is counted
// against the invoice's lines at its rate: period lines first, then the
// other positive lines, in line order, each up to what is left of it. Any
// part that finds no line at its rate (data the rules never write) is
// counted against the remaining positive lines, so it still shrinks what
// can be credited. The invoice's total left to credit is exact either way;
// for an invoice with one period line per rate, the usual case, so is each
// line's.
func GivenBack(lines []Line, credited map[int]int64, allowances []RateAmount) map[int]int64 {
	out := make(map[int]int64, len(credited)+len(lines))
	for n, c := range credited {
		out[n] = c
	}
	take := func(amount int64, fits func(Line) bool) int64 {
		for _, l := range lines {
			if amount == 0 {
				break
			}
			if l.Gross.Minor <= 0 || !fits(l) {
				continue
			}
			if left := l.Gross.Minor - out[l.LineNumber]; left > 0 {
				n := min(left, amount)
				out[l.LineNumber] += n
				amount -= n
			}
		}
		return amount
	}
	periodLine := func(l Line) bool { return l.Kind == LineProduct || l.Kind == LineAdditionalProduct }
	for _, a := range allowances {
		rest := a.Gross
		rest = take(rest, func(l Line) bool { return periodLine(l) && l.VATRate.Equal(a.VATRate) })
		rest = take(rest, func(l Line) bool { return l.VATRate.Equal(a.VATRate) })
		take(rest, func(Line) bool { return true })
	}
	return out
}
