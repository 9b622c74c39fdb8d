// Package storetest opens fresh, migrated stores on every engine under test,
// so one test body proves behaviour on SQLite and PostgreSQL alike.
//
// SQLite always runs (a new file per test). PostgreSQL runs when
// KADENS_TEST_POSTGRES_URL is set; each test then gets its own schema, so
// parallel tests and concurrent runs never see each other's rows. An
// unreachable PostgreSQL fails the test rather than skipping it.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/store"
)

// PostgresEnv names the variable holding the PostgreSQL URL for tests.
const PostgresEnv = "KADENS_TEST_POSTGRES_URL"

// OnlyEnv names the variable that restricts a run to one engine
// ("postgres" or "sqlite"), e.g. for a CI step that has already run the
// suite on SQLite.
const OnlyEnv = "KADENS_TEST_ONLY_ENGINE"

// Engines lists the engines this test run covers.
func Engines() []store.Engine {
	all := []store.Engine{store.SQLite}
	if os.Getenv(PostgresEnv) != "" {
		all = append(all, store.Postgres)
	}
	if only := os.Getenv(OnlyEnv); only != "" {
		for _, e := range all {
			if string(e) == only {
				return []store.Engine{e}
			}
		}
		panic("storetest: " + OnlyEnv + "=" + only + " names no engine of this run (is " + PostgresEnv + " set?)")
	}
	return all
}

// Each runs fn as a subtest per engine, each with a fresh migrated store.
// The subtests run in parallel (each owns its database), so fn must not
// touch process-wide state (environment, package variables, fixed ports);
// a test that does must loop over Engines itself.
func Each(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			fn(t, Open(t, e))
		})
	}
}

// Options returns store options for a fresh, empty database on engine e;
// the database is removed when the test ends. Use it when a test needs the
// options themselves (e.g. to start a server or a second process on them).
func Options(t testing.TB, e store.Engine) store.Options {
	t.Helper()
	if e == store.SQLite {
		return store.Options{DataDir: t.TempDir()}
	}
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Fatalf("storetest: %s is not set", PostgresEnv)
	}
	schema := "kt_" + randomHex(8)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("storetest: open postgres: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("storetest: create schema on %s: %v", store.RedactURL(base), err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		_, _ = db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("storetest: parse %s: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return store.Options{DatabaseURL: u.String(), DataDir: t.TempDir()}
}

// Open returns a fresh migrated store on engine e, closed at test end.
func Open(t testing.TB, e store.Engine) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), Options(t, e))
	if err != nil {
		t.Fatalf("storetest: open %s: %v", e, err)
	}
	t.Cleanup(func() { s.Close() })
	done := MigrationTurn(e)
	defer done()
	if err := s.Migrate(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatalf("storetest: migrate %s: %v", e, err)
	}
	return s
}

// migrating serializes this process's PostgreSQL migrations. They take one
// database-wide advisory lock (whatever the schema), and a migration that
// finds it taken polls for it every 5 s (goose's session locker), so tests
// running in parallel would wait seconds for each other; in turn, each
// waits only for the migrations before it.
var migrating sync.Mutex

// MigrationTurn waits for this process's turn to migrate a database on
// engine e and returns the function that ends it; anything that migrates
// in a test (Open, a server's start) takes it. SQLite needs no turn.
func MigrationTurn(e store.Engine) (done func()) {
	if e != store.Postgres {
		return func() {}
	}
	migrating.Lock()
	return migrating.Unlock
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
