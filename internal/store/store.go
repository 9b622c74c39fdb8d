// Package store is Kadens' persistence layer: one logical schema on two
// engines, SQLite (embedded default, pure Go) and PostgreSQL (production).
//
// SQL is written once, in the subset both engines understand ($n parameters,
// RETURNING, ON CONFLICT); only the migrations are per engine, because column
// types differ (uuid/timestamptz on PostgreSQL, TEXT on SQLite). Every
// tenant-owned method takes the tenant from the context (package tenancy), so
// no caller can forget to scope a query.
//
// The store maps typed rows to SQL and back; it decides nothing about
// money. Billing's rules live in internal/billing and its workflows
// (issuing, settling, crediting, dunning) in internal/invoicing, which
// reads and writes through the set-based primitives here (issue.go,
// settle.go, account.go, creditnote.go, payment.go); dunning's own
// records (processes, proration policies, reminders) and their SQL are
// invoicing's, on the query kit (kit.go).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // registers the "sqlite" database/sql driver

	"github.com/kadens/kadens/internal/atomicfile"
	"github.com/kadens/kadens/internal/dburl"
	"github.com/kadens/kadens/internal/rowcache"
)

// Engine names a database engine.
type Engine string

// The two supported engines.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// Errors returned by store methods; match them with errors.Is.
var (
	// ErrNotFound: no row with that id in the current tenant.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a uniqueness rule was violated (e.g. duplicate name).
	ErrConflict = errors.New("store: conflict")
)

// Store is the handle to the database. It is safe for concurrent use.
type Store struct {
	engine Engine
	// w takes every write. On SQLite it holds a single connection so writers
	// queue in Go instead of failing with SQLITE_BUSY; on PostgreSQL w and r
	// are the same pool.
	w *sql.DB
	// r serves reads; on SQLite (WAL) it has several connections that read
	// concurrently with the writer.
	r *sql.DB
	// source describes the database for logs, without secrets.
	source string
	// stopCheckpoints ends the SQLite background checkpointer (nil on
	// PostgreSQL); it returns when the checkpointer has stopped.
	stopCheckpoints func()
	stmts           stmtCache // reads on r
	wstmts          stmtCache // statements of write transactions on w
	wanted          map[string]bool
	// onEvents is called after a transaction that recorded events commits
	// (OnEvents; webhook delivery wakes on it).
	onEvents atomic.Pointer[func()]
	// onJobs is called after the relay wrote outbox consumers' jobs
	// (OnOutboxJobs; internal/outbox wakes on it).
	onJobs atomic.Pointer[func()]
	// readTurns admits heavy reads (list pages) first come, first served,
	// as many at a time as r has connections; see ReadTurn.
	readTurns chan struct{}
	// listedSubs and listedInvoices hold list rows by version (package
	// rowcache).
	listedSubs     *rowcache.Cache[listedSubscriptionRow]
	listedInvoices *rowcache.Cache[Invoice]
	// signal is the change signal (changesignal.go), nil where there is
	// none (PostgreSQL).
	signal changeSignal
	// attached holds what wings keep per store (Attached).
	attached sync.Map
}

// withCaches gives s its in-process caches.
func (s *Store) withCaches() *Store {
	s.listedSubs = rowcache.New[listedSubscriptionRow]()
	s.listedInvoices = rowcache.New[Invoice]()
	return s
}

// Options say where the database is.
type Options struct {
	// DatabaseURL selects PostgreSQL when it starts with postgres:// or
	// postgresql://. Empty means SQLite in DataDir.
	DatabaseURL string
	// DataDir holds the SQLite file (kadens.db).
	DataDir string
	// ReadConns bounds the SQLite read pool; 0 picks a default.
	ReadConns int
	// LockWait, when positive, makes Open take the SQLite database's write
	// lock once, waiting at most that long (and logging that it waits)
	// for another process that holds it, so that a start beside a stuck
	// process fails early and says why. Writers (serve, the operator
	// commands) set it; zero leaves each statement to its busy timeout.
	LockWait time.Duration
	// Log, when set, hears about that wait.
	Log *slog.Logger
}

// DefaultLockWait is how long Open waits for another process's SQLite
// write lock: long enough for an operator command or a checkpoint to
// finish, short enough that a start beside a stuck process fails while
// someone is watching.
const DefaultLockWait = 15 * time.Second

// Open connects to the database named by opts. It does not migrate; call
// Migrate for that.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if dburl.IsPostgres(opts.DatabaseURL) {
		return openPostgres(ctx, opts.DatabaseURL)
	}
	if opts.DatabaseURL != "" {
		return nil, fmt.Errorf("store: unsupported database URL %q: use postgres://... or leave it empty for SQLite", dburl.Redact(opts.DatabaseURL))
	}
	return openSQLite(ctx, opts)
}

func openPostgres(ctx context.Context, url string) (*Store, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect to postgres %s: %w (is the server running and the URL right?)", dburl.Redact(url), err)
	}
	return (&Store{engine: Postgres, w: db, r: db, source: dburl.Redact(url), readTurns: make(chan struct{}, postgresReadTurns())}).withCaches(), nil
}

// postgresReadTurns is how many list pages read PostgreSQL at once: four
// per CPU the process may use, at least 8, at most the pool's 32. What a
// page does after its query is this process's CPU, so more pages reading
// at once than that only queue in the database's backends, which on a
// small machine take the server's CPU in bursts: at 64 clients on one
// server CPU, p99 was 43-61 ms with 32 turns and 26-35 ms with 8
// (docs/PERFORMANCE.md, "List pages").
func postgresReadTurns() int {
	return min(32, max(8, 4*runtime.GOMAXPROCS(0)))
}

func openSQLite(ctx context.Context, opts Options) (*Store, error) {
	dir := opts.DataDir
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: create data dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, "kadens.db")
	if err := createSQLite(ctx, path); err != nil {
		return nil, err
	}
	// WAL lets readers run beside the writer; the busy timeout makes a second
	// process (e.g. `kadens tenant create` beside `kadens serve`) wait instead
	// of failing; _txlock=immediate takes the write lock at BEGIN so two
	// writers never deadlock upgrading a read lock.
	base := sqliteURI(path) + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	// The writer gets a 64 MiB page cache (SQLite's default is 2 MiB): the
	// engine walks large tables in batches, and a cache that holds their hot
	// pages keeps the cost of a renewal flat as the tenant grows. It leaves
	// checkpoints to the background checkpointer (see checkpoints) until the
	// WAL passes walBackstopPages.
	// Statement journals (SQLite's undo log of one statement inside a
	// transaction, written by every multi-row insert that could fail half
	// way) live in memory: in a temporary file they cost a write system call
	// per page, ~12 % of a renewal with billing.
	w, err := sql.Open("sqlite", base+"&_txlock=immediate&_pragma=cache_size(-65536)"+
		"&_pragma=wal_autocheckpoint("+strconv.Itoa(walBackstopPages)+")&_pragma=journal_size_limit("+strconv.Itoa(walKeepBytes)+
		")&_pragma=temp_store(MEMORY)")
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		if isBusy(err) { // a process holding the database exclusively, past the busy timeout
			return nil, fmt.Errorf("store: sqlite database %s is locked by another process: %w; %s", path, err, lockAdvice)
		}
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	if opts.LockWait > 0 {
		if err := waitWritable(ctx, w, path, opts); err != nil {
			w.Close()
			return nil, err
		}
	}
	r, err := sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	n := opts.ReadConns
	if n <= 0 {
		n = 8
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(0)
	r.SetConnMaxLifetime(0)
	ck, err := sql.Open("sqlite", base)
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	ck.SetMaxOpenConns(1)
	ck.SetMaxIdleConns(1)
	ck.SetConnMaxIdleTime(0)
	ck.SetConnMaxLifetime(0)
	signal, err := sqliteChangeSignal(ctx, path, base+"&_pragma=query_only(1)", opts.Log)
	if err != nil {
		w.Close()
		r.Close()
		ck.Close()
		return nil, err
	}
	return (&Store{engine: SQLite, w: w, r: r, source: path, stopCheckpoints: checkpoints(ck), readTurns: make(chan struct{}, n),
		signal: signal}).withCaches(), nil
}

// sqliteURI is the file: URI of the database at path. SQLite decodes %HH
// in it and ends the path at '?' or '#', so those are escaped: a data
// directory named "a#b" would otherwise open a database at "a".
func sqliteURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// lockAdvice says what to do about a database another process holds.
const lockAdvice = "stop the other kadens serve or the tool holding it (e.g. a sqlite3 shell with an open transaction), or use another --data-dir"

// waitWritable takes and releases the write lock of the SQLite database,
// waiting at most opts.LockWait for another process that holds it. Every
// statement would otherwise wait its own busy timeout and fail one at a
// time deep inside start-up, with "database is locked" and no hint of who
// holds it.
func waitWritable(ctx context.Context, w *sql.DB, path string, opts Options) error {
	conn, err := w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	defer conn.Close()
	// Each try waits in SQLite's busy handler (which takes the lock as
	// soon as it is free, between another writer's transactions), but only
	// for a slice, so that this loop logs, bounds the wait and notices a
	// cancelled start (SIGINT) between tries.
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 250"); err != nil {
		return fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA busy_timeout = 10000") }()
	deadline := time.Now().Add(opts.LockWait)
	for logged := false; ; logged = true {
		_, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE")
		if err == nil {
			_, err = conn.ExecContext(ctx, "ROLLBACK")
			return err
		}
		if !isBusy(err) {
			return fmt.Errorf("store: open sqlite %s: %w", path, err)
		}
		if !logged && opts.Log != nil {
			opts.Log.Warn("the SQLite database is locked by another process; waiting for it", "database", path, "wait", opts.LockWait)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("store: waiting for the lock of sqlite database %s: %w", path, ctx.Err())
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("store: sqlite database %s is locked by another process (still after %s); %s", path, opts.LockWait, lockAdvice)
		}
	}
}

// sqlitePageSize is the page size of new SQLite databases. A renewal with
// billing inserts into a few indexes keyed by subscriber or account, at
// places scattered over the index, and updates the previous period's row
// wherever it is: each of those dirties a page of its own that the commit
// writes to the WAL and the checkpoint copies back. With 8 KiB pages there
// are half as many pages per index and more of a batch's inserts share one;
// in interleaved runs of bench/engine (100,000 renewals) 8 KiB pages were
// ~6 % faster than 4 KiB (SQLite's default) at ~30 MiB more memory; 16 KiB
// was no faster and took four times the memory, 1 and 2 KiB were slower.
const sqlitePageSize = 8192

// createSQLite creates the database file at path with sqlitePageSize pages
// in WAL mode, unless it exists. The page size has to be set before the
// file's first page is written, which switching to WAL does, and the
// driver runs the pragmas of a connection string in alphabetical order
// (journal_mode before page_size), so it is its own step. An existing
// database keeps its page size.
//
// Only a missing file is a fresh install. An existing file must be an
// SQLite database (checkSQLiteFile): SQLite itself takes an empty file, or
// one it cannot read yet, for a new database, so a truncated or misplaced
// file would start as a silent fresh install beside the data it lost. The
// new database is created under a temporary name and linked into place
// once its header is written, so a first start that is killed leaves no
// empty kadens.db for the next start to refuse.
func createSQLite(ctx context.Context, path string) error {
	if fi, err := os.Stat(path); err == nil {
		return checkSQLiteFile(path, fi)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("store: create sqlite %s: %w", path, err)
	}
	tmp := f.Name()
	f.Close() // SQLite takes the empty file for a new database
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(tmp + suffix)
		}
	}()
	db, err := sql.Open("sqlite", sqliteURI(tmp))
	if err != nil {
		return fmt.Errorf("store: create sqlite %s: %w", path, err)
	}
	for _, p := range []string{"PRAGMA page_size = " + strconv.Itoa(sqlitePageSize), "PRAGMA journal_mode = WAL"} {
		if _, err := db.ExecContext(ctx, p); err != nil {
			db.Close()
			return fmt.Errorf("store: create sqlite %s: %s: %w", path, p, err)
		}
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("store: create sqlite %s: %w", path, err)
	}
	// link(2) refuses an existing name: a process that created the
	// database first wins, and its file is the one.
	if err := os.Link(tmp, path); errors.Is(err, os.ErrExist) {
		fi, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("store: open sqlite %s: %w", path, err)
		}
		return checkSQLiteFile(path, fi)
	} else if err != nil {
		return fmt.Errorf("store: create sqlite %s: %w", path, err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("store: create sqlite %s: %w", path, err)
	}
	return nil
}

// sqliteHeader is how every SQLite database file begins.
const sqliteHeader = "SQLite format 3\x00"

// checkSQLiteFile refuses a database file that is not an SQLite database,
// naming it and what to do.
func checkSQLiteFile(path string, fi os.FileInfo) error {
	const advice = "restore it from a backup, or move it away to start a fresh install (check --data-dir)"
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("store: %s is not a database file (%s); %s", path, fi.Mode().Type(), advice)
	}
	if fi.Size() == 0 {
		return fmt.Errorf("store: %s is empty (0 bytes), not a Kadens database; %s", path, advice)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != sqliteHeader {
		return fmt.Errorf("store: %s is not an SQLite database (it does not begin with SQLite's header); %s", path, advice)
	}
	return nil
}

// SQLite checkpoints (copying committed pages from the WAL back into the
// database file) cost a busy writer about as much as writing the WAL
// itself, and SQLite runs them inside the commit that pushes the WAL past
// wal_autocheckpoint pages (1000 by default), so the writer (the engine,
// or an API request) waits for them. Instead a connection of its own
// checkpoints every checkpointEvery, beside the writer: on another CPU,
// and only once for a page that several commits changed in the meantime.
// The writer still checkpoints when the WAL passes walBackstopPages, if
// the checkpointer fell behind; that also bounds the WAL, which SQLite
// starts over only after a complete checkpoint. The backstop is generous
// (256 MiB of 8 KiB pages): with 8,192 pages an engine advance hit it every
// few batches and the writer did a fifth of all checkpointing itself;
// with 32,768 the background keeps up and renewals with billing ran ~10 %
// faster. Once SQLite starts the WAL over, it cuts the file back to
// walKeepBytes (journal_size_limit), so an idle database does not keep a
// WAL the size of its busiest minute.
const (
	checkpointEvery  = 200 * time.Millisecond
	walBackstopPages = 32768
	walKeepBytes     = 64 << 20
)

// checkpoints runs PASSIVE checkpoints on db (never waiting for, or
// blocking, readers and the writer) until the returned stop is called.
func checkpoints(db *sql.DB) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer db.Close()
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			// Errors (e.g. the database is gone) leave checkpoints to the
			// writer's wal_autocheckpoint.
			var busy, log, done int
			_ = db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-done
		})
	}
}

// ReadTurn waits, in arrival order, until fewer requests hold a turn than
// the read pool has connections, and returns the function that gives the
// turn back. Callers that read a lot (list pages) take a turn first, so
// that they do not queue inside database/sql: when its pool is exhausted it
// hands a freed connection to a random waiter (connRequestSet.TakeRandom).
// On PostgreSQL, where a connection is held while the database works,
// 84-91 % of list requests waited there for 50-66 ms on average at 64
// clients, some much longer; with turns 0.1-0.2 % do. Waiting here is first
// come, first served. docs/PERFORMANCE.md ("List pages").
// release may be called more than once (deferred, and as soon as the reads
// are done, before the response is written to a possibly slow client).
func (s *Store) ReadTurn(ctx context.Context) (release func(), err error) {
	select {
	case s.readTurns <- struct{}{}:
		return sync.OnceFunc(func() { <-s.readTurns }), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Engine reports which engine backs the store.
func (s *Store) Engine() Engine { return s.engine }

// Source describes the database (file path or redacted URL).
func (s *Store) Source() string { return s.source }

// DB returns the write pool, for metrics collectors and migrations.
func (s *Store) DB() *sql.DB { return s.w }

// ReadDB returns the read pool (the write pool on PostgreSQL).
func (s *Store) ReadDB() *sql.DB { return s.r }

// Ping checks that the database answers; used by /readyz.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	var one int
	if err := s.r.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("store: ping query: %w", err)
	}
	return nil
}

// Close releases the pools.
func (s *Store) Close() error {
	if s.stopCheckpoints != nil {
		s.stopCheckpoints()
	}
	// The change signal first: the WAL index it maps stays while the
	// database's connections do.
	var err error
	if s.signal != nil {
		err = s.signal.close()
	}
	s.stmts.close()
	s.wstmts.close()
	err = errors.Join(err, s.w.Close())
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	return err
}

// inTx runs fn in a write transaction and commits it when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.inConnTx(ctx, func(tx *sql.Tx, _ *sql.Conn) error { return fn(tx) })
}

// inConnTx is inTx that also hands fn the connection the transaction runs
// on (PostgreSQL; nil on SQLite).
func (s *Store) inConnTx(ctx context.Context, fn func(tx *sql.Tx, conn *sql.Conn) error) error {
	s.wstmts.mu.RLock()
	pending := len(s.wanted) > 0
	s.wstmts.mu.RUnlock()
	if pending {
		s.prepareWanted(ctx)
	}
	// On PostgreSQL the transaction runs on a connection taken from the
	// pool, so that the store can reach the driver's connection beside
	// database/sql (COPY) inside the same transaction.
	var conn *sql.Conn
	begin := s.w.BeginTx
	if s.engine == Postgres {
		c, err := s.w.Conn(ctx)
		if err != nil {
			return fmt.Errorf("store: begin: %w", err)
		}
		defer c.Close()
		conn, begin = c, c.BeginTx
	}
	tx, err := begin(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(tx, conn); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// ReleaseMemory hands back what SQLite holds for the writer beyond its
// needs right now: its page cache (up to 64 MiB) refills from the file as
// work comes. Callers use it when they go idle after a burst of writes
// (e.g. the webhook dispatcher after a backlog), so that an idle process
// stays small. A no-op on PostgreSQL, whose caches are the server's.
func (s *Store) ReleaseMemory(ctx context.Context) error {
	if s.engine != SQLite {
		return nil
	}
	if _, err := s.w.ExecContext(ctx, `PRAGMA shrink_memory`); err != nil {
		return fmt.Errorf("store: release memory: %w", err)
	}
	return nil
}
