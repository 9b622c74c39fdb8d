package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// ErrNotTestTenant is the answer of the test clock's commands for a tenant
// that runs on real time: only a test tenant has a clock of its own.
var ErrNotTestTenant = errors.New("app: not a test tenant")

// TestClock is the current time of the context's test tenant, read fresh
// (another process may have advanced it); ErrNotTestTenant for a tenant on
// real time.
func (a *App) TestClock(ctx context.Context) (time.Time, error) {
	t, err := a.testTenant(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return t.Now(a.wall()), nil
}

// AdvanceTestClock runs everything due in the context's test tenant up to
// to, in time order, then moves its clock there. ErrNotTestTenant for a
// tenant on real time; validation.Errors naming to for a time before the
// clock or from engine.MaxClock on; engine.ErrBusy while another worker
// advances the tenant.
func (a *App) AdvanceTestClock(ctx context.Context, to time.Time) (engine.Stats, error) {
	t, err := a.testTenant(ctx)
	if err != nil {
		return engine.Stats{}, err
	}
	now := t.Now(a.wall())
	if !to.Before(engine.MaxClock) {
		return engine.Stats{}, validation.Field("to", "must be before %s: a clock further ahead leaves no room for the periods, due dates and "+
			"timestamps every later order and renewal computes", engine.MaxClock.Format(time.RFC3339))
	}
	if to.Before(now) {
		return engine.Stats{}, validation.Field("to", "%s is before the clock (%s); a clock only moves forward", to.Format(time.RFC3339), now.Format(time.RFC3339))
	}
	stats, err := a.engine.AdvanceClock(ctx, t.ID, to)
	if err != nil && !errors.Is(err, engine.ErrBusy) {
		return stats, fmt.Errorf("app: advance the clock of tenant %s to %s: %w", t.ID, to.Format(time.RFC3339), err)
	}
	return stats, err
}

// testTenant is the context's tenant, read fresh, if it is a test tenant.
func (a *App) testTenant(ctx context.Context) (store.Tenant, error) {
	id, err := tenancy.From(ctx)
	if err != nil {
		return store.Tenant{}, err
	}
	t, err := a.store.TenantByID(ctx, id)
	if err != nil {
		return store.Tenant{}, err
	}
	if !t.Test {
		return store.Tenant{}, ErrNotTestTenant
	}
	return t, nil
}
