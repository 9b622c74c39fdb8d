package store

import (
	"context"
	"time"
)

// EntitlementPlan exposes to the external tests how SQLite runs the
// entitlement statement (EXPLAIN QUERY PLAN, one line per step).
func (s *Store) EntitlementPlan(ctx context.Context, tenant, user string, at time.Time) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+entitlementQuery(true), tenant, user, ts(at))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var (
			id, parent, unused int
			detail             string
		)
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		out = append(out, detail)
	}
	return out, rows.Err()
}
