package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// ClockWork is what the engine performed in one committed batch of a test
// clock's advance (migration 00052), or a sum of such batches. An
// advance's answer is read from these rows, so it counts the work of its
// range whichever process performed it (docs/ENGINE.md, "Test clocks").
// The table is the engine's own, and so is its SQL, on the store's kit.
type ClockWork struct {
	// Target is the time the advance that performed the batch ran to.
	Target time.Time
	// DueAt is the latest due time of the batch's actions.
	DueAt              time.Time
	Renewals           int
	Deactivations      int
	PlanChanges        int
	Reminders          int
	PaymentStops       int
	PriceChangeNotices int
}

// RecordClockWork records a batch of the transaction's tenant, in the
// batch's transaction: it commits or rolls back with the work.
func RecordClockWork(ctx context.Context, tx *store.Tx, w ClockWork, now time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO engine_clock_work (tenant_id, id, target, due_at, renewals, deactivations,
		plan_changes, reminders, payment_stops, price_change_notices, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		tx.TenantID(), store.NewID(), store.TimeParam(w.Target), store.TimeParam(w.DueAt), w.Renewals, w.Deactivations, w.PlanChanges, w.Reminders, w.PaymentStops,
		w.PriceChangeNotices, store.TimeParam(now)); err != nil {
		return fmt.Errorf("engine: record clock work: %w", err)
	}
	return nil
}

// SumClockWork sums what advances of tenant's clock past from performed of
// the actions due by to: the batches of every advance whose target is
// after from (the clock when the asking advance began), including one that
// ran further than to or was interrupted, as long as the batch's actions
// were due by to.
func SumClockWork(ctx context.Context, st *store.Store, tenantID string, from, to time.Time) (ClockWork, error) {
	w := ClockWork{Target: to}
	err := st.Writer().QueryRow(ctx, `SELECT COALESCE(SUM(renewals), 0), COALESCE(SUM(deactivations), 0), COALESCE(SUM(plan_changes), 0),
		COALESCE(SUM(reminders), 0), COALESCE(SUM(payment_stops), 0), COALESCE(SUM(price_change_notices), 0)
		FROM engine_clock_work WHERE tenant_id = $1 AND target > $2 AND due_at <= $3`, tenantID, store.TimeParam(from), store.TimeParam(to)).Scan(
		&w.Renewals, &w.Deactivations, &w.PlanChanges, &w.Reminders, &w.PaymentStops, &w.PriceChangeNotices)
	if err != nil {
		return ClockWork{}, fmt.Errorf("engine: clock work of tenant %s: %w", tenantID, err)
	}
	return w, nil
}

// PruneClockWork deletes tenant's rows of advances to upTo or earlier that
// were recorded before recordedBefore: no advance still running asks for
// them.
func PruneClockWork(ctx context.Context, st *store.Store, tenantID string, upTo, recordedBefore time.Time) error {
	if _, err := st.Writer().Exec(ctx, `DELETE FROM engine_clock_work WHERE tenant_id = $1 AND target <= $2 AND recorded_at < $3`,
		tenantID, store.TimeParam(upTo), store.TimeParam(recordedBefore)); err != nil {
		return fmt.Errorf("engine: prune clock work of tenant %s: %w", tenantID, err)
	}
	return nil
}
