package subscriberuser

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// EntitlementPlan exposes to the external tests how SQLite runs the
// entitlement statement (EXPLAIN QUERY PLAN, one line per step).
func EntitlementPlan(ctx context.Context, st *store.Store, tenant, user string, at time.Time) ([]string, error) {
	return store.QueryAll(ctx, st.Reader(), func(r store.Scanner) (string, error) {
		var (
			id, parent, unused int
			detail             string
		)
		err := r.Scan(&id, &parent, &unused, &detail)
		return detail, err
	}, "EXPLAIN QUERY PLAN "+entitlementQuery(true), tenant, user, store.TimeParam(at))
}

// ReadUserAccess is AccessOf read from the database, past the answer
// cache (the benchmarks measure both).
func ReadUserAccess(ctx context.Context, st *store.Store, tenant, user string, at time.Time) (UserAccess, error) {
	a, _, err := readUserAccess(context.WithoutCancel(ctx), st, tenant, user, at)
	return a, err
}
