package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// accessCache keeps entitlement answers (UserAccess) so that the busiest
// question of the service is answered without reading the database while
// nothing it depends on has changed (docs/AUTHORIZATIONS.md, "Answer
// cache").
//
// An answer goes stale two ways, and each is checked on every request:
//
//   - Data: a write to the database, by this process or another (the
//     operator commands, a second server). A change signal (changeSignal)
//     gives a number that moves with every commit; an answer is served only
//     under the number it was read under. The number is read before the
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
	signal changeSignal
	mu     sync.RWMutex
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

// changeSignal gives a number that changes whenever a transaction that
// may have written commits in the database, by any connection or process.
// ok false means there is none to be had (now or for the engine): the
// caller reads without the cache.
type changeSignal interface {
	current(ctx context.Context) (version uint64, ok bool)
	close() error
}

func newAccessCache(signal changeSignal) *accessCache {
	return &accessCache{signal: signal, m: map[accessKey]accessEntry{}}
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

// sqliteChangeSignal returns the change signal of the SQLite database at
// path, open in this process: its WAL index read directly where that can
// be done (walindex_unix.go), else PRAGMA data_version on a connection of
// its own, opened with uri.
func sqliteChangeSignal(ctx context.Context, path, uri string, log *slog.Logger) (changeSignal, error) {
	w, err := openWALIndexSignal(path)
	if err == nil {
		return w, nil
	}
	if log != nil {
		log.Debug("entitlement answers follow the database by PRAGMA data_version", "reason", err)
	}
	return openSQLiteDataVersion(ctx, uri)
}

// sqliteDataVersion is SQLite's change signal: PRAGMA data_version on a
// connection of its own, which changes whenever another connection — of
// this process or any other — has committed to the database since the
// last time it was asked. The connection never writes, so every commit
// counts. It costs one statement (about 4 µs, most of it opening SQLite's
// read transaction) instead of the entitlement read's several look-ups.
type sqliteDataVersion struct {
	db   *sql.DB
	stmt *sql.Stmt
	mu   sync.Mutex
	// last is the number last read; SQLite's only says "changed", so the
	// cache's version counts the changes seen, which only grows.
	last, version uint64
}

func openSQLiteDataVersion(ctx context.Context, uri string) (*sqliteDataVersion, error) {
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite change signal: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	stmt, err := db.PrepareContext(ctx, "PRAGMA data_version")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: prepare sqlite change signal: %w", err)
	}
	return &sqliteDataVersion{db: db, stmt: stmt}, nil
}

// current reads and counts under one lock, so that the numbers it hands
// out follow the order of the database's states (the one connection
// serializes the reads anyway).
func (d *sqliteDataVersion) current(ctx context.Context) (uint64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var v uint64
	// Not interruptible, like the entitlement read (entitlement.go).
	if err := d.stmt.QueryRowContext(context.WithoutCancel(ctx)).Scan(&v); err != nil {
		return 0, false
	}
	if d.version == 0 || v != d.last {
		d.last = v
		d.version++
	}
	return d.version, true
}

func (d *sqliteDataVersion) close() error {
	d.stmt.Close()
	return d.db.Close()
}

// AccessCacheStats returns how many entitlement answers were served from
// the answer cache and how many were read from the database since the
// store opened (the latter also counts every answer on an engine without
// a change signal).
func (s *Store) AccessCacheStats() (hits, misses uint64) {
	return s.access.hits.Load(), s.access.misses.Load()
}
