package subscriberuser

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// ProductAccess is one product a subscriber user may use now, and the
// subscription period that grants it.
type ProductAccess struct {
	ProductID string `json:"productId"`
	Name      string `json:"name"`
	Category  string `json:"category"`
	// SubscriptionID and SubscriberID are the period that grants the
	// product (of several, the one that grants it longest).
	SubscriptionID string `json:"subscriptionId"`
	SubscriberID   string `json:"subscriberId"`
	// Until is when that period's access ends as things stand: the end of
	// the period, or an earlier cancellation or deactivation. A renewal
	// makes a new period that continues it.
	Until time.Time `json:"until"`
}

// UserAccess is what a subscriber user may use at a moment
// (docs/AUTHORIZATIONS.md, "Entitlements").
type UserAccess struct {
	UserID       string `json:"userId"`
	SubscriberID string `json:"subscriberId" description:"The subscriber the user is linked to; empty when none."`
	Disabled     bool   `json:"disabled" description:"A disabled user has no access."`
	// At is the tenant's time the access was evaluated at (a test
	// tenant's clock).
	At       time.Time       `json:"at"`
	Products []ProductAccess `json:"products"`
}

// entitlementQuery reads a user and the subscription periods that grant it
// access at $3, in one statement of three branches: the user itself
// (always one row, so an unknown user, no row, differs from one without
// access), the live periods of the user's own subscriber, and those of its
// account sources' accounts (the account's subscriber, in the account's
// currency). Live at $3: started, not ended, no cancellation or
// deactivation in effect. Each branch is a chain of index look-ups that
// starts at the user (CROSS JOIN keeps SQLite's planner, which has no
// statistics here, to that order; PostgreSQL reads it as an inner join): subscriber_users by (tenant, id), account_sources by
// (tenant, user, account), subscriber_accounts by (tenant, id), and
// subscriptions by (tenant, subscriber, period_end) (migration 00026), so
// ended periods are never read. (A first version joined the periods to a
// UNION of the two sources; SQLite then scanned the tenant's periods and
// built a temporary index on every run.) Timestamps are read as text on
// SQLite (parseDBTime's layout): the driver's layout guessing is a large
// part of a short read's cost there.
func entitlementQuery(textTimes bool) string {
	// until: when the period's access ends, the earliest of its end, its
	// cancellation and its deactivation, computed here so that one
	// timestamp a row is read rather than three. SQLite's scalar MIN
	// compares the stored texts, whose fixed-width layout sorts as time;
	// PostgreSQL's LEAST skips NULLs.
	until := `LEAST(s.period_end, s.cancel_effective_at, s.deactivated_at)`
	start := `s.period_start`
	if textTimes {
		until = `CAST(MIN(s.period_end, COALESCE(s.cancel_effective_at, s.period_end), COALESCE(s.deactivated_at, s.period_end)) AS TEXT)`
		start = `CAST(s.period_start AS TEXT)`
	}
	periods := `s.id, s.subscriber_id, s.package_hash, ` + until + `, ` + start
	return `SELECT 0, u.disabled, u.subscriber_id, NULL, NULL, NULL, NULL, NULL
	FROM subscriber_users u WHERE u.tenant_id = $1 AND u.id = $2
	UNION ALL
	SELECT 1, u.disabled, NULL, ` + periods + `
	FROM subscriber_users u CROSS JOIN subscriptions s
	WHERE u.tenant_id = $1 AND u.id = $2 AND NOT u.disabled
		AND s.tenant_id = $1 AND s.subscriber_id = u.subscriber_id AND` + store.SubscriptionNotOverAt3 + `
	UNION ALL
	SELECT 2, u.disabled, NULL, ` + periods + `
	FROM subscriber_users u CROSS JOIN account_sources a CROSS JOIN subscriber_accounts sa CROSS JOIN subscriptions s
	WHERE u.tenant_id = $1 AND u.id = $2 AND NOT u.disabled
		AND a.tenant_id = $1 AND a.user_id = u.id
		AND sa.tenant_id = $1 AND sa.id = a.account_id
		AND s.tenant_id = $1 AND s.subscriber_id = sa.subscriber_id AND s.currency = sa.currency AND` + store.SubscriptionNotOverAt3
}

// entitlementQueries are entitlementQuery for each engine, built once: the
// statement cache is keyed by the text, and building it on every request
// was a measurable part of the busiest route's cost.
var entitlementQueries = [2]string{entitlementQuery(false), entitlementQuery(true)}

// AccessOf returns what user id of the context's tenant may use at at,
// or store.ErrNotFound. A disabled user has no products. Products are sorted by
// id; a product several periods grant appears once, with the period that
// grants it longest. The products may be shared with the answer cache
// (accesscache.go): callers read them, never change them.
func AccessOf(ctx context.Context, st *store.Store, id string, at time.Time) (UserAccess, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return UserAccess{}, err
	}
	if !store.ValidID(id) {
		return UserAccess{}, store.ErrNotFound
	}
	cache := answers(st)
	// Before the read: see accessCache.
	version, cacheable := st.ChangeVersion(ctx)
	if cacheable {
		if a, ok := cache.get(tenant, id, version, at); ok {
			return a, nil
		}
	} else {
		cache.misses.Add(1)
	}
	// The read runs without the request's cancellation: with a cancellable
	// context database/sql and the SQLite driver each start a goroutine per
	// query to watch it, which cost more than this read's index look-ups,
	// and a read this short gains nothing from being interrupted.
	a, until, err := readUserAccess(context.WithoutCancel(ctx), st, tenant, id, at)
	if err == nil && cacheable {
		cache.put(tenant, id, version, at, until, a)
	}
	return a, err
}

// readUserAccess is UserAccess read from the database, with the first
// moment after at when the answer changes by time alone (a period starts
// or its access ends); zero when none is in sight.
//
// It is the busiest read of the service (issue 18), so it allocates little:
// the scan targets are reused across rows.
func readUserAccess(ctx context.Context, st *store.Store, tenant, id string, at time.Time) (UserAccess, time.Time, error) {
	q := entitlementQueries[0]
	if st.Engine() == store.SQLite {
		q = entitlementQueries[1]
	}
	rows, err := st.Reader().QueryPrepared(ctx, q, tenant, id, store.TimeParam(at))
	if err != nil {
		return UserAccess{}, time.Time{}, fmt.Errorf("subscriberuser: access of user %s: %w", id, err)
	}
	defer rows.Close()
	out := UserAccess{UserID: id, At: at.UTC(), Products: []ProductAccess{}}
	var (
		grants                       []accessGrant
		found                        bool
		branch                       int
		disabled                     bool
		sub, subID, subscriber, hash sql.NullString
		until, start                 accessTime
		next                         time.Time
	)
	// sooner makes next the earlier of next and t.
	sooner := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	dest := []any{&branch, &disabled, &sub, &subID, &subscriber, &hash, &until, &start}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return UserAccess{}, time.Time{}, fmt.Errorf("subscriberuser: access of user %s: %w", id, err)
		}
		if branch == 0 {
			found = true
			out.Disabled, out.SubscriberID = disabled, sub.String
			continue
		}
		if !subID.Valid || !until.ok || !start.ok {
			continue
		}
		if start.t.After(at) {
			sooner(start.t.UTC())
			continue
		}
		sooner(until.t.UTC())
		if !slices.ContainsFunc(grants, func(g accessGrant) bool { return g.subscription == subID.String }) {
			grants = append(grants, accessGrant{subID.String, subscriber.String, hash.String, until.t.UTC()})
		}
	}
	if err := rows.Err(); err != nil {
		return UserAccess{}, time.Time{}, fmt.Errorf("subscriberuser: access of user %s: %w", id, err)
	}
	if !found {
		return UserAccess{}, time.Time{}, fmt.Errorf("subscriberuser: access of user %s: %w", id, store.ErrNotFound)
	}
	if len(grants) == 0 {
		return out, next, nil
	}
	// The packages' products come from the cache nearly always; the map
	// packageProducts builds is for when some are missing.
	lines := make([][]PackageLine, len(grants))
	cached := true
	for i, g := range grants {
		var ok bool
		lines[i], ok = cachedPackageLines(g.hash)
		cached = cached && ok
	}
	if !cached {
		hashes := make([]string, 0, len(grants))
		for _, g := range grants {
			hashes = append(hashes, g.hash)
		}
		products, err := packageLines(ctx, st, tenant, hashes)
		if err != nil {
			return UserAccess{}, time.Time{}, fmt.Errorf("subscriberuser: access of user %s: %w", id, err)
		}
		for i, g := range grants {
			lines[i] = products[g.hash]
		}
	}
	// A user has a handful of products: a linear search beats a map.
	for i, g := range grants {
		for _, p := range lines[i] {
			pa := ProductAccess{ProductID: p.ProductID, Name: p.Name, Category: p.Category,
				SubscriptionID: g.subscription, SubscriberID: g.subscriber, Until: g.until}
			if i := slices.IndexFunc(out.Products, func(o ProductAccess) bool { return o.ProductID == p.ProductID }); i < 0 {
				out.Products = append(out.Products, pa)
			} else if pa.Until.After(out.Products[i].Until) {
				out.Products[i] = pa
			}
		}
	}
	slices.SortFunc(out.Products, func(a, b ProductAccess) int { return strings.Compare(a.ProductID, b.ProductID) })
	return out, next, nil
}

// accessGrant is a live period as UserAccess collects them.
type accessGrant struct {
	subscription, subscriber, hash string
	until                          time.Time
}

// accessTime is anyTime without the pointer (one allocation less per
// timestamp of the busiest read): PostgreSQL returns a time, SQLite the
// text the query casts to.
type accessTime struct {
	t  time.Time
	ok bool
}

func (a *accessTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*a = accessTime{}
	case time.Time:
		*a = accessTime{x.UTC(), true}
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return fmt.Errorf("subscriberuser: timestamp %q: %w", x, err)
		}
		*a = accessTime{t, true}
	case []byte:
		return a.Scan(string(x))
	default:
		return fmt.Errorf("subscriberuser: cannot read %T as a timestamp", v)
	}
	return nil
}
