package webhook_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/webhook"
)

// The wing's SQL on both engines (moved from internal/store with it).

var t0 = time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)

func newTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, t0)
}

func newHook(t *testing.T, s *store.Store, ctx context.Context, v *webhook.WebhookValidation) webhook.Webhook {
	t.Helper()
	w, err := webhook.Create(ctx, s, webhook.Webhook{URL: "https://example.com/hook", EventTypes: []string{"InvoiceIssued"},
		Format: "EventGrid", Secret: "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", DisableValidation: v == nil}, v, t0)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func addEvent(t *testing.T, s *store.Store, ctx context.Context, kind string) {
	t.Helper()
	if err := s.InTx(ctx, func(tx *store.Tx) error {
		return tx.AddEvent(ctx, kind, "/x", map[string]string{}, t0)
	}); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookRegistrations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		pending := newHook(t, s, ctx, &webhook.WebhookValidation{TokenHash: "hash-1", IssuedAt: t0})
		if pending.Status != webhook.WebhookPending || pending.ValidatedAt != nil || pending.Secret == "" {
			t.Fatalf("created %+v", pending)
		}
		tenant, id, issued, err := webhook.ByValidationToken(context.Background(), s, "hash-1")
		if err != nil || id != pending.ID || !issued.Equal(t0) || tenant == "" {
			t.Fatalf("by token: %s %s %v", id, issued, err)
		}
		if err := webhook.Validate(ctx, s, pending.ID, "hash-other", t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("validate with another token: %v", err)
		}
		if err := webhook.Validate(ctx, s, pending.ID, "hash-1", t0); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := webhook.ByValidationToken(context.Background(), s, "hash-1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a used token still resolves: %v", err)
		}
		// An update with a new validation goes back to Pending; the secret is
		// kept when not given.
		w := pending
		w.URL, w.Secret = "https://example.org/hook", ""
		got, err := webhook.Update(ctx, s, w, &webhook.WebhookValidation{TokenHash: "hash-2", IssuedAt: t0}, t0)
		if err != nil || got.Status != webhook.WebhookPending || got.Secret != pending.Secret || got.URL != w.URL {
			t.Fatalf("update: %+v %v", got, err)
		}
		// Disabling validation validates it.
		w.DisableValidation = true
		if got, err = webhook.Update(ctx, s, w, nil, t0); err != nil || got.Status != webhook.WebhookValidated {
			t.Fatalf("update without validation: %+v %v", got, err)
		}
		other := newTenant(t, s, "b")
		if _, err := webhook.Registration(other, s, w.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("cross-tenant get: %v", err)
		}
		if _, err := webhook.Update(other, s, w, nil, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("cross-tenant update: %v", err)
		}
		if err := webhook.Delete(other, s, w.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("cross-tenant delete: %v", err)
		}
		if list, _, _ := webhook.List(other, s, store.Page{Limit: 10}); len(list) != 0 {
			t.Fatalf("tenant b lists %d", len(list))
		}
		if err := webhook.Delete(ctx, s, w.ID); err != nil {
			t.Fatal(err)
		}
	})
}

// Fan-out goes to Validated registrations of the event's tenant that
// subscribe to its kind, once per event.
func TestDispatchEventsFansOut(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newTenant(t, s, "a"), newTenant(t, s, "b")
		hook := newHook(t, s, a, nil)
		newHook(t, s, a, &webhook.WebhookValidation{TokenHash: "p", IssuedAt: t0}) // Pending: nothing
		newHook(t, s, b, nil)
		addEvent(t, s, a, "InvoiceIssued")
		addEvent(t, s, a, "OrderProcessed") // not subscribed
		now := time.Now()
		n, jobs, err := webhook.DispatchEvents(context.Background(), s, now, now.Add(time.Minute), 100, 100, 100)
		if err != nil || n != 2 || len(jobs) != 1 || jobs[0].WebhookID != hook.ID || jobs[0].Attempt != 1 || jobs[0].Events[0].EventType != "InvoiceIssued" {
			t.Fatalf("dispatch: %d %+v %v", n, jobs, err)
		}
		if n, jobs, _ := webhook.DispatchEvents(context.Background(), s, now, now.Add(time.Minute), 100, 100, 100); n != 0 || len(jobs) != 0 {
			t.Fatalf("events dispatched twice: %d", n)
		}
		// Claimed until the lease ends.
		if jobs, _ := webhook.ClaimDeliveries(context.Background(), s, now, now.Add(time.Minute), 10); len(jobs) != 0 {
			t.Fatalf("a leased delivery was claimed again")
		}
		jobs2, err := webhook.ClaimDeliveries(context.Background(), s, now.Add(2*time.Minute), now.Add(3*time.Minute), 10)
		if err != nil || len(jobs2) != 1 || jobs2[0].ID != jobs[0].ID || jobs2[0].Attempt != 2 {
			t.Fatalf("claim after the lease: %+v %v", jobs2, err)
		}
		// The stale first attempt's failure does not override the second.
		next := now.Add(time.Hour)
		if err := webhook.CompleteDeliveries(context.Background(), s, []webhook.DeliveryResult{
			{ID: jobs[0].ID, Attempt: 1, At: now, Error: "late", NextAt: &next},
			{ID: jobs[0].ID, Attempt: 2, At: now, StatusCode: 200, Delivered: true},
		}); err != nil {
			t.Fatal(err)
		}
		ds, _, err := webhook.ListDeliveries(a, s, hook.ID, webhook.DeliveryFilter{}, store.Page{Limit: 10})
		if err != nil || len(ds) != 1 || ds[0].Status != webhook.DeliveryDelivered || len(ds[0].Attempts) != 2 || ds[0].NextAttemptAt != nil {
			t.Fatalf("deliveries %+v %v", ds, err)
		}
	})
}

// A registration deleted while one of its deliveries is being attempted
// takes the delivery with it; the attempt's outcome then has nothing to
// be recorded on. Recording the outcomes of a batch must not fail for it
// (a foreign key refused the whole batch, every other delivery's outcome
// was lost and re-sent when its lease lapsed): the others are recorded.
func TestCompleteDeliveriesOfARemovedRegistration(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		gone, kept := newHook(t, s, ctx, nil), newHook(t, s, ctx, nil)
		addEvent(t, s, ctx, "InvoiceIssued")
		now := time.Now()
		_, jobs, err := webhook.DispatchEvents(context.Background(), s, now, now.Add(time.Minute), 100, 100, 100)
		if err != nil || len(jobs) != 2 {
			t.Fatalf("dispatch: %+v %v", jobs, err)
		}
		if err := webhook.Delete(ctx, s, gone.ID); err != nil {
			t.Fatal(err)
		}
		var results []webhook.DeliveryResult
		for _, j := range jobs {
			results = append(results, webhook.DeliveryResult{ID: j.ID, Attempt: j.Attempt, At: now, StatusCode: 200, Delivered: true})
		}
		if err := webhook.CompleteDeliveries(context.Background(), s, results); err != nil {
			t.Fatalf("recording outcomes beside a removed registration's: %v", err)
		}
		ds, _, err := webhook.ListDeliveries(ctx, s, kept.ID, webhook.DeliveryFilter{}, store.Page{Limit: 10})
		if err != nil || len(ds) != 1 || ds[0].Status != webhook.DeliveryDelivered || len(ds[0].Attempts) != 1 {
			t.Fatalf("the kept registration's deliveries %+v %v", ds, err)
		}
	})
}

// A registration deleted while the fan-out reads it: the fan-out waits
// for the deletion and leaves the registration out, instead of failing on
// the foreign key of the deliveries it made for it (which failed every
// fan-out that a deletion raced). PostgreSQL only: SQLite has one writer.
func TestFanOutBesideADeletion(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		if eng != store.Postgres {
			continue
		}
		s := storetest.Open(t, eng)
		ctx := newTenant(t, s, "a")
		gone, kept := newHook(t, s, ctx, nil), newHook(t, s, ctx, nil)
		addEvent(t, s, ctx, "InvoiceIssued")
		del, err := s.DB().BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := del.Exec(`DELETE FROM webhooks WHERE id = $1`, gone.ID); err != nil {
			t.Fatal(err)
		}
		type outcome struct {
			jobs []webhook.DeliveryJob
			err  error
		}
		done := make(chan outcome, 1)
		go func() {
			now := time.Now()
			_, jobs, err := webhook.DispatchEvents(context.Background(), s, now, now.Add(time.Minute), 100, 100, 100)
			done <- outcome{jobs, err}
		}()
		// The fan-out waits on the deletion's lock (on the registration's
		// row, or on the foreign key check of its delivery).
		for {
			var waiting int
			if err := s.DB().QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
				AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			if waiting > 0 {
				break
			}
			select {
			case o := <-done:
				t.Fatalf("the fan-out did not wait for the deletion: %+v", o)
			case <-time.After(10 * time.Millisecond):
			}
		}
		if err := del.Commit(); err != nil {
			t.Fatal(err)
		}
		o := <-done
		if o.err != nil || len(o.jobs) != 1 || o.jobs[0].WebhookID != kept.ID {
			t.Fatalf("fan-out beside a deletion: %+v %v", o.jobs, o.err)
		}
	}
}

// PostgreSQL commits out of id order: an event with an older id committed
// after a newer one must still be dispatched (no "after the last id"
// cursor).
func TestDispatchSurvivesOutOfOrderCommits(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		if eng != store.Postgres {
			continue // SQLite has one writer: commits cannot interleave
		}
		s := storetest.Open(t, eng)
		ctx := newTenant(t, s, "a")
		newHook(t, s, ctx, nil)
		added, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
		go func() {
			done <- s.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.AddEvent(ctx, "InvoiceIssued", "/invoice/old", map[string]string{}, t0); err != nil {
					return err
				}
				close(added)
				<-release
				return nil
			})
		}()
		<-added
		addEvent(t, s, ctx, "InvoiceIssued") // newer id, committed first
		now := time.Now()
		n, jobs, err := webhook.DispatchEvents(context.Background(), s, now, now.Add(time.Minute), 100, 100, 100)
		if err != nil || n != 1 || len(jobs) != 1 || jobs[0].Events[0].Subject != "/x" {
			t.Fatalf("first dispatch: %d %v", n, err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		n, jobs2, err := webhook.DispatchEvents(context.Background(), s, now, now.Add(time.Minute), 100, 100, 100)
		if err != nil || n != 1 || len(jobs2) != 1 || jobs2[0].Events[0].Subject != "/invoice/old" {
			t.Fatalf("late commit not dispatched: %d %v", n, err)
		}
		if jobs2[0].Events[0].ID >= jobs[0].Events[0].ID {
			t.Fatalf("test did not commit out of order: %s, %s", jobs2[0].Events[0].ID, jobs[0].Events[0].ID)
		}
	}
}
