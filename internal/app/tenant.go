package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Tenant answers "does this tenant exist?", from memory where it can: the
// surfaces ask it on every request. A miss is checked against the database
// (tenants are created by other processes too, e.g. `kadens tenant
// create`), and misses are remembered briefly so that a stream of requests
// for an unknown tenant cannot hammer the database.
func (a *App) Tenant(ctx context.Context, id string) (store.Tenant, bool, error) {
	return a.tenants.lookup(ctx, id)
}

// Now is the current time of the context's tenant: the wall clock, or for
// a test tenant its own clock, which only moves when the tenant advances
// it. Every command that depends on time (order dates, cancellations, plan
// changes, statuses) runs at this time, so a test tenant can simulate
// months in seconds.
func (a *App) Now(ctx context.Context) (time.Time, error) {
	id, err := tenancy.From(ctx)
	if err != nil {
		return time.Time{}, err
	}
	t, ok, err := a.tenants.lookup(ctx, id)
	if err != nil || !ok || !t.Test {
		return a.wall(), err
	}
	// The clock moves, so it is read fresh rather than from the cache.
	fresh, err := a.store.TenantByID(ctx, id)
	if err != nil {
		return time.Time{}, err
	}
	return fresh.Now(a.wall()), nil
}

type tenantCache struct {
	store *store.Store
	mu    sync.RWMutex
	known map[string]store.Tenant
	miss  map[string]time.Time
}

func newTenantCache(s *store.Store) *tenantCache {
	return &tenantCache{store: s, known: map[string]store.Tenant{}, miss: map[string]time.Time{}}
}

func (t *tenantCache) lookup(ctx context.Context, id string) (store.Tenant, bool, error) {
	t.mu.RLock()
	ten, ok := t.known[id]
	missAt, missed := t.miss[id]
	t.mu.RUnlock()
	if ok {
		return ten, true, nil
	}
	if missed && time.Since(missAt) < 5*time.Second {
		return store.Tenant{}, false, nil
	}
	ten, err := t.store.TenantByID(ctx, id)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case errors.Is(err, store.ErrNotFound):
		if len(t.miss) > 10_000 {
			clear(t.miss)
		}
		t.miss[id] = time.Now()
		return store.Tenant{}, false, nil
	case err != nil:
		return store.Tenant{}, false, err
	}
	t.known[id] = ten
	delete(t.miss, id)
	return ten, true, nil
}
