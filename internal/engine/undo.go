package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// UndoCancel takes back the cancellation waiting on the series that
// subscription id belongs to, at now, when taking it back undoes
// everything it did (docs/ORDERS.md, "Undoing a cancellation"):
//
//   - a cancellation waiting for an EndOfBinding binding's end: the mark
//     comes off every period that carries it;
//   - a cancellation with effect at the end of the running period (or of
//     the period a renewal created ahead): it took nothing off the
//     invoice, so the period simply renews again.
//
// Refused, with a 400 naming id, when there is nothing waiting, or when
// the cancellation has settled money that undoing would have to give
// back: a period ahead cancelled and credited with it, an effect inside
// a period (prorated), the remainder of a ChargeRemainder binding
// charged. Plan changes the cancellation revoked stay revoked. The period
// is scheduled again (schedule), so a renewal whose time has passed runs
// at the next Advance.
func (e *Engine) UndoCancel(ctx context.Context, id string, now time.Time) (store.Subscription, error) {
	if _, err := tenancy.From(ctx); err != nil {
		return store.Subscription{}, err
	}
	var out store.Subscription
	err := e.store.InTxRetrying(ctx, func(tx *store.Tx) error {
		sub, err := undoCancel(ctx, tx, id, now)
		if err != nil {
			return err
		}
		if err := tx.AddEvent(ctx, store.EventSubscriptionCancellationRemoved, subject(sub.ID), subscriptionData(sub), now); err != nil {
			return err
		}
		out, err = tx.Subscription(ctx, id)
		return err
	})
	if err != nil {
		return store.Subscription{}, fmt.Errorf("engine: undo cancellation of %s: %w", id, err)
	}
	return out, nil
}

// undoCancel writes the undoing in tx and returns the period the
// cancellation came off (the event's subject).
func undoCancel(ctx context.Context, tx *store.Tx, id string, now time.Time) (store.Subscription, error) {
	cur, err := tx.Subscription(ctx, id)
	if err != nil {
		return store.Subscription{}, err
	}
	// The period running now: an older id of the series leads to it.
	for cur.NextID != nil && !now.Before(cur.PeriodEnd) {
		if cur, err = tx.Subscription(ctx, *cur.NextID); err != nil {
			return store.Subscription{}, err
		}
	}
	if cur.DeactivatedAt != nil {
		return store.Subscription{}, validation.Field("id", "subscription %s has ended; order the package again instead", id)
	}
	loc, err := period.LoadZone(cur.TimeZone)
	if err != nil {
		return store.Subscription{}, err
	}
	// The live end of the series: the running period and the one a
	// renewal created ahead of it.
	live := []store.Subscription{cur}
	if cur.NextID != nil {
		ahead, err := tx.Subscription(ctx, *cur.NextID)
		if err != nil {
			return store.Subscription{}, err
		}
		live = append(live, ahead)
	}
	changed := map[string]store.Subscription{}
	off := cur
	// A cancellation that was written: on the running period (its end) or
	// on the period ahead (created cancelled at a binding's end, or
	// cancelled at its end).
	for _, p := range slices.Backward(live) {
		if p.CancelledAt == nil {
			continue
		}
		if p.DeactivatedAt != nil {
			// The period ahead was cancelled at once with the running
			// one, its invoice credited: undoing would bill it again.
			return store.Subscription{}, validation.Field("id",
				"subscription %s: the period after it (from %s) was cancelled and credited with it; order the package again for after %s instead",
				cur.ID, p.PeriodStart.In(loc).Format(time.DateOnly), cur.PeriodEnd.In(loc).Format(time.DateOnly))
		}
		if p.CancelEffectiveAt == nil || !p.CancelEffectiveAt.Equal(p.PeriodEnd) {
			return store.Subscription{}, validation.Field("id",
				"subscription %s is cancelled from %s, inside its period, and the unused days were settled; order the package again instead",
				p.ID, p.CancelEffectiveAt.In(loc).Format(time.DateOnly))
		}
		if p.BindingRule == catalog.ChargeRemainder && bound(p, p.PeriodEnd) {
			return store.Subscription{}, validation.Field("id",
				"subscription %s: the remaining binding periods were charged at the cancellation; credit that charge and order the package again instead", p.ID)
		}
		p.CancelledAt, p.CancelEffectiveAt, p.CancelReason = nil, nil, ""
		schedule(&p, loc)
		changed[p.ID], off = p, p
		break
	}
	// A cancellation waiting for an EndOfBinding binding's end: a mark on
	// the periods of the series so far (a renewal carries it on).
	ids, err := seriesIDs(ctx, tx, cur.ID)
	if err != nil {
		return store.Subscription{}, err
	}
	for _, pid := range slices.Sorted(maps.Keys(ids)) {
		p, ok := changed[pid]
		if !ok {
			if p, err = tx.Subscription(ctx, pid); err != nil {
				return store.Subscription{}, err
			}
		}
		if p.ScheduledCancelAt == nil {
			continue
		}
		p.ScheduledCancelAt, p.ScheduledCancelReason = nil, ""
		changed[pid] = p
	}
	if len(changed) == 0 {
		return store.Subscription{}, validation.Field("id", "subscription %s has no cancellation waiting to take effect", id)
	}
	for _, pid := range slices.Sorted(maps.Keys(changed)) {
		if err := tx.UpdateSubscription(ctx, changed[pid]); err != nil {
			return store.Subscription{}, err
		}
	}
	return off, nil
}
