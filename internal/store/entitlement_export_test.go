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
