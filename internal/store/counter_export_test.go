package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/kadens/kadens/internal/tenancy"
)

// errRollback makes TakeCounter roll its transaction back.
var errRollback = errors.New("rollback requested by test")

// TakeCounter exposes nextCounter to the external tests: it takes the next
// number of scope for the context's tenant in a transaction of its own and
// commits it, or rolls it back when rollback is set (the number is then
// still returned, to show which one was not consumed).
func (s *Store) TakeCounter(ctx context.Context, scope string, rollback bool) (int64, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if n, err = nextCounter(ctx, tx, tenant, scope); err != nil {
			return err
		}
		if rollback {
			return errRollback
		}
		return nil
	})
	if errors.Is(err, errRollback) {
		err = nil
	}
	return n, err
}

// SetCounter records to as the last number taken of scope, committed (a
// series far along without taking every number before it).
func (s *Store) SetCounter(ctx context.Context, scope string, to int64) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := lockCounter(ctx, tx, tenant, scope); err != nil {
			return err
		}
		return setCounter(ctx, tx, tenant, scope, to)
	})
}

// SetFreeNumberBatch sets how many taken subscriber numbers one statement
// reads while the series passes them, and restores it when t ends, so a
// test passes several batches with few subscribers. Tests that call it
// must not run in parallel with others of this package that create
// subscribers.
func SetFreeNumberBatch(t interface{ Cleanup(func()) }, n int) {
	old := freeNumberBatch
	freeNumberBatch = n
	t.Cleanup(func() { freeNumberBatch = old })
}
