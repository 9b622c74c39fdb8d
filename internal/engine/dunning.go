package engine

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// CancelReasonPaymentStop is the reason of a cancellation by a dunning
// process's payment stop.
const CancelReasonPaymentStop = "PaymentStop"

// PaymentStop cancels subscription subscriptionID, whose demand's dunning
// ended in a payment stop, at at; it reports whether it cancelled
// anything. The Dun hook calls it for each payment stop.
type PaymentStop = func(ctx context.Context, tx *store.Tx, subscriptionID string, at time.Time) (bool, error)

// dunning performs the dunning actions due at at, a batch of demands in id
// order, through the Dun hook (invoicing.Dun, wired in internal/server):
// reminders, and payment stops, which cancel the subscription at once
// (paymentStop).
func (e *Engine) dunning(ctx context.Context, tx *store.Tx, at time.Time) (Stats, error) {
	reminders, stops, err := e.Hooks.Dun(ctx, tx, at, e.Batch, e.paymentStop)
	return Stats{Reminders: reminders, PaymentStops: stops}, err
}

// paymentStop cancels, at at, the period of subscriptionID's series that
// runs at at (the demand's own period may have ended and been renewed
// meanwhile). It reports whether it cancelled anything: a series that was
// cancelled or has ended is left alone.
func (e *Engine) paymentStop(ctx context.Context, tx *store.Tx, subscriptionID string, at time.Time) (bool, error) {
	sub, err := tx.Subscription(ctx, subscriptionID)
	if err != nil {
		return false, err
	}
	for sub.NextID != nil && !at.Before(sub.PeriodEnd) {
		if sub, err = tx.Subscription(ctx, *sub.NextID); err != nil {
			return false, err
		}
	}
	if sub.CancelledAt != nil || sub.DeactivatedAt != nil || !at.Before(sub.PeriodEnd) {
		return false, nil
	}
	p, err := planCancel(ctx, tx, sub.ID, CancelImmediately, nil, at, false)
	if err != nil {
		return false, err
	}
	return true, e.runCancel(ctx, tx, p, CancelReasonPaymentStop, at)
}
