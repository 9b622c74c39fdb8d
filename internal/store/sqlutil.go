package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dbTimeLayout is fixed-width so that timestamps stored as TEXT on SQLite
// sort correctly as strings.
const dbTimeLayout = "2006-01-02T15:04:05.000000Z"

// ts converts t to the parameter for a timestamp column.
func ts(t time.Time) dbTime { return dbTime(t) }

// dbTime is a timestamp parameter. The SQLite driver takes it as the text
// of dbTimeLayout (driver.Valuer); pgx, which looks at parameters before
// database/sql converts them, sends it as a binary timestamptz
// (pgtype.TimestamptzValuer): no formatting here and no parsing in the
// server, and COPY (copyRows) needs a binary value.
type dbTime time.Time

// Value is the stored text.
func (t dbTime) Value() (driver.Value, error) { return time.Time(t).UTC().Format(dbTimeLayout), nil }

// TimestamptzValue is the binary form for pgx. PostgreSQL keeps
// microseconds, as the text does.
func (t dbTime) TimestamptzValue() (pgtype.Timestamptz, error) {
	return pgtype.Timestamptz{Time: time.Time(t).Truncate(time.Microsecond), Valid: true}, nil
}

// fromNullTime turns a scanned sql.NullTime into an optional UTC time.
func fromNullTime(nt sql.NullTime) *time.Time {
	if !nt.Valid {
		return nil
	}
	t := nt.Time.UTC()
	return &t
}

// notFound maps sql.ErrNoRows to ErrNotFound and leaves other errors.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// isUniqueViolation recognises a unique-constraint error on either engine.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// Page asks for one page of a list ordered by id: the rows after After (an
// id; empty for the first page), at most Limit of them.
type Page struct {
	After string
	Limit int
}

// filter builds a WHERE clause from conditions that each hold one "?",
// numbering the placeholders $1, $2... in order. It starts with the tenant
// condition, so a list can never leave it out.
type filter struct {
	conds []string
	args  []any
}

func tenantFilter(tenantID string) *filter { return tenantFilterOn("", tenantID) }

// tenantFilterOn is tenantFilter for a query that names its table by alias
// (e.g. "c" in a join).
func tenantFilterOn(alias, tenantID string) *filter {
	if alias != "" {
		alias += "."
	}
	return &filter{conds: []string{alias + "tenant_id = $1"}, args: []any{tenantID}}
}

// add appends a condition such as "country = ?" with its argument.
func (f *filter) add(cond string, arg any) {
	f.args = append(f.args, arg)
	f.conds = append(f.conds, strings.Replace(cond, "?", "$"+strconv.Itoa(len(f.args)), 1))
}

// page appends the keyset condition for p and returns the ORDER/LIMIT tail.
// One row more than asked for is fetched so the caller knows whether a next
// page exists.
func (f *filter) page(p Page) string { return f.pageOn("id", p) }

// pageOn is page for a query whose id column is col (e.g. "c.id" in a join).
func (f *filter) pageOn(col string, p Page) string {
	if p.After != "" {
		f.add(col+" > ?", p.After)
	}
	f.args = append(f.args, p.Limit+1)
	return " ORDER BY " + col + " LIMIT $" + strconv.Itoa(len(f.args))
}

func (f *filter) where() string { return " WHERE " + strings.Join(f.conds, " AND ") }

// trimPage cuts the extra row fetched by filter.page and returns the cursor
// (last id) for the next page, or "" when this is the last page.
func trimPage[T any](items []T, p Page, id func(T) string) ([]T, string) {
	if len(items) <= p.Limit {
		return items, ""
	}
	items = items[:p.Limit]
	return items, id(items[len(items)-1])
}

// anyTime reads a timestamp produced by an expression such as MIN(col):
// PostgreSQL returns a time, SQLite the stored text (expressions lose the
// column's declared type there).
type anyTime struct{ t *time.Time }

func (a *anyTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		a.t = nil
	case time.Time:
		t := x.UTC()
		a.t = &t
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return fmt.Errorf("store: timestamp %q: %w", x, err)
		}
		a.t = &t
	case []byte:
		return a.Scan(string(x))
	default:
		return fmt.Errorf("store: cannot read %T as a timestamp", v)
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// queryAll runs query on q and reads every row with scan.
func queryAll[T any](ctx context.Context, q queryer, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
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

// isBusy reports whether err is SQLite's "database is locked" (another
// connection holds the lock).
func isBusy(err error) bool {
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code()&0xff == sqlite3.SQLITE_BUSY
	}
	return false
}

// orNull is NULL for "" and v otherwise.
func orNull(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// oneRow checks that a statement changed a row: ErrNotFound when it
// changed none.
func oneRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
