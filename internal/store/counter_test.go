package store_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

func TestCounterSeries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newTenant(t, s, "a"), newTenant(t, s, "b")
		take := func(scope string, rollback bool) int64 {
			t.Helper()
			n, err := s.TakeCounter(a, scope, rollback)
			if err != nil {
				t.Fatalf("take %s: %v", scope, err)
			}
			return n
		}
		if n := take("x", false); n != 1 {
			t.Fatalf("first number %d, want 1", n)
		}
		if n := take("x", false); n != 2 {
			t.Fatalf("second number %d, want 2", n)
		}
		// A rolled-back taker does not consume its number.
		if n := take("x", true); n != 3 {
			t.Fatalf("rolled-back take got %d, want 3", n)
		}
		if n := take("x", false); n != 3 {
			t.Fatalf("after a rollback: %d, want 3 again (gap-free)", n)
		}
		// A rollback on a new series leaves no row behind either.
		if n := take("fresh", true); n != 1 {
			t.Fatalf("new series, rolled back: %d", n)
		}
		if n := take("fresh", false); n != 1 {
			t.Fatalf("new series after rollback: %d, want 1", n)
		}
		// Scopes and tenants are independent.
		if n := take("y", false); n != 1 {
			t.Fatalf("other scope starts at %d", n)
		}
		if n, err := s.TakeCounter(b, "x", false); err != nil || n != 1 {
			t.Fatalf("other tenant: %d, %v; want 1", n, err)
		}
		// At the end of int64 the series refuses rather than wraps.
		if err := s.SetCounter(a, "end", 1<<63-2); err != nil {
			t.Fatal(err)
		}
		if n := take("end", false); n != 1<<63-1 {
			t.Fatalf("last number %d", n)
		}
		if _, err := s.TakeCounter(a, "end", false); !errors.Is(err, store.ErrCounterExhausted) {
			t.Fatalf("past the end: want ErrCounterExhausted, got %v", err)
		}
	})
}

func TestCounterConcurrent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		const workers, each = 10, 20
		var (
			mu   sync.Mutex
			got  []int64
			wg   sync.WaitGroup
			errs = make(chan error, workers*each)
		)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					// Every third take rolls back; its number must be
					// handed out again, so the committed ones stay gap-free.
					rollback := (w+i)%3 == 0
					n, err := s.TakeCounter(ctx, "invoice", rollback)
					if err != nil {
						errs <- err
						return
					}
					if !rollback {
						mu.Lock()
						got = append(got, n)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		slices.Sort(got)
		for i, n := range got {
			if n != int64(i+1) {
				t.Fatalf("committed numbers are not 1..%d without gaps or repeats: %v", len(got), got)
			}
		}
		if len(got) == 0 {
			t.Fatal("nothing committed")
		}
	})
}
