package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// An advance from the clock to `to` counts the batches of every advance
// past the clock whose actions were due by `to`: its own, one that waited
// on it or ran further, one interrupted earlier; not those of advances that
// ended at or before the clock, nor another tenant's. Pruning removes only
// old records of advances that ended by the given time.
func TestClockWork(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		day := func(d int) time.Time { return time.Date(2027, 1, d, 0, 0, 0, 0, time.UTC) }
		a, err := s.CreateTenant(ctx, "a", true, day(1))
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.CreateTenant(ctx, "b", true, day(1))
		if err != nil {
			t.Fatal(err)
		}
		wall := time.Now()
		record := func(tenant string, target, due time.Time, renewals int, at time.Time) {
			t.Helper()
			if err := s.InTx(tenancy.With(ctx, tenant), func(tx *store.Tx) error {
				return engine.RecordClockWork(ctx, tx, engine.ClockWork{Target: target, DueAt: due, Renewals: renewals, Reminders: 1}, at)
			}); err != nil {
				t.Fatal(err)
			}
		}
		record(a.ID, day(5), day(4), 1, wall.Add(-2*time.Hour)) // an earlier advance, to the 5th
		record(a.ID, day(20), day(3), 10, wall)                 // late work of this advance (due before the clock)
		record(a.ID, day(20), day(15), 100, wall)               // this advance
		record(a.ID, day(25), day(19), 1000, wall)              // another one, further, of actions due by the 20th
		record(a.ID, day(25), day(24), 10000, wall)             // ... and after
		record(b.ID, day(20), day(15), 100000, wall)            // another tenant
		w, err := engine.SumClockWork(ctx, s, a.ID, day(5), day(20))
		if err != nil {
			t.Fatal(err)
		}
		if w.Renewals != 1110 || w.Reminders != 3 {
			t.Fatalf("renewals %d, reminders %d; want 1110 and 3", w.Renewals, w.Reminders)
		}
		if err := engine.PruneClockWork(ctx, s, a.ID, day(5), wall.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if w, _ := engine.SumClockWork(ctx, s, a.ID, day(1), day(30)); w.Renewals != 11110 {
			t.Fatalf("after pruning: %d renewals from the 1st, want 11110 (only the advance to the 5th gone)", w.Renewals)
		}
	})
}
