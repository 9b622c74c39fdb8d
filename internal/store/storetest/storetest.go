// Package storetest opens fresh, migrated stores on every engine under test,
// so one test body proves behaviour on SQLite and PostgreSQL alike.
//
// SQLite always runs (a new file per test). PostgreSQL runs when
// KADENS_TEST_POSTGRES_URL is set; each test then gets its own database,
// so parallel tests and concurrent runs never see each other's rows. An
// unreachable PostgreSQL fails the test rather than skipping it.
//
// Migrating is the dearest part of a fresh store (seconds under the race
// detector on SQLite, seconds of DDL on PostgreSQL), so a test process
// migrates one template per engine, once, and every test gets a copy of it:
// on SQLite the migrated file, on PostgreSQL a database cloned from a
// migrated template database (CREATE DATABASE … TEMPLATE). Anything that
// migrates the copy again (a server's start, an operator command) finds
// nothing to do; tests of a migration run it down and up again on a copy.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kadens/kadens/internal/dburl"
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

// Options returns store options for a fresh database on engine e that
// already holds the schema every migration leaves (a copy of this
// process's template); the database is removed when the test ends. Use it
// when a test needs the options themselves (e.g. to start a server or a
// second process on them): their migrations at start are a no-op check.
func Options(t testing.TB, e store.Engine) store.Options {
	t.Helper()
	if e == store.SQLite {
		tpl, err := sqliteTemplate()
		if err != nil {
			t.Fatalf("storetest: %v", err)
		}
		dir := t.TempDir()
		for name, b := range tpl {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatalf("storetest: copy the migrated template: %v", err)
			}
		}
		return store.Options{DataDir: dir}
	}
	return store.Options{DatabaseURL: postgresDatabase(t), DataDir: t.TempDir()}
}

// Open returns a fresh migrated store on engine e, closed at test end.
func Open(t testing.TB, e store.Engine) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), Options(t, e))
	if err != nil {
		t.Fatalf("storetest: open %s: %v", e, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// sqliteTemplate returns the files of a migrated SQLite data directory
// (by name), made once per process and kept in memory: nothing is left
// on disk when the process ends, however it ends.
var sqliteTemplate = sync.OnceValues(func() (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "kadens-storetest-")
	if err != nil {
		return nil, fmt.Errorf("sqlite template: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		return nil, fmt.Errorf("sqlite template: open: %w", err)
	}
	err = s.Migrate(ctx, discard)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite template: migrate: %w", err)
	}
	// Closing the last connection checkpoints the WAL into the file; a
	// checkpoint of its own makes sure of it (it returns busy rather than
	// lose anything), and whatever a WAL still holds is copied with it.
	path := filepath.Join(dir, "kadens.db")
	db, err := sql.Open("sqlite", "file:"+strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path))
	if err != nil {
		return nil, fmt.Errorf("sqlite template: checkpoint: %w", err)
	}
	var busy, logPages, done int
	err = db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil || busy != 0 {
		return nil, fmt.Errorf("sqlite template: checkpoint (busy %d): %v", busy, err)
	}
	files := map[string][]byte{}
	for _, name := range []string{"kadens.db", "kadens.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) && name != "kadens.db" {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite template: %w", err)
		}
		if len(b) > 0 {
			files[name] = b
		}
	}
	return files, nil
})

// The PostgreSQL databases of a test process are named kt_<key>_<suffix>:
// <key> (8 hex digits) is the process's, and the process holds the
// advisory lock (lockClass, key) in the base database for as long as it
// runs. The lock ends with the process's connection, however the process
// ends, so a later process that can take a key's lock knows its owner is
// gone and drops the databases it left (a killed or timed-out test run).
const lockClass = 0x4b44_5453 // "KDTS"

var testDatabase = regexp.MustCompile(`^kt_([0-9a-f]{8})_[0-9a-z]+$`)

// pgRun is this process's connection to the base database and its
// template; made once (pgSetup).
type pgRun struct {
	admin    *sql.DB
	base     *url.URL
	key      string
	template string
}

var pgSetup = sync.OnceValues(func() (*pgRun, error) {
	raw := os.Getenv(PostgresEnv)
	if raw == "" {
		return nil, fmt.Errorf("%s is not set", PostgresEnv)
	}
	base, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", PostgresEnv, err)
	}
	admin, err := sql.Open("pgx", raw)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	admin.SetMaxOpenConns(8)
	ctx := context.Background()
	// The owner connection is never given back: it holds the key's lock
	// until the process exits.
	owner, err := admin.Conn(ctx)
	if err != nil {
		admin.Close()
		return nil, fmt.Errorf("connect to postgres %s: %w", dburl.Redact(raw), err)
	}
	var key string
	for {
		var k [4]byte
		_, _ = rand.Read(k[:])
		var ok bool
		if err := owner.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1, $2)`, lockClass, int32(binary.BigEndian.Uint32(k[:]))).Scan(&ok); err != nil {
			return nil, fmt.Errorf("postgres: take the test run's lock: %w", err)
		}
		if ok {
			key = hex.EncodeToString(k[:])
			break
		}
	}
	run := &pgRun{admin: admin, base: base, key: key, template: "kt_" + key + "_template"}
	run.dropOrphans(ctx, owner)
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+run.template); err != nil {
		return nil, fmt.Errorf("postgres: create the template database: %w%s", err, privilegeHint(err))
	}
	s, err := store.Open(ctx, store.Options{DatabaseURL: run.url(run.template)})
	if err != nil {
		return nil, fmt.Errorf("postgres template: open: %w", err)
	}
	err = s.Migrate(ctx, discard)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("postgres template: migrate: %w", err)
	}
	// CREATE DATABASE … TEMPLATE refuses a template anyone is connected
	// to; nothing but the clones should read it.
	if _, err := admin.ExecContext(ctx, `ALTER DATABASE `+run.template+` ALLOW_CONNECTIONS false`); err != nil {
		return nil, fmt.Errorf("postgres template: %w", err)
	}
	return run, nil
})

// dropOrphans drops the databases of test processes that have ended
// without dropping them: those whose key's lock is free.
func (r *pgRun) dropOrphans(ctx context.Context, owner *sql.Conn) {
	rows, err := r.admin.QueryContext(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'kt\_%'`)
	if err != nil {
		return
	}
	byKey := map[string][]string{}
	for rows.Next() {
		var name string
		if rows.Scan(&name) == nil {
			if m := testDatabase.FindStringSubmatch(name); m != nil && m[1] != r.key {
				byKey[m[1]] = append(byKey[m[1]], name)
			}
		}
	}
	rows.Close()
	for key, names := range byKey {
		k, err := hex.DecodeString(key)
		if err != nil {
			continue
		}
		id := int32(binary.BigEndian.Uint32(k))
		var free bool
		if owner.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1, $2)`, lockClass, id).Scan(&free) != nil || !free {
			continue // its process still runs
		}
		for _, name := range names {
			_, _ = r.admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
		}
		_, _ = owner.ExecContext(ctx, `SELECT pg_advisory_unlock($1, $2)`, lockClass, id)
	}
}

// url is the base URL naming database name instead.
func (r *pgRun) url(name string) string {
	u := *r.base
	u.Path = "/" + name
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	return u.String()
}

// postgresDatabase creates a database for t (a clone of the migrated
// template, or empty), dropped when t ends, and returns its URL.
func postgresDatabase(t testing.TB) string {
	t.Helper()
	run, err := pgSetup()
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	name := "kt_" + run.key + "_" + randomHex(6)
	if _, err := run.admin.Exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + run.template); err != nil {
		t.Fatalf("storetest: create database on %s: %v%s", dburl.Redact(run.base.String()), err, privilegeHint(err))
	}
	t.Cleanup(func() {
		// FORCE ends connections a test left open (a server process it
		// killed, a store it did not close).
		if _, err := run.admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Logf("storetest: drop database %s: %v", name, err)
		}
	})
	return run.url(name)
}

// privilegeHint explains a refused CREATE DATABASE.
func privilegeHint(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		return " (each test gets a database of its own: the user of " + PostgresEnv + " needs the CREATEDB privilege)"
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
