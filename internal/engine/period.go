package engine

import (
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/substatus"
)

// Status is a subscription's status at now (internal/substatus).
func Status(sub store.Subscription, now time.Time) string {
	return substatus.At(sub.PeriodStart, sub.PeriodEnd, sub.CancelEffectiveAt, now)
}

// NewSeries describes the first period of a new subscription series: an
// order's first subscription, or the subscription a plan change generates.
type NewSeries struct {
	SubscriberID       string
	OrganizationID     string
	TimeZone           string
	OrderID            *string
	PaymentAgreementID *string
	PreviousID         *string
	Package            catalog.SubscriptionPackage
	Choices            catalog.Choices
	// TemplatePackageID is the template Package was merged from (what a
	// price change of that template finds).
	TemplatePackageID string
	// Start is when the first period starts. The series is anchored on the
	// local midnight of Start's date, so the first period ends where the
	// billing plan's calendar arithmetic says (31 Jan + 1 month = 28 Feb).
	Start time.Time
	// BindingEnd and BindingRule are the binding a plan change carries
	// over from the series it replaces: kept while it has not ended, unless
	// Package has a contract of its own, which starts a new binding at
	// Start (docs/ORDERS.md, "Binding periods").
	BindingEnd  *time.Time
	BindingRule string
}

// Begin returns the first subscription of a new series.
func Begin(n NewSeries, now time.Time) (store.Subscription, error) {
	loc, err := period.LoadZone(n.TimeZone)
	if err != nil {
		return store.Subscription{}, fmt.Errorf("engine: time zone: %w", err)
	}
	iv := n.Package.BillingPlan.Interval()
	if err := iv.Validate(); err != nil {
		return store.Subscription{}, fmt.Errorf("engine: billing plan: %w", err)
	}
	anchor := period.StartOfDay(n.Start, loc)
	sub := store.Subscription{
		ID: store.NewID(), SubscriberID: n.SubscriberID, OrganizationID: n.OrganizationID, OrderID: n.OrderID,
		PaymentAgreementID: n.PaymentAgreementID, PreviousID: n.PreviousID, Currency: n.Package.Currency,
		Package: n.Package, Choices: n.Choices, TimeZone: n.TimeZone, StepPeriod: 1,
		ChainID: n.Package.SubscriptionPackageChainID, ChainStep: n.Package.ChainStepOrder,
		Anchor: anchor, PeriodIndex: 0, PeriodStart: n.Start.UTC(), PeriodEnd: period.Boundary(anchor, iv, 1, loc),
		CreatedAt: now.UTC(),
	}
	if n.TemplatePackageID != "" {
		id := n.TemplatePackageID
		sub.TemplatePackageID = &id
	}
	switch {
	case n.Package.Contract != nil && n.Package.Contract.BindingPeriods > 0:
		startBinding(&sub, loc)
	case n.BindingEnd != nil && n.BindingEnd.After(sub.PeriodStart):
		end := n.BindingEnd.UTC()
		sub.BindingEnd, sub.BindingRule = &end, n.BindingRule
	}
	schedule(&sub, loc)
	return sub, nil
}

// startBinding starts the binding of sub's package contract at sub's
// period start: it ends bindingPeriods billing periods later, on the
// series' calendar (a 12-month binding from 31 January ends on 31 January
// of the next year, through 28 February and 31 March).
func startBinding(sub *store.Subscription, loc *time.Location) {
	c := sub.Package.Contract
	end := period.Boundary(sub.Anchor, sub.Package.BillingPlan.Interval(), sub.PeriodIndex+c.BindingPeriods, loc)
	sub.BindingEnd, sub.BindingRule = &end, c.Rule()
}

// bound reports whether sub's binding runs past t: a cancellation or a
// plan change taking effect at t falls inside the binding period.
func bound(sub store.Subscription, t time.Time) bool {
	return sub.BindingEnd != nil && t.Before(*sub.BindingEnd)
}

// BoundPeriodsAfter is how many billing periods of sub's binding follow
// sub: what a ChargeRemainder cancellation at sub's end would charge.
func BoundPeriodsAfter(sub store.Subscription) (int, error) {
	loc, err := period.LoadZone(sub.TimeZone)
	if err != nil {
		return 0, err
	}
	return remainingBound(sub, sub.PeriodEnd, loc), nil
}

// remainingBound counts the billing periods of the binding that follow a
// cancellation of p taking effect at effective: the whole periods of p's
// calendar after the one it cuts short (p itself too when it never starts),
// up to the binding end.
func remainingBound(p store.Subscription, effective time.Time, loc *time.Location) int {
	if p.BindingEnd == nil {
		return 0
	}
	iv := p.Package.BillingPlan.Interval()
	j := p.PeriodIndex + 1
	if !effective.After(p.PeriodStart) {
		j = p.PeriodIndex
	}
	n := 0
	for ; n <= catalog.MaxBindingPeriods && !period.Boundary(p.Anchor, iv, j+n+1, loc).After(*p.BindingEnd); n++ {
	}
	return n
}

// successor returns the next period of sub with package pkg. A package on
// the same billing interval continues the series' calendar (anchor and
// index); a different interval re-anchors the series where the new period
// starts.
func successor(sub store.Subscription, pkg catalog.SubscriptionPackage, choices catalog.Choices, loc *time.Location, now time.Time) store.Subscription {
	next := store.Subscription{
		ID: store.NewID(), SubscriberID: sub.SubscriberID, OrganizationID: sub.OrganizationID, OrderID: sub.OrderID,
		PaymentAgreementID: sub.PaymentAgreementID, PreviousID: &sub.ID, Currency: pkg.Currency, Package: pkg,
		Choices: choices, TimeZone: sub.TimeZone, ChainID: pkg.SubscriptionPackageChainID, ChainStep: pkg.ChainStepOrder,
		StepPeriod: 1, PeriodStart: sub.PeriodEnd, CreatedAt: now.UTC(), TemplatePackageID: sub.TemplatePackageID,
		BindingEnd: sub.BindingEnd, BindingRule: sub.BindingRule,
		ScheduledCancelAt: sub.ScheduledCancelAt, ScheduledCancelReason: sub.ScheduledCancelReason,
	}
	iv := pkg.BillingPlan.Interval()
	if iv == sub.Package.BillingPlan.Interval() {
		next.Anchor, next.PeriodIndex = sub.Anchor, sub.PeriodIndex+1
	} else {
		next.Anchor, next.PeriodIndex = sub.PeriodEnd, 0
	}
	next.PeriodEnd = period.Boundary(next.Anchor, iv, next.PeriodIndex+1, loc)
	schedule(&next, loc)
	return next
}

// schedule sets RenewAt and NextActionAt from the subscription's state.
//
// A renewable subscription renews minimumDueDays local days before its
// period ends, so the next period exists (and, with billing, its invoice
// is issued) that far ahead; never before its own period starts.
func schedule(sub *store.Subscription, loc *time.Location) {
	sub.RenewAt = nil
	if sub.CancelledAt == nil && !sub.Package.AutomaticStop && sub.NextID == nil {
		localEnd := sub.PeriodEnd.In(loc)
		at := period.StartOfDay(time.Date(localEnd.Year(), localEnd.Month(), localEnd.Day()-sub.Package.BillingPlan.MinimumDueDays, 12, 0, 0, 0, loc), loc)
		if at.After(sub.PeriodEnd) {
			at = sub.PeriodEnd
		}
		if at.Before(sub.PeriodStart) {
			at = sub.PeriodStart
		}
		sub.RenewAt = &at
	}
	sub.NextActionAt = nil
	if sub.RenewAt != nil && sub.NextID == nil {
		sub.NextActionAt = sub.RenewAt
	}
	if d := deactivationAt(*sub); d != nil && sub.DeactivatedAt == nil {
		if sub.NextActionAt == nil || d.Before(*sub.NextActionAt) {
			sub.NextActionAt = d
		}
	}
}

// deactivationAt is when the subscription stops delivering for good: when
// its cancellation takes effect, or at the end of its period when it
// stops automatically. A subscription that renews has none.
func deactivationAt(sub store.Subscription) *time.Time {
	switch {
	case sub.CancelEffectiveAt != nil:
		return sub.CancelEffectiveAt
	case sub.Package.AutomaticStop && sub.NextID == nil:
		return &sub.PeriodEnd
	}
	return nil
}
