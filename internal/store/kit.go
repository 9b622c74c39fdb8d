package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"
)

// The query kit: what a wing (internal/autogiro, …) needs to keep its own
// tables' SQL beside its rules instead of in this package, in the spirit of
// River's Executor. It is deliberately small: statements run in a *Tx (the
// tenant's write transaction) or on one of the store's pools (Reader,
// Writer), parameters and scans are the engines' shared subset
// ("Storage" in docs/ARCHITECTURE.md), and the tenant comes from the
// transaction or the context. Every statement a wing writes still puts
// `tenant_id = $1` first in its WHERE (TenantFilter does it for lists).

// Engine is the engine of the transaction's store, for the few statements
// a wing writes per engine (PostgreSQL's row locks and CTE claims, SQLite's
// one writer).
func (tx *Tx) Engine() Engine { return tx.s.engine }

// Exec runs a statement of fixed text in the transaction with a cached
// prepared statement (compiled once, not per call). A statement whose text
// is built per call (an IN list of varying length) goes through ExecBuilt,
// or it would fill the cache, which is keyed by the text and never shrinks.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.exec(ctx, query, args...)
}

// Query is Exec for a statement of fixed text that returns rows.
func (tx *Tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.query(ctx, query, args...)
}

// QueryRow is Exec for a statement of fixed text that returns one row.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.queryRow(ctx, query, args...)
}

// ExecBuilt runs a statement whose text is built per call (IN lists,
// session settings) in the transaction, unprepared.
func (tx *Tx) ExecBuilt(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.tx.ExecContext(ctx, query, args...)
}

// QueryBuilt is ExecBuilt for a statement that returns rows.
func (tx *Tx) QueryBuilt(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.tx.QueryContext(ctx, query, args...)
}

// InsertRows inserts rows into table, each a value for every column of
// columns (comma-separated, in the values' order), with onConflict (e.g.
// "ON CONFLICT DO NOTHING", or "") after every statement: multi-row
// INSERTs in chunks on SQLite, COPY for larger sets on PostgreSQL. A
// wing's bulk writes (an imported file's payments) take the store's
// fastest path without writing it again.
func (tx *Tx) InsertRows(ctx context.Context, table, columns string, rows [][]any, onConflict string) error {
	return tx.insertRows(ctx, table, columns, rows, onConflict)
}

// UpdateRows runs head + one row text per row + tail for rows in chunks,
// as InsertRows does, and returns how many rows the statements changed.
// row holds a "?" per value of a row; tail ends with a "?" that is the
// tenant (so its condition stays in the WHERE). It is PostgreSQL's
// set-based UPDATE from a VALUES list, for a wing that moves many rows at
// once (dunning's next actions).
func (tx *Tx) UpdateRows(ctx context.Context, head, row, tail string, rows [][]any) (int64, error) {
	return tx.updateRows(ctx, head, row, tail, rows)
}

// Pool runs single statements outside a transaction on one of the store's
// pools, for a wing's reads and its one-statement writes.
type Pool struct {
	s  *Store
	db *sql.DB
	// cached: QueryRow uses the read pool's prepared statements.
	cached bool
}

// Reader is the read pool (on SQLite a pool of query_only connections that
// read beside the writer): gets and lists. Its QueryRow prepares a fixed
// text once (a GET by id compiled its SQL on every call otherwise).
func (s *Store) Reader() Pool { return Pool{s: s, db: s.r, cached: true} }

// Writer is the write pool (on SQLite the one write connection), for a
// single write that needs no transaction, and for a read that must see
// every write committed before it and wait behind a write in progress
// (the queues a worker drains after a commit).
func (s *Store) Writer() Pool { return Pool{s: s, db: s.w} }

// Exec runs a statement on the pool.
func (p Pool) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.db.ExecContext(ctx, query, args...)
}

// Query runs a statement that returns rows on the pool; list queries,
// whose text varies with their filters, run unprepared.
func (p Pool) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.db.QueryContext(ctx, query, args...)
}

// QueryRow runs a statement that returns one row on the pool; on the
// Reader a fixed text is prepared once and kept.
func (p Pool) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if p.cached {
		return p.s.readRow(ctx, query, args...)
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

// Querier is what QueryAll reads from: a *Tx or a Pool.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Scanner is a *sql.Row or *sql.Rows, for scan functions that read both.
type Scanner interface{ Scan(...any) error }

// QueryAll runs query on q and reads every row with scan: the loop every
// list and claim would otherwise write out (and get Close or Err wrong).
func QueryAll[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// TimeParam is the parameter for a timestamp column: fixed-width UTC text
// on SQLite (it sorts as text), a binary timestamptz for pgx ("Storage" in
// docs/ARCHITECTURE.md). A time.Time passed as it is would be stored in
// the driver's own format on SQLite.
func TimeParam(t time.Time) driver.Valuer { return ts(t) }

// AnyTime scans a timestamp that may be NULL (an outer join) or an
// expression, which PostgreSQL returns as a time and SQLite as its stored
// text. T is nil for NULL.
type AnyTime struct{ T *time.Time }

// Scan implements sql.Scanner.
func (a *AnyTime) Scan(v any) error {
	var t anyTime
	err := t.Scan(v)
	a.T = t.t
	return err
}

// NotFound maps sql.ErrNoRows to ErrNotFound (the API's 404) and leaves
// other errors as they are.
func NotFound(err error) error { return notFound(err) }

// IsUniqueViolation reports whether err is a unique-constraint violation
// on either engine: a wing's schema settles races with unique indexes and
// turns the violation into its own answer.
func IsUniqueViolation(err error) bool { return isUniqueViolation(err) }

// Filter builds a list's WHERE clause with the tenant condition first,
// so a wing's list cannot leave it out.
type Filter struct{ f *filter }

// TenantFilter starts a Filter with `tenant_id = $1` on the table named
// alias ("" for an unaliased table).
func TenantFilter(alias, tenantID string) Filter { return Filter{tenantFilterOn(alias, tenantID)} }

// Add appends a condition: with an argument the condition holds one "?",
// numbered in order ($2, $3, …); without, it is taken as it is.
func (f Filter) Add(cond string, arg ...any) {
	if len(arg) == 0 {
		f.f.conds = append(f.f.conds, cond)
		return
	}
	f.f.add(cond, arg[0])
}

// Page appends the keyset condition of p on the id column col and returns
// the ORDER BY/LIMIT tail; it asks one row more, for TrimPage. ListPage
// does both for a list that is one SELECT.
func (f Filter) Page(col string, p Page) string { return f.f.pageOn(col, p) }

// Where is the clause, " WHERE …".
func (f Filter) Where() string { return f.f.where() }

// Args are the parameters of the clause and the tail, in order.
func (f Filter) Args() []any { return f.f.args }

// TrimPage cuts the extra row a Filter's Page fetched and returns the
// cursor of the next page ("" on the last one).
func TrimPage[T any](items []T, p Page, id func(T) string) ([]T, string) {
	return trimPage(items, p, id)
}

// ListPage reads one page of a list: selectFrom (the SELECT … FROM …,
// without WHERE) with f's conditions, ordered and limited on the id column
// col for p, each row read by scan, and id the cursor of a row. It returns
// the page (never nil, so an empty list encodes as []) and the cursor of
// the next page ("" on the last one); the caller wraps the error. A list
// that reads more between the SELECT and the trim (a webhook's deliveries
// and their attempts) uses Page and TrimPage itself.
func ListPage[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), selectFrom string, f Filter, col string, p Page, id func(T) string) ([]T, string, error) {
	// Page appends the cursor and the limit to f's arguments, so it comes
	// before Args.
	tail := f.Page(col, p)
	out, err := QueryAll(ctx, q, scan, selectFrom+f.Where()+tail, f.Args()...)
	if err != nil {
		return nil, "", err
	}
	out, next := trimPage(out, p, id)
	if out == nil {
		out = []T{}
	}
	return out, next, nil
}

// ExecPrepared is Exec for a statement of fixed text run often on the
// pool: it is prepared once and kept (on the write pool the way the
// store's own one-statement writes are, see poolStmt). The identity
// provider's logins, codes and tokens are single writes of this kind, and
// compiling each on every request was measurable.
func (p Pool) ExecPrepared(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if p.db == p.s.w {
		return p.s.writeExec(ctx, query, args...)
	}
	st, err := p.s.readStmt(ctx, query)
	if err != nil {
		return p.db.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

// QueryRowPrepared is QueryRow with the statement prepared once on either
// pool (on the Reader QueryRow does this already): the identity
// provider's single-row writes (spending a code) and the reads that must
// see the last commit (a refresh token) run on the Writer.
func (p Pool) QueryRowPrepared(ctx context.Context, query string, args ...any) *sql.Row {
	if p.db == p.s.w {
		return p.s.writeRow(ctx, query, args...)
	}
	return p.s.readRow(ctx, query, args...)
}

// QueryPrepared is Query for a statement of fixed text on the Reader,
// prepared once: the entitlement read (the service's busiest) and the
// login page's organizations return rows from a fixed text and must not
// compile it per call. On the Writer it runs unprepared, as Query does.
func (p Pool) QueryPrepared(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if p.db == p.s.w {
		return p.db.QueryContext(ctx, query, args...)
	}
	st, err := p.s.readStmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// Attached returns the value a wing keeps with this store under key
// (a key type of the wing's own), made by init the first time: state
// that lives as long as the store and belongs to one wing, such as the
// identity wing's answer cache. A package variable would be shared by
// every store a process opens (the tests open hundreds).
func (s *Store) Attached(key any, init func() any) any {
	if v, ok := s.attached.Load(key); ok {
		return v
	}
	v, _ := s.attached.LoadOrStore(key, init())
	return v
}

// DeletePaymentAgreement is Store.DeletePaymentAgreement in the caller's
// transaction: a wing whose mandate ends deletes, with it, the payment
// agreements that name the mandate (AvtaleGiro's mandate deletion, which
// the bank's mandate file applies inside its import), and the agreement's
// subscriptions move to the Invoice agreement in the same commit.
func (tx *Tx) DeletePaymentAgreement(ctx context.Context, id string, now time.Time) (AgreementDeletion, error) {
	return tx.deleteAgreement(ctx, id, now)
}

// The queues' part of the kit: what the webhook wing's deliveries need,
// a queue of every tenant that the relay fills (RelayEvents) and the
// dispatcher claims across tenants.

// InQueueTx runs fn in a write transaction of no tenant, for a worker
// that serves every tenant (the webhook dispatcher's claims and
// outcomes): each row it touches carries its tenant, and tx.TenantID is
// "". Like the relay's transaction it writes no events. The identity
// provider's signing keys, which belong to the deployment and not to a
// tenant, are rotated in one too.
func (s *Store) InQueueTx(ctx context.Context, fn func(tx *Tx) error) error {
	return s.inTx(ctx, func(t *sql.Tx) error { return fn(&Tx{tx: t, s: s}) })
}

// SkipLocked is the tail of a claiming SELECT: on PostgreSQL it locks
// the rows it takes (of the table aliased of, "" for the only one) and
// skips those other processes are claiming, so each claim is one
// process's; SQLite has a single writer and needs none.
func (tx *Tx) SkipLocked(of string) string { return tx.s.forUpdate(of) }

// MaxChunk is the most ids a wing puts in one InList: the engines bound
// a statement's parameters.
const MaxChunk = maxChunk

// InList is "($first, $first+1, …)" for ids (at most MaxChunk), padded to
// a power of two by repeating the last id, which changes no result, so
// that a few statement texts serve every length; run it with ExecBuilt or
// QueryBuilt unless the lengths are few.
func InList(ids []string, first int) (string, []any) { return inList(ids, first) }

// EventsByID reads events of the outbox by id, for a wing whose queue
// names events (a webhook delivery's message).
func (tx *Tx) EventsByID(ctx context.Context, ids []string) (map[string]Event, error) {
	return tx.eventsByID(ctx, ids)
}

// OneRow is ErrNotFound when res touched no row: an UPDATE or DELETE of
// one row by id.
func OneRow(res sql.Result) error { return oneRow(res) }

// ReadTx is a read-only transaction on the read pool (InReadTx): one
// snapshot for a resource read in several queries.
type ReadTx struct{ q queryer }

// Query runs a statement that returns rows in the snapshot.
func (r ReadTx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.q.QueryContext(ctx, query, args...)
}

// QueryRow runs a statement that returns one row in the snapshot.
func (r ReadTx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return r.q.QueryRowContext(ctx, query, args...)
}

// InReadTx runs fn in a read-only transaction on the read pool, so that a
// wing's resource read in several queries (a webhook's deliveries and
// their attempts) comes from one snapshot (REPEATABLE READ on
// PostgreSQL).
func (s *Store) InReadTx(ctx context.Context, fn func(q ReadTx) error) error {
	return s.readTx(ctx, func(q queryer) error { return fn(ReadTx{q}) })
}

// RefError makes a foreign-key violation ErrConflict (the API's 409: a
// row the statement names was deleted or changed concurrently) and leaves
// other errors as they are, for a wing's INSERT that names rows a
// concurrent change may remove (a Peppol delivery's document).
func RefError(err error) error { return refError(err) }

// The records' part of the kit (internal/catalogdb, internal/invoicing):
// the catalog's lists filter by sets of ids, and records are deleted only
// while nothing refers to them (a billing plan, a dunning process), as
// the store's own agreements are.

// AddIn appends "col IN (…)" for the valid, distinct uuids among vals
// (bound as parameters). It reports false, adding nothing, when there is
// none: the caller then knows the answer is empty without asking the
// database. Lists of a few ids run unprepared (Pool.Query, ReadTx.Query),
// so their varying text does not fill a statement cache.
func (f Filter) AddIn(col string, vals []string) bool { return f.f.addIn(col, vals) }

// DeleteUnused deletes row id of the tenant's table unless users (a query
// taking $1 the tenant and $2 the id) finds rows that refer to it; then
// the error is an *InUseError naming them (what and by word it: "billing
// plan", "template package"), and an id that names no row is ErrNotFound.
// It is the store's own rule for its records, exported for the catalog's.
func (s *Store) DeleteUnused(ctx context.Context, table, what, id, by, users string) error {
	return s.deleteUnused(ctx, table, what, id, by, users)
}
