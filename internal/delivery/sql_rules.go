package delivery

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// The stop rules' SQL: one row per organization that set its own.

func organizationExists(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) *sql.Row
}, tenant, id string) error {
	if !store.ValidID(id) {
		return store.ErrNotFound
	}
	var one int
	return store.NotFound(q.QueryRow(ctx, `SELECT 1 FROM organizations WHERE tenant_id = $1 AND id = $2`, tenant, id).Scan(&one))
}

// SetStopRules replaces the stop rules of the context tenant's
// organization; rules that do not validate are a 400 and write nothing.
func SetStopRules(ctx context.Context, st *store.Store, organizationID string, r StopRules, now time.Time) error {
	if err := r.Validate(); err != nil {
		return err
	}
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if err := organizationExists(ctx, tx, tx.TenantID(), organizationID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO delivery_stop_rules (tenant_id, organization_id, min_days, max_days, cutoff_hour,
				notice_delivery_days, credit, max_credited_per_year, align_to_delivery_days, allow_during_binding, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (tenant_id, organization_id) DO UPDATE SET min_days = excluded.min_days, max_days = excluded.max_days,
				cutoff_hour = excluded.cutoff_hour, notice_delivery_days = excluded.notice_delivery_days, credit = excluded.credit,
				max_credited_per_year = excluded.max_credited_per_year, align_to_delivery_days = excluded.align_to_delivery_days,
				allow_during_binding = excluded.allow_during_binding, updated_at = excluded.updated_at`,
			tx.TenantID(), organizationID, r.MinDays, r.MaxDays, r.CutoffHour, r.NoticeDeliveryDays, r.Credit,
			r.MaxCreditedPerYear, r.AlignToDeliveryDays, r.AllowDuringBinding, store.TimeParam(now.UTC().Truncate(time.Microsecond)))
		return err
	})
	if err != nil {
		return fmt.Errorf("delivery: set stop rules of organization %s: %w", organizationID, err)
	}
	return nil
}

// GetStopRules returns the organization's stop rules: its own, or
// DefaultStopRules (own false) when it set none.
func GetStopRules(ctx context.Context, st *store.Store, organizationID string) (r StopRules, own bool, err error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return StopRules{}, false, err
	}
	return stopRulesIn(ctx, st.Reader(), tenant, organizationID)
}
