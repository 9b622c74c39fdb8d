package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// A running subscription moved from another system (`kadens import`,
// docs/MIGRATION.md) enters Kadens as the period it is in: the newest
// period the source system created and billed. Kadens writes that period
// as the first of a series, as an order's completion would, but does not
// bill it (the source did) and keeps its calendar: the series' anchor is
// the source's, so month ends continue where they were (a series begun on
// 31 January renews 30 April → 31 May). From its first renewal on, the
// series is an ordinary one: the engine renews it, walks its chain and
// bills each period through the PeriodsCreated hook.

// ImportedSeries is a running subscription to import. Field names in the
// validation errors of Check are the import format's (docs/MIGRATION.md).
type ImportedSeries struct {
	SubscriberID       string
	OrganizationID     string
	TimeZone           string
	PaymentAgreementID *string
	// TemplatePackageID is the template of the package the subscription is
	// on now: for a chain, the template of the current step.
	TemplatePackageID string
	Choices           catalog.Choices
	// StepPeriod is which billing period of its chain step the current
	// period is (1-based); 0 means 1. Ignored off a chain.
	StepPeriod int
	// Anchor is the date the series' calendar counts from (its first
	// period's start in the source); zero means PeriodStart.
	Anchor time.Time
	// PeriodStart and PeriodEnd bound the current period: local midnights
	// of the organization's time zone on the billing plan's calendar.
	PeriodStart, PeriodEnd time.Time
}

// Importer imports running subscriptions. It caches the catalog reads of
// one import, which may run to many thousands of subscriptions on a few
// templates; it is not safe for concurrent use.
type Importer struct {
	e     *Engine
	cache *catalogCache
}

// Importer returns an importer reading the catalog as it is now.
func (e *Engine) Importer() *Importer { return &Importer{e: e, cache: newCatalogCache(e.store)} }

// Check returns the current period of n as it would be imported (not
// written, with the template's package: a chained one is frozen into its
// chain instance by Write), or the problems of n as validation errors
// named by the import format's fields: templatePackageId and the choices'
// fields (billingPlanId, units, price, …), chainStepPeriod, seriesStart,
// periodStart and periodEnd. now is the tenant's time: the current period
// must not have ended.
func (im *Importer) Check(ctx context.Context, n ImportedSeries, now time.Time) (store.Subscription, validation.Errors, error) {
	pkg, err := im.cache.merge(ctx, n.TemplatePackageID, n.Choices, false)
	var verrs validation.Errors
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Subscription{}, validation.Field("templatePackageId", "no template package %s in this tenant", n.TemplatePackageID), nil
	case errors.As(err, &verrs):
		out := make(validation.Errors, len(verrs))
		for i, fe := range verrs {
			if fe.Field == "id" || fe.Field == "packageChainId" {
				fe.Field = "templatePackageId"
			}
			out[i] = fe
		}
		return store.Subscription{}, out, nil
	case err != nil:
		return store.Subscription{}, nil, err
	}
	loc, err := period.LoadZone(n.TimeZone)
	if err != nil {
		return store.Subscription{}, nil, fmt.Errorf("engine: time zone: %w", err)
	}
	anchor := n.Anchor
	if anchor.IsZero() {
		anchor = n.PeriodStart
	}
	sched, err := period.NewSchedule(anchor, pkg.BillingPlan.Interval(), loc)
	if err != nil {
		return store.Subscription{}, nil, fmt.Errorf("engine: billing plan: %w", err)
	}
	var errs validation.Errors
	iv := pkg.BillingPlan.Interval()
	idx := sched.Index(n.PeriodStart)
	start, end := sched.Period(idx)
	switch {
	case n.PeriodStart.Before(anchor):
		errs.Add("periodStart", "is before seriesStart %s", anchor.In(loc).Format(time.DateOnly))
	case !start.Equal(n.PeriodStart):
		errs.Add("periodStart", "%s is not a period boundary of billing plan %q (every %s) counted from %s in %s",
			n.PeriodStart.In(loc).Format(time.RFC3339), pkg.BillingPlan.Name, iv, anchor.In(loc).Format(time.DateOnly), n.TimeZone)
	case !end.Equal(n.PeriodEnd):
		errs.Add("periodEnd", "%s does not end the period from %s of billing plan %q (every %s): it ends %s; give seriesStart when the series began on a later day of the month",
			n.PeriodEnd.In(loc).Format(time.RFC3339), start.In(loc).Format(time.DateOnly), pkg.BillingPlan.Name, iv, end.In(loc).Format(time.RFC3339))
	case !n.PeriodEnd.After(now):
		errs.Add("periodEnd", "%s has passed: import the newest period the source system created", n.PeriodEnd.In(loc).Format(time.RFC3339))
	}
	step := max(n.StepPeriod, 1)
	switch {
	case pkg.SubscriptionPackageChainID == nil && n.StepPeriod > 1:
		errs.Add("chainStepPeriod", "must be empty or 1: template package %s is on no package chain", n.TemplatePackageID)
	case pkg.ChainStepPeriods != nil && step > *pkg.ChainStepPeriods:
		errs.Add("chainStepPeriod", "is %d, but step %d of the chain lasts %d periods", step, *pkg.ChainStepOrder, *pkg.ChainStepPeriods)
	}
	if len(errs) > 0 {
		return store.Subscription{}, errs, nil
	}
	sub := store.Subscription{
		SubscriberID: n.SubscriberID, OrganizationID: n.OrganizationID, PaymentAgreementID: n.PaymentAgreementID,
		Currency: pkg.Currency, Package: pkg, Choices: n.Choices, TimeZone: n.TimeZone, StepPeriod: step,
		ChainID: pkg.SubscriptionPackageChainID, ChainStep: pkg.ChainStepOrder,
		Anchor: period.StartOfDay(anchor, loc), PeriodIndex: idx, PeriodStart: start, PeriodEnd: end, CreatedAt: now.UTC(),
	}
	if sub.ChainID == nil {
		sub.StepPeriod = 1
	}
	id := n.TemplatePackageID
	sub.TemplatePackageID = &id
	schedule(&sub, loc)
	return sub, nil, nil
}

// Write checks n (problems are validation errors, as from Check) and
// returns its current period to write in tx with Insert: a chained
// template's chain is frozen now into a chain instance written in tx, as
// for an order, so the series walks the chain's steps as they are today.
func (im *Importer) Write(ctx context.Context, tx *store.Tx, n ImportedSeries, now time.Time) (store.Subscription, error) {
	sub, verrs, err := im.Check(ctx, n, now)
	if err != nil {
		return store.Subscription{}, err
	}
	if len(verrs) > 0 {
		return store.Subscription{}, verrs
	}
	if sub.ChainID != nil {
		pkg, err := im.e.instancePackage(ctx, tx, im.cache, n.TemplatePackageID, n.Choices, now)
		if err != nil {
			return store.Subscription{}, err
		}
		sub.Package, sub.ChainID, sub.ChainStep = pkg, pkg.SubscriptionPackageChainID, pkg.ChainStepOrder
	}
	sub.ID = store.NewID()
	return sub, nil
}

// Insert writes imported periods (from Write) in tx and records their
// SubscriptionCreated events at now. It does not call the PeriodsCreated
// hook: the source system billed these periods; Kadens bills from their
// renewals on.
func (im *Importer) Insert(ctx context.Context, tx *store.Tx, subs []store.Subscription, now time.Time) error {
	// Each chain instance written belongs to one of subs: keeping them
	// would only hold memory for the rest of a long import.
	im.cache.forgetInstances()
	if len(subs) == 0 {
		return nil
	}
	if err := tx.InsertSubscriptions(ctx, subs); err != nil {
		return fmt.Errorf("engine: import: %w", err)
	}
	events := make([]store.NewEvent, len(subs))
	for i, sub := range subs {
		events[i] = store.NewEvent{Type: store.EventSubscriptionCreated, Subject: subject(sub.ID), Data: subscriptionData(sub), At: now}
	}
	return tx.AddEvents(ctx, events)
}
