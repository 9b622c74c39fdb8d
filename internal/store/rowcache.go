package store

import (
	"hash/maphash"
	"sync"
)

// A list page of 100 rows read column by column costs the SQLite driver
// about three API calls per column, each behind the connection's mutex,
// plus SQLite's own decoding of every column: ~4 µs per invoice row, most
// of a page's CPU (docs/PERFORMANCE.md, "List pages"). Rows of a list
// change far less often than they are read, so the list queries read each
// row's id and version first and take unchanged rows from rowCache; only
// when a row is new to the process, or changed since, is the page read in
// full. The version comes from the same database read as the ids, so a
// row changed by another process (PostgreSQL) is never served stale: the
// cache is keyed by what the database says, not invalidated by writers.
//
// This is only correct while every UPDATE of a cached table bumps the
// row's version; TestCachedTablesBumpVersion checks the store's SQL for it.

// rowCacheSize bounds each cache: about 1 KB per row, so a few MB at most,
// and ten pages of the largest size the API serves.
const rowCacheSize = 10_000

// rowCacheShards spreads the lock: list pages of many connections look up
// 100 rows each.
const rowCacheShards = 16

// rowKey is a row of a tenant. Keys are per tenant although ids are
// unique: the lookups come from a query already narrowed to the tenant,
// and keying by it too makes a cross-tenant answer impossible by
// construction.
type rowKey struct{ tenant, id string }

// cachedRow holds the row by pointer: a list row is several hundred
// bytes, and the map's values are copied on every lookup.
type cachedRow[T any] struct {
	version int64
	row     *T
}

type rowShard[T any] struct {
	mu   sync.Mutex
	rows map[rowKey]cachedRow[T]
}

// rowCache holds rows of one list as they were at a version. Rows are
// evicted at random when a shard is full (Go's map iteration order), which
// costs nothing to maintain and is fair enough for pages read repeatedly.
type rowCache[T any] struct {
	seed   maphash.Seed
	shards [rowCacheShards]rowShard[T]
}

func newRowCache[T any]() *rowCache[T] {
	c := &rowCache[T]{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].rows = map[rowKey]cachedRow[T]{}
	}
	return c
}

func (c *rowCache[T]) shard(k rowKey) *rowShard[T] {
	return &c.shards[maphash.String(c.seed, k.id)%rowCacheShards]
}

// get returns the row id of tenant if it is cached at version. The row is
// shared: callers copy it and must not change what it points to.
func (c *rowCache[T]) get(tenant, id string, version int64) (*T, bool) {
	k := rowKey{tenant, id}
	sh := c.shard(k)
	sh.mu.Lock()
	e, ok := sh.rows[k]
	sh.mu.Unlock()
	if !ok || e.version != version {
		return nil, false
	}
	return e.row, true
}

// put caches row as id of tenant at version.
func (c *rowCache[T]) put(tenant, id string, version int64, row T) {
	k := rowKey{tenant, id}
	sh := c.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.rows[k]; !ok && len(sh.rows) >= rowCacheSize/rowCacheShards {
		for old := range sh.rows {
			delete(sh.rows, old)
			break
		}
	}
	sh.rows[k] = cachedRow[T]{version, &row}
}

// idVersion is a row of a page as the first, cheap query reads it.
type idVersion struct {
	id      string
	version int64
}
