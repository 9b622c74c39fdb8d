// Package rowcache keeps rows of lists by version, so that a page of rows
// that did not change is not read and rendered again.
package rowcache

import (
	"hash/maphash"
	"sync"
)

// A list page of 100 rows read column by column costs the SQLite driver
// about three API calls per column, each behind the connection's mutex,
// plus SQLite's own decoding of every column, and rendering its JSON
// costs as much again (docs/PERFORMANCE.md, "List pages"). Rows of a list
// change far less often than they are read, so the list queries read each
// row's id and version first and take unchanged rows from a Cache; only
// when a row is new to the process, or changed since, is it read and
// rendered again. The version comes from the same database read as the
// ids, so a row changed by another process (PostgreSQL) is never served
// stale: entries are keyed by what the database says, not invalidated by
// writers. That holds only while every UPDATE of a cached table bumps the
// row's version (the store's TestCachedTablesBumpVersion).

// Size bounds each cache. A row is about 1 KB (a struct, or its JSON), and
// a process has four caches (the store's rows and the API's JSON, of
// subscriptions and of invoices): about 20 MB at most, which keeps a
// server that has paged through a large tenant within the memory a small
// instance has, while fifty pages of 100 rows per list stay cached.
const Size = 5_000

// shards spreads the lock: list pages of many connections look up 100 rows
// each.
const shards = 16

// key is a row of a tenant. Keys are per tenant although ids are
// unique: the lookups come from a query already narrowed to the tenant,
// and keying by it too makes a cross-tenant answer impossible by
// construction.
type key struct{ tenant, id string }

// cachedRow holds the row by pointer: a list row is several hundred
// bytes, and the map's values are copied on every lookup.
type cachedRow[T any] struct {
	version int64
	row     *T
}

type shard[T any] struct {
	mu   sync.Mutex
	rows map[key]cachedRow[T]
}

// Cache holds rows of one list as they were at a version, at most Size of
// them. Rows are evicted at random when a shard is full (Go's map
// iteration order), which costs nothing to maintain and is fair enough for
// pages read repeatedly. It is safe for concurrent use.
type Cache[T any] struct {
	seed   maphash.Seed
	shards [shards]shard[T]
}

// New returns an empty cache.
func New[T any]() *Cache[T] {
	c := &Cache[T]{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].rows = map[key]cachedRow[T]{}
	}
	return c
}

func (c *Cache[T]) shardOf(k key) *shard[T] {
	return &c.shards[maphash.String(c.seed, k.id)%shards]
}

// Get returns the row id of tenant if it is cached at version. The row is
// shared: callers copy it and must not change what it points to.
func (c *Cache[T]) Get(tenant, id string, version int64) (*T, bool) {
	k := key{tenant, id}
	sh := c.shardOf(k)
	sh.mu.Lock()
	e, ok := sh.rows[k]
	sh.mu.Unlock()
	if !ok || e.version != version {
		return nil, false
	}
	return e.row, true
}

// Put caches row as id of tenant at version.
func (c *Cache[T]) Put(tenant, id string, version int64, row T) {
	k := key{tenant, id}
	sh := c.shardOf(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.rows[k]; !ok && len(sh.rows) >= Size/shards {
		for old := range sh.rows {
			delete(sh.rows, old)
			break
		}
	}
	sh.rows[k] = cachedRow[T]{version, &row}
}
