package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/tenancy"
)

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

func scanProration(row scanner) (ProrationPolicy, error) {
	var p ProrationPolicy
	err := row.Scan(&p.ID, &p.Name, &p.PaidProration, &p.NotPaidProration, &p.CreatedAt, &p.UpdatedAt)
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, err
}

// CreateProrationPolicy stores p with a new id.
func (s *Store) CreateProrationPolicy(ctx context.Context, p ProrationPolicy, now time.Time) (ProrationPolicy, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return ProrationPolicy{}, err
	}
	p.ID, p.CreatedAt = NewID(), now.UTC().Truncate(time.Microsecond)
	p.UpdatedAt = p.CreatedAt
	if _, err := s.w.ExecContext(ctx, `INSERT INTO proration_policies (tenant_id, `+prorationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		tenant, p.ID, p.Name, p.PaidProration, p.NotPaidProration, ts(p.CreatedAt), ts(p.UpdatedAt)); err != nil {
		return ProrationPolicy{}, fmt.Errorf("store: create proration policy: %w", err)
	}
	return p, nil
}

// ProrationPolicy returns policy id of the context's tenant, or ErrNotFound.
func (s *Store) ProrationPolicy(ctx context.Context, id string) (ProrationPolicy, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return ProrationPolicy{}, err
	}
	if !ValidID(id) {
		return ProrationPolicy{}, ErrNotFound
	}
	p, err := scanProration(s.r.QueryRowContext(ctx, `SELECT `+prorationColumns+` FROM proration_policies WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return ProrationPolicy{}, fmt.Errorf("store: proration policy %s: %w", id, notFound(err))
	}
	return p, nil
}

// ListProrationPolicies returns one page of the tenant's policies.
func (s *Store) ListProrationPolicies(ctx context.Context, p Page) ([]ProrationPolicy, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanProration, `SELECT `+prorationColumns+` FROM proration_policies`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list proration policies: %w", err)
	}
	out, next := trimPage(out, p, func(p ProrationPolicy) string { return p.ID })
	return out, next, nil
}

// UpdateProrationPolicy replaces the fields of policy p.ID.
func (s *Store) UpdateProrationPolicy(ctx context.Context, p ProrationPolicy, now time.Time) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !ValidID(p.ID) {
		return ErrNotFound
	}
	return s.updateOne(ctx, "proration policy", p.ID, `UPDATE proration_policies SET name = $3, paid_proration = $4,
		not_paid_proration = $5, updated_at = $6 WHERE tenant_id = $1 AND id = $2`,
		tenant, p.ID, p.Name, p.PaidProration, p.NotPaidProration, ts(now))
}

// DeleteProrationPolicy removes policy id; one that a dunning process
// refers to is not removed (*InUseError).
func (s *Store) DeleteProrationPolicy(ctx context.Context, id string) error {
	return s.deleteUnused(ctx, "proration_policies", "proration policy", id, "dunning process",
		`SELECT id FROM dunning_processes WHERE tenant_id = $1 AND proration_policy_id = $2 ORDER BY id`)
}

// updateOne runs an UPDATE of one row and maps "no row" to ErrNotFound.
func (s *Store) updateOne(ctx context.Context, what, id, query string, args ...any) error {
	res, err := s.w.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("store: update %s %s: %w", what, id, refError(err))
	}
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: update %s %s: %w", what, id, err)
	}
	return nil
}

// oneRow checks that a statement changed a row: ErrNotFound when it
// changed none.
func oneRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

const dunningColumns = `id, name, reminder_days, reminder_fee, payment_stop_days, proration_policy_id, is_default, created_at, updated_at`

func scanDunning(row scanner) (DunningProcess, error) {
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

// CreateDunningProcess stores d with a new id. A new default process
// takes over from the tenant's previous default.
func (s *Store) CreateDunningProcess(ctx context.Context, d DunningProcess, now time.Time) (DunningProcess, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return DunningProcess{}, err
	}
	d.ID, d.CreatedAt = NewID(), now.UTC().Truncate(time.Microsecond)
	d.UpdatedAt = d.CreatedAt
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := clearDefault(ctx, tx, tenant, d); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO dunning_processes (tenant_id, `+dunningColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			append(append([]any{tenant, d.ID}, dunningArgs(d)...), ts(d.CreatedAt), ts(d.UpdatedAt))...)
		return refError(err)
	})
	if err != nil {
		return DunningProcess{}, fmt.Errorf("store: create dunning process: %w", err)
	}
	return d, nil
}

func clearDefault(ctx context.Context, tx *sql.Tx, tenant string, d DunningProcess) error {
	if !d.IsDefault {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE dunning_processes SET is_default = FALSE WHERE tenant_id = $1 AND is_default AND id <> $2`, tenant, d.ID)
	return err
}

// DunningProcess returns process id of the context's tenant, or ErrNotFound.
func (s *Store) DunningProcess(ctx context.Context, id string) (DunningProcess, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return DunningProcess{}, err
	}
	if !ValidID(id) {
		return DunningProcess{}, ErrNotFound
	}
	d, err := scanDunning(s.r.QueryRowContext(ctx, `SELECT `+dunningColumns+` FROM dunning_processes WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return DunningProcess{}, fmt.Errorf("store: dunning process %s: %w", id, notFound(err))
	}
	return d, nil
}

// ListDunningProcesses returns one page of the tenant's dunning processes.
func (s *Store) ListDunningProcesses(ctx context.Context, p Page) ([]DunningProcess, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanDunning, `SELECT `+dunningColumns+` FROM dunning_processes`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list dunning processes: %w", err)
	}
	out, next := trimPage(out, p, func(d DunningProcess) string { return d.ID })
	return out, next, nil
}

// UpdateDunningProcess replaces the fields of process d.ID. Demands already
// in dunning follow the new schedule from their next action on.
func (s *Store) UpdateDunningProcess(ctx context.Context, d DunningProcess, now time.Time) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !ValidID(d.ID) {
		return ErrNotFound
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := clearDefault(ctx, tx, tenant, d); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE dunning_processes SET name = $3, reminder_days = $4, reminder_fee = $5,
			payment_stop_days = $6, proration_policy_id = $7, is_default = $8, updated_at = $9 WHERE tenant_id = $1 AND id = $2`,
			append(append([]any{tenant, d.ID}, dunningArgs(d)...), ts(now))...)
		if err != nil {
			return fmt.Errorf("store: update dunning process %s: %w", d.ID, refError(err))
		}
		if err := oneRow(res); err != nil {
			return fmt.Errorf("store: update dunning process %s: %w", d.ID, err)
		}
		return nil
	})
}

// DeleteDunningProcess removes process id; one that a billing plan refers
// to is not removed (*InUseError). Demands in dunning under it stop
// dunning at their next action.
func (s *Store) DeleteDunningProcess(ctx context.Context, id string) error {
	return s.deleteUnused(ctx, "dunning_processes", "dunning process", id, "billing plan",
		`SELECT id FROM billing_plans WHERE tenant_id = $1 AND dunning_process_id = $2 ORDER BY id`)
}
