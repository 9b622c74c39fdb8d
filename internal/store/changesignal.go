package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
)

// The change signal: a number that moves with every commit to the
// database, by this process or another (the operator commands, a second
// server). It is a core facility of the store, not of any one wing: it
// reads SQLite's own state (the WAL index, walindex_unix.go, or PRAGMA
// data_version) and says nothing about which tables changed. The identity
// wing's answer cache (internal/subscriberuser) serves an entitlement
// answer only under the number it was read under (docs/AUTHORIZATIONS.md,
// "Answer cache").

// changeSignal gives a number that changes whenever a transaction that
// may have written commits in the database, by any connection or process.
// ok false means there is none to be had (now or for the engine): the
// caller reads without the cache.
type changeSignal interface {
	current(ctx context.Context) (version uint64, ok bool)
	close() error
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
	// Not interruptible, like the entitlement read (internal/subscriberuser).
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

// ChangeVersion is the store's change signal: a number that changes
// whenever a transaction that may have written commits, by any connection
// or process, and only grows. ok false means there is none to be had (now,
// or for the engine: PostgreSQL has none), and the caller must read the
// database. A reader that takes the number before its own read saw at
// least every write the number stands for. It is in the query kit for the
// identity wing's answer cache, which lives outside the store.
func (s *Store) ChangeVersion(ctx context.Context) (version uint64, ok bool) {
	if s.signal == nil {
		return 0, false
	}
	return s.signal.current(ctx)
}
