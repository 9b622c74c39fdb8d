package catalogdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
)

const billingPlanColumns = `id, name, description, interval_unit, interval_count, minimum_due_days, payment_terms_days, dunning_process_id, created_at, updated_at`

func scanBillingPlan(row store.Scanner) (catalog.BillingPlan, error) {
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
func CreateBillingPlan(ctx context.Context, st *store.Store, b catalog.BillingPlan, now time.Time) (catalog.BillingPlan, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.BillingPlan{}, err
	}
	b.ID = store.NewID()
	b.CreatedAt = now.UTC().Truncate(time.Microsecond)
	b.UpdatedAt = b.CreatedAt
	_, err = st.Writer().Exec(ctx, `INSERT INTO billing_plans (tenant_id, `+billingPlanColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		tenant, b.ID, b.Name, b.Description, string(b.IntervalUnit), b.IntervalCount, b.MinimumDueDays,
		b.PaymentTermsDays, b.DunningProcessID, ts(b.CreatedAt), ts(b.UpdatedAt))
	if err != nil {
		return catalog.BillingPlan{}, fmt.Errorf("catalogdb: create billing plan: %w", err)
	}
	return b, nil
}

// BillingPlan returns billing plan id of the context's tenant, or
// store.ErrNotFound (also for another tenant's plan).
func BillingPlan(ctx context.Context, st *store.Store, id string) (catalog.BillingPlan, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.BillingPlan{}, err
	}
	if !store.ValidID(id) {
		return catalog.BillingPlan{}, store.ErrNotFound
	}
	b, err := scanBillingPlan(st.Reader().QueryRow(ctx,
		`SELECT `+billingPlanColumns+` FROM billing_plans WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return catalog.BillingPlan{}, fmt.Errorf("catalogdb: billing plan %s: %w", id, store.NotFound(err))
	}
	return b, nil
}

// BillingPlansByID returns the billing plans among ids that exist in the
// context's tenant, keyed by id.
func BillingPlansByID(ctx context.Context, st *store.Store, ids []string) (map[string]catalog.BillingPlan, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	return billingPlansByID(ctx, st.Reader(), tenant, ids)
}

func billingPlansByID(ctx context.Context, q querier, tenant string, ids []string) (map[string]catalog.BillingPlan, error) {
	out := map[string]catalog.BillingPlan{}
	f := store.TenantFilter("", tenant)
	if !f.AddIn("id", ids) {
		return out, nil
	}
	bs, err := store.QueryAll(ctx, q, scanBillingPlan, `SELECT `+billingPlanColumns+` FROM billing_plans`+f.Where(), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("catalogdb: billing plans: %w", err)
	}
	for _, b := range bs {
		out[b.ID] = b
	}
	return out, nil
}

// BillingPlanFilter narrows ListBillingPlans; zero fields do not filter.
type BillingPlanFilter struct {
	IntervalUnit period.Unit
}

// ListBillingPlans returns one page of the tenant's billing plans and the
// cursor of the next page ("" on the last).
func ListBillingPlans(ctx context.Context, st *store.Store, f BillingPlanFilter, p store.Page) ([]catalog.BillingPlan, string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("", tenant)
	if f.IntervalUnit != "" {
		q.Add("interval_unit = ?", string(f.IntervalUnit))
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanBillingPlan, `SELECT `+billingPlanColumns+` FROM billing_plans`, q, "id", p,
		func(b catalog.BillingPlan) string { return b.ID })
	if err != nil {
		return nil, "", fmt.Errorf("catalogdb: list billing plans: %w", err)
	}
	return out, next, nil
}

// PackagesUsingBillingPlan returns the ids of the template packages
// (archived or not) that offer billing plan id, in id order.
func PackagesUsingBillingPlan(ctx context.Context, st *store.Store, id string) ([]string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if !store.ValidID(id) {
		return nil, nil
	}
	ids, err := referrers(ctx, st.Reader(), billingPlanUsers, tenant, id)
	if err != nil {
		return nil, fmt.Errorf("catalogdb: packages using billing plan %s: %w", id, err)
	}
	return ids, nil
}

const billingPlanUsers = `SELECT DISTINCT package_id FROM template_package_billing_plans
	WHERE tenant_id = $1 AND billing_plan_id = $2 ORDER BY package_id`

// UpdateBillingPlan replaces the editable fields of billing plan b.ID and
// returns the stored result, or store.ErrNotFound. Callers decide whether
// a change of interval is allowed (the application layer refuses it for a
// plan in use, because package prices are per billing period).
func UpdateBillingPlan(ctx context.Context, st *store.Store, b catalog.BillingPlan, now time.Time) (catalog.BillingPlan, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.BillingPlan{}, err
	}
	if !store.ValidID(b.ID) {
		return catalog.BillingPlan{}, store.ErrNotFound
	}
	updated, err := scanBillingPlan(st.Writer().QueryRow(ctx, `UPDATE billing_plans SET
		name = $3, description = $4, interval_unit = $5, interval_count = $6, minimum_due_days = $7,
		payment_terms_days = $8, dunning_process_id = $9, updated_at = $10
		WHERE tenant_id = $1 AND id = $2 RETURNING `+billingPlanColumns,
		tenant, b.ID, b.Name, b.Description, string(b.IntervalUnit), b.IntervalCount, b.MinimumDueDays,
		b.PaymentTermsDays, b.DunningProcessID, ts(now)))
	if err != nil {
		return catalog.BillingPlan{}, fmt.Errorf("catalogdb: update billing plan %s: %w", b.ID, store.NotFound(err))
	}
	return updated, nil
}

// DeleteBillingPlan removes billing plan id. A plan that a template
// package (archived or not) still offers is not deleted: the error is a
// *store.InUseError naming those packages.
func DeleteBillingPlan(ctx context.Context, st *store.Store, id string) error {
	return st.DeleteUnused(ctx, "billing_plans", "billing plan", id, "template package", billingPlanUsers)
}
