package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// A full disk is recognised on both engines. SQLite's is provoked for real:
// the writer's connection may grow the database by a few pages only
// (PRAGMA max_page_count), and writes past them fail with SQLITE_FULL.
// PostgreSQL's cannot be provoked on a shared server; its error, SQLSTATE
// 53100 as the server sends it, is recognised however it is wrapped.
func TestIsDiskFull(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		if s.Engine() == store.Postgres {
			full := fmt.Errorf("store: create subscriber: %w", &pgconn.PgError{Severity: "ERROR", Code: "53100",
				Message: `could not extend file "base/16384/16385": No space left on device`})
			if !store.IsDiskFull(full) {
				t.Fatal("SQLSTATE 53100 is not recognised as a full disk")
			}
			if store.IsDiskFull(&pgconn.PgError{Code: "23505"}) || store.IsDiskFull(errors.New("disk")) {
				t.Fatal("another error is taken for a full disk")
			}
			return
		}
		ctx := context.Background()
		var pages int
		if err := s.DB().QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		// The writer pool has one connection: the limit holds for every
		// write of the store.
		if _, err := s.DB().ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+2)); err != nil {
			t.Fatal(err)
		}
		var err error
		for i := 0; i < 1000 && err == nil; i++ {
			_, err = s.CreateTenant(ctx, fmt.Sprintf("t%d-%s", i, strings.Repeat("x", 2000)), true, time.Now())
		}
		if !store.IsDiskFull(err) {
			t.Fatalf("writing past max_page_count: %v, want it recognised as a full disk", err)
		}
		if !store.IsDiskFull(fmt.Errorf("spool: %w", syscall.ENOSPC)) {
			t.Fatal("ENOSPC is not recognised")
		}
	})
}
