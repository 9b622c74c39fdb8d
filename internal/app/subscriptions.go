package app

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
)

// Subscription is the tenant's subscription period id; store.ErrNotFound
// when there is none.
func (a *App) Subscription(ctx context.Context, id string) (store.Subscription, error) {
	return a.store.Subscription(ctx, id)
}

// Subscriptions lists the subscription periods matching f, a page at a
// time, with their whole package when fullPackage (else its summary). It
// waits for a read turn first: list pages read a lot, and turns keep them
// from queuing inside the connection pool (store.ReadTurn).
func (a *App) Subscriptions(ctx context.Context, f store.SubscriptionFilter, p store.Page, fullPackage bool) ([]store.ListedSubscription, string, error) {
	release, err := a.store.ReadTurn(ctx)
	if err != nil {
		return nil, "", err
	}
	defer release()
	return a.store.ListSubscriptionItems(ctx, f, p, fullPackage)
}

// Cancellation is how a subscription is to end: at a chosen time (At), or
// by Mode (engine.CancelEndOfPeriod or engine.CancelImmediately) when At
// is nil.
type Cancellation struct {
	Mode   string
	At     *time.Time
	Reason string
}

// CancelSubscription cancels subscription id at the tenant's time and
// returns the period as it is now and that time (what its status is
// computed at). store.ErrNotFound when there is none; validation.Errors
// when the cancellation cannot be made (a time outside the billed
// periods, a subscription that has ended).
func (a *App) CancelSubscription(ctx context.Context, id string, c Cancellation) (store.Subscription, time.Time, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return store.Subscription{}, now, err
	}
	var sub store.Subscription
	if c.At != nil {
		sub, err = a.engine.CancelAt(ctx, id, *c.At, c.Reason, now)
	} else {
		sub, err = a.engine.Cancel(ctx, id, c.Mode, c.Reason, now)
	}
	return sub, now, err
}

// UndoCancellation takes back the cancellation waiting on subscription
// id's series at the tenant's time (engine.UndoCancel) and returns the
// period asked about as it is now and that time. store.ErrNotFound when
// there is none; validation.Errors naming id when nothing waits or the
// cancellation settled money (docs/ORDERS.md, "Undoing a cancellation").
func (a *App) UndoCancellation(ctx context.Context, id string) (store.Subscription, time.Time, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return store.Subscription{}, now, err
	}
	sub, err := a.engine.UndoCancel(ctx, id, now)
	return sub, now, err
}

// RegisterChange registers a plan change on subscription id at the
// tenant's time. store.ErrNotFound when there is none; validation.Errors
// naming the request's fields (the choices' problems under their own
// names, as the package merge reports them) when the change cannot run.
func (a *App) RegisterChange(ctx context.Context, id string, req engine.ChangeRequest) (store.ScheduledChange, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return store.ScheduledChange{}, err
	}
	return a.engine.RegisterChange(ctx, id, req, now)
}

// ChangesOfSeries lists every plan change registered on any period of the
// series subscription id belongs to, oldest first; store.ErrNotFound when
// there is no such subscription.
func (a *App) ChangesOfSeries(ctx context.Context, id string) ([]store.ScheduledChange, error) {
	ids, err := a.engine.SeriesIDs(ctx, id)
	if err != nil {
		return nil, err
	}
	return a.store.ChangesOfSeries(ctx, ids)
}

// Change is plan change changeID of the series of subscription id;
// store.ErrNotFound when either is unknown or they do not belong together.
func (a *App) Change(ctx context.Context, id, changeID string) (store.ScheduledChange, error) {
	return a.engine.Change(ctx, id, changeID)
}

// RevokeChange revokes a registered plan change before it runs, at the
// tenant's time: store.ErrNotFound as Change, validation.Errors for a
// change that already ran, was revoked or expired.
func (a *App) RevokeChange(ctx context.Context, id, changeID string) error {
	now, err := a.Now(ctx)
	if err != nil {
		return err
	}
	return a.engine.RevokeChange(ctx, id, changeID, now)
}

// CancellationPreview is what a cancellation would do, written nowhere:
// each period it would cancel, when that takes effect, and what settling
// it would credit or give back (invoicing.PreviewCancellation).
type CancellationPreview struct {
	// At is the tenant's time the preview was made at: a cancellation
	// sent later may settle other amounts (fewer unused days).
	At      time.Time
	Periods []CancelledPeriod
}

// CancelledPeriod is one period a cancellation cancels.
type CancelledPeriod struct {
	SubscriptionID string
	PeriodStart    time.Time
	PeriodEnd      time.Time
	// EffectiveAt is when access ends; Deactivated says it ends at once.
	EffectiveAt time.Time
	Deactivated bool
	// Settlement is nil when the cancellation settles nothing on the
	// period's invoice (an effect at the period end, no invoice).
	Settlement *invoicing.CancellationPreview
}

// CancellationPreview previews cancelling subscription id as c would
// (CancelSubscription; c.Reason is not used) at the tenant's time: the
// engine's own decision of which periods are cancelled and when
// (engine.PreviewCancel) and billing's own decision of what that credits
// or gives back. It answers the same refusals as the cancellation:
// store.ErrNotFound, validation.Errors.
func (a *App) CancellationPreview(ctx context.Context, id string, c Cancellation) (CancellationPreview, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return CancellationPreview{}, err
	}
	out := CancellationPreview{At: now, Periods: []CancelledPeriod{}}
	err = a.engine.PreviewCancel(ctx, id, c.Mode, c.At, now, func(tx *store.Tx, p store.Subscription) error {
		cp := CancelledPeriod{SubscriptionID: p.ID, PeriodStart: p.PeriodStart, PeriodEnd: p.PeriodEnd, EffectiveAt: *p.CancelEffectiveAt,
			Deactivated: p.DeactivatedAt != nil}
		s, ok, err := invoicing.PreviewCancellation(ctx, tx, p)
		if err != nil {
			return err
		}
		if ok {
			cp.Settlement = &s
		}
		out.Periods = append(out.Periods, cp)
		return nil
	})
	return out, err
}
