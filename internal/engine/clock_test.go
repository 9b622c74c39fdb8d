package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestAdvanceClockWaitsForAnotherWorker: a test clock's advance waits while
// another worker holds the tenant (a second request, or a crashed process's
// lease not yet run out), then advances and moves the clock; a caller that
// stops waiting gets its context's error and the clock stays.
func TestAdvanceClockWaitsForAnotherWorker(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		created := time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
		tn, err := s.CreateTenant(ctx, "clock", true, created)
		if err != nil {
			t.Fatal(err)
		}
		eng := engine.New(s, slog.New(slog.DiscardHandler), "me")
		eng.Lease = time.Second

		// Held for an hour: give up after a moment.
		wall := time.Now()
		if ok, err := s.AcquireEngineLease(ctx, tn.ID, "other", wall, wall.Add(time.Hour)); err != nil || !ok {
			t.Fatalf("lease: %t %v", ok, err)
		}
		short, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		defer cancel()
		to := created.AddDate(0, 1, 0)
		if _, err := eng.AdvanceClock(short, tn.ID, to); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("advance while held: %v, want the context's deadline", err)
		}
		if got, _ := s.TenantByID(ctx, tn.ID); got.Clock != nil {
			t.Fatalf("clock moved to %v while another worker held the tenant", got.Clock)
		}

		// Released meanwhile: the waiting advance goes on.
		go func() {
			time.Sleep(200 * time.Millisecond)
			_ = s.ReleaseEngineLease(context.Background(), tn.ID, "other")
		}()
		if _, err := eng.AdvanceClock(ctx, tn.ID, to); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.TenantByID(ctx, tn.ID); got.Clock == nil || !got.Clock.Equal(to) {
			t.Fatalf("clock %v, want %v", got.Clock, to)
		}
		// Advancing to the same time again is no error (nothing is due).
		if _, err := eng.AdvanceClock(ctx, tn.ID, to); err != nil {
			t.Fatal(err)
		}
	})
}
