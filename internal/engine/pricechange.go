package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// DefaultNoticeDays is the notice a price change gives when the request
// names none: Norwegian consumer rules ask for a month's notice of a price
// increase on a running subscription.
const DefaultNoticeDays = 30

// maxNoticeDays bounds the notice (a year).
const maxNoticeDays = 365

// PriceChangeRequest asks to move the running subscriptions of a template
// to another template.
type PriceChangeRequest struct {
	TargetTemplatePackageID string
	EffectiveFrom           time.Time
	NoticeDays              int
}

// PriceChangePreview tells what a price change would do if it started now.
type PriceChangePreview struct {
	// Subscriptions is how many running series would move; Skipped how
	// many would not (a plan change of their own is pending, they stop
	// automatically, or the target cannot take them).
	Subscriptions int    `json:"subscriptions"`
	Skipped       int    `json:"skipped"`
	Currency      string `json:"currency"`
	// CurrentMonthlyRevenue and NewMonthlyRevenue are what the moving
	// series bring per month (each period's total price spread over its
	// interval: a year is 12 months, a week 12/52 of a month, a day 12/365),
	// before and after.
	CurrentMonthlyRevenue catalog.Amount `json:"currentMonthlyRevenue"`
	NewMonthlyRevenue     catalog.Amount `json:"newMonthlyRevenue"`
}

// priceChangeEvent is the payload of PriceChangeNotified.
type priceChangeEvent struct {
	Currency       string         `json:"currency"`
	CurrentPrice   catalog.Amount `json:"currentPrice"`
	EffectiveFrom  time.Time      `json:"effectiveFrom"`
	NewPrice       catalog.Amount `json:"newPrice"`
	OrganizationID string         `json:"organizationId"`
	PlanChangeID   string         `json:"planChangeId"`
	PriceChangeID  string         `json:"priceChangeId"`
	SubscriberID   string         `json:"subscriberId"`
	SubscriptionID string         `json:"subscriptionId"`
}

// checkPriceChange validates req for template templateID at now.
func (e *Engine) checkPriceChange(ctx context.Context, cache *catalogCache, templateID string, req PriceChangeRequest, now time.Time) error {
	source, err := catalogdb.PackageForMerge(ctx, e.store, templateID)
	if err != nil {
		return err // 404: the template in the path does not exist
	}
	var errs validation.Errors
	switch {
	case req.TargetTemplatePackageID == templateID:
		errs.Add("targetTemplatePackageId", "is the template itself")
	default:
		target, err := cache.merge(ctx, req.TargetTemplatePackageID, catalog.Choices{}, false)
		var verrs validation.Errors
		switch {
		case errors.Is(err, store.ErrNotFound):
			errs.Add("targetTemplatePackageId", "no template package %s", req.TargetTemplatePackageID)
		case errors.As(err, &verrs):
			errs.Add("targetTemplatePackageId", "cannot be ordered: %s", verrs.Error())
		case err != nil:
			return err
		case target.Currency != source.Template.Currency:
			errs.Add("targetTemplatePackageId", "is in %s and the template in %s: a price change keeps the currency", target.Currency, source.Template.Currency)
		}
	}
	if req.NoticeDays < 0 || req.NoticeDays > maxNoticeDays {
		errs.Add("noticeDays", "must be 0 to %d", maxNoticeDays)
	} else if starts := req.EffectiveFrom.AddDate(0, 0, -req.NoticeDays); starts.Before(now) {
		errs.Add("effectiveFrom", "must leave the notice period of %d days: %s at the earliest", req.NoticeDays,
			now.AddDate(0, 0, req.NoticeDays).UTC().Format(time.RFC3339))
	}
	return errs.Err()
}

// SchedulePriceChange validates and schedules a price change of template
// templateID at now (docs/CATALOG.md, "Price changes").
func (e *Engine) SchedulePriceChange(ctx context.Context, templateID string, req PriceChangeRequest, now time.Time) (store.PriceChange, error) {
	cache := newCatalogCache(e.store)
	if err := e.checkPriceChange(ctx, cache, templateID, req, now); err != nil {
		return store.PriceChange{}, err
	}
	p := store.PriceChange{
		ID: store.NewID(), TemplatePackageID: templateID, TargetTemplatePackageID: req.TargetTemplatePackageID,
		EffectiveFrom: req.EffectiveFrom.UTC(), NoticeDays: req.NoticeDays, StartsAt: req.EffectiveFrom.AddDate(0, 0, -req.NoticeDays).UTC(),
		Status: store.PriceChangeScheduled, CreatedAt: now.UTC(),
	}
	err := e.store.InTx(ctx, func(tx *store.Tx) error { return catalogdb.InsertPriceChange(ctx, tx, p) })
	if err != nil {
		return store.PriceChange{}, err
	}
	return p, nil
}

// RevokePriceChange revokes a price change before it starts; after, 400.
func (e *Engine) RevokePriceChange(ctx context.Context, templateID, id string, now time.Time) error {
	p, err := catalogdb.PriceChange(ctx, e.store, templateID, id)
	if err != nil {
		return err
	}
	if p.Status != store.PriceChangeScheduled {
		return validation.Field("priceChangeId", "the price change is %s and can no longer be revoked; revoke the plan changes it registered one by one", p.Status)
	}
	err = e.store.InTx(ctx, func(tx *store.Tx) error { return catalogdb.RevokePriceChange(ctx, tx, id, now) })
	if errors.Is(err, store.ErrConflict) {
		return validation.Field("priceChangeId", "the price change started meanwhile and can no longer be revoked")
	}
	return err
}

// PreviewPriceChange tells what a price change would do if it started now.
func (e *Engine) PreviewPriceChange(ctx context.Context, templateID string, req PriceChangeRequest, now time.Time) (PriceChangePreview, error) {
	cache := newCatalogCache(e.store)
	if err := e.checkPriceChange(ctx, cache, templateID, req, now); err != nil {
		return PriceChangePreview{}, err
	}
	var out PriceChangePreview
	err := e.store.InTx(ctx, func(tx *store.Tx) error {
		plan, err := e.planPriceChange(ctx, tx, cache, store.PriceChange{TemplatePackageID: templateID, TargetTemplatePackageID: req.TargetTemplatePackageID,
			EffectiveFrom: req.EffectiveFrom}, now)
		if err != nil {
			return err
		}
		out = plan.preview
		return nil
	})
	return out, err
}

// priceChangePlan is what a price change does to the running series of
// its template: the changes to register, one per series that moves.
type priceChangePlan struct {
	changes []store.ScheduledChange
	events  []store.NewEvent
	preview PriceChangePreview
}

// planPriceChange decides, for each running series of p's template,
// whether it moves and to which package.
func (e *Engine) planPriceChange(ctx context.Context, tx *store.Tx, cache *catalogCache, p store.PriceChange, at time.Time) (priceChangePlan, error) {
	var plan priceChangePlan
	subs, err := tx.LiveSeriesOfTemplate(ctx, p.TemplatePackageID)
	if err != nil {
		return plan, err
	}
	ids := make([]string, len(subs))
	for i, sub := range subs {
		ids[i] = sub.ID
	}
	pending, err := tx.PendingChanges(ctx, ids)
	if err != nil {
		return plan, err
	}
	current, next := decimal.Zero, decimal.Zero
	for _, sub := range subs {
		if _, own := pending[sub.ID]; own || sub.Package.AutomaticStop {
			plan.preview.Skipped++
			continue
		}
		choices := sub.Choices
		pkg, err := cache.merge(ctx, p.TargetTemplatePackageID, choices, false)
		if err != nil {
			// The subscription's choices may not fit the target; its
			// defaults do unless the target cannot be ordered at all.
			choices = catalog.Choices{}
			pkg, err = cache.merge(ctx, p.TargetTemplatePackageID, choices, false)
		}
		if err != nil || pkg.Currency != sub.Currency {
			plan.preview.Skipped++
			continue
		}
		loc, err := period.LoadZone(sub.TimeZone)
		if err != nil {
			return plan, err
		}
		c := store.ScheduledChange{
			ID: store.NewID(), SubscriptionID: sub.ID, PendingOnID: sub.ID, ProcessingType: store.ChangeOnRenewal,
			TemplatePackageID: p.TargetTemplatePackageID, Choices: choices, Status: store.ChangeRegistered, RegisteredAt: at,
			PriceChangeID: &p.ID, NotBefore: &p.EffectiveFrom,
		}
		plan.changes = append(plan.changes, c)
		plan.events = append(plan.events, store.NewEvent{Type: store.EventPriceChangeNotified, Subject: subject(sub.ID), At: at,
			Data: priceChangeEvent{Currency: sub.Currency, CurrentPrice: sub.Package.TotalPrice, NewPrice: pkg.TotalPrice,
				EffectiveFrom: firstRenewalFrom(sub, p.EffectiveFrom, loc), OrganizationID: sub.OrganizationID, PlanChangeID: c.ID,
				PriceChangeID: p.ID, SubscriberID: sub.SubscriberID, SubscriptionID: sub.ID}})
		plan.preview.Subscriptions++
		plan.preview.Currency = sub.Currency
		current = current.Add(monthly(sub.Package.TotalPrice, sub.Package.BillingPlan))
		next = next.Add(monthly(pkg.TotalPrice, pkg.BillingPlan))
	}
	if plan.preview.CurrentMonthlyRevenue, err = toAmount(current, plan.preview.Currency); err != nil {
		return plan, err
	}
	if plan.preview.NewMonthlyRevenue, err = toAmount(next, plan.preview.Currency); err != nil {
		return plan, err
	}
	return plan, nil
}

// startPriceChanges starts the price changes due at at: each running
// series of the template gets an OnRenewal change that waits for the first
// renewal from the effective date on, and its subscriber a notice.
func (e *Engine) startPriceChanges(ctx context.Context, tx *store.Tx, cache *catalogCache, at time.Time) (Stats, error) {
	var st Stats
	due, err := catalogdb.DuePriceChanges(ctx, tx, at)
	if err != nil {
		return st, err
	}
	for _, p := range due {
		plan, err := e.planPriceChange(ctx, tx, cache, p, at)
		if err != nil {
			return st, fmt.Errorf("engine: price change %s: %w", p.ID, err)
		}
		if err := tx.InsertChanges(ctx, plan.changes); err != nil {
			return st, err
		}
		if err := tx.AddEvents(ctx, plan.events); err != nil {
			return st, err
		}
		if err := catalogdb.StartPriceChange(ctx, tx, p.ID, at, plan.preview.Subscriptions, plan.preview.Skipped); err != nil {
			return st, err
		}
		st.PriceChangeNotices += len(plan.changes)
	}
	return st, nil
}

// firstRenewalFrom is the start of the first period of sub's series that
// starts at or after from, assuming the series keeps renewing on its plan.
func firstRenewalFrom(sub store.Subscription, from time.Time, loc *time.Location) time.Time {
	iv := sub.Package.BillingPlan.Interval()
	start := sub.PeriodEnd
	for i := sub.PeriodIndex + 1; start.Before(from) && i < sub.PeriodIndex+100000; i++ {
		start = period.Boundary(sub.Anchor, iv, i+1, loc)
	}
	return start
}

// monthly spreads amount, the price of one period of plan, over a month.
func monthly(amount catalog.Amount, plan catalog.PlanCopy) decimal.Decimal {
	v := decimal.New(amount.Minor, 0)
	n := decimal.NewFromInt(int64(max(plan.IntervalCount, 1)))
	switch plan.IntervalUnit {
	case period.Year:
		return v.Div(n.Mul(decimal.NewFromInt(12)))
	case period.Week:
		return v.Mul(decimal.NewFromInt(52)).Div(n.Mul(decimal.NewFromInt(12)))
	case period.Day:
		return v.Mul(decimal.NewFromInt(365)).Div(n.Mul(decimal.NewFromInt(12)))
	}
	return v.Div(n)
}

// toAmount rounds a sum of minor units of currency code once, half away
// from zero.
func toAmount(minor decimal.Decimal, code string) (catalog.Amount, error) {
	c, ok := money.LookupCurrency(code)
	if !ok {
		return catalog.Amount{Digits: 2}, nil // nothing moves: no currency seen
	}
	n, err := money.RoundToMinor(minor.Shift(-int32(c.Digits)), c)
	if err != nil {
		return catalog.Amount{}, fmt.Errorf("engine: monthly revenue: %w", err)
	}
	return catalog.Amount{Minor: n, Digits: c.Digits}, nil
}
