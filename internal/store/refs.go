package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kadens/kadens/internal/tenancy"
)

// What the store's records and the catalog's (internal/catalogdb) share
// about references between rows: a record still in use is not deleted
// (InUseError), a reference removed concurrently is ErrConflict, and a
// resource read in several queries comes from one snapshot (readTx).

// InUseError is returned when a resource cannot be deleted because others
// still refer to it. It matches ErrConflict.
type InUseError struct {
	What string   // "product"
	ID   string   // its id
	By   string   // "template package"
	IDs  []string // the ids of those referring to it
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s %s is used by %s %s", e.What, e.ID, e.By, strings.Join(e.IDs, ", "))
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *InUseError) Is(target error) bool { return target == ErrConflict }

// queryer is what reads need: a pool or a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readTx runs fn in a read-only transaction on the read pool, so that a
// resource read in several queries (a package and its products) comes from
// one snapshot. SQLite transactions are snapshots already; PostgreSQL
// needs REPEATABLE READ for that.
func (s *Store) readTx(ctx context.Context, fn func(q queryer) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.engine == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.r.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only; nothing to undo
	return fn(tx)
}

// addIn appends "col IN (...)" for the valid ids among vals. It reports
// false, adding nothing, when there is none: the caller then knows the
// answer is empty without asking the database.
func (f *filter) addIn(col string, vals []string) bool {
	var ph []string
	seen := map[string]bool{}
	for _, v := range vals {
		if !ValidID(v) || seen[v] {
			continue
		}
		seen[v] = true
		f.args = append(f.args, v)
		ph = append(ph, "$"+strconv.Itoa(len(f.args)))
	}
	if len(ph) == 0 {
		return false
	}
	f.conds = append(f.conds, col+" IN ("+strings.Join(ph, ", ")+")")
	return true
}

// referrers returns the ids a query for the users of a resource yields.
func referrers(ctx context.Context, q queryer, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// deleteUnused deletes row id of table unless users (a query taking
// tenant and id) finds rows referring to it.
func (s *Store) deleteUnused(ctx context.Context, table, what, id, by, users string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !ValidID(id) {
		return ErrNotFound
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		ids, err := referrers(ctx, tx, users, tenant, id)
		if err != nil {
			return fmt.Errorf("store: delete %s %s: %w", what, id, err)
		}
		if len(ids) > 0 {
			return fmt.Errorf("store: delete %s %s: %w", what, id, &InUseError{What: what, ID: id, By: by, IDs: ids})
		}
		return deleteRow(ctx, tx, table, what, tenant, id)
	})
}

// deleteRow deletes row id of a tenant-owned table, or returns
// ErrNotFound.
func deleteRow(ctx context.Context, tx *sql.Tx, table, what, tenant, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if err != nil {
		return fmt.Errorf("store: delete %s %s: %w", what, id, refError(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: delete %s %s: %w", what, id, err)
	} else if n == 0 {
		return fmt.Errorf("store: %s %s: %w", what, id, ErrNotFound)
	}
	return nil
}

// refError turns a foreign-key violation into ErrConflict: a row that was
// checked a moment ago was deleted, or gained a reference, concurrently.
func refError(err error) error {
	if isForeignKeyViolation(err) {
		return fmt.Errorf("%w: a referenced resource changed concurrently (%v)", ErrConflict, err)
	}
	return err
}

func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23503"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	return false
}
