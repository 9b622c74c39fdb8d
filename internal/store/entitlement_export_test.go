package store

import (
	"context"
	"time"
)

// EntitlementPlan exposes to the external tests how SQLite runs the
// entitlement statement (EXPLAIN QUERY PLAN, one line per step).
func (s *Store) EntitlementPlan(ctx context.Context, tenant, user string, at time.Time) ([]string, error) {
	return s.QueryPlan(ctx, entitlementQuery(true), tenant, user, ts(at))
}

// ReadUserAccess is UserAccess read from the database, past the answer
// cache (the benchmarks measure both).
func (s *Store) ReadUserAccess(ctx context.Context, tenant, user string, at time.Time) (UserAccess, error) {
	a, _, err := s.readUserAccess(context.WithoutCancel(ctx), tenant, user, at)
	return a, err
}
