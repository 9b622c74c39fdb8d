package invoicing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/shopspring/decimal"
)

// Stop performs the payment stop of a demand of subscription
// subscriptionID at at (the engine cancels the subscription) and reports
// whether it stopped anything. It is engine.PaymentStop, spelled without
// naming the engine, which imports no billing package.
type Stop = func(ctx context.Context, tx *store.Tx, subscriptionID string, at time.Time) (bool, error)

// DunningStats counts what Dun did.
type DunningStats struct {
	Reminders    int
	PaymentStops int
}

// DunCounts is Dun in the shape of the engine's hook (engine.Hooks.Dun),
// which adds the counts to its stats: server and bench wire this one.
func DunCounts(ctx context.Context, tx *store.Tx, at time.Time, limit int, stop Stop) (reminders, stops int, err error) {
	d, err := Dun(ctx, tx, at, limit, stop)
	return d.Reminders, d.PaymentStops, err
}

// Dun performs, in tx, the dunning actions due at at of up to limit
// demands in id order: the next reminder (with its fee booked as a charge
// on the subscriber account), or, after the last reminder, the payment
// stop, which stop carries out (settled by the proration policy like any
// cancellation). A demand that was paid or credited in full has no dunning
// action left (settling clears it; this is the second guard).
func Dun(ctx context.Context, tx *store.Tx, at time.Time, limit int, stop Stop) (DunningStats, error) {
	var st DunningStats
	demands, err := dueDunning(ctx, tx, at, limit)
	if err != nil {
		return st, err
	}
	processes := map[string]*DunningProcess{}
	// Reminders are written together (issueReminders), before any payment
	// stop of the batch and at its end, so the writes keep their order.
	var reminders []reminderIssue
	flush := func() error {
		err := issueReminders(ctx, tx, reminders)
		reminders = reminders[:0]
		return err
	}
	for _, d := range demands {
		var p *DunningProcess
		if d.ProcessID != nil {
			if p = processes[*d.ProcessID]; p == nil {
				got, err := dunningProcessIn(ctx, tx, *d.ProcessID)
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
			if err := setNextDunning(ctx, tx, d.ID, at, nil, d.RemindersSent); err != nil {
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
				return st, fmt.Errorf("invoicing: reminder for demand %s: %w", d.ID, err)
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
			t := DunningTime(d.DueAt, p.ReminderDays[len(p.ReminderDays)-1]+*p.PaymentStopDays, loc)
			stopAt = &t
		}
		if stopAt == nil || stopAt.After(at) {
			if err := setNextDunning(ctx, tx, d.ID, at, stopAt, d.RemindersSent); err != nil {
				return st, err
			}
			continue
		}
		if err := setNextDunning(ctx, tx, d.ID, at, nil, d.RemindersSent); err != nil {
			return st, err
		}
		if err := flush(); err != nil {
			return st, fmt.Errorf("invoicing: reminders: %w", err)
		}
		if d.SubscriptionID == nil {
			continue // a demand of no subscription has nothing to stop
		}
		stopped, err := stop(ctx, tx, *d.SubscriptionID, at)
		if err != nil {
			return st, fmt.Errorf("invoicing: payment stop for demand %s: %w", d.ID, err)
		}
		if stopped {
			st.PaymentStops++
		}
	}
	if err := flush(); err != nil {
		return st, fmt.Errorf("invoicing: reminders: %w", err)
	}
	return st, nil
}

// reminderIssue is one reminder to issue: the reminder itself (its Fee in
// minor units; FeeItemID is set by issueReminders), the fee's description
// on the subscriber account, and the demand's dunning schedule to move
// from Was to Next.
type reminderIssue struct {
	Reminder       Reminder
	AccountID      string
	FeeDescription string
	Was            time.Time
	Next           *time.Time
}

// reminder is demand d's next reminder at at, with what follows it
// scheduled: the next reminder, the payment stop, or nothing.
func reminder(d dunningDemand, p *DunningProcess, loc *time.Location, at time.Time) (reminderIssue, error) {
	n := d.RemindersSent + 1
	fee, err := ReminderFee(string(p.ReminderFee), d.Currency)
	if err != nil {
		return reminderIssue{}, err
	}
	r := reminderIssue{
		Reminder: Reminder{ID: store.NewID(), PaymentDemandID: d.ID, InvoiceID: d.InvoiceID, SubscriberID: d.SubscriberID,
			Number: n, IssuedAt: at, Fee: fee},
		AccountID:      d.AccountID,
		FeeDescription: fmt.Sprintf("Reminder fee, invoice %d (reminder %d)", d.InvoiceNumber, n),
		Was:            at,
	}
	switch last := p.ReminderDays[len(p.ReminderDays)-1]; {
	case n < len(p.ReminderDays):
		t := DunningTime(d.DueAt, p.ReminderDays[n], loc)
		r.Next = &t
	case p.PaymentStopDays != nil:
		t := DunningTime(d.DueAt, last+*p.PaymentStopDays, loc)
		r.Next = &t
	}
	return r, nil
}

// issueReminders issues reminders in tx as sets, in the order given: each
// fee is booked as a charge on the subscriber account with its ledger
// entry, the reminder recorded with its ReminderIssued event, and the
// demand's next dunning time and reminder count moved on — if the
// demand's dunning time is still Was, else the whole call is ErrConflict
// (as is a reminder number issued before).
func issueReminders(ctx context.Context, tx *store.Tx, rs []reminderIssue) error {
	if len(rs) == 0 {
		return nil
	}
	created := time.Now().UTC().Truncate(time.Microsecond)
	var (
		items     []store.NewItem
		entries   []store.NewEntry
		reminders = make([]Reminder, 0, len(rs))
		events    = make([]store.NewEvent, 0, len(rs))
		moves     = make([]dunningMove, 0, len(rs))
	)
	// Reminder fees are outside the scope of VAT (a compensation, not a
	// supply); the next invoice bills them.
	zero := catalog.PercentOf(0)
	for i := range rs {
		r := &rs[i].Reminder
		if r.Fee > 0 {
			id := store.NewID()
			r.FeeItemID = &id
			items = append(items, store.NewItem{ID: id, AccountID: rs[i].AccountID, Kind: billing.ItemCharge,
				Description: rs[i].FeeDescription, Amount: r.Fee, VATRate: zero, BookedAt: r.IssuedAt, CreatedAt: created,
				Source: store.ItemSource{Kind: store.ItemSourceReminder, ID: r.ID}})
			entries = append(entries, store.NewEntry{AccountID: rs[i].AccountID, Kind: store.EntryCharge, Amount: r.Fee,
				ItemID: id, BookedAt: r.IssuedAt})
		}
		reminders = append(reminders, *r)
		events = append(events, store.NewEvent{Type: EventReminderIssued, Subject: "/invoice/" + r.InvoiceID, At: r.IssuedAt,
			Data: map[string]any{"reminderId": r.ID, "paymentDemandId": r.PaymentDemandID, "invoiceId": r.InvoiceID,
				"subscriberId": r.SubscriberID, "reminderNumber": r.Number}})
		moves = append(moves, dunningMove{DemandID: r.PaymentDemandID, Was: rs[i].Was, Next: rs[i].Next, Reminders: r.Number})
	}
	if err := tx.InsertItems(ctx, items); err != nil {
		return err
	}
	if err := tx.AddEntries(ctx, entries); err != nil {
		return err
	}
	if err := insertReminders(ctx, tx, reminders); err != nil {
		return err
	}
	if err := tx.AddEvents(ctx, events); err != nil {
		return err
	}
	return moveDunning(ctx, tx, moves)
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
