package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kadens/kadens/internal/tenancy"
)

// Tx is a write transaction of one tenant. Domain packages (the engine,
// orders, billing) compose several store operations into one atomic change
// through it; the shared records' SQL stays here, and a wing's own SQL
// runs in it through the query kit (kit.go).
type Tx struct {
	tx *sql.Tx
	// conn is the connection tx runs on, on PostgreSQL (nil on SQLite),
	// for what database/sql cannot express (copyRows).
	conn   *sql.Conn
	tenant string
	s      *Store
	// events is set when the transaction recorded events (see OnEvents).
	events bool
	// source is where its subscriber changes come from (SetEventSource).
	source string
}

// TenantID is the tenant the transaction acts for.
func (tx *Tx) TenantID() string { return tx.tenant }

// InTx runs fn in a write transaction of the context's tenant, committing
// when fn returns nil and rolling back otherwise.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	var events bool
	err = s.inConnTx(ctx, func(t *sql.Tx, c *sql.Conn) error {
		tx := &Tx{tx: t, conn: c, tenant: tenant, s: s}
		err := fn(tx)
		events = tx.events
		return err
	})
	if err == nil && events {
		if hook := s.onEvents.Load(); hook != nil {
			(*hook)()
		}
	}
	return err
}

// exec runs a fixed statement in the transaction, with a cached prepared
// statement once there is one: the engine runs the same few statements
// thousands of times per advance, and compiling them each time was most of
// its cost.
func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.s.writeStmt(query); st != nil {
		return tx.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.tx.ExecContext(ctx, query, args...)
}

// query is exec for statements that return rows.
func (tx *Tx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.s.writeStmt(query); st != nil {
		return tx.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return tx.tx.QueryContext(ctx, query, args...)
}

// queryRow is exec for single-row queries.
func (tx *Tx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := tx.s.writeStmt(query); st != nil {
		return tx.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.tx.QueryRowContext(ctx, query, args...)
}

// conflictAttempts bounds how often InTxRetrying tries a write that lost a
// race.
const conflictAttempts = 8

// InTxRetrying runs fn in a write transaction like InTx, and runs it again,
// in a new transaction after a short random pause, when it fails with
// ErrConflict: a row it read (an account's open charges and allowances, a
// subscription's version) was changed by a concurrent writer that committed
// first. A valid request must not fail for another's timing. fn must do all
// its reading inside tx so that a retry sees the winner's commit. A
// conflict that outlasts every attempt is returned (the API's 409).
func (s *Store) InTxRetrying(ctx context.Context, fn func(tx *Tx) error) error {
	var err error
	for attempt := range conflictAttempts {
		if attempt > 0 {
			// Racing retries spread out.
			pause := time.Duration(1+rand.IntN(5<<attempt)) * time.Millisecond
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(pause):
			}
		}
		if err = s.InTx(ctx, fn); !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return err
}

// Savepoint runs fn inside a savepoint: an error of fn undoes what fn
// wrote, and only that, so a batch in one transaction can refuse one item
// (a payment that cannot be settled) and go on with the next. The error
// is returned as fn's.
func (tx *Tx) Savepoint(ctx context.Context, fn func() error) error {
	if _, err := tx.tx.ExecContext(ctx, "SAVEPOINT item"); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	if err := fn(); err != nil {
		if _, rerr := tx.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT item"); rerr != nil {
			return errors.Join(err, fmt.Errorf("store: rollback to savepoint: %w", rerr))
		}
		if _, rerr := tx.tx.ExecContext(ctx, "RELEASE SAVEPOINT item"); rerr != nil {
			return errors.Join(err, fmt.Errorf("store: release savepoint: %w", rerr))
		}
		return err
	}
	if _, err := tx.tx.ExecContext(ctx, "RELEASE SAVEPOINT item"); err != nil {
		return fmt.Errorf("store: release savepoint: %w", err)
	}
	return nil
}
