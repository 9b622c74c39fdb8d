package catalogdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// A price change's record (store.PriceChange) is in the store, beside
// the API's other response records; its SQL is here.

const priceChangeColumns = `id, template_package_id, target_template_package_id, effective_from, notice_days, starts_at, status,
	created_at, started_at, revoked_at, registered, skipped`

func scanPriceChange(row store.Scanner) (store.PriceChange, error) {
	var (
		p                store.PriceChange
		started, revoked sql.NullTime
	)
	if err := row.Scan(&p.ID, &p.TemplatePackageID, &p.TargetTemplatePackageID, &p.EffectiveFrom, &p.NoticeDays, &p.StartsAt, &p.Status,
		&p.CreatedAt, &started, &revoked, &p.RegisteredSubscriptions, &p.SkippedSubscriptions); err != nil {
		return store.PriceChange{}, err
	}
	p.EffectiveFrom, p.StartsAt, p.CreatedAt = p.EffectiveFrom.UTC(), p.StartsAt.UTC(), p.CreatedAt.UTC()
	p.StartedAt, p.RevokedAt = fromNullTime(started), fromNullTime(revoked)
	return p, nil
}

// InsertPriceChange schedules p (ID set by the caller).
func InsertPriceChange(ctx context.Context, tx *store.Tx, p store.PriceChange) error {
	_, err := tx.Exec(ctx, `INSERT INTO price_changes (tenant_id, `+priceChangeColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		tx.TenantID(), p.ID, p.TemplatePackageID, p.TargetTemplatePackageID, ts(p.EffectiveFrom), p.NoticeDays, ts(p.StartsAt), p.Status,
		ts(p.CreatedAt), optTS(p.StartedAt), optTS(p.RevokedAt), p.RegisteredSubscriptions, p.SkippedSubscriptions)
	if err != nil {
		return fmt.Errorf("catalogdb: insert price change: %w", err)
	}
	return nil
}

// PriceChange reads price change id of template templateID;
// store.ErrNotFound if there is none.
func PriceChange(ctx context.Context, st *store.Store, templateID, id string) (store.PriceChange, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return store.PriceChange{}, err
	}
	if !store.ValidID(id) || !store.ValidID(templateID) {
		return store.PriceChange{}, store.ErrNotFound
	}
	p, err := scanPriceChange(st.Reader().QueryRow(ctx, `SELECT `+priceChangeColumns+` FROM price_changes
		WHERE tenant_id = $1 AND id = $2 AND template_package_id = $3`, tenant, id, templateID))
	if err != nil {
		return store.PriceChange{}, fmt.Errorf("catalogdb: price change %s: %w", id, store.NotFound(err))
	}
	return p, nil
}

// PriceChanges lists the price changes of template templateID, oldest
// first.
func PriceChanges(ctx context.Context, st *store.Store, templateID string) ([]store.PriceChange, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	out, err := store.QueryAll(ctx, st.Reader(), scanPriceChange, `SELECT `+priceChangeColumns+` FROM price_changes
		WHERE tenant_id = $1 AND template_package_id = $2 ORDER BY id`, tenant, templateID)
	if err != nil {
		return nil, fmt.Errorf("catalogdb: price changes: %w", err)
	}
	return out, nil
}

// RevokePriceChange revokes a scheduled price change. It returns
// store.ErrConflict when the change is no longer Scheduled.
func RevokePriceChange(ctx context.Context, tx *store.Tx, id string, at time.Time) error {
	res, err := tx.Exec(ctx, `UPDATE price_changes SET status = 'Revoked', revoked_at = $3
		WHERE tenant_id = $1 AND id = $2 AND status = 'Scheduled'`, tx.TenantID(), id, ts(at))
	if err != nil {
		return fmt.Errorf("catalogdb: revoke price change %s: %w", id, err)
	}
	return stillScheduled(res, id)
}

// stillScheduled is ErrConflict when an update of a Scheduled price
// change found it no longer Scheduled.
func stillScheduled(res sql.Result, id string) error {
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("catalogdb: price change %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("catalogdb: price change %s is no longer scheduled: %w", id, store.ErrConflict)
	}
	return nil
}

// NextPriceChangeAt returns when the earliest scheduled price change
// starts (nil for none).
func NextPriceChangeAt(ctx context.Context, tx *store.Tx) (*time.Time, error) {
	var t store.AnyTime
	if err := tx.QueryRow(ctx, `SELECT MIN(starts_at) FROM price_changes WHERE tenant_id = $1 AND status = 'Scheduled'`,
		tx.TenantID()).Scan(&t); err != nil {
		return nil, fmt.Errorf("catalogdb: next price change: %w", err)
	}
	return t.T, nil
}

// DuePriceChanges returns the scheduled price changes that start at at.
func DuePriceChanges(ctx context.Context, tx *store.Tx, at time.Time) ([]store.PriceChange, error) {
	out, err := store.QueryAll(ctx, tx, scanPriceChange, `SELECT `+priceChangeColumns+` FROM price_changes
		WHERE tenant_id = $1 AND status = 'Scheduled' AND starts_at = $2 ORDER BY id`, tx.TenantID(), ts(at))
	if err != nil {
		return nil, fmt.Errorf("catalogdb: due price changes: %w", err)
	}
	return out, nil
}

// StartPriceChange marks a scheduled price change Started with its counts.
func StartPriceChange(ctx context.Context, tx *store.Tx, id string, at time.Time, registered, skipped int) error {
	res, err := tx.Exec(ctx, `UPDATE price_changes SET status = 'Started', started_at = $3, registered = $4, skipped = $5
		WHERE tenant_id = $1 AND id = $2 AND status = 'Scheduled'`, tx.TenantID(), id, ts(at), registered, skipped)
	if err != nil {
		return fmt.Errorf("catalogdb: start price change %s: %w", id, err)
	}
	return stillScheduled(res, id)
}
