package delivery

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/ledger"
	"github.com/kadens/kadens/internal/store"
)

// The credit of a stop's missed editions (docs/PRINT.md, "When a stop is
// credited"): per period of the series, in arrears. The part of a stop
// that falls in one period is credited once all of its days have passed,
// at the series' next renewal, as an allowance on the subscriber account
// that the renewal's own invoice (issued right after, in the same hook)
// applies. Booked once per (stop, period): delivery_stop_credits' unique
// key, so a retry, a second worker or a concurrent call books nothing more.

// ItemSourceStop is the source kind of a stop's allowance: its
// delivery_stop_credits row, which names the item back.
const ItemSourceStop = "DeliveryStop"

func init() {
	ledger.RegisterItemSource(ledger.ItemSource{Kind: ItemSourceStop, Table: "delivery_stop_credits",
		Column: "allowance_item_id", Amount: "amount", ItemKind: billing.ItemAllowance})
}

// Credit is one booked credit of a stop in a period.
type Credit struct {
	ID, StopID, PeriodID string
	Editions, Credited   int
	Amount               int64
	AllowanceItemID      *string
	BookedAt             time.Time
}

// segment is the part of a stop in one period: the credited days in it
// and the period's editions, which the credit divides the price by.
type segment struct {
	period   store.Subscription
	last     Date // the segment's last day: it is due once this has passed
	credited int
	editions int
}

// segments are the stop's parts in the periods of its series, newest
// period first: from the series' last period back to the one its first
// day falls in. A period's part ends where the period does or where its
// cancellation takes effect (a cancelled series credits nothing after
// it), and counts only days its own package delivers (a plan change to a
// package without print credits nothing from then on).
func segments(ctx context.Context, tx *store.Tx, s Stop) ([]segment, error) {
	sub, err := tx.Subscription(ctx, s.SubscriptionID)
	if err != nil {
		return nil, err
	}
	var out []segment
	for {
		loc, err := zone(sub)
		if err != nil {
			return nil, err
		}
		start, end := DateOf(sub.PeriodStart, loc), DateOf(sub.PeriodEnd, loc)
		cut := end
		for _, t := range []*time.Time{sub.CancelEffectiveAt, sub.DeactivatedAt} {
			if t != nil && DateOf(*t, loc).Before(cut) {
				cut = DateOf(*t, loc)
			}
		}
		if !s.Last.Before(start) && s.First.Before(cut) {
			w, err := packageWeekdays(ctx, tx, tx.TenantID(), sub)
			if err != nil {
				return nil, err
			}
			seg := segment{period: sub, last: s.Last}
			if !seg.last.Before(cut) {
				seg.last = cut.AddDays(-1)
			}
			for _, d := range s.Credited {
				if !d.Before(start) && d.Before(cut) && w.Has(d.Weekday()) {
					seg.credited++
				}
			}
			if seg.credited > 0 {
				cal, err := calendarIn(ctx, tx, tx.TenantID(), start, end)
				if err != nil {
					return nil, err
				}
				seg.editions = Schedule{Weekdays: w, Calendar: cal}.Editions(start, end)
				if seg.credited > seg.editions {
					// A day closed after the stop was decided: it is not an
					// edition of the period and not credited.
					seg.credited = seg.editions
				}
				out = append(out, seg)
			}
		}
		if !s.First.Before(start) || sub.PreviousID == nil {
			return out, nil
		}
		if sub, err = tx.Subscription(ctx, *sub.PreviousID); err != nil {
			return nil, err
		}
	}
}

// bookDue books, at business time at, the credits of stop s whose
// periods' parts have all passed by at's local day, and returns how many
// it booked now (an already booked part books nothing).
// With settle, every part is booked whatever its days: the series is
// cancelled, and its parts end where the cancellation takes effect.
func bookDue(ctx context.Context, tx *store.Tx, s Stop, at time.Time, settle bool) (int, error) {
	if s.DeletedAt != nil || len(s.Credited) == 0 {
		return 0, nil
	}
	segs, err := segments(ctx, tx, s)
	if err != nil {
		return 0, err
	}
	at = at.UTC().Truncate(time.Microsecond)
	booked := 0
	for _, seg := range segs {
		loc, err := zone(seg.period)
		if err != nil {
			return booked, err
		}
		if !settle && !seg.last.Before(DateOf(at, loc)) {
			continue // a day of the part is still ahead
		}
		amount, err := EditionCredit(seg.period.Package.TotalPrice.Minor, seg.editions, seg.credited)
		if err != nil {
			return booked, err
		}
		id := store.NewID()
		res, err := tx.Exec(ctx, `INSERT INTO delivery_stop_credits (tenant_id, id, stop_id, period_id, editions, credited, amount, booked_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant_id, stop_id, period_id) DO NOTHING`,
			tx.TenantID(), id, s.ID, seg.period.ID, seg.editions, seg.credited, amount, store.TimeParam(at))
		if err != nil {
			return booked, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return booked, err
		} else if n == 0 {
			continue // booked before
		}
		booked++
		if amount == 0 {
			continue
		}
		account, err := tx.EnsureAccount(ctx, seg.period.SubscriberID, seg.period.Currency, at)
		if err != nil {
			return booked, err
		}
		desc := fmt.Sprintf("Vacation stop %s–%s: %d of %d editions not delivered", s.First, s.Last, seg.credited, seg.editions)
		it, err := invoicing.BookItem(ctx, tx, account, billing.ItemAllowance, desc, amount, catalog.PercentOf(0), at,
			store.ItemSource{Kind: ItemSourceStop, ID: id})
		if err != nil {
			return booked, err
		}
		if _, err := tx.Exec(ctx, `UPDATE delivery_stop_credits SET allowance_item_id = $3 WHERE tenant_id = $1 AND id = $2`,
			tx.TenantID(), id, it.ID); err != nil {
			return booked, err
		}
	}
	return booked, nil
}

// BookCredits books the due credits of stop id of the series of period
// subscriptionID at at, in a transaction of its own, and returns how many
// parts it booked: what the renewal hook does for one stop, for a caller
// that cannot wait for the renewal (and for the tests of its
// idempotency).
func BookCredits(ctx context.Context, st *store.Store, subscriptionID, id string, at time.Time) (int, error) {
	var n int
	err := st.InTxRetrying(ctx, func(tx *store.Tx) error {
		_, s, err := stopOf(ctx, tx, subscriptionID, id)
		if err != nil {
			return err
		}
		n, err = bookDue(ctx, tx, s, at, false)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delivery: book credits of stop %s: %w", id, err)
	}
	return n, nil
}

// Credits lists the credits booked for stop id of the series of period
// subscriptionID, oldest first.
func Credits(ctx context.Context, st *store.Store, subscriptionID, id string) ([]Credit, error) {
	var out []Credit
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if _, _, err := stopOf(ctx, tx, subscriptionID, id); err != nil {
			return err
		}
		var err error
		out, err = stopCredits(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("delivery: credits of stop %s: %w", id, err)
	}
	return out, nil
}

// RenewalHook wraps the engine's PeriodsCreated hook (invoicing's
// IssuePeriods): before the new periods are invoiced, the stops of each
// renewed series move to the new last period, and their parts that have
// passed are credited, so the renewal's invoice applies the allowance. A
// tenant without stops costs one indexed read per batch.
func RenewalHook(next func(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error) func(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error {
	return func(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error {
		if err := followRenewals(ctx, tx, periods); err != nil {
			return fmt.Errorf("delivery: stops of renewed periods: %w", err)
		}
		if next == nil {
			return nil
		}
		return next(ctx, tx, periods)
	}
}

// followRenewals moves the stops and the delivery addresses of each
// renewed series to its new last period, and books what has become due:
// the stops' passed parts, the addresses' surcharges once they apply.
func followRenewals(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error {
	var stops, addresses int
	err := tx.QueryRow(ctx, `SELECT
			CASE WHEN EXISTS (SELECT 1 FROM delivery_stops WHERE tenant_id = $1 AND deleted_at IS NULL) THEN 1 ELSE 0 END,
			CASE WHEN EXISTS (SELECT 1 FROM delivery_addresses WHERE tenant_id = $1 AND deleted_at IS NULL) THEN 1 ELSE 0 END`,
		tx.TenantID()).Scan(&stops, &addresses)
	if err != nil || stops+addresses == 0 {
		return err
	}
	next, prev, err := renewedFrom(ctx, tx, periods)
	if err != nil || len(prev) == 0 {
		return err
	}
	if stops > 0 {
		if err := followStops(ctx, tx, next, prev); err != nil {
			return err
		}
	}
	if addresses > 0 {
		if err := followAddresses(ctx, tx, next, prev); err != nil {
			return err
		}
	}
	return nil
}

// renewedFrom maps the periods a batch renews (or a plan change
// continues) to the new period, and lists them.
func renewedFrom(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) (map[string]store.NewPeriod, []any, error) {
	next := map[string]store.NewPeriod{}
	var prev []any
	for _, p := range periods {
		if p.Sub.PreviousID != nil {
			next[*p.Sub.PreviousID] = p
			prev = append(prev, *p.Sub.PreviousID)
		}
	}
	if len(prev) == 0 {
		return nil, nil, nil
	}
	// A plan change begins a new series linked to the period running at the
	// change, and a period the old series had renewed into ahead of it
	// (which never starts) may be where the stops are: they move too. Such
	// a batch is of one period, and the ahead period is found among its
	// subscriber's periods (indexed by subscriber).
	if len(periods) == 1 && periods[0].Sub.PreviousID != nil {
		p := periods[0]
		ahead, err := store.QueryAll(ctx, tx, func(row store.Scanner) (string, error) {
			var id string
			return id, row.Scan(&id)
		}, `SELECT id FROM subscriptions WHERE tenant_id = $1 AND subscriber_id = $2 AND previous_id = $3 AND id <> $4`,
			tx.TenantID(), p.Sub.SubscriberID, *p.Sub.PreviousID, p.Sub.ID)
		if err != nil {
			return nil, nil, err
		}
		for _, id := range ahead {
			next[id] = p
			prev = append(prev, id)
		}
	}
	return next, prev, nil
}

func placeholders(args []any) string {
	ph := make([]string, len(args))
	for i := range args {
		ph[i] = fmt.Sprintf("$%d", i+2)
	}
	return strings.Join(ph, ", ")
}

func followStops(ctx context.Context, tx *store.Tx, next map[string]store.NewPeriod, prev []any) error {
	stops, err := store.QueryAll(ctx, tx, scanStop, `SELECT `+stopColumns+` FROM delivery_stops WHERE tenant_id = $1 AND deleted_at IS NULL
		AND subscription_id IN (`+placeholders(prev)+`) ORDER BY id`, append([]any{tx.TenantID()}, prev...)...)
	if err != nil {
		return err
	}
	for _, s := range stops {
		p := next[s.SubscriptionID]
		if _, err := tx.Exec(ctx, `UPDATE delivery_stops SET subscription_id = $3 WHERE tenant_id = $1 AND id = $2`,
			tx.TenantID(), s.ID, p.Sub.ID); err != nil {
			return err
		}
		s.SubscriptionID = p.Sub.ID
		if _, err := bookDue(ctx, tx, s, p.At, false); err != nil {
			return err
		}
	}
	return nil
}

func stopCredits(ctx context.Context, tx *store.Tx, stopID string) ([]Credit, error) {
	return store.QueryAll(ctx, tx, func(row store.Scanner) (Credit, error) {
		var c Credit
		err := row.Scan(&c.ID, &c.StopID, &c.PeriodID, &c.Editions, &c.Credited, &c.Amount, &c.AllowanceItemID, &c.BookedAt)
		c.BookedAt = c.BookedAt.UTC()
		return c, err
	}, `SELECT id, stop_id, period_id, editions, credited, amount, allowance_item_id, booked_at FROM delivery_stop_credits
		WHERE tenant_id = $1 AND stop_id = $2 ORDER BY booked_at, id`, tx.TenantID(), stopID)
}

// CancelHook wraps the engine's Cancelled hook (invoicing's
// SettleCancellation): a cancellation (a plan change's too) settles the
// stops of the series at once, before the cancellation is billed: each
// stop's credited days before the cancellation takes effect are booked
// now, because no renewal will come to book them. A stop so credited can
// no longer be changed or deleted.
func CancelHook(next func(ctx context.Context, tx *store.Tx, sub store.Subscription, at time.Time) error) func(ctx context.Context, tx *store.Tx, sub store.Subscription, at time.Time) error {
	return func(ctx context.Context, tx *store.Tx, sub store.Subscription, at time.Time) error {
		// A period cancelled before it starts (one renewed into ahead) has
		// delivered nothing; the cancellation of the period running then
		// settles the series, once its own effect is written (a plan change
		// cancels the period ahead first).
		if sub.CancelEffectiveAt == nil || sub.CancelEffectiveAt.After(sub.PeriodStart) {
			if err := settleSeries(ctx, tx, sub, at); err != nil {
				return fmt.Errorf("delivery: stops of cancelled subscription %s: %w", sub.ID, err)
			}
		}
		if next == nil {
			return nil
		}
		return next(ctx, tx, sub, at)
	}
}

func settleSeries(ctx context.Context, tx *store.Tx, sub store.Subscription, at time.Time) error {
	last, err := lastPeriod(ctx, tx, sub.ID)
	if err != nil {
		return err
	}
	stops, err := seriesStops(ctx, tx, tx.TenantID(), last.ID, false)
	if err != nil {
		return err
	}
	for _, s := range stops {
		if _, err := bookDue(ctx, tx, s, at, true); err != nil {
			return err
		}
	}
	// The addresses that apply before the effect: their surcharge is due,
	// and no renewal will come to book it.
	addresses, err := seriesAddresses(ctx, tx, tx.TenantID(), last.ID)
	if err != nil {
		return err
	}
	cut := sub.CancelEffectiveAt
	if cut == nil {
		cut = &at
	}
	for _, a := range addresses {
		if _, err := bookSurcharge(ctx, tx, last, a, at, cut); err != nil {
			return err
		}
	}
	return nil
}

// followAddresses moves the addresses of the renewed periods prev to
// their new periods and books the surcharges of those that apply by the
// renewal.
func followAddresses(ctx context.Context, tx *store.Tx, next map[string]store.NewPeriod, prev []any) error {
	addresses, err := store.QueryAll(ctx, tx, scanAddress, `SELECT `+addressColumns+` FROM delivery_addresses WHERE tenant_id = $1
		AND deleted_at IS NULL AND subscription_id IN (`+placeholders(prev)+`) ORDER BY id`, append([]any{tx.TenantID()}, prev...)...)
	if err != nil {
		return err
	}
	periods := map[string]store.Subscription{}
	for _, a := range addresses {
		p := next[a.SubscriptionID]
		if _, err := tx.Exec(ctx, `UPDATE delivery_addresses SET subscription_id = $3 WHERE tenant_id = $1 AND id = $2`,
			tx.TenantID(), a.ID, p.Sub.ID); err != nil {
			return err
		}
		a.SubscriptionID = p.Sub.ID
		sub, ok := periods[p.Sub.ID]
		if !ok {
			// The period as stored: its package, zone and organization.
			if sub, err = tx.Subscription(ctx, p.Sub.ID); err != nil {
				return err
			}
			periods[p.Sub.ID] = sub
		}
		if _, err := bookSurcharge(ctx, tx, sub, a, p.At, nil); err != nil {
			return err
		}
	}
	return nil
}
