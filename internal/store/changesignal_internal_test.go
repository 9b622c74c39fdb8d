//go:build unix

package store

import (
	"context"
	"testing"
)

// TestChangeSignals: each of SQLite's change signals keeps its number
// while nothing is written, and moves with every commit — of the store's
// own writer, and of a second store on the same file (its own
// connections, like another process) — and never for a read.
func TestChangeSignals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.signal.(*walIndexSignal); !ok {
		t.Errorf("the store follows changes with %T, want the WAL index", s.signal)
	}
	other, err := Open(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	dv, err := openSQLiteDataVersion(ctx, sqliteURI(s.source)+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer dv.close()
	for name, sig := range map[string]changeSignal{"wal index": s.signal, "data_version": dv} {
		read := func() uint64 {
			t.Helper()
			v, ok := sig.current(ctx)
			if !ok {
				t.Fatalf("%s: no signal", name)
			}
			return v
		}
		v := read()
		if again := read(); again != v {
			t.Errorf("%s: %d, then %d with nothing written", name, v, again)
		}
		var n int
		if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if after := read(); after != v {
			t.Errorf("%s: a read moved it from %d to %d", name, v, after)
		}
		for _, w := range []*Store{s, other, s} {
			if _, err := w.w.ExecContext(ctx, `INSERT INTO t VALUES (1)`); err != nil {
				t.Fatal(err)
			}
			next := read()
			if next <= v {
				t.Errorf("%s: %d after a commit, was %d", name, next, v)
			}
			v = next
		}
	}
}
