package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/tenancy"
)

const billingPlanColumns = `id, name, description, interval_unit, interval_count, minimum_due_days, payment_terms_days, dunning_process_id, created_at, updated_at`

func scanBillingPlan(row scanner) (catalog.BillingPlan, error) {
	var (
		b       catalog.BillingPlan
		unit    string
		dunning sql.NullString
	)
	if err := row.Scan(&b.ID, &b.Name, &b.Description, &unit, &b.IntervalCount, &b.MinimumDueDays,
		&b.PaymentTermsDays, &dunning, &b.CreatedAt, &b.UpdatedAt); err != nil {
		return catalog.BillingPlan{}, err
	}
	b.DunningProcessID = nullString(dunning)
	b.IntervalUnit = period.Unit(unit)
	b.CreatedAt, b.UpdatedAt = b.CreatedAt.UTC(), b.UpdatedAt.UTC()
	return b, nil
}

// CreateBillingPlan stores b under the context's tenant with a new id and
// returns it as stored.
func (s *Store) CreateBillingPlan(ctx context.Context, b catalog.BillingPlan, now time.Time) (catalog.BillingPlan, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.BillingPlan{}, err
	}
	b.ID = NewID()
	b.CreatedAt = now.UTC().Truncate(time.Microsecond)
	b.UpdatedAt = b.CreatedAt
	_, err = s.w.ExecContext(ctx, `INSERT INTO billing_plans (tenant_id, `+billingPlanColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		tenant, b.ID, b.Name, b.Description, string(b.IntervalUnit), b.IntervalCount, b.MinimumDueDays,
		b.PaymentTermsDays, b.DunningProcessID, ts(b.CreatedAt), ts(b.UpdatedAt))
	if err != nil {
		return catalog.BillingPlan{}, fmt.Errorf("store: create billing plan: %w", err)
	}
	return b, nil
}

// BillingPlan returns billing plan id of the context's tenant, or
// ErrNotFound (also for another tenant's plan).
func (s *Store) BillingPlan(ctx context.Context, id string) (catalog.BillingPlan, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.BillingPlan{}, err
	}
	if !ValidID(id) {
		return catalog.BillingPlan{}, ErrNotFound
	}
	b, err := scanBillingPlan(s.readRow(ctx,
		`SELECT `+billingPlanColumns+` FROM billing_plans WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return catalog.BillingPlan{}, fmt.Errorf("store: billing plan %s: %w", id, notFound(err))
	}
	return b, nil
}

// BillingPlansByID returns the billing plans among ids that exist in the
// context's tenant, keyed by id.
func (s *Store) BillingPlansByID(ctx context.Context, ids []string) (map[string]catalog.BillingPlan, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	return billingPlansByID(ctx, s.r, tenant, ids)
}

func billingPlansByID(ctx context.Context, q queryer, tenant string, ids []string) (map[string]catalog.BillingPlan, error) {
	out := map[string]catalog.BillingPlan{}
	f := tenantFilter(tenant)
	if !f.addIn("id", ids) {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+billingPlanColumns+` FROM billing_plans`+f.where(), f.args...)
	if err != nil {
		return nil, fmt.Errorf("store: billing plans: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		b, err := scanBillingPlan(rows)
		if err != nil {
			return nil, fmt.Errorf("store: billing plans: %w", err)
		}
		out[b.ID] = b
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: billing plans: %w", err)
	}
	return out, nil
}

// BillingPlanFilter narrows ListBillingPlans; zero fields do not filter.
type BillingPlanFilter struct {
	IntervalUnit period.Unit
}

// ListBillingPlans returns one page of the tenant's billing plans and the
// cursor of the next page ("" on the last).
func (s *Store) ListBillingPlans(ctx context.Context, f BillingPlanFilter, p Page) ([]catalog.BillingPlan, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	if f.IntervalUnit != "" {
		q.add("interval_unit = ?", string(f.IntervalUnit))
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanBillingPlan, `SELECT `+billingPlanColumns+` FROM billing_plans`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list billing plans: %w", err)
	}
	out, next := trimPage(out, p, func(b catalog.BillingPlan) string { return b.ID })
	return out, next, nil
}

// PackagesUsingBillingPlan returns the ids of the template packages
// (archived or not) that offer billing plan id, in id order.
func (s *Store) PackagesUsingBillingPlan(ctx context.Context, id string) ([]string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	if !ValidID(id) {
		return nil, nil
	}
	ids, err := referrers(ctx, s.r, billingPlanUsers, tenant, id)
	if err != nil {
		return nil, fmt.Errorf("store: packages using billing plan %s: %w", id, err)
	}
	return ids, nil
}

const billingPlanUsers = `SELECT DISTINCT package_id FROM template_package_billing_plans
	WHERE tenant_id = $1 AND billing_plan_id = $2 ORDER BY package_id`

// UpdateBillingPlan replaces the editable fields of billing plan b.ID and
// returns the stored result, or ErrNotFound. Callers decide whether a
// change of interval is allowed (the API refuses it for a plan in use,
// because package prices are per billing period).
func (s *Store) UpdateBillingPlan(ctx context.Context, b catalog.BillingPlan, now time.Time) (catalog.BillingPlan, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.BillingPlan{}, err
	}
	if !ValidID(b.ID) {
		return catalog.BillingPlan{}, ErrNotFound
	}
	updated, err := scanBillingPlan(s.w.QueryRowContext(ctx, `UPDATE billing_plans SET
		name = $3, description = $4, interval_unit = $5, interval_count = $6, minimum_due_days = $7,
		payment_terms_days = $8, dunning_process_id = $9, updated_at = $10
		WHERE tenant_id = $1 AND id = $2 RETURNING `+billingPlanColumns,
		tenant, b.ID, b.Name, b.Description, string(b.IntervalUnit), b.IntervalCount, b.MinimumDueDays,
		b.PaymentTermsDays, b.DunningProcessID, ts(now)))
	if err != nil {
		return catalog.BillingPlan{}, fmt.Errorf("store: update billing plan %s: %w", b.ID, notFound(err))
	}
	return updated, nil
}

// DeleteBillingPlan removes billing plan id. A plan that a template package
// (archived or not) still offers is not deleted: the error is an
// *InUseError naming those packages.
func (s *Store) DeleteBillingPlan(ctx context.Context, id string) error {
	return s.deleteUnused(ctx, "billing_plans", "billing plan", id, "template package", billingPlanUsers)
}
