package delivery

import (
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/validation"
)

// Vacation stops' rules (docs/PRINT.md, "Vacation stop rules"): whether a
// stop may be made, and what it credits. Pure: the caller reads the
// subscription, its schedule and the credits already given, and books
// what Check decides.

// Credit modes of a title's rules.
const (
	CreditPerEdition = "PerEdition" // each missed edition credited on the next invoice
	CreditNone       = "None"       // print pauses, the price does not change
)

// StopRules are a title's (an organization's or a package's) rules for
// vacation stops. Lengths are in calendar days, first and last day
// counted.
type StopRules struct {
	MinDays, MaxDays int
	// A stop asked before CutoffHour (local time) on day D may start on the
	// NoticeDeliveryDays-th delivery day after D at the earliest; asked at
	// or after the cut-off, it counts as asked on D+1.
	CutoffHour         int
	NoticeDeliveryDays int
	Credit             string
	// MaxCreditedPerYear bounds the editions credited per calendar year
	// (0: no bound). Editions beyond it are still stopped, not credited.
	MaxCreditedPerYear int
	// AlignToDeliveryDays: the first and last day must be weekdays the
	// product is delivered on (a weekend title's stop runs Friday to
	// Saturday, not Monday to Sunday).
	AlignToDeliveryDays bool
	// AllowDuringBinding lets a stop fall before the binding's end; by
	// default it is refused (the binding's price assumes delivery).
	AllowDuringBinding bool
}

// DefaultStopRules are a title's rules until it sets its own: 3 days to 3
// months, before 12:00 two delivery days ahead, every missed edition
// credited, no yearly bound, aligned to delivery days.
var DefaultStopRules = StopRules{MinDays: 3, MaxDays: 92, CutoffHour: 12, NoticeDeliveryDays: 2,
	Credit: CreditPerEdition, AlignToDeliveryDays: true}

// Validate checks the rules themselves (a 400 naming the field).
func (r StopRules) Validate() error {
	var errs validation.Errors
	if r.MinDays < 1 {
		errs.Add("minDays", "must be at least 1")
	}
	if r.MaxDays < r.MinDays || r.MaxDays > 366 {
		errs.Add("maxDays", "must be between minDays (%d) and 366", r.MinDays)
	}
	if r.CutoffHour < 0 || r.CutoffHour > 24 {
		errs.Add("cutoffHour", "must be between 0 and 24 (24: no cut-off during the day)")
	}
	if r.NoticeDeliveryDays < 0 || r.NoticeDeliveryDays > 30 {
		errs.Add("noticeDeliveryDays", "must be between 0 and 30")
	}
	if r.Credit != CreditPerEdition && r.Credit != CreditNone {
		errs.Add("credit", "must be %s or %s", CreditPerEdition, CreditNone)
	}
	if r.MaxCreditedPerYear < 0 {
		errs.Add("maxCreditedPerYear", "must not be negative (0: no bound)")
	}
	return errs.Err()
}

// StopRequest is a stop asked for: print not delivered from First to Last,
// both included.
type StopRequest struct {
	First, Last Date
}

// StopContext is what the rules are checked against.
type StopContext struct {
	// Now is when the stop is asked (the tenant's clock), Loc the
	// organization's time zone the cut-off is read in.
	Now time.Time
	Loc *time.Location
	// Schedule is the subscription's print product's schedule over the
	// stop (no weekdays: the subscription is digital only).
	Schedule Schedule
	// BindingEndsAt is the end of the subscription's binding, if any.
	BindingEndsAt *time.Time
	// CreditedByYear are the editions already credited per calendar year by
	// the subscription's other stops.
	CreditedByYear map[int]int
}

// StopDecision is what an allowed stop does.
type StopDecision struct {
	// Missed are the delivery days the stop takes out, in order; Credited
	// those of them that are credited (all, the first ones up to the
	// yearly bound, or none).
	Missed, Credited []Date
}

// EarliestStart is the first day a stop asked at now may start on.
func (r StopRules) EarliestStart(now time.Time, loc *time.Location, s Schedule) Date {
	local := now.In(loc)
	base := DateOf(now, loc)
	if local.Hour() >= r.CutoffHour {
		base = base.AddDays(1)
	}
	d := base
	for i := 0; i < r.NoticeDeliveryDays; i++ {
		next, ok := s.NextDelivery(d.AddDays(1))
		if !ok {
			break
		}
		d = next
	}
	return d
}

// Check decides a stop: a refusal is a validation error naming the field
// and the rule, so the client can say which rule and offer another range.
func (r StopRules) Check(req StopRequest, c StopContext) (StopDecision, error) {
	field := func(f, rule, format string, args ...any) error {
		return validation.Field(f, "rule %s: %s", rule, fmt.Sprintf(format, args...))
	}
	if c.Schedule.Weekdays == 0 {
		return StopDecision{}, field("subscriptionId", "digitalOnly", "the subscription has no print product; there is nothing to stop")
	}
	if req.Last.Before(req.First) {
		return StopDecision{}, field("lastDate", "order", "is before firstDate %s", req.First)
	}
	n := req.First.DaysUntil(req.Last) + 1
	if n < r.MinDays {
		return StopDecision{}, field("lastDate", "minDays", "the stop is %d days; at least %d", n, r.MinDays)
	}
	if n > r.MaxDays {
		return StopDecision{}, field("lastDate", "maxDays", "the stop is %d days; at most %d", n, r.MaxDays)
	}
	if e := r.EarliestStart(c.Now, c.Loc, c.Schedule); req.First.Before(e) {
		return StopDecision{}, field("firstDate", "notice", "asked now, a stop can start on %s at the earliest (before %02d:00, %d delivery days ahead)",
			e, r.CutoffHour, r.NoticeDeliveryDays)
	}
	if r.AlignToDeliveryDays {
		if !c.Schedule.Weekdays.Has(req.First.Weekday()) {
			return StopDecision{}, field("firstDate", "alignToDeliveryDays", "%s is a %s; the product is delivered on %v", req.First, req.First.Weekday(), c.Schedule.Weekdays.Names())
		}
		if !c.Schedule.Weekdays.Has(req.Last.Weekday()) {
			return StopDecision{}, field("lastDate", "alignToDeliveryDays", "%s is a %s; the product is delivered on %v", req.Last, req.Last.Weekday(), c.Schedule.Weekdays.Names())
		}
	}
	if c.BindingEndsAt != nil && !r.AllowDuringBinding {
		if end := DateOf(*c.BindingEndsAt, c.Loc); req.First.Before(end) {
			return StopDecision{}, field("firstDate", "binding", "the subscription is bound until %s; a stop can start then at the earliest", end)
		}
	}
	missed := c.Schedule.DeliveryDays(req.First, req.Last.AddDays(1))
	if len(missed) == 0 {
		return StopDecision{}, field("lastDate", "editions", "no edition is delivered from %s to %s", req.First, req.Last)
	}
	dec := StopDecision{Missed: missed}
	if r.Credit == CreditPerEdition {
		used := map[int]int{}
		for y, k := range c.CreditedByYear {
			used[y] = k
		}
		for _, d := range missed {
			if r.MaxCreditedPerYear > 0 && used[d.Year] >= r.MaxCreditedPerYear {
				continue
			}
			used[d.Year]++
			dec.Credited = append(dec.Credited, d)
		}
	}
	return dec, nil
}

// EditionCredit is the allowance for credited of a period's editions:
// price × credited / editions, rounded once, half away from zero (the
// rounding of money.Prorate). Rounding the per-edition price first and
// multiplying would drift by up to half a minor unit per edition: 399 NOK
// over 13 editions is 30.6923…, and 13 credited editions must give back
// 399.00, not 13 × 30.69 = 398.97.
func EditionCredit(priceMinor int64, editions, credited int) (int64, error) {
	if editions <= 0 {
		return 0, fmt.Errorf("delivery: a period without editions has nothing to credit")
	}
	if credited < 0 || credited > editions {
		return 0, fmt.Errorf("delivery: %d credited editions of a period of %d", credited, editions)
	}
	return money.Prorate(priceMinor, int64(credited), int64(editions))
}
