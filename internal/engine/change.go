package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// ChangeRequest asks for a plan change of a subscription.
type ChangeRequest struct {
	ProcessingType    string
	ScheduledAt       *time.Time
	TemplatePackageID string
	Choices           catalog.Choices
}

// RegisterChange validates and registers a plan change of subscription
// subID at now (docs/ORDERS.md, "Plan changes"). The target is merged now,
// so invalid choices are refused at once; it is merged again when the
// change runs. A series has at most one registered change: a second
// OnScheduledTime or OnRenewal change is refused, while an Immediately
// change supersedes the registered one and runs in the same transaction.
// A change that could never run is refused.
func (e *Engine) RegisterChange(ctx context.Context, subID string, req ChangeRequest, now time.Time) (store.ScheduledChange, error) {
	var errs validation.Errors
	switch req.ProcessingType {
	case store.ChangeImmediately, store.ChangeOnRenewal:
		if req.ScheduledAt != nil {
			errs.Add("scheduledTime", "is only allowed with processingType OnScheduledTime")
		}
	case store.ChangeOnScheduledTime:
		if req.ScheduledAt == nil {
			errs.Add("scheduledTime", "is required with processingType OnScheduledTime")
		} else if !req.ScheduledAt.After(now) {
			errs.Add("scheduledTime", "must be in the future (now is %s)", now.Format(time.RFC3339))
		}
	default:
		errs.Add("processingType", "must be Immediately, OnScheduledTime or OnRenewal")
	}
	if err := errs.Err(); err != nil {
		return store.ScheduledChange{}, err
	}
	cache := newCatalogCache(e.store)
	c := store.ScheduledChange{
		ID: store.NewID(), SubscriptionID: subID, ProcessingType: req.ProcessingType, ScheduledAt: req.ScheduledAt,
		TemplatePackageID: req.TemplatePackageID, Choices: req.Choices, Status: store.ChangeRegistered, RegisteredAt: now,
	}
	err := e.store.InTxRetrying(ctx, func(tx *store.Tx) error {
		sub, err := tx.Subscription(ctx, subID)
		if err != nil {
			return err
		}
		// A change waits on the last period of the series so far: the one
		// whose renewal it affects.
		last := sub
		for last.NextID != nil {
			if last, err = tx.Subscription(ctx, *last.NextID); err != nil {
				return err
			}
		}
		if last.CancelledAt != nil || last.DeactivatedAt != nil || (last.Package.AutomaticStop && !now.Before(last.PeriodEnd)) {
			return validation.Field("id", "subscription %s is cancelled or ended; it cannot change plan", subID)
		}
		// The target is merged now so that invalid choices are refused at
		// once (it reads the catalog on the read pool, outside this write).
		target, err := cache.merge(ctx, req.TemplatePackageID, req.Choices, false)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return validation.Field("templatePackageId", "no template package %s", req.TemplatePackageID)
			}
			return err
		}
		if last.ScheduledCancelAt != nil {
			return validation.Field("id", "subscription %s is cancelled: it ends when its binding period ends (%s); it cannot change plan",
				subID, last.BindingEnd.Format(time.RFC3339))
		}
		if err := changeCanRun(req, last, target, now); err != nil {
			return err
		}
		pending, err := tx.PendingChanges(ctx, []string{last.ID})
		if err != nil {
			return err
		}
		if p, ok := pending[last.ID]; ok {
			if req.ProcessingType != store.ChangeImmediately {
				return validation.Field("processingType",
					"plan change %s (%s) is already registered on this subscription; revoke it first (DELETE /subscription/%s/scheduledchange/%s) or change Immediately",
					p.ID, p.ProcessingType, subID, p.ID)
			}
			if err := tx.FinishChange(ctx, p.ID, store.ChangeRevoked, now, nil, store.ReasonSuperseded); err != nil {
				return err
			}
		}
		c.PendingOnID = last.ID
		if req.ProcessingType != store.ChangeImmediately {
			// A cancellation of the series committing meanwhile would not
			// see this change to revoke it: one of the two must lose.
			if err := tx.TouchSubscription(ctx, last.ID, last.Version); err != nil {
				return err
			}
		}
		if err := tx.InsertChange(ctx, c); err != nil {
			return err
		}
		if req.ProcessingType == store.ChangeImmediately {
			return e.executeChange(ctx, tx, cache, c, now)
		}
		return nil
	})
	if err != nil {
		return store.ScheduledChange{}, err
	}
	if req.ProcessingType == store.ChangeImmediately {
		return e.change(ctx, c.ID)
	}
	return c, nil
}

// changeCanRun refuses a change that could never run on a series whose last
// period is last: one into another currency, an OnRenewal change of a
// series that never renews, an OnScheduledTime change after it ends.
func changeCanRun(req ChangeRequest, last store.Subscription, target catalog.SubscriptionPackage, now time.Time) error {
	var errs validation.Errors
	// During the binding period a plan may only go up: a change to a
	// lower price per period (both spread over a month) must take effect
	// at or after the binding end.
	effect := now
	switch req.ProcessingType {
	case store.ChangeOnScheduledTime:
		effect = *req.ScheduledAt
	case store.ChangeOnRenewal:
		effect = last.PeriodEnd
	}
	if bound(last, effect) {
		from, to := monthly(last.Package.TotalPrice, last.Package.BillingPlan), monthly(target.TotalPrice, target.BillingPlan)
		if to.LessThan(from) {
			errs.Add("bindingPeriod", "the subscription is bound until %s: a change to a package with a lower price per period takes effect at or after then (OnScheduledTime, or OnRenewal from the last bound period)",
				last.BindingEnd.Format(time.RFC3339))
		}
	}
	if target.Currency != last.Currency {
		errs.Add("templatePackageId", "the template is in %s and the subscription in %s: a plan change keeps the currency (cancel the subscription and order anew to switch currency)",
			target.Currency, last.Currency)
	}
	if last.Package.AutomaticStop {
		switch {
		case req.ProcessingType == store.ChangeOnRenewal:
			errs.Add("processingType", "the subscription stops automatically at %s and never renews, so an OnRenewal change would never run; use Immediately or OnScheduledTime",
				last.PeriodEnd.Format(time.RFC3339))
		case req.ProcessingType == store.ChangeOnScheduledTime && !req.ScheduledAt.Before(last.PeriodEnd):
			errs.Add("scheduledTime", "must be before %s, when the subscription stops automatically", last.PeriodEnd.Format(time.RFC3339))
		}
	}
	return errs.Err()
}

func (e *Engine) change(ctx context.Context, id string) (store.ScheduledChange, error) {
	var c store.ScheduledChange
	err := e.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		c, err = tx.Change(ctx, id)
		return err
	})
	return c, err
}

// RevokeChange deletes a registered change before it runs. A change that
// already ran (or was revoked) cannot be revoked: 400.
func (e *Engine) RevokeChange(ctx context.Context, subID, changeID string, now time.Time) error {
	return e.store.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.Change(ctx, changeID)
		if err != nil {
			return err
		}
		series, err := seriesIDs(ctx, tx, subID)
		if err != nil {
			return err
		}
		if !series[c.SubscriptionID] {
			return store.ErrNotFound
		}
		if c.Status != store.ChangeRegistered {
			return validation.Field("changeId", "the change is %s and can no longer be revoked", c.Status)
		}
		return tx.FinishChange(ctx, changeID, store.ChangeRevoked, now, nil, store.ReasonRevoked)
	})
}

// Change returns plan change changeID of the series subscription subID
// belongs to (store.ErrNotFound if it belongs to another).
func (e *Engine) Change(ctx context.Context, subID, changeID string) (store.ScheduledChange, error) {
	var c store.ScheduledChange
	err := e.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if c, err = tx.Change(ctx, changeID); err != nil {
			return err
		}
		series, err := seriesIDs(ctx, tx, subID)
		if err != nil {
			return err
		}
		if !series[c.SubscriptionID] {
			return store.ErrNotFound
		}
		return nil
	})
	return c, err
}

// seriesIDs returns the ids of every period linked to subscription id.
func seriesIDs(ctx context.Context, tx *store.Tx, id string) (map[string]bool, error) {
	ids := map[string]bool{}
	sub, err := tx.Subscription(ctx, id)
	if err != nil {
		return nil, err
	}
	ids[sub.ID] = true
	for cur := sub; cur.PreviousID != nil; {
		if cur, err = tx.Subscription(ctx, *cur.PreviousID); err != nil {
			return nil, err
		}
		ids[cur.ID] = true
	}
	for cur := sub; cur.NextID != nil; {
		if cur, err = tx.Subscription(ctx, *cur.NextID); err != nil {
			return nil, err
		}
		ids[cur.ID] = true
	}
	return ids, nil
}

// SeriesIDs returns the ids of every period linked to subscription id.
func (e *Engine) SeriesIDs(ctx context.Context, id string) ([]string, error) {
	var out []string
	err := e.store.InTx(ctx, func(tx *store.Tx) error {
		ids, err := seriesIDs(ctx, tx, id)
		for k := range ids {
			out = append(out, k)
		}
		return err
	})
	return out, err
}

// executeChange runs an Immediately or OnScheduledTime change at at. For
// billing it takes effect at the start of at's local day: the period of
// the series running at at is cancelled with effect at that midnight (so
// the day of the change is not charged on the old plan), a period already
// created ahead of it is cancelled too and never starts, and a new series
// with the target package starts at that midnight, linked to the old one.
// A change that cannot run any more expires.
func (e *Engine) executeChange(ctx context.Context, tx *store.Tx, cache *catalogCache, c store.ScheduledChange, at time.Time) error {
	cur, err := tx.Subscription(ctx, c.PendingOnID)
	if err != nil {
		return err
	}
	// Walk back to the period that contains at (a change waits on the
	// last period; at may fall in an earlier one that is still running).
	for cur.PeriodStart.After(at) && cur.PreviousID != nil {
		prev, err := tx.Subscription(ctx, *cur.PreviousID)
		if err != nil {
			return err
		}
		if prev.NextID == nil || *prev.NextID != cur.ID || prev.CancelledAt != nil {
			break // cur begins a series: a plan change's period, not a renewal
		}
		cur = prev
	}
	if cur.CancelledAt != nil || cur.DeactivatedAt != nil {
		return tx.FinishChange(ctx, c.ID, store.ChangeExpired, at, nil, store.ReasonSeriesEnded)
	}
	pkg, err := e.instancePackage(ctx, tx, cache, c.TemplatePackageID, c.Choices, at)
	if err != nil {
		var verrs validation.Errors
		if errors.As(err, &verrs) || errors.Is(err, store.ErrNotFound) {
			// The template changed since registration so that the choices
			// no longer fit; the change cannot run.
			e.log.Warn("plan change expired", "change", c.ID, "err", err)
			return tx.FinishChange(ctx, c.ID, store.ChangeExpired, at, nil, store.ReasonCannotRun)
		}
		return err
	}
	if pkg.Currency != cur.Currency {
		e.log.Warn("plan change expired: template currency changed", "change", c.ID, "from", cur.Currency, "to", pkg.Currency)
		return tx.FinishChange(ctx, c.ID, store.ChangeExpired, at, nil, store.ReasonCannotRun)
	}
	loc, err := period.LoadZone(cur.TimeZone)
	if err != nil {
		return err
	}
	start, effective := changeBoundary(cur, at, loc)
	if cur.NextID != nil {
		// A period created ahead of time never starts.
		ahead, err := tx.Subscription(ctx, *cur.NextID)
		if err != nil {
			return err
		}
		if err := e.cancel(ctx, tx, &ahead, at, at, "PlanChange", loc); err != nil {
			return err
		}
	}
	if err := e.cancel(ctx, tx, &cur, at, effective, "PlanChange", loc); err != nil {
		return err
	}
	next, err := Begin(NewSeries{
		SubscriberID: cur.SubscriberID, OrganizationID: cur.OrganizationID, TimeZone: cur.TimeZone, OrderID: cur.OrderID,
		PaymentAgreementID: cur.PaymentAgreementID, PreviousID: &cur.ID, Package: pkg, Choices: c.Choices, Start: start,
		TemplatePackageID: c.TemplatePackageID, BindingEnd: cur.BindingEnd, BindingRule: cur.BindingRule,
	}, at)
	if err != nil {
		return err
	}
	if err := tx.InsertSubscription(ctx, next); err != nil {
		return err
	}
	cur.NextID = &next.ID
	cur.Version++ // cancel wrote the row once already
	if err := tx.UpdateSubscription(ctx, cur); err != nil {
		return err
	}
	if err := tx.FinishChange(ctx, c.ID, store.ChangeExecuted, at, &next.ID, ""); err != nil {
		return err
	}
	return e.created(ctx, tx, []store.NewPeriod{{Sub: next, At: at}})
}

// changeBoundary returns where the new series of a plan change executed at
// at starts, and when the old period cur's cancellation takes effect: the
// start of at's local day, or cur's own start if that is later (a period
// that has not started yet is cancelled at once and never starts; the new
// series begins where it would have).
func changeBoundary(cur store.Subscription, at time.Time, loc *time.Location) (start, effective time.Time) {
	if at.Before(cur.PeriodStart) {
		return cur.PeriodStart, at
	}
	start = period.StartOfDay(at, loc)
	if start.Before(cur.PeriodStart) {
		start = cur.PeriodStart
	}
	return start, start
}

// cancel marks sub cancelled at at with effect at effective and writes it.
// A cancellation in effect at once (or, for a plan change, from the start
// of the day) also deactivates at once.
func (e *Engine) cancel(ctx context.Context, tx *store.Tx, sub *store.Subscription, at, effective time.Time, reason string, loc *time.Location) error {
	sub.CancelledAt, sub.CancelEffectiveAt, sub.CancelReason = &at, &effective, reason
	if err := tx.AddEvent(ctx, store.EventSubscriptionCancelled, subject(sub.ID), subscriptionData(*sub), at); err != nil {
		return err
	}
	if !effective.After(at) {
		sub.DeactivatedAt = &effective
		if err := tx.AddEvent(ctx, store.EventSubscriptionDeactivated, subject(sub.ID), subscriptionData(*sub), at); err != nil {
			return err
		}
	}
	schedule(sub, loc)
	if err := tx.UpdateSubscription(ctx, *sub); err != nil {
		return err
	}
	if e.Hooks.Cancelled != nil {
		return e.Hooks.Cancelled(ctx, tx, *sub, at)
	}
	return nil
}

// Cancellation modes.
const (
	CancelImmediately = "Immediately"
	CancelEndOfPeriod = "EndOfPeriod"
)

// Cancel cancels subscription id at now. Immediately ends it now;
// EndOfPeriod lets it run to its period end and stops the renewal. A period
// that has not started yet (created ahead by a renewal) is cancelled at
// once either way, and never prorated. During a binding period the
// series' rule applies (docs/ORDERS.md, "Binding periods"): EndOfBinding
// moves the cancellation to the binding end (cancelAtBindingEnd),
// ChargeRemainder cancels as asked and charges the remaining bound periods
// (Hooks.BindingRemainder) in the same transaction.
func (e *Engine) Cancel(ctx context.Context, id, mode, reason string, now time.Time) (store.Subscription, error) {
	return e.cancelSubscription(ctx, id, mode, nil, reason, now)
}

// CancelAt cancels subscription id at now with a chosen effective date:
// access ends at the start of that local day (the subscription's time
// zone), which must be a later day than today and fall within the periods
// billed so far — the named period, or the one a renewal created ahead of
// it. A cancellation inside the named period also cancels the period
// created ahead (it never starts); one inside the period ahead leaves the
// named period running to its end. The cancelled period is prorated by the
// proration policy as for any cancellation, from the effective date. The
// field is reported as "cancellationTime". A date before the binding end
// follows the binding's rule as in Cancel.
func (e *Engine) CancelAt(ctx context.Context, id string, at time.Time, reason string, now time.Time) (store.Subscription, error) {
	return e.cancelSubscription(ctx, id, "", &at, reason, now)
}

func (e *Engine) cancelSubscription(ctx context.Context, id, mode string, at *time.Time, reason string, now time.Time) (store.Subscription, error) {
	if _, err := tenancy.From(ctx); err != nil {
		return store.Subscription{}, err
	}
	var out store.Subscription
	err := e.store.InTxRetrying(ctx, func(tx *store.Tx) error {
		p, err := planCancel(ctx, tx, id, mode, at, now, true)
		if err != nil {
			return err
		}
		if err := e.runCancel(ctx, tx, p, reason, now); err != nil {
			return err
		}
		out, err = tx.Subscription(ctx, id)
		return err
	})
	if err != nil {
		return store.Subscription{}, fmt.Errorf("engine: cancel %s: %w", id, err)
	}
	return out, nil
}

// PreviewCancel is what cancelling subscription id at now would do (as
// Cancel with mode, or CancelAt with at when it is not nil), written
// nowhere: each period the cancellation would cancel, with its
// cancellation and deactivation as they would be written, is passed to
// each in a transaction that writes nothing. The same decision
// (planCancel) as the cancellation's, and the same refusals.
func (e *Engine) PreviewCancel(ctx context.Context, id, mode string, at *time.Time, now time.Time, each func(tx *store.Tx, period store.Subscription) error) error {
	if _, err := tenancy.From(ctx); err != nil {
		return err
	}
	err := e.store.InTx(ctx, func(tx *store.Tx) error {
		p, err := planCancel(ctx, tx, id, mode, at, now, true)
		if err != nil {
			return err
		}
		for _, st := range p.steps {
			sub := st.sub
			cancelAt, effective := now, st.effective
			sub.CancelledAt, sub.CancelEffectiveAt, sub.CancelReason = &cancelAt, &effective, ""
			if !effective.After(now) {
				sub.DeactivatedAt = &effective
			}
			if err := each(tx, sub); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("engine: cancel %s: %w", id, err)
	}
	return nil
}

// notScheduled refuses to cancel sub again when a cancellation already
// waits for the binding end on it or on the period created ahead of it.
func notScheduled(ctx context.Context, tx *store.Tx, sub store.Subscription) error {
	last := sub
	if sub.NextID != nil {
		var err error
		if last, err = tx.Subscription(ctx, *sub.NextID); err != nil {
			return err
		}
	}
	for _, p := range []store.Subscription{sub, last} {
		if p.ScheduledCancelAt != nil {
			return validation.Field("id", "subscription %s is already cancelled: it ends when its binding period ends (%s)",
				sub.ID, p.BindingEnd.Format(time.RFC3339))
		}
	}
	return nil
}

// chargeRemainder charges, through Hooks.BindingRemainder, the bound
// periods that follow p's cancellation taking effect at effective.
func (e *Engine) chargeRemainder(ctx context.Context, tx *store.Tx, p store.Subscription, effective, now time.Time) error {
	loc, err := period.LoadZone(p.TimeZone)
	if err != nil {
		return err
	}
	n := remainingBound(p, effective, loc)
	if n == 0 || e.Hooks.BindingRemainder == nil {
		return nil
	}
	return e.Hooks.BindingRemainder(ctx, tx, p, n, now)
}

// runCancel carries out plan p in tx at now: the periods it cancels, the
// changes it revokes, the cancellation it leaves waiting for the binding
// end, the remaining bound periods it charges.
func (e *Engine) runCancel(ctx context.Context, tx *store.Tx, p cancelPlan, reason string, now time.Time) error {
	if len(p.steps) == 0 && len(p.revoke) > 0 {
		if _, err := tx.EndChanges(ctx, p.revoke, store.ChangeRevoked, store.ReasonSubscriptionCancelled, now); err != nil {
			return err
		}
	}
	for i, st := range p.steps {
		if i == len(p.steps)-1 {
			// What waits on the series will never run.
			if _, err := tx.EndChanges(ctx, p.revoke, store.ChangeRevoked, store.ReasonSubscriptionCancelled, now); err != nil {
				return err
			}
		}
		sub := st.sub
		if err := e.cancel(ctx, tx, &sub, now, st.effective, reason, p.loc); err != nil {
			return err
		}
	}
	// The mark goes on the period asked about too (a period ahead of it
	// carries it on), so that it shows the cancellation; the renewal that
	// creates the last bound period creates it cancelled (planRenewal).
	asked := now.UTC()
	for _, w := range p.wait {
		w.ScheduledCancelAt, w.ScheduledCancelReason = &asked, reason
		if err := tx.UpdateSubscription(ctx, w); err != nil {
			return err
		}
	}
	if len(p.wait) > 0 {
		// Told now, so a receiver can confirm the cancellation and its
		// date (scheduledCancelEffectiveAt) to the subscriber.
		if err := tx.AddEvent(ctx, store.EventSubscriptionCancellationScheduled, subject(p.wait[0].ID), subscriptionData(p.wait[0]), now); err != nil {
			return err
		}
	}
	if p.charge != nil {
		return e.chargeRemainder(ctx, tx, *p.charge, p.chargeFrom, now)
	}
	return nil
}

// cancelStep is a period a cancellation cancels and when that takes
// effect.
type cancelStep struct {
	sub       store.Subscription
	effective time.Time
}

// cancelPlan is what cancelling a subscription does: the periods it
// cancels, in order, and the periods whose waiting changes it revokes
// (before the last step).
type cancelPlan struct {
	steps  []cancelStep
	revoke []string
	loc    *time.Location
	// wait are the periods that carry a cancellation waiting for an
	// EndOfBinding binding's end beyond the periods billed so far (no
	// step then).
	wait []store.Subscription
	// charge is the period from whose cancellation at chargeFrom a
	// ChargeRemainder binding's remaining periods are charged; nil when
	// none are.
	charge     *store.Subscription
	chargeFrom time.Time
}

// planCancel decides, in tx, what cancelling subscription id at now does:
// with at nil by mode (Cancel), else with effect at the start of at's
// local day (CancelAt). Refusals are validation errors naming the field.
// With binding, a subscriber's cancellation, the series' binding period
// applies (docs/ORDERS.md, "Binding periods"): EndOfBinding moves it to
// the binding end (planAtBindingEnd), ChargeRemainder keeps it and charges
// the remaining bound periods; a payment stop passes false.
func planCancel(ctx context.Context, tx *store.Tx, id, mode string, at *time.Time, now time.Time, binding bool) (cancelPlan, error) {
	if at == nil && mode != CancelImmediately && mode != CancelEndOfPeriod {
		return cancelPlan{}, validation.Field("mode", "must be Immediately or EndOfPeriod")
	}
	sub, err := tx.Subscription(ctx, id)
	if err != nil {
		return cancelPlan{}, err
	}
	if sub.CancelledAt != nil || sub.DeactivatedAt != nil || (sub.NextID != nil && !now.Before(sub.PeriodEnd)) {
		return cancelPlan{}, validation.Field("id", "subscription %s is already cancelled or ended", id)
	}
	if binding {
		if err := notScheduled(ctx, tx, sub); err != nil {
			return cancelPlan{}, err
		}
	}
	loc, err := period.LoadZone(sub.TimeZone)
	if err != nil {
		return cancelPlan{}, err
	}
	var effective time.Time
	if at == nil {
		effective = now
		if mode == CancelEndOfPeriod && now.After(sub.PeriodStart) {
			effective = sub.PeriodEnd
		}
		if now.Before(sub.PeriodStart) {
			effective = now
		}
		switch {
		case !binding || !bound(sub, effective):
		case sub.BindingRule != catalog.ChargeRemainder:
			return planAtBindingEnd(ctx, tx, sub, now, loc)
		default:
			p, err := planCancelIn(ctx, tx, sub, effective, now, loc)
			p.charge, p.chargeFrom = &sub, effective
			return p, err
		}
		return planCancelIn(ctx, tx, sub, effective, now, loc)
	}
	const field = "cancellationTime"
	effective = period.StartOfDay(*at, loc)
	if !effective.After(now) {
		return cancelPlan{}, validation.Field(field, "must be a later day than today (%s in %s); to end the subscription now use mode Immediately",
			period.StartOfDay(now, loc).In(loc).Format(time.DateOnly), loc)
	}
	if effective.Before(sub.PeriodStart) {
		return cancelPlan{}, validation.Field(field, "is before this period starts (%s)", sub.PeriodStart.In(loc).Format(time.DateOnly))
	}
	// A date inside an EndOfBinding binding moves to its end; one inside
	// a ChargeRemainder binding holds and charges the rest.
	charge := binding && bound(sub, effective) && sub.BindingRule == catalog.ChargeRemainder
	if binding && bound(sub, effective) && !charge {
		return planAtBindingEnd(ctx, tx, sub, now, loc)
	}
	if !effective.After(sub.PeriodEnd) {
		// Within the named period (its end is EndOfPeriod).
		p, err := planCancelIn(ctx, tx, sub, effective, now, loc)
		if charge {
			p.charge, p.chargeFrom = &sub, effective
		}
		return p, err
	}
	if sub.NextID == nil {
		return cancelPlan{}, validation.Field(field, "is after the end of the period billed so far (%s); cancel with mode EndOfPeriod, or again once the next period is created",
			sub.PeriodEnd.In(loc).Format(time.DateOnly))
	}
	ahead, err := tx.Subscription(ctx, *sub.NextID)
	if err != nil {
		return cancelPlan{}, err
	}
	if effective.After(ahead.PeriodEnd) || ahead.CancelledAt != nil {
		return cancelPlan{}, validation.Field(field, "is after the end of the period billed so far (%s)", ahead.PeriodEnd.In(loc).Format(time.DateOnly))
	}
	p := cancelPlan{steps: []cancelStep{{ahead, effective}}, revoke: []string{ahead.ID}, loc: loc}
	if charge {
		p.charge, p.chargeFrom = &ahead, effective
	}
	return p, nil
}

// planAtBindingEnd plans the cancellation of sub, asked at now during an
// EndOfBinding binding, for the binding end: the period that ends there is
// cancelled with effect at its end if it exists (sub, or the period
// created ahead of it); otherwise the cancellation waits on the series'
// last period. Either way the plan change waiting on the series is
// revoked.
func planAtBindingEnd(ctx context.Context, tx *store.Tx, sub store.Subscription, now time.Time, loc *time.Location) (cancelPlan, error) {
	end := *sub.BindingEnd
	if !end.After(sub.PeriodEnd) {
		return planCancelIn(ctx, tx, sub, sub.PeriodEnd, now, loc)
	}
	last, waiting := sub, []string{sub.ID}
	if sub.NextID != nil {
		ahead, err := tx.Subscription(ctx, *sub.NextID)
		if err != nil {
			return cancelPlan{}, err
		}
		if ahead.CancelledAt != nil {
			return cancelPlan{}, validation.Field("id", "subscription %s is already cancelled or ended", sub.ID)
		}
		last, waiting = ahead, append(waiting, ahead.ID)
	}
	if !end.After(last.PeriodEnd) {
		return cancelPlan{steps: []cancelStep{{last, last.PeriodEnd}}, revoke: waiting, loc: loc}, nil
	}
	p := cancelPlan{revoke: waiting, loc: loc, wait: []store.Subscription{sub}}
	if last.ID != sub.ID {
		p.wait = append(p.wait, last)
	}
	return p, nil
}

// planCancelIn is the plan that cancels sub with effect at effective,
// with the period created ahead of it, if any (cancelled at once: it
// never starts).
func planCancelIn(ctx context.Context, tx *store.Tx, sub store.Subscription, effective, now time.Time, loc *time.Location) (cancelPlan, error) {
	p := cancelPlan{revoke: []string{sub.ID}, loc: loc}
	if sub.NextID != nil {
		ahead, err := tx.Subscription(ctx, *sub.NextID)
		if err != nil {
			return cancelPlan{}, err
		}
		p.revoke = append(p.revoke, ahead.ID)
		// The successor stays linked, as the record of what happened.
		if ahead.CancelledAt == nil {
			p.steps = append(p.steps, cancelStep{ahead, now})
		}
	}
	p.steps = append(p.steps, cancelStep{sub, effective})
	return p, nil
}
