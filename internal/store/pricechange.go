package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/tenancy"
)

// Statuses of a price change.
const (
	PriceChangeScheduled = "Scheduled"
	PriceChangeStarted   = "Started"
	PriceChangeRevoked   = "Revoked"
)

// PriceChange moves every running series of a template to another
// template at each series' first renewal from EffectiveFrom on. It starts
// NoticeDays before EffectiveFrom (StartsAt): then it registers an
// OnRenewal change on each series and notifies its subscriber.
type PriceChange struct {
	ID                      string     `json:"id"`
	TemplatePackageID       string     `json:"templatePackageId" description:"The template whose running subscriptions move."`
	TargetTemplatePackageID string     `json:"targetTemplatePackageId" description:"The template they move to."`
	EffectiveFrom           time.Time  `json:"effectiveFrom" description:"Each subscription moves at its first renewal whose new period starts at or after this time."`
	NoticeDays              int        `json:"noticeDays"`
	StartsAt                time.Time  `json:"startsAt" description:"When subscribers are notified and the changes registered: noticeDays before effectiveFrom. Revocable until then."`
	Status                  string     `json:"status" enum:"Scheduled,Started,Revoked"`
	CreatedAt               time.Time  `json:"createdAt"`
	StartedAt               *time.Time `json:"startedAt"`
	RevokedAt               *time.Time `json:"revokedAt"`
	RegisteredSubscriptions int        `json:"registeredSubscriptions" description:"Series that got the change when it started."`
	SkippedSubscriptions    int        `json:"skippedSubscriptions" description:"Series left alone when it started: they had a plan change of their own pending, or never renew."`
}

const priceChangeColumns = `id, template_package_id, target_template_package_id, effective_from, notice_days, starts_at, status,
	created_at, started_at, revoked_at, registered, skipped`

func scanPriceChange(row scanner) (PriceChange, error) {
	var (
		p                PriceChange
		started, revoked sql.NullTime
	)
	if err := row.Scan(&p.ID, &p.TemplatePackageID, &p.TargetTemplatePackageID, &p.EffectiveFrom, &p.NoticeDays, &p.StartsAt, &p.Status,
		&p.CreatedAt, &started, &revoked, &p.RegisteredSubscriptions, &p.SkippedSubscriptions); err != nil {
		return PriceChange{}, err
	}
	p.EffectiveFrom, p.StartsAt, p.CreatedAt = p.EffectiveFrom.UTC(), p.StartsAt.UTC(), p.CreatedAt.UTC()
	p.StartedAt, p.RevokedAt = fromNullTime(started), fromNullTime(revoked)
	return p, nil
}

// InsertPriceChange schedules p (ID set by the caller).
func (tx *Tx) InsertPriceChange(ctx context.Context, p PriceChange) error {
	_, err := tx.exec(ctx, `INSERT INTO price_changes (tenant_id, `+priceChangeColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		tx.tenant, p.ID, p.TemplatePackageID, p.TargetTemplatePackageID, ts(p.EffectiveFrom), p.NoticeDays, ts(p.StartsAt), p.Status,
		ts(p.CreatedAt), optTS(p.StartedAt), optTS(p.RevokedAt), p.RegisteredSubscriptions, p.SkippedSubscriptions)
	if err != nil {
		return fmt.Errorf("store: insert price change: %w", err)
	}
	return nil
}

// PriceChange reads price change id of template templateID.
func (s *Store) PriceChange(ctx context.Context, templateID, id string) (PriceChange, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return PriceChange{}, err
	}
	if !ValidID(id) || !ValidID(templateID) {
		return PriceChange{}, ErrNotFound
	}
	p, err := scanPriceChange(s.readRow(ctx, `SELECT `+priceChangeColumns+` FROM price_changes
		WHERE tenant_id = $1 AND id = $2 AND template_package_id = $3`, tenant, id, templateID))
	if err != nil {
		return PriceChange{}, fmt.Errorf("store: price change %s: %w", id, notFound(err))
	}
	return p, nil
}

// PriceChanges lists the price changes of template templateID, oldest first.
func (s *Store) PriceChanges(ctx context.Context, templateID string) ([]PriceChange, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.r, scanPriceChange, `SELECT `+priceChangeColumns+` FROM price_changes
		WHERE tenant_id = $1 AND template_package_id = $2 ORDER BY id`, tenant, templateID)
	if err != nil {
		return nil, fmt.Errorf("store: price changes: %w", err)
	}
	return out, nil
}

// RevokePriceChange revokes a scheduled price change. It returns
// ErrConflict when the change is no longer Scheduled.
func (tx *Tx) RevokePriceChange(ctx context.Context, id string, at time.Time) error {
	res, err := tx.exec(ctx, `UPDATE price_changes SET status = 'Revoked', revoked_at = $3
		WHERE tenant_id = $1 AND id = $2 AND status = 'Scheduled'`, tx.tenant, id, ts(at))
	if err != nil {
		return fmt.Errorf("store: revoke price change %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: revoke price change %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("store: price change %s is no longer scheduled: %w", id, ErrConflict)
	}
	return nil
}

// NextPriceChangeAt returns when the earliest scheduled price change starts.
func (tx *Tx) NextPriceChangeAt(ctx context.Context) (*time.Time, error) {
	var t anyTime
	if err := tx.queryRow(ctx, `SELECT MIN(starts_at) FROM price_changes WHERE tenant_id = $1 AND status = 'Scheduled'`,
		tx.tenant).Scan(&t); err != nil {
		return nil, fmt.Errorf("store: next price change: %w", err)
	}
	return t.t, nil
}

// DuePriceChanges returns the scheduled price changes that start at at.
func (tx *Tx) DuePriceChanges(ctx context.Context, at time.Time) ([]PriceChange, error) {
	out, err := queryAll(ctx, tx.tx, scanPriceChange, `SELECT `+priceChangeColumns+` FROM price_changes
		WHERE tenant_id = $1 AND status = 'Scheduled' AND starts_at = $2 ORDER BY id`, tx.tenant, ts(at))
	if err != nil {
		return nil, fmt.Errorf("store: due price changes: %w", err)
	}
	return out, nil
}

// StartPriceChange marks a scheduled price change Started with its counts.
func (tx *Tx) StartPriceChange(ctx context.Context, id string, at time.Time, registered, skipped int) error {
	res, err := tx.exec(ctx, `UPDATE price_changes SET status = 'Started', started_at = $3, registered = $4, skipped = $5
		WHERE tenant_id = $1 AND id = $2 AND status = 'Scheduled'`, tx.tenant, id, ts(at), registered, skipped)
	if err != nil {
		return fmt.Errorf("store: start price change %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: start price change %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("store: price change %s is no longer scheduled: %w", id, ErrConflict)
	}
	return nil
}

// LiveSeriesOfTemplate returns the last period of every running series
// (not renewed yet, not cancelled, not deactivated) ordered from or changed
// to template templateID, by id. q is the transaction's or the store's
// read handle, so previews read on the read pool.
func liveSeriesOfTemplate(ctx context.Context, q queryer, tenant, templateID string) ([]Subscription, error) {
	out, err := queryAll(ctx, q, scanSubscription, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE tenant_id = $1 AND template_package_id = $2 AND next_id IS NULL AND cancelled_at IS NULL AND deactivated_at IS NULL
		ORDER BY id`, tenant, templateID)
	if err != nil {
		return nil, fmt.Errorf("store: running subscriptions of template %s: %w", templateID, err)
	}
	return out, nil
}

// LiveSeriesOfTemplate: see liveSeriesOfTemplate; in tx.
func (tx *Tx) LiveSeriesOfTemplate(ctx context.Context, templateID string) ([]Subscription, error) {
	return liveSeriesOfTemplate(ctx, tx.tx, tx.tenant, templateID)
}

// LiveSeriesOfTemplate: see liveSeriesOfTemplate; on the read pool.
func (s *Store) LiveSeriesOfTemplate(ctx context.Context, templateID string) ([]Subscription, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	return liveSeriesOfTemplate(ctx, s.r, tenant, templateID)
}
