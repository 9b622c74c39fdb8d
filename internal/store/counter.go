package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Counters are per-tenant number series, one per scope: "subscriber" for
// subscriber numbers, and later one scope per organization for invoice
// numbers (e.g. "invoice:<organization id>"). A series starts at 1.
//
// A number is always taken inside the caller's transaction, by one upsert
// of the counter row:
//
//   - PostgreSQL: the upsert locks the row until the transaction ends, so
//     concurrent takers of the same scope queue behind each other and each
//     sees the value committed by the previous one. Other scopes and other
//     tenants are not blocked.
//   - SQLite: there is one writer at a time (the store's write pool has one
//     connection and transactions begin IMMEDIATE), so takers are serial.
//
// Gap-free: when the transaction that took a number rolls back, the
// increment rolls back with it and the next taker gets the same number. A
// series therefore has no holes made by failed writes, which is what an
// invoice number series needs. The price is that takers of one scope
// serialise on the row for the rest of their transaction, so keep
// transactions that take a number short.

// ErrCounterExhausted is returned when a series has reached the largest
// int64 and cannot hand out another number.
var ErrCounterExhausted = errors.New("store: counter exhausted")

// maxCounter is the largest value a counter can hold (math.MaxInt64).
const maxCounter = 1<<63 - 1

// nextCounter takes the next number of series scope of tenantID within tx:
// 1 for a new series, else one more than the last number taken or raised to
// (see raiseCounter). The number is consumed only if tx commits.
func nextCounter(ctx context.Context, tx *sql.Tx, tenantID, scope string) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `INSERT INTO counters (tenant_id, scope, value) VALUES ($1, $2, 1)
		ON CONFLICT (tenant_id, scope) DO UPDATE SET value = counters.value + 1
		WHERE counters.value < $3
		RETURNING value`, tenantID, scope, int64(maxCounter)).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		// The WHERE refused the update: the series is at maxCounter.
		return 0, fmt.Errorf("counter %s: %w", scope, ErrCounterExhausted)
	}
	if err != nil {
		return 0, fmt.Errorf("counter %s: %w", scope, err)
	}
	return n, nil
}

// raiseCounter makes sure series scope of tenantID never hands out n or
// anything below it again: a number given explicitly (say a subscriber
// number 5000 imported from another system) moves the series forward, so
// the next number taken is above it. A counter already past n is left
// alone. Like nextCounter it acts inside tx and locks the row the same way,
// so explicit and assigned numbers of one scope cannot race.
func raiseCounter(ctx context.Context, tx *sql.Tx, tenantID, scope string, n int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO counters (tenant_id, scope, value) VALUES ($1, $2, $3)
		ON CONFLICT (tenant_id, scope) DO UPDATE SET value =
			CASE WHEN counters.value < excluded.value THEN excluded.value ELSE counters.value END`,
		tenantID, scope, n)
	if err != nil {
		return fmt.Errorf("raise counter %s: %w", scope, err)
	}
	return nil
}
