package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Counters are per-tenant number series, one per scope: "subscriber" for
// subscriber numbers, "invoice:<organization id>" and "creditnote:<organization
// id>" for an organization's invoice and credit note numbers
// (ReserveNumbers). A series starts at 1 and only ever counts up by the
// numbers it hands out: nothing a client sends moves it. (Subscriber
// numbers a client chose are passed over when the series reaches them;
// see assignSubscriberNumber.)
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
// 1 for a new series, else one more than the last number taken. The number
// is consumed only if tx commits.
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

// lockCounter takes the row lock of series scope of tenantID within tx
// without taking a number (creating the series, with nothing taken, if it
// is new). A writer of a number a client chose takes it, so that on
// PostgreSQL it and the automatic takers of the same series queue behind
// each other: a taker that comes after it sees the chosen number committed
// and passes it (see firstFreeSubscriberNumber), rather than both writing
// the same number and one failing on the unique index.
func lockCounter(ctx context.Context, tx *sql.Tx, tenantID, scope string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO counters (tenant_id, scope, value) VALUES ($1, $2, 0)
		ON CONFLICT (tenant_id, scope) DO UPDATE SET value = counters.value`, tenantID, scope)
	if err != nil {
		return fmt.Errorf("lock counter %s: %w", scope, err)
	}
	return nil
}

// setCounter records n as the last number taken of series scope, whose
// row tx holds locked (nextCounter took it).
func setCounter(ctx context.Context, tx *sql.Tx, tenantID, scope string, n int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE counters SET value = $3 WHERE tenant_id = $1 AND scope = $2`, tenantID, scope, n); err != nil {
		return fmt.Errorf("set counter %s: %w", scope, err)
	}
	return nil
}
