package delivery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// The schedules' SQL (docs/PRINT.md, "Delivery schedules") on the store's
// query kit, the tenant's condition first in every WHERE.

// ProductSchedule is a product's stored weekday pattern. Weekdays 0 is a
// product that is not delivered (no row); UpdatedAt is then zero.
type ProductSchedule struct {
	ProductID string
	Weekdays  Weekdays
	UpdatedAt time.Time
}

// NonPublishingDay is a day of the tenant's calendar without paper.
type NonPublishingDay struct {
	Date Date
	Name string
}

func productExists(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) *sql.Row
}, tenant, id string) error {
	if !store.ValidID(id) {
		return store.ErrNotFound
	}
	var one int
	return store.NotFound(q.QueryRow(ctx, `SELECT 1 FROM products WHERE tenant_id = $1 AND id = $2`, tenant, id).Scan(&one))
}

// SetSchedule replaces the weekday pattern of the context tenant's product
// productID; no weekdays removes it (the product is then not delivered).
// A product of no (or another) tenant is store.ErrNotFound.
func SetSchedule(ctx context.Context, st *store.Store, productID string, w Weekdays, now time.Time) error {
	now = now.UTC().Truncate(time.Microsecond)
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if err := productExists(ctx, tx, tx.TenantID(), productID); err != nil {
			return err
		}
		if w == 0 {
			_, err := tx.Exec(ctx, `DELETE FROM delivery_schedules WHERE tenant_id = $1 AND product_id = $2`, tx.TenantID(), productID)
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO delivery_schedules (tenant_id, product_id, weekdays, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $4)
			ON CONFLICT (tenant_id, product_id) DO UPDATE SET weekdays = excluded.weekdays, updated_at = excluded.updated_at`,
			tx.TenantID(), productID, int(w&AllWeekdays), store.TimeParam(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("delivery: set schedule of product %s: %w", productID, err)
	}
	return nil
}

// GetSchedule returns the pattern of the context tenant's product.
func GetSchedule(ctx context.Context, st *store.Store, productID string) (ProductSchedule, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return ProductSchedule{}, err
	}
	if err := productExists(ctx, st.Reader(), tenant, productID); err != nil {
		return ProductSchedule{}, fmt.Errorf("delivery: schedule of product %s: %w", productID, err)
	}
	ps := ProductSchedule{ProductID: productID}
	var w int
	err = st.Reader().QueryRow(ctx, `SELECT weekdays, updated_at FROM delivery_schedules WHERE tenant_id = $1 AND product_id = $2`,
		tenant, productID).Scan(&w, &ps.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return ps, nil
	}
	if err != nil {
		return ProductSchedule{}, fmt.Errorf("delivery: schedule of product %s: %w", productID, err)
	}
	ps.Weekdays, ps.UpdatedAt = Weekdays(w)&AllWeekdays, ps.UpdatedAt.UTC()
	return ps, nil
}

// SetNonPublishingDay adds day to the context tenant's calendar, or
// renames it when it is there.
func SetNonPublishingDay(ctx context.Context, st *store.Store, day Date, name string, now time.Time) error {
	err := st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO delivery_non_publishing_days (tenant_id, day, name, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (tenant_id, day) DO UPDATE SET name = excluded.name`,
			tx.TenantID(), day.String(), name, store.TimeParam(now.UTC().Truncate(time.Microsecond)))
		return err
	})
	if err != nil {
		return fmt.Errorf("delivery: set non-publishing day %s: %w", day, err)
	}
	return nil
}

// DeleteNonPublishingDay makes day a publishing day again; a day not in
// the calendar is store.ErrNotFound.
func DeleteNonPublishingDay(ctx context.Context, st *store.Store, day Date) error {
	err := st.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `DELETE FROM delivery_non_publishing_days WHERE tenant_id = $1 AND day = $2`, tx.TenantID(), day.String())
		if err != nil {
			return err
		}
		return store.OneRow(res)
	})
	if err != nil {
		return fmt.Errorf("delivery: delete non-publishing day %s: %w", day, err)
	}
	return nil
}

// NonPublishingDays lists the context tenant's days without paper in
// [from, to), in order. YYYY-MM-DD text sorts as the days do.
func NonPublishingDays(ctx context.Context, st *store.Store, from, to Date) ([]NonPublishingDay, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	return nonPublishingDaysIn(ctx, st.Reader(), tenant, from, to)
}

func nonPublishingDaysIn(ctx context.Context, q store.Querier, tenant string, from, to Date) ([]NonPublishingDay, error) {
	out, err := store.QueryAll(ctx, q, func(row store.Scanner) (NonPublishingDay, error) {
		var day, name string
		if err := row.Scan(&day, &name); err != nil {
			return NonPublishingDay{}, err
		}
		dd, err := ParseDate(day)
		return NonPublishingDay{Date: dd, Name: name}, err
	}, `SELECT day, name FROM delivery_non_publishing_days WHERE tenant_id = $1 AND day >= $2 AND day < $3 ORDER BY day`,
		tenant, from.String(), to.String())
	if err != nil {
		return nil, fmt.Errorf("delivery: non-publishing days: %w", err)
	}
	return out, nil
}

// LoadCalendar is the context tenant's calendar over [from, to).
func LoadCalendar(ctx context.Context, st *store.Store, from, to Date) (Calendar, error) {
	days, err := NonPublishingDays(ctx, st, from, to)
	if err != nil {
		return Calendar{}, err
	}
	ds := make([]Date, len(days))
	for i, d := range days {
		ds[i] = d.Date
	}
	return NewCalendar(ds...), nil
}

// LoadSchedule is the schedule of the context tenant's product over
// [from, to): its pattern under the tenant's calendar of those days.
func LoadSchedule(ctx context.Context, st *store.Store, productID string, from, to Date) (Schedule, error) {
	ps, err := GetSchedule(ctx, st, productID)
	if err != nil {
		return Schedule{}, err
	}
	cal, err := LoadCalendar(ctx, st, from, to)
	if err != nil {
		return Schedule{}, err
	}
	return Schedule{Weekdays: ps.Weekdays, Calendar: cal}, nil
}
