package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Tenant is one customer installation of Kadens: a merchant group whose data
// is isolated from every other tenant's. Tenants are system-level rows, so
// these methods do not read a tenant from the context.
type Tenant struct {
	ID   string
	Name string
	// Test tenants have their own clock that the API advances.
	Test      bool
	Clock     *time.Time
	CreatedAt time.Time
}

// Now is the tenant's time when the wall clock says wall: a test tenant's
// own clock, which moves only when it is advanced (its creation time until
// then), else wall. Every surface takes a tenant's time from here: the
// API's requests, the engine, the providers' hooks, the bank runs, the
// operator commands and the events' business time.
func (t Tenant) Now(wall time.Time) time.Time {
	switch {
	case !t.Test:
		return wall.UTC()
	case t.Clock != nil:
		return t.Clock.UTC()
	}
	return t.CreatedAt.UTC()
}

// CreateTenant adds a tenant. A duplicate name is ErrConflict.
func (s *Store) CreateTenant(ctx context.Context, name string, test bool, now time.Time) (Tenant, error) {
	t := Tenant{ID: NewID(), Name: name, Test: test, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO tenants (id, name, test, created_at) VALUES ($1, $2, $3, $4)`,
		t.ID, t.Name, t.Test, ts(t.CreatedAt))
	if isUniqueViolation(err) {
		return Tenant{}, fmt.Errorf("tenant %q exists: %w", name, ErrConflict)
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("store: create tenant: %w", err)
	}
	return t, nil
}

const tenantColumns = `id, name, test, clock, created_at`

func scanTenant(row scanner) (Tenant, error) {
	var (
		t     Tenant
		clock sql.NullTime
	)
	if err := row.Scan(&t.ID, &t.Name, &t.Test, &clock, &t.CreatedAt); err != nil {
		return Tenant{}, err
	}
	t.Clock = fromNullTime(clock)
	t.CreatedAt = t.CreatedAt.UTC()
	return t, nil
}

// TenantByID returns the tenant with id, or ErrNotFound.
func (s *Store) TenantByID(ctx context.Context, id string) (Tenant, error) {
	if !ValidID(id) {
		return Tenant{}, ErrNotFound
	}
	t, err := scanTenant(s.r.QueryRowContext(ctx, `SELECT `+tenantColumns+` FROM tenants WHERE id = $1`, id))
	if err != nil {
		return Tenant{}, fmt.Errorf("store: tenant %s: %w", id, notFound(err))
	}
	return t, nil
}

// TenantByName returns the tenant named name, or ErrNotFound.
func (s *Store) TenantByName(ctx context.Context, name string) (Tenant, error) {
	t, err := scanTenant(s.r.QueryRowContext(ctx, `SELECT `+tenantColumns+` FROM tenants WHERE name = $1`, name))
	if err != nil {
		return Tenant{}, fmt.Errorf("store: tenant %q: %w", name, notFound(err))
	}
	return t, nil
}

// Tenants lists all tenants, oldest first.
func (s *Store) Tenants(ctx context.Context) ([]Tenant, error) {
	out, err := queryAll(ctx, s.r, scanTenant, `SELECT `+tenantColumns+` FROM tenants ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list tenants: %w", err)
	}
	return out, nil
}

// SetTenantClock moves a test tenant's clock to t. The clock never moves
// backwards: an earlier t is ErrConflict.
func (s *Store) SetTenantClock(ctx context.Context, id string, t time.Time) error {
	res, err := s.w.ExecContext(ctx, `UPDATE tenants SET clock = $2
		WHERE id = $1 AND test AND (clock IS NULL OR clock <= $2)`, id, ts(t))
	if err != nil {
		return fmt.Errorf("store: set clock of tenant %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: set clock of tenant %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("store: clock of tenant %s cannot move back: %w", id, ErrConflict)
	}
	return nil
}

// AcquireEngineLease makes holder the only engine worker of tenant id until
// until, unless another holder's lease is still running at now. It reports
// whether the lease was taken (or extended).
func (s *Store) AcquireEngineLease(ctx context.Context, id, holder string, now, until time.Time) (bool, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE tenants SET engine_holder = $2, engine_lease_until = $4
		WHERE id = $1 AND (engine_holder IS NULL OR engine_holder = $2 OR engine_lease_until IS NULL OR engine_lease_until < $3)`,
		id, holder, ts(now), ts(until))
	if err != nil {
		return false, fmt.Errorf("store: engine lease of tenant %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: engine lease of tenant %s: %w", id, err)
	}
	return n == 1, nil
}

// ReleaseEngineLease gives up holder's lease of tenant id.
func (s *Store) ReleaseEngineLease(ctx context.Context, id, holder string) error {
	if _, err := s.w.ExecContext(ctx, `UPDATE tenants SET engine_holder = NULL, engine_lease_until = NULL
		WHERE id = $1 AND engine_holder = $2`, id, holder); err != nil {
		return fmt.Errorf("store: release engine lease of tenant %s: %w", id, err)
	}
	return nil
}

// TenantIDByName returns the id of the tenant named name (a login's
// connection), or ErrNotFound.
func (s *Store) TenantIDByName(ctx context.Context, name string) (string, error) {
	var id string
	if err := s.readRow(ctx, `SELECT id FROM tenants WHERE name = $1`, name).Scan(&id); err != nil {
		return "", fmt.Errorf("store: tenant %q: %w", name, notFound(err))
	}
	return id, nil
}
