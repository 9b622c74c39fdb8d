package delivery

import (
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/validation"
)

// Delivery addresses' rules (docs/PRINT.md, "Delivery address rules"):
// whether a temporary or permanent delivery address may be saved, where it
// is delivered (carrier and route) and what it costs. Pure like
// StopRules.Check: the caller reads the postal code, the series' other
// addresses and its schedule, and stores what Check decides.

// Address kinds.
const (
	AddressTemporary = "Temporary" // first through last day, both included
	AddressPermanent = "Permanent" // from the first day on, until a later permanent address
)

// AddressRules are a title's (an organization's) rules for delivery
// addresses. Lengths are in calendar days, first and last day counted;
// surcharges are in the organization's currency's minor units (0: none).
type AddressRules struct {
	MinDays, MaxDays int
	// The notice reads like the stops' (StopRules.EarliestStart): asked
	// before CutoffHour on day D, the address applies from the
	// NoticeDeliveryDays-th delivery day after D at the earliest.
	CutoffHour         int
	NoticeDeliveryDays int
	// SurchargePerChange is charged once per address saved;
	// SurchargePerEdition per edition a temporary address receives.
	SurchargePerChange  int64
	SurchargePerEdition int64
}

// DefaultAddressRules are a title's rules until it sets its own: a
// temporary address of 2 to 90 days, before 12:00 two delivery days
// ahead, no surcharge.
var DefaultAddressRules = AddressRules{MinDays: 2, MaxDays: 90, CutoffHour: 12, NoticeDeliveryDays: 2}

// maxSurcharge bounds a surcharge (minor units): 100 000.00 is far beyond
// any delivery fee, and keeps per edition × 366 days inside int64 by far.
const maxSurcharge = 10_000_000

// Validate checks the rules themselves (a 400 naming the field).
func (r AddressRules) Validate() error {
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
	if r.SurchargePerChange < 0 || r.SurchargePerChange > maxSurcharge {
		errs.Add("surchargePerChangeMinor", "must be between 0 and %d", maxSurcharge)
	}
	if r.SurchargePerEdition < 0 || r.SurchargePerEdition > maxSurcharge {
		errs.Add("surchargePerEditionMinor", "must be between 0 and %d", maxSurcharge)
	}
	return errs.Err()
}

// notice is the stop rules' notice with these rules' hour and days.
func (r AddressRules) notice() StopRules {
	return StopRules{CutoffHour: r.CutoffHour, NoticeDeliveryDays: r.NoticeDeliveryDays}
}

// PostalAddress is where a copy goes.
type PostalAddress struct {
	Name, Line1, Line2, PostalCode, City, Country string
}

// PostalCode is a row of the tenant's postal code table.
type PostalCode struct {
	Country, PostalCode, Carrier, Route string
	Deliverable                         bool
	Reason                              string
	CreatedAt, UpdatedAt                time.Time
}

// AddressRequest is an address asked for. Last is nil for a permanent
// address.
type AddressRequest struct {
	Kind    string
	First   Date
	Last    *Date
	Address PostalAddress
}

// AddressSpan is another address of the series, as the overlap rule reads
// it.
type AddressSpan struct {
	ID, Kind string
	First    Date
	Last     *Date
}

// AddressContext is what the rules are checked against.
type AddressContext struct {
	Now time.Time
	Loc *time.Location
	// Schedule is the series' print schedule (no weekdays: digital only).
	Schedule Schedule
	// PostalCode is the request's row of the postal code table; nil when
	// the table has none.
	PostalCode *PostalCode
	// Others are the series' other (not deleted) addresses.
	Others []AddressSpan
}

// AddressDecision is what an allowed address does: where its copies go
// and the editions a temporary address receives (none counted for a
// permanent one: it has no end).
type AddressDecision struct {
	Carrier, Route string
	Editions       []Date
}

// Check decides an address: a refusal is a validation error naming the
// field and the rule, so a client can say which and offer another range,
// or a stop when the address is not delivered.
func (r AddressRules) Check(req AddressRequest, c AddressContext) (AddressDecision, error) {
	field := func(f, rule, format string, args ...any) error {
		return validation.Field(f, "rule %s: %s", rule, fmt.Sprintf(format, args...))
	}
	if c.Schedule.Weekdays == 0 {
		return AddressDecision{}, field("subscriptionId", "digitalOnly", "the subscription has no print product; there is nothing to deliver")
	}
	switch req.Kind {
	case AddressTemporary:
		if req.Last == nil {
			return AddressDecision{}, validation.Field("lastDate", "is required for a Temporary address (YYYY-MM-DD)")
		}
		if req.Last.Before(req.First) {
			return AddressDecision{}, field("lastDate", "order", "is before firstDate %s", req.First)
		}
		n := req.First.DaysUntil(*req.Last) + 1
		if n < r.MinDays {
			return AddressDecision{}, field("lastDate", "minDays", "the address is for %d days; at least %d", n, r.MinDays)
		}
		if n > r.MaxDays {
			return AddressDecision{}, field("lastDate", "maxDays", "the address is for %d days; at most %d (a longer move is a Permanent address)", n, r.MaxDays)
		}
	case AddressPermanent:
		if req.Last != nil {
			return AddressDecision{}, validation.Field("lastDate", "must be left out for a Permanent address (it applies from firstDate on)")
		}
	default:
		return AddressDecision{}, validation.Field("kind", "%q is not one of %s, %s", req.Kind, AddressTemporary, AddressPermanent)
	}
	n := r.notice()
	if e := n.EarliestStart(c.Now, c.Loc, c.Schedule); req.First.Before(e) {
		return AddressDecision{}, field("firstDate", "notice", "asked now, an address can apply from %s at the earliest (before %02d:00, %d delivery days ahead)",
			e, r.CutoffHour, r.NoticeDeliveryDays)
	}
	if c.PostalCode == nil {
		return AddressDecision{}, field("postalCode", "deliverable", "%s %s is not a postal code the tenant delivers to (not in its postal code table)",
			req.Address.Country, req.Address.PostalCode)
	}
	if !c.PostalCode.Deliverable {
		reason := c.PostalCode.Reason
		if reason == "" {
			reason = "not delivered"
		}
		return AddressDecision{}, field("postalCode", "deliverable", "%s %s is not delivered: %s", req.Address.Country, req.Address.PostalCode, reason)
	}
	for _, o := range c.Others {
		switch {
		case req.Kind == AddressTemporary && o.Kind == AddressTemporary && !o.Last.Before(req.First) && !req.Last.Before(o.First):
			return AddressDecision{}, field("firstDate", "overlap", "the subscription has a temporary address from %s to %s (%s); temporary addresses may not overlap",
				o.First, *o.Last, o.ID)
		case req.Kind == AddressPermanent && o.Kind == AddressPermanent && o.First == req.First:
			return AddressDecision{}, field("firstDate", "overlap", "the subscription has a permanent address from %s (%s); change that one instead",
				o.First, o.ID)
		}
	}
	dec := AddressDecision{Carrier: c.PostalCode.Carrier, Route: c.PostalCode.Route}
	if req.Kind == AddressTemporary {
		dec.Editions = c.Schedule.DeliveryDays(req.First, req.Last.AddDays(1))
	}
	return dec, nil
}

// Surcharge is the charge of an address: per change once, plus per
// edition for each edition it receives.
func (r AddressRules) Surcharge(editions int) int64 {
	return r.SurchargePerChange + r.SurchargePerEdition*int64(editions)
}
