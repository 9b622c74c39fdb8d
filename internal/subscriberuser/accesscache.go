package subscriberuser

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// accessCache keeps entitlement answers (UserAccess) so that the busiest
// question of the service is answered without reading the database while
// nothing it depends on has changed (docs/AUTHORIZATIONS.md, "Answer
// cache").
//
// An answer goes stale two ways, and each is checked on every request:
//
//   - Data: a write to the database, by this process or another (the
//     operator commands, a second server). The store's change signal
//     (store.ChangeVersion, a core facility) gives a number that moves
//     with every commit; an answer is served only under the number it was
//     read under. The number is read before the
//     answer's own read, so an answer stored under it saw at least every
//     write that number stands for.
//   - Time: a period starts or ends, a cancellation or deactivation takes
//     effect. An answer read at t is kept with the next such moment after t
//     and is served only for times in [t, that moment).
//
// Any write moves the number, so the cache is coarse: after a write every
// answer is read again once. Reads of the busiest route vastly outnumber
// writes; a write-heavy moment costs what the route cost before the cache.
type accessCache struct {
	mu sync.RWMutex
	// version is the change number the entries were read under; entries
	// of an older number are dropped together when a newer one is seen.
	version uint64
	m       map[accessKey]accessEntry
	// hits and misses count the answers served from the cache and read
	// (kadens_access_cache_*_total).
	hits, misses atomic.Uint64
}

// accessCacheMax bounds the entries (one per tenant and user asked about
// since the last write, a few hundred bytes each); when full the map is
// emptied and refills with the users still asking.
const accessCacheMax = 100_000

type accessKey struct{ tenant, user string }

// accessEntry is an answer without its evaluation time and the span of
// tenant times it holds for: [from, until), until zero meaning no end.
type accessEntry struct {
	access      UserAccess
	from, until time.Time
}

// accessCacheKey is the answer cache's key among what the store keeps
// for the wings (store.Attached): one cache per store, living as long as
// it does.
type accessCacheKey struct{}

// answers is st's answer cache. On an engine without a change signal
// (PostgreSQL) it only counts the misses.
func answers(st *store.Store) *accessCache {
	return st.Attached(accessCacheKey{}, func() any {
		return &accessCache{m: map[accessKey]accessEntry{}}
	}).(*accessCache)
}

// get returns the answer for user of tenant at time at, if one read under
// version covers at. The products are shared with the cache: read only.
func (c *accessCache) get(tenant, user string, version uint64, at time.Time) (UserAccess, bool) {
	c.mu.RLock()
	e, ok := c.m[accessKey{tenant, user}]
	same := c.version == version
	c.mu.RUnlock()
	if !ok || !same || at.Before(e.from) || (!e.until.IsZero() && !at.Before(e.until)) {
		c.misses.Add(1)
		return UserAccess{}, false
	}
	c.hits.Add(1)
	a := e.access
	a.At = at.UTC()
	return a, true
}

// put stores an answer read under version at time at, holding until
// until (zero: no end in sight). An answer read under an older number
// than the cache has seen is not stored: it may predate a write.
func (c *accessCache) put(tenant, user string, version uint64, at, until time.Time, a UserAccess) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case version < c.version:
		return
	case version > c.version || len(c.m) >= accessCacheMax:
		c.version, c.m = version, map[accessKey]accessEntry{}
	}
	c.m[accessKey{tenant, user}] = accessEntry{access: a, from: at, until: until}
}

// AccessCacheStats returns how many entitlement answers were served from
// st's answer cache and how many were read from the database since the
// store opened (the latter also counts every answer on an engine without
// a change signal).
func AccessCacheStats(st *store.Store) (hits, misses uint64) {
	c := answers(st)
	return c.hits.Load(), c.misses.Load()
}
