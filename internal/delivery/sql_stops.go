package delivery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// Vacation stops as stored (docs/PRINT.md, "Vacation stops"): one row per
// stop, on the series' last period (subscription_id, moved forward by the
// renewal hook, credit.go), so a stop belongs to the series and not to the
// one period it was asked on.

// Stop states, derived from the days and the tenant's clock, not stored.
const (
	StopPlanned = "Planned" // the first day is still ahead
	StopActive  = "Active"  // between the first and the last day, both included
	StopEnded   = "Ended"   // the last day has passed
	StopDeleted = "Deleted" // deleted before it started
)

// Stop is a vacation stop of a subscription series.
type Stop struct {
	ID string
	// SubscriptionID is the series' last period when read; AskedOnID the
	// period the stop was made on.
	SubscriptionID, AskedOnID string
	First, Last               Date
	// Missed and Credited are what StopRules.Check decided when the stop
	// was made or last changed.
	Missed, Credited     []Date
	CreatedAt, UpdatedAt time.Time
	DeletedAt            *time.Time
}

// State is the stop's state on day today (the organization's local day).
func (s Stop) State(today Date) string {
	switch {
	case s.DeletedAt != nil:
		return StopDeleted
	case today.Before(s.First):
		return StopPlanned
	case s.Last.Before(today):
		return StopEnded
	}
	return StopActive
}

func joinDates(ds []Date) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

func splitDates(s string) ([]Date, error) {
	if s == "" {
		return nil, nil
	}
	var out []Date
	for _, p := range strings.Split(s, ",") {
		d, err := ParseDate(p)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

const stopColumns = `id, subscription_id, asked_on_id, first_date, last_date, missed, credited, created_at, updated_at, deleted_at`

func scanStop(row store.Scanner) (Stop, error) {
	var s Stop
	var first, last, missed, credited string
	var deleted *time.Time
	if err := row.Scan(&s.ID, &s.SubscriptionID, &s.AskedOnID, &first, &last, &missed, &credited, &s.CreatedAt, &s.UpdatedAt, &deleted); err != nil {
		return Stop{}, err
	}
	var err error
	if s.First, err = ParseDate(first); err != nil {
		return Stop{}, err
	}
	if s.Last, err = ParseDate(last); err != nil {
		return Stop{}, err
	}
	if s.Missed, err = splitDates(missed); err != nil {
		return Stop{}, err
	}
	if s.Credited, err = splitDates(credited); err != nil {
		return Stop{}, err
	}
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	if deleted != nil {
		t := deleted.UTC()
		s.DeletedAt = &t
	}
	return s, nil
}

// lastPeriod follows the renewals from period id to the series' last
// period, the one its stops are kept on.
func lastPeriod(ctx context.Context, tx *store.Tx, id string) (store.Subscription, error) {
	sub, err := tx.Subscription(ctx, id)
	if err != nil {
		return store.Subscription{}, err
	}
	for sub.NextID != nil {
		if sub, err = tx.Subscription(ctx, *sub.NextID); err != nil {
			return store.Subscription{}, err
		}
	}
	return sub, nil
}

// zone is the period's time zone (the organization's), where its days are.
func zone(sub store.Subscription) (*time.Location, error) {
	loc, err := time.LoadLocation(sub.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("delivery: time zone of subscription %s: %w", sub.ID, err)
	}
	return loc, nil
}

// packageWeekdays are the days a period's package is delivered: the union
// of the patterns of its products (included and additional). None: the
// package is digital only.
func packageWeekdays(ctx context.Context, q store.Querier, tenant string, sub store.Subscription) (Weekdays, error) {
	var ids []any
	for _, l := range sub.Package.Products {
		ids = append(ids, l.ProductID)
	}
	for _, l := range sub.Package.AdditionalProducts {
		ids = append(ids, l.ProductID)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	ph := make([]string, len(ids))
	for i := range ids {
		ph[i] = fmt.Sprintf("$%d", i+2)
	}
	ws, err := store.QueryAll(ctx, q, func(row store.Scanner) (int, error) {
		var w int
		return w, row.Scan(&w)
	}, `SELECT weekdays FROM delivery_schedules WHERE tenant_id = $1 AND product_id IN (`+strings.Join(ph, ", ")+`)`,
		append([]any{tenant}, ids...)...)
	if err != nil {
		return 0, fmt.Errorf("delivery: schedule of subscription %s: %w", sub.ID, err)
	}
	var w Weekdays
	for _, x := range ws {
		w |= Weekdays(x) & AllWeekdays
	}
	return w, nil
}

func calendarIn(ctx context.Context, q store.Querier, tenant string, from, to Date) (Calendar, error) {
	days, err := nonPublishingDaysIn(ctx, q, tenant, from, to)
	if err != nil {
		return Calendar{}, err
	}
	ds := make([]Date, len(days))
	for i, d := range days {
		ds[i] = d.Date
	}
	return NewCalendar(ds...), nil
}

// seriesStops are the stops kept on a series' last period, deleted ones
// too when withDeleted, oldest first.
func seriesStops(ctx context.Context, q store.Querier, tenant, lastID string, withDeleted bool) ([]Stop, error) {
	cond := ` AND deleted_at IS NULL`
	if withDeleted {
		cond = ``
	}
	return store.QueryAll(ctx, q, scanStop, `SELECT `+stopColumns+` FROM delivery_stops
		WHERE tenant_id = $1 AND subscription_id = $2`+cond+` ORDER BY first_date, id`, tenant, lastID)
}

// checkStop decides req for the series whose last period is last,
// leaving out stop except (the one being changed): the organization's
// rules over the period's print schedule and binding, no overlap with the
// series' other stops, and the yearly bound counted over them.
func checkStop(ctx context.Context, tx *store.Tx, last store.Subscription, req StopRequest, except string, now time.Time) (StopDecision, error) {
	rules, _, err := stopRulesIn(ctx, tx, tx.TenantID(), last.OrganizationID)
	if err != nil {
		return StopDecision{}, err
	}
	loc, err := zone(last)
	if err != nil {
		return StopDecision{}, err
	}
	w, err := packageWeekdays(ctx, tx, tx.TenantID(), last)
	if err != nil {
		return StopDecision{}, err
	}
	// The calendar reaches from today over the whole range and the notice
	// (at most 30 delivery days, so 366 days is ample).
	today := DateOf(now, loc)
	from, to := today, req.Last.AddDays(1)
	if req.First.Before(from) {
		from = req.First
	}
	if n := today.AddDays(366); to.Before(n) {
		to = n
	}
	cal, err := calendarIn(ctx, tx, tx.TenantID(), from, to)
	if err != nil {
		return StopDecision{}, err
	}
	others, err := seriesStops(ctx, tx, tx.TenantID(), last.ID, false)
	if err != nil {
		return StopDecision{}, err
	}
	byYear := map[int]int{}
	for _, o := range others {
		if o.ID == except {
			continue
		}
		if !o.Last.Before(req.First) && !req.Last.Before(o.First) {
			return StopDecision{}, validation.Field("firstDate", "rule overlap: the subscription has a stop from %s to %s (%s); stops may not overlap",
				o.First, o.Last, o.ID)
		}
		for _, d := range o.Credited {
			byYear[d.Year]++
		}
	}
	return rules.Check(req, StopContext{Now: now, Loc: loc, Schedule: Schedule{Weekdays: w, Calendar: cal},
		BindingEndsAt: last.BindingEnd, CreditedByYear: byYear})
}

// A stop may only be made on a series that still runs: a stop on an
// ended or cancelled series has nothing to stop.
func seriesRuns(last store.Subscription, req StopRequest, loc *time.Location) error {
	if last.DeactivatedAt != nil {
		return validation.Field("subscriptionId", "the subscription has ended; there is nothing to stop")
	}
	if last.CancelEffectiveAt != nil && !req.First.Before(DateOf(*last.CancelEffectiveAt, loc)) {
		return validation.Field("firstDate", "the subscription ends on %s; a stop must start before", DateOf(*last.CancelEffectiveAt, loc))
	}
	return nil
}

// StopEvent is the data of the DeliveryStop* events.
type StopEvent struct {
	DeliveryStopID string `json:"deliveryStopId"`
	SubscriptionID string `json:"subscriptionId"`
	SubscriberID   string `json:"subscriberId"`
	FirstDate      string `json:"firstDate"`
	LastDate       string `json:"lastDate"`
	MissedEditions int    `json:"missedEditions"`
	Credited       int    `json:"creditedEditions"`
}

func stopEvent(tx *store.Tx, ctx context.Context, kind string, last store.Subscription, s Stop, at time.Time) error {
	return tx.AddEvents(ctx, []store.NewEvent{{Type: kind, Subject: "/subscription/" + last.ID + "/deliverystop/" + s.ID,
		Data: StopEvent{DeliveryStopID: s.ID, SubscriptionID: last.ID, SubscriberID: last.SubscriberID, FirstDate: s.First.String(),
			LastDate: s.Last.String(), MissedEditions: len(s.Missed), Credited: len(s.Credited)}, At: at}})
}

// CreateStop makes a vacation stop on the series of the context tenant's
// period subscriptionID (any period of it), checked by the organization's
// rules; a refusal is a 400 naming the field and the rule.
func CreateStop(ctx context.Context, st *store.Store, subscriptionID string, req StopRequest, now time.Time) (Stop, error) {
	now = now.UTC().Truncate(time.Microsecond)
	var out Stop
	err := st.InTxRetrying(ctx, func(tx *store.Tx) error {
		last, err := lastPeriod(ctx, tx, subscriptionID)
		if err != nil {
			return err
		}
		loc, err := zone(last)
		if err != nil {
			return err
		}
		if err := seriesRuns(last, req, loc); err != nil {
			return err
		}
		dec, err := checkStop(ctx, tx, last, req, "", now)
		if err != nil {
			return err
		}
		s := Stop{ID: store.NewID(), SubscriptionID: last.ID, AskedOnID: subscriptionID, First: req.First, Last: req.Last,
			Missed: dec.Missed, Credited: dec.Credited, CreatedAt: now, UpdatedAt: now}
		// order_id: the distribution list finds a copy's stops by its order
		// (every period of the series, and of a plan change's, keeps it).
		if _, err := tx.Exec(ctx, `INSERT INTO delivery_stops (tenant_id, id, subscription_id, asked_on_id, first_date, last_date,
				missed, credited, created_at, updated_at, order_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)`,
			tx.TenantID(), s.ID, s.SubscriptionID, subscriptionID, s.First.String(), s.Last.String(), joinDates(s.Missed),
			joinDates(s.Credited), store.TimeParam(now), last.OrderID); err != nil {
			return err
		}
		out = s
		return stopEvent(tx, ctx, store.EventDeliveryStopCreated, last, s, now)
	})
	if err != nil {
		return Stop{}, fmt.Errorf("delivery: create stop on subscription %s: %w", subscriptionID, err)
	}
	return out, nil
}

// stopOf reads stop id of the series of period subscriptionID (not
// deleted): another series' stop, like another tenant's, is not found.
func stopOf(ctx context.Context, tx *store.Tx, subscriptionID, id string) (store.Subscription, Stop, error) {
	if !store.ValidID(id) {
		return store.Subscription{}, Stop{}, store.ErrNotFound
	}
	last, err := lastPeriod(ctx, tx, subscriptionID)
	if err != nil {
		return store.Subscription{}, Stop{}, err
	}
	s, err := scanStop(tx.QueryRow(ctx, `SELECT `+stopColumns+` FROM delivery_stops
		WHERE tenant_id = $1 AND id = $2 AND subscription_id = $3 AND deleted_at IS NULL`, tx.TenantID(), id, last.ID))
	return last, s, store.NotFound(err)
}

// startedError refuses to change or delete a stop that started: its days
// were not delivered and may already be credited.
func startedError(s Stop, today Date) error {
	if st := s.State(today); st != StopPlanned {
		return validation.Field("firstDate", "the stop is %s (it started on %s); only a stop that has not started can be changed or deleted",
			st, s.First)
	}
	return nil
}

// creditedError refuses to change or delete a stop whose credit was
// booked (a cancellation settled it): the allowance is on the account.
func creditedError(ctx context.Context, tx *store.Tx, s Stop) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM delivery_stop_credits WHERE tenant_id = $1 AND stop_id = $2`,
		tx.TenantID(), s.ID).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return validation.Field("firstDate", "the stop was credited when the subscription was cancelled; it can no longer be changed or deleted")
	}
	return nil
}

// ChangeStop moves the days of a stop that has not started, checked again
// as a new one (its own old days do not count against it).
func ChangeStop(ctx context.Context, st *store.Store, subscriptionID, id string, req StopRequest, now time.Time) (Stop, error) {
	now = now.UTC().Truncate(time.Microsecond)
	var out Stop
	err := st.InTxRetrying(ctx, func(tx *store.Tx) error {
		last, s, err := stopOf(ctx, tx, subscriptionID, id)
		if err != nil {
			return err
		}
		loc, err := zone(last)
		if err != nil {
			return err
		}
		if err := startedError(s, DateOf(now, loc)); err != nil {
			return err
		}
		if err := creditedError(ctx, tx, s); err != nil {
			return err
		}
		if err := seriesRuns(last, req, loc); err != nil {
			return err
		}
		dec, err := checkStop(ctx, tx, last, req, s.ID, now)
		if err != nil {
			return err
		}
		s.First, s.Last, s.Missed, s.Credited, s.UpdatedAt = req.First, req.Last, dec.Missed, dec.Credited, now
		res, err := tx.Exec(ctx, `UPDATE delivery_stops SET first_date = $3, last_date = $4, missed = $5, credited = $6, updated_at = $7
			WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.TenantID(), s.ID, s.First.String(), s.Last.String(),
			joinDates(s.Missed), joinDates(s.Credited), store.TimeParam(now))
		if err != nil {
			return err
		}
		if err := store.OneRow(res); err != nil {
			return err
		}
		out = s
		return stopEvent(tx, ctx, store.EventDeliveryStopChanged, last, s, now)
	})
	if err != nil {
		return Stop{}, fmt.Errorf("delivery: change stop %s: %w", id, err)
	}
	return out, nil
}

// DeleteStop deletes a stop that has not started. The row stays (deleted_at)
// so the event's subject can still be read back in the audit log.
func DeleteStop(ctx context.Context, st *store.Store, subscriptionID, id string, now time.Time) error {
	now = now.UTC().Truncate(time.Microsecond)
	err := st.InTxRetrying(ctx, func(tx *store.Tx) error {
		last, s, err := stopOf(ctx, tx, subscriptionID, id)
		if err != nil {
			return err
		}
		loc, err := zone(last)
		if err != nil {
			return err
		}
		if err := startedError(s, DateOf(now, loc)); err != nil {
			return err
		}
		if err := creditedError(ctx, tx, s); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, `UPDATE delivery_stops SET deleted_at = $3, updated_at = $3 WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.TenantID(), s.ID, store.TimeParam(now))
		if err != nil {
			return err
		}
		if err := store.OneRow(res); err != nil {
			return err
		}
		return stopEvent(tx, ctx, store.EventDeliveryStopDeleted, last, s, now)
	})
	if err != nil {
		return fmt.Errorf("delivery: delete stop %s: %w", id, err)
	}
	return nil
}

// StopView is a stop as read, with its state on the tenant's day.
type StopView struct {
	Stop
	State   string
	Credits []Credit
}

// ListStops are the stops of the series of the context tenant's period
// subscriptionID (deleted ones left out), by first day, with their states
// at now.
func ListStops(ctx context.Context, st *store.Store, subscriptionID string, now time.Time) ([]StopView, error) {
	var out []StopView
	err := st.InTx(ctx, func(tx *store.Tx) error {
		last, err := lastPeriod(ctx, tx, subscriptionID)
		if err != nil {
			return err
		}
		loc, err := zone(last)
		if err != nil {
			return err
		}
		stops, err := seriesStops(ctx, tx, tx.TenantID(), last.ID, false)
		if err != nil {
			return err
		}
		today := DateOf(now, loc)
		out = make([]StopView, len(stops))
		for i, s := range stops {
			cs, err := stopCredits(ctx, tx, s.ID)
			if err != nil {
				return err
			}
			out[i] = StopView{Stop: s, State: s.State(today), Credits: cs}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("delivery: stops of subscription %s: %w", subscriptionID, err)
	}
	return out, nil
}

// GetStop reads one stop of the series of period subscriptionID.
func GetStop(ctx context.Context, st *store.Store, subscriptionID, id string, now time.Time) (StopView, error) {
	var out StopView
	err := st.InTx(ctx, func(tx *store.Tx) error {
		last, s, err := stopOf(ctx, tx, subscriptionID, id)
		if err != nil {
			return err
		}
		loc, err := zone(last)
		if err != nil {
			return err
		}
		cs, err := stopCredits(ctx, tx, s.ID)
		out = StopView{Stop: s, State: s.State(DateOf(now, loc)), Credits: cs}
		return err
	})
	if err != nil {
		return StopView{}, fmt.Errorf("delivery: stop %s: %w", id, err)
	}
	return out, nil
}

// stopRulesIn reads an organization's rules on q (a transaction or the
// read pool).
func stopRulesIn(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) *sql.Row
}, tenant, organizationID string) (r StopRules, own bool, err error) {
	if err := organizationExists(ctx, q, tenant, organizationID); err != nil {
		return StopRules{}, false, fmt.Errorf("delivery: stop rules of organization %s: %w", organizationID, err)
	}
	err = q.QueryRow(ctx, `SELECT min_days, max_days, cutoff_hour, notice_delivery_days, credit, max_credited_per_year,
		align_to_delivery_days, allow_during_binding FROM delivery_stop_rules WHERE tenant_id = $1 AND organization_id = $2`,
		tenant, organizationID).Scan(&r.MinDays, &r.MaxDays, &r.CutoffHour, &r.NoticeDeliveryDays, &r.Credit,
		&r.MaxCreditedPerYear, &r.AlignToDeliveryDays, &r.AllowDuringBinding)
	if errors.Is(err, sql.ErrNoRows) {
		return DefaultStopRules, false, nil
	}
	if err != nil {
		return StopRules{}, false, fmt.Errorf("delivery: stop rules of organization %s: %w", organizationID, err)
	}
	return r, true, nil
}
