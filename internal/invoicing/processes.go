package invoicing

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// The tenant's dunning processes and proration policies: configuration
// records that only billing acts on (issuing picks a demand's process,
// dunning follows it, settling a cancellation prorates by its policy), so
// their SQL lives here on the store's query kit rather than among the
// store's shared records. The application layer (internal/app) keeps
// them for the API.

// ProrationPolicy says how an early end of a period is settled (see
// billing.Policy).
type ProrationPolicy struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	PaidProration    string    `json:"paidProration" enum:"GenerateAllowanceForRemainingTime,NoProration"`
	NotPaidProration string    `json:"notPaidProration" enum:"GenerateChargeForConsumedTime,NoProration"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

// Policy returns p's settings.
func (p ProrationPolicy) Policy() billing.Policy {
	return billing.Policy{Paid: p.PaidProration, NotPaid: p.NotPaidProration}
}

// DunningProcess is a reminder schedule after an invoice's due date and
// the payment stop that ends it.
type DunningProcess struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// ReminderDays are days after the due date, ascending.
	ReminderDays []int `json:"reminderDays"`
	// ReminderFee is a decimal amount in the invoice's currency.
	ReminderFee       json.Number `json:"reminderFee"`
	PaymentStopDays   *int        `json:"paymentStopDays"`
	ProrationPolicyID *string     `json:"prorationPolicyId"`
	IsDefault         bool        `json:"isDefault"`
	CreatedAt         time.Time   `json:"createdAt"`
	UpdatedAt         time.Time   `json:"updatedAt"`
}

const prorationColumns = `id, name, paid_proration, not_paid_proration, created_at, updated_at`

func scanProration(row store.Scanner) (ProrationPolicy, error) {
	var p ProrationPolicy
	err := row.Scan(&p.ID, &p.Name, &p.PaidProration, &p.NotPaidProration, &p.CreatedAt, &p.UpdatedAt)
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, err
}

// CreateProrationPolicy stores p under the context's tenant with a new id.
func CreateProrationPolicy(ctx context.Context, st *store.Store, p ProrationPolicy, now time.Time) (ProrationPolicy, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return ProrationPolicy{}, err
	}
	p.ID, p.CreatedAt = store.NewID(), now.UTC().Truncate(time.Microsecond)
	p.UpdatedAt = p.CreatedAt
	if _, err := st.Writer().Exec(ctx, `INSERT INTO proration_policies (tenant_id, `+prorationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		tenant, p.ID, p.Name, p.PaidProration, p.NotPaidProration, store.TimeParam(p.CreatedAt), store.TimeParam(p.UpdatedAt)); err != nil {
		return ProrationPolicy{}, fmt.Errorf("invoicing: create proration policy: %w", err)
	}
	return p, nil
}

// ProrationPolicyByID returns policy id of the context's tenant, or
// store.ErrNotFound (also for another tenant's).
func ProrationPolicyByID(ctx context.Context, st *store.Store, id string) (ProrationPolicy, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return ProrationPolicy{}, err
	}
	if !store.ValidID(id) {
		return ProrationPolicy{}, store.ErrNotFound
	}
	p, err := scanProration(st.Reader().QueryRow(ctx, `SELECT `+prorationColumns+` FROM proration_policies WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return ProrationPolicy{}, fmt.Errorf("invoicing: proration policy %s: %w", id, store.NotFound(err))
	}
	return p, nil
}

// ListProrationPolicies returns one page of the tenant's policies and the
// cursor of the next page ("" on the last).
func ListProrationPolicies(ctx context.Context, st *store.Store, p store.Page) ([]ProrationPolicy, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("", tenant)
	out, next, err := store.ListPage(ctx, st.Reader(), scanProration, `SELECT `+prorationColumns+` FROM proration_policies`, q, "id", p,
		func(p ProrationPolicy) string { return p.ID })
	if err != nil {
		return nil, "", fmt.Errorf("invoicing: list proration policies: %w", err)
	}
	return out, next, nil
}

// UpdateProrationPolicy replaces the fields of policy p.ID, or is
// store.ErrNotFound.
func UpdateProrationPolicy(ctx context.Context, st *store.Store, p ProrationPolicy, now time.Time) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !store.ValidID(p.ID) {
		return store.ErrNotFound
	}
	res, err := st.Writer().Exec(ctx, `UPDATE proration_policies SET name = $3, paid_proration = $4,
		not_paid_proration = $5, updated_at = $6 WHERE tenant_id = $1 AND id = $2`,
		tenant, p.ID, p.Name, p.PaidProration, p.NotPaidProration, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("invoicing: update proration policy %s: %w", p.ID, store.RefError(err))
	}
	if err := store.OneRow(res); err != nil {
		return fmt.Errorf("invoicing: update proration policy %s: %w", p.ID, err)
	}
	return nil
}

// DeleteProrationPolicy removes policy id; one that a dunning process
// refers to is not removed (*store.InUseError).
func DeleteProrationPolicy(ctx context.Context, st *store.Store, id string) error {
	return st.DeleteUnused(ctx, "proration_policies", "proration policy", id, "dunning process",
		`SELECT id FROM dunning_processes WHERE tenant_id = $1 AND proration_policy_id = $2 ORDER BY id`)
}

// prorationPolicyIn reads policy id in tx.
func prorationPolicyIn(ctx context.Context, tx *store.Tx, id string) (ProrationPolicy, error) {
	p, err := scanProration(tx.QueryRow(ctx, `SELECT `+prorationColumns+` FROM proration_policies WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id))
	if err != nil {
		return ProrationPolicy{}, fmt.Errorf("invoicing: proration policy %s: %w", id, store.NotFound(err))
	}
	return p, nil
}

// processProrationPolicy reads the proration policy dunning process id
// names; nil when the process or its policy does not exist (any more) or
// names none.
func processProrationPolicy(ctx context.Context, tx *store.Tx, id string) (*ProrationPolicy, error) {
	var policy sql.NullString
	err := tx.QueryRow(ctx, `SELECT proration_policy_id FROM dunning_processes WHERE tenant_id = $1 AND id = $2`,
		tx.TenantID(), id).Scan(&policy)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !policy.Valid {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("invoicing: dunning process %s: %w", id, err)
	}
	p, err := prorationPolicyIn(ctx, tx, policy.String)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return &p, nil
}

const dunningColumns = `id, name, reminder_days, reminder_fee, payment_stop_days, proration_policy_id, is_default, created_at, updated_at`

func scanDunning(row store.Scanner) (DunningProcess, error) {
	var (
		d      DunningProcess
		days   string
		fee    string
		stop   sql.NullInt64
		policy sql.NullString
	)
	if err := row.Scan(&d.ID, &d.Name, &days, &fee, &stop, &policy, &d.IsDefault, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return DunningProcess{}, err
	}
	if err := json.Unmarshal([]byte(days), &d.ReminderDays); err != nil {
		return DunningProcess{}, fmt.Errorf("reminder days of %s: %w", d.ID, err)
	}
	d.ReminderFee = json.Number(fee)
	if stop.Valid {
		n := int(stop.Int64)
		d.PaymentStopDays = &n
	}
	d.ProrationPolicyID = nullString(policy)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

func dunningArgs(d DunningProcess) []any {
	days, _ := json.Marshal(d.ReminderDays) // []int always encodes
	var stop any
	if d.PaymentStopDays != nil {
		stop = *d.PaymentStopDays
	}
	return []any{d.Name, string(days), string(d.ReminderFee), stop, d.ProrationPolicyID, d.IsDefault}
}

// CreateDunningProcess stores d under the context's tenant with a new id.
// A new default process takes over from the tenant's previous default.
func CreateDunningProcess(ctx context.Context, st *store.Store, d DunningProcess, now time.Time) (DunningProcess, error) {
	d.ID, d.CreatedAt = store.NewID(), now.UTC().Truncate(time.Microsecond)
	d.UpdatedAt = d.CreatedAt
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if err := clearDefault(ctx, tx, d); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO dunning_processes (tenant_id, `+dunningColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			append(append([]any{tx.TenantID(), d.ID}, dunningArgs(d)...), store.TimeParam(d.CreatedAt), store.TimeParam(d.UpdatedAt))...)
		return store.RefError(err)
	})
	if err != nil {
		return DunningProcess{}, fmt.Errorf("invoicing: create dunning process: %w", err)
	}
	return d, nil
}

// clearDefault takes the default from the tenant's other processes when d
// is the default: a tenant has at most one.
func clearDefault(ctx context.Context, tx *store.Tx, d DunningProcess) error {
	if !d.IsDefault {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE dunning_processes SET is_default = FALSE WHERE tenant_id = $1 AND is_default AND id <> $2`, tx.TenantID(), d.ID)
	return err
}

// DunningProcessByID returns process id of the context's tenant, or
// store.ErrNotFound (also for another tenant's).
func DunningProcessByID(ctx context.Context, st *store.Store, id string) (DunningProcess, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return DunningProcess{}, err
	}
	if !store.ValidID(id) {
		return DunningProcess{}, store.ErrNotFound
	}
	d, err := scanDunning(st.Reader().QueryRow(ctx, `SELECT `+dunningColumns+` FROM dunning_processes WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return DunningProcess{}, fmt.Errorf("invoicing: dunning process %s: %w", id, store.NotFound(err))
	}
	return d, nil
}

// dunningProcessIn reads process id in tx.
func dunningProcessIn(ctx context.Context, tx *store.Tx, id string) (DunningProcess, error) {
	d, err := scanDunning(tx.QueryRow(ctx, `SELECT `+dunningColumns+` FROM dunning_processes WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id))
	if err != nil {
		return DunningProcess{}, fmt.Errorf("invoicing: dunning process %s: %w", id, store.NotFound(err))
	}
	return d, nil
}

// ListDunningProcesses returns one page of the tenant's dunning processes
// and the cursor of the next page ("" on the last).
func ListDunningProcesses(ctx context.Context, st *store.Store, p store.Page) ([]DunningProcess, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("", tenant)
	out, next, err := store.ListPage(ctx, st.Reader(), scanDunning, `SELECT `+dunningColumns+` FROM dunning_processes`, q, "id", p,
		func(d DunningProcess) string { return d.ID })
	if err != nil {
		return nil, "", fmt.Errorf("invoicing: list dunning processes: %w", err)
	}
	return out, next, nil
}

// UpdateDunningProcess replaces the fields of process d.ID, or is
// store.ErrNotFound. Demands already in dunning follow the new schedule
// from their next action on.
func UpdateDunningProcess(ctx context.Context, st *store.Store, d DunningProcess, now time.Time) error {
	if _, err := tenancy.From(ctx); err != nil {
		return err
	}
	if !store.ValidID(d.ID) {
		return store.ErrNotFound
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		if err := clearDefault(ctx, tx, d); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, `UPDATE dunning_processes SET name = $3, reminder_days = $4, reminder_fee = $5,
			payment_stop_days = $6, proration_policy_id = $7, is_default = $8, updated_at = $9 WHERE tenant_id = $1 AND id = $2`,
			append(append([]any{tx.TenantID(), d.ID}, dunningArgs(d)...), store.TimeParam(now))...)
		if err != nil {
			return fmt.Errorf("invoicing: update dunning process %s: %w", d.ID, store.RefError(err))
		}
		if err := store.OneRow(res); err != nil {
			return fmt.Errorf("invoicing: update dunning process %s: %w", d.ID, err)
		}
		return nil
	})
}

// DeleteDunningProcess removes process id; one that a billing plan refers
// to is not removed (*store.InUseError). Demands in dunning under it stop
// dunning at their next action.
func DeleteDunningProcess(ctx context.Context, st *store.Store, id string) error {
	return st.DeleteUnused(ctx, "dunning_processes", "dunning process", id, "billing plan",
		`SELECT id FROM billing_plans WHERE tenant_id = $1 AND dunning_process_id = $2 ORDER BY id`)
}

// nullString is the value of a nullable text column, nil for NULL.
func nullString(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	s := n.String
	return &s
}
