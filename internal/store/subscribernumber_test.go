package store_test

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestSubscriberNumbersIgnoreChosenExtremes: a number a client chose, at
// the bound or beyond it, never stops the series. Beyond the bound is
// refused (create and update); at the bound it is stored, and subscribers
// created without a number still get the series' next one, before and
// after the chosen one is deleted. The series passes over numbers clients
// chose when it reaches them, a run of several batches too.
//
// Not parallel: it shrinks the batch the series reads taken numbers in.
func TestSubscriberNumbersIgnoreChosenExtremes(t *testing.T) {
	store.SetFreeNumberBatch(t, 2)
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		create := func(n int64) (store.Subscriber, error) {
			return s.CreateSubscriber(ctx, store.Subscriber{Name: "S", SubscriberNumber: n}, t0)
		}
		number := func(want int64) store.Subscriber {
			t.Helper()
			sub, err := create(0)
			if err != nil || sub.SubscriberNumber != want {
				t.Fatalf("assigned %d, %v; want %d", sub.SubscriberNumber, err, want)
			}
			return sub
		}
		for _, n := range []int64{math.MaxInt64, store.MaxSubscriberNumber + 1, -1} {
			if _, err := create(n); !errors.Is(err, store.ErrSubscriberNumberRange) {
				t.Fatalf("chosen %d: %v, want ErrSubscriberNumberRange", n, err)
			}
		}
		top, err := create(store.MaxSubscriberNumber)
		if err != nil {
			t.Fatal(err)
		}
		first := number(1)
		if err := s.DeleteSubscriber(ctx, top.ID, t0); err != nil {
			t.Fatal(err)
		}
		number(2)
		// An update to a number beyond the bound is refused; to the bound, kept.
		first.SubscriberNumber = math.MaxInt64
		if _, err := s.UpdateSubscriber(ctx, first, t0); !errors.Is(err, store.ErrSubscriberNumberRange) {
			t.Fatalf("update to MaxInt64: %v", err)
		}
		first.SubscriberNumber = store.MaxSubscriberNumber
		if _, err := s.UpdateSubscriber(ctx, first, t0); err != nil {
			t.Fatal(err)
		}
		number(3)
		// Chosen numbers ahead of the series: 4 to 8 (more than two
		// batches) and 10. The series passes 4..8, then takes 9, passes 10.
		for n := int64(4); n <= 8; n++ {
			if _, err := create(n); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := create(10); err != nil {
			t.Fatal(err)
		}
		number(9)
		number(11)
		// A number taken stays taken: chosen again, it is a conflict.
		if _, err := create(11); !errors.Is(err, store.ErrSubscriberNumberTaken) {
			t.Fatalf("chosen 11 again: %v", err)
		}
	})
}

// TestSubscriberNumbersConcurrent: subscribers created at once, half with
// the very numbers the series is about to assign, half without: every
// creation succeeds and the numbers are distinct. (On PostgreSQL the
// chosen numbers' writers take the series' lock, so an assignment never
// races a chosen number onto the unique index.)
func TestSubscriberNumbersConcurrent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		const n = 16
		var wg sync.WaitGroup
		var mu sync.Mutex
		seen := map[int64]bool{}
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var chosen int64
				if i%2 == 1 {
					chosen = int64(i/2 + 1) // 1..8: what the series hands out first
				}
				sub, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "S", SubscriberNumber: chosen}, t0)
				if errors.Is(err, store.ErrSubscriberNumberTaken) && chosen != 0 {
					return // the series got there first: the chosen number is taken, rightly refused
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if seen[sub.SubscriberNumber] {
					errs <- errors.New("number given twice")
				}
				seen[sub.SubscriberNumber] = true
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("subscriber without a number: %v", err)
		}
		if len(seen) < n/2 {
			t.Fatalf("%d subscribers created, want at least %d", len(seen), n/2)
		}
	})
}
