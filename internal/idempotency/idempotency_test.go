package idempotency_test

import (
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/idempotency"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

var t0 = time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)

func TestIdempotencyKeyClaims(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := seed.Tenant(t, s, "a", t0)
		other := seed.Tenant(t, s, "b", t0)
		rec := idempotency.Record{Key: "k1", Method: "POST", Path: "/organization", RequestHash: "h1", CreatedAt: t0}
		if _, claimed, err := idempotency.Claim(ctx, s, rec, 24*time.Hour); err != nil || !claimed {
			t.Fatalf("first claim: claimed=%v err=%v", claimed, err)
		}
		prev, claimed, err := idempotency.Claim(ctx, s, rec, 24*time.Hour)
		if err != nil || claimed || prev.StatusCode != 0 {
			t.Fatalf("claim while in progress: claimed=%v status=%d err=%v", claimed, prev.StatusCode, err)
		}
		rec.StatusCode, rec.Location, rec.ContentType, rec.Body = 201, "/organization/x", "application/json", []byte(`"x"`)
		if err := idempotency.Complete(ctx, s, rec); err != nil {
			t.Fatal(err)
		}
		prev, claimed, err = idempotency.Claim(ctx, s, rec, 24*time.Hour)
		if err != nil || claimed || prev.StatusCode != 201 || string(prev.Body) != `"x"` || prev.Location != "/organization/x" {
			t.Fatalf("replay: %+v claimed=%v err=%v", prev, claimed, err)
		}
		if _, claimed, err := idempotency.Claim(other, s, rec, 24*time.Hour); err != nil || !claimed {
			t.Fatalf("same key, other tenant: claimed=%v err=%v", claimed, err)
		}
		late := rec
		late.CreatedAt = t0.Add(25 * time.Hour)
		if _, claimed, err := idempotency.Claim(ctx, s, late, 24*time.Hour); err != nil || !claimed {
			t.Fatalf("expired key: claimed=%v err=%v", claimed, err)
		}
		if err := idempotency.Release(ctx, s, "k1"); err != nil {
			t.Fatal(err)
		}
		if _, claimed, err := idempotency.Claim(ctx, s, rec, 24*time.Hour); err != nil || !claimed {
			t.Fatalf("after release: claimed=%v err=%v", claimed, err)
		}
	})
}

func TestConcurrentIdempotencyClaimsAdmitOne(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := seed.Tenant(t, s, "a", t0)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners int
		)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, claimed, err := idempotency.Claim(ctx, s, idempotency.Record{Key: "same", Method: "POST", Path: "/x", RequestHash: "h", CreatedAt: t0}, time.Hour)
				if err != nil {
					t.Error(err)
				}
				if claimed {
					mu.Lock()
					winners++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if winners != 1 {
			t.Fatalf("%d concurrent claims won, want exactly 1", winners)
		}
	})
}

// Purge, the server's hourly housekeeping, forgets old keys of every
// tenant and keeps the young ones.
func TestPurgeForgetsOldKeysOfEveryTenant(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		for i, name := range []string{"a", "b"} {
			ctx := seed.Tenant(t, s, name, t0)
			at := t0.Add(time.Duration(i) * 2 * time.Hour) // b's key is younger
			if _, claimed, err := idempotency.Claim(ctx, s, idempotency.Record{Key: "k", Method: "POST", Path: "/x", RequestHash: "h", CreatedAt: at}, time.Hour); err != nil || !claimed {
				t.Fatalf("claim in %s: claimed=%v err=%v", name, claimed, err)
			}
		}
		if n, err := idempotency.Purge(t.Context(), s, t0.Add(time.Hour)); err != nil || n != 1 {
			t.Fatalf("purge: %d rows, %v; want 1", n, err)
		}
	})
}
