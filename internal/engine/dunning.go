package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/shopspring/decimal"
)

// CancelReasonPaymentStop is the reason of a cancellation by a dunning
// process's payment stop.
const CancelReasonPaymentStop = "PaymentStop"

// dunning performs the dunning actions due at at, a batch of demands in id
// order: the next reminder (with its fee booked as a charge on the
// subscriber account), or, after the last reminder, the payment stop,
// which cancels the subscription at once (settled by the proration policy
// like any cancellation). A demand that was paid or credited in full has
// no dunning action left (payments clear it; this is the second guard).
func (e *Engine) dunning(ctx context.Context, tx *store.Tx, at time.Time) (Stats, error) {
	var st Stats
	demands, err := tx.DueDunning(ctx, at, e.Batch)
	if err != nil {
		return st, err
	}
	processes := map[string]*store.DunningProcess{}
	// Reminders are written together (store.IssueReminders), before any
	// payment stop of the batch and at its end, so the writes keep their
	// order.
	var reminders []store.ReminderIssue
	flush := func() error {
		err := tx.IssueReminders(ctx, reminders)
		reminders = reminders[:0]
		return err
	}
	for _, d := range demands {
		var p *store.DunningProcess
		if d.ProcessID != nil {
			if p = processes[*d.ProcessID]; p == nil {
				got, err := tx.DunningProcess(ctx, *d.ProcessID)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return st, err
				}
				if err == nil {
					p = &got
					processes[got.ID] = p
				}
			}
		}
		if p == nil || d.Status == billing.DemandPaid || d.Status == billing.DemandCredited {
			if err := tx.SetNextDunning(ctx, d.ID, at, nil, d.RemindersSent); err != nil {
				return st, err
			}
			continue
		}
		loc, err := period.LoadZone(d.TimeZone)
		if err != nil {
			return st, err
		}
		if d.RemindersSent < len(p.ReminderDays) {
			r, err := reminder(d, p, loc, at)
			if err != nil {
				return st, fmt.Errorf("engine: reminder for demand %s: %w", d.ID, err)
			}
			reminders = append(reminders, r)
			st.Reminders++
			continue
		}
		// Every reminder went out. The process may have been edited since
		// this action was scheduled: without a payment stop dunning ends;
		// a stop that now falls later waits for its time.
		var stopAt *time.Time
		if p.PaymentStopDays != nil {
			t := store.DunningTime(d.DueAt, p.ReminderDays[len(p.ReminderDays)-1]+*p.PaymentStopDays, loc)
			stopAt = &t
		}
		if stopAt == nil || stopAt.After(at) {
			if err := tx.SetNextDunning(ctx, d.ID, at, stopAt, d.RemindersSent); err != nil {
				return st, err
			}
			continue
		}
		if err := tx.SetNextDunning(ctx, d.ID, at, nil, d.RemindersSent); err != nil {
			return st, err
		}
		if err := flush(); err != nil {
			return st, fmt.Errorf("engine: reminders: %w", err)
		}
		stopped, err := e.paymentStop(ctx, tx, d, at)
		if err != nil {
			return st, fmt.Errorf("engine: payment stop for demand %s: %w", d.ID, err)
		}
		if stopped {
			st.PaymentStops++
		}
	}
	if err := flush(); err != nil {
		return st, fmt.Errorf("engine: reminders: %w", err)
	}
	return st, nil
}

// reminder is demand d's next reminder at at, with what follows it
// scheduled: the next reminder, the payment stop, or nothing.
func reminder(d store.DunningDemand, p *store.DunningProcess, loc *time.Location, at time.Time) (store.ReminderIssue, error) {
	n := d.RemindersSent + 1
	fee, err := ReminderFee(string(p.ReminderFee), d.Currency)
	if err != nil {
		return store.ReminderIssue{}, err
	}
	r := store.ReminderIssue{
		Reminder: store.Reminder{ID: store.NewID(), PaymentDemandID: d.ID, InvoiceID: d.InvoiceID, SubscriberID: d.SubscriberID,
			Number: n, IssuedAt: at, Fee: fee},
		// Reminder fees are outside the scope of VAT (a compensation, not
		// a supply); the next invoice bills them.
		AccountID:      d.AccountID,
		FeeDescription: fmt.Sprintf("Reminder fee, invoice %d (reminder %d)", d.InvoiceNumber, n),
		Was:            at,
	}
	switch last := p.ReminderDays[len(p.ReminderDays)-1]; {
	case n < len(p.ReminderDays):
		t := store.DunningTime(d.DueAt, p.ReminderDays[n], loc)
		r.Next = &t
	case p.PaymentStopDays != nil:
		t := store.DunningTime(d.DueAt, last+*p.PaymentStopDays, loc)
		r.Next = &t
	}
	return r, nil
}

// ReminderFee converts a dunning process's decimal fee into minor units
// of currency, rounded half away from zero.
func ReminderFee(fee, currency string) (int64, error) {
	if fee == "" {
		return 0, nil
	}
	d, err := decimal.NewFromString(fee)
	if err != nil {
		return 0, fmt.Errorf("reminder fee %q: %w", fee, err)
	}
	cur, ok := money.LookupCurrency(currency)
	if !ok {
		return 0, fmt.Errorf("reminder fee: unknown currency %q", currency)
	}
	return money.RoundToMinor(d, cur)
}

// paymentStop cancels, at at, the period of d's subscription series that
// runs at at (the demand's own period may have ended and been renewed
// meanwhile). It reports whether it cancelled anything: a series that was
// cancelled or has ended is left alone.
func (e *Engine) paymentStop(ctx context.Context, tx *store.Tx, d store.DunningDemand, at time.Time) (bool, error) {
	if d.SubscriptionID == nil {
		return false, nil
	}
	sub, err := tx.Subscription(ctx, *d.SubscriptionID)
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
	_, err = e.cancelIn(ctx, tx, sub, CancelImmediately, CancelReasonPaymentStop, at)
	return true, err
}
