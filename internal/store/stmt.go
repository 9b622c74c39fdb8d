package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps prepared statements of the hot single-row reads. Without
// it every QueryRow compiles its SQL again; on SQLite that compilation was
// the largest single cost of a GET by id. database/sql prepares a cached
// statement lazily on each pooled connection it runs on.
type stmtCache struct {
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// readStmt returns the cached prepared statement for query on the read
// pool, preparing it the first time. Use it for fixed query strings only
// (the cache is keyed by the text and never shrinks).
func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmts.mu.RLock()
	st, ok := s.stmts.stmts[query]
	s.stmts.mu.RUnlock()
	if ok {
		return st, nil
	}
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	if st, ok = s.stmts.stmts[query]; ok {
		return st, nil
	}
	st, err := s.r.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if s.stmts.stmts == nil {
		s.stmts.stmts = map[string]*sql.Stmt{}
	}
	s.stmts.stmts[query] = st
	return st, nil
}

// readRow runs a single-row query on the read pool with a cached prepared
// statement (readStmt).
func (s *Store) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := s.readStmt(ctx, query)
	if err != nil {
		// Let the plain path report the error in context.
		return s.r.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// writeStmt returns the cached prepared statement for query on the write
// pool, or nil when it is not prepared yet. It cannot prepare it on the
// spot: inside a transaction on SQLite the only write connection is taken,
// and preparing on the pool would wait for it forever. So a missing
// statement is noted, runs unprepared this time, and is prepared by
// prepareWanted before the next transaction begins.
func (s *Store) writeStmt(query string) *sql.Stmt {
	s.wstmts.mu.RLock()
	st := s.wstmts.stmts[query]
	s.wstmts.mu.RUnlock()
	if st == nil {
		s.wstmts.mu.Lock()
		if s.wanted == nil {
			s.wanted = map[string]bool{}
		}
		s.wanted[query] = true
		s.wstmts.mu.Unlock()
	}
	return st
}

// prepareWanted prepares the statements writeStmt noted. It runs outside
// any transaction, and holds no lock while it prepares: preparing waits for
// the write connection, which a transaction that needs the lock may hold.
func (s *Store) prepareWanted(ctx context.Context) {
	s.wstmts.mu.Lock()
	queries := make([]string, 0, len(s.wanted))
	for q := range s.wanted {
		queries = append(queries, q)
	}
	clear(s.wanted)
	s.wstmts.mu.Unlock()
	for _, q := range queries {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			continue // it keeps running unprepared, and reports its own error
		}
		s.wstmts.mu.Lock()
		if s.wstmts.stmts == nil {
			s.wstmts.stmts = map[string]*sql.Stmt{}
		}
		if _, dup := s.wstmts.stmts[q]; dup {
			st.Close()
		} else {
			s.wstmts.stmts[q] = st
		}
		s.wstmts.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
}

// poolStmt returns the cached prepared statement for query on the write
// pool, preparing it on the spot the first time. Only for statements run
// outside a transaction (on SQLite preparing waits for the one write
// connection, which the caller does not hold then). The identity
// provider's single statements use it: compiling them on every login was
// the largest part of a login's CPU on SQLite.
func (s *Store) poolStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.wstmts.mu.RLock()
	st := s.wstmts.stmts[query]
	s.wstmts.mu.RUnlock()
	if st != nil {
		return st, nil
	}
	st, err := s.w.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.wstmts.mu.Lock()
	defer s.wstmts.mu.Unlock()
	if s.wstmts.stmts == nil {
		s.wstmts.stmts = map[string]*sql.Stmt{}
	}
	if old, dup := s.wstmts.stmts[query]; dup {
		st.Close()
		return old, nil
	}
	s.wstmts.stmts[query] = st
	return st, nil
}

// writeExec runs a fixed statement on the write pool, prepared once
// (poolStmt).
func (s *Store) writeExec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := s.poolStmt(ctx, query)
	if err != nil {
		return s.w.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

// writeRow is writeExec for a statement that returns one row.
func (s *Store) writeRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := s.poolStmt(ctx, query)
	if err != nil {
		return s.w.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
