package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/outbox"
	"github.com/kadens/kadens/internal/retries"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/webhook"
)

// seen records what a consumer's handler was given, per event id.
type seen struct {
	mu      sync.Mutex
	calls   map[string]int
	tenants map[string]string
}

func newSeen() *seen { return &seen{calls: map[string]int{}, tenants: map[string]string{}} }

func (s *seen) add(tenant string, e store.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[e.ID]++
	s.tenants[e.ID] = tenant
}

func (s *seen) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[id]
}

func (s *seen) distinct() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func tenant(t *testing.T, s *store.Store) context.Context {
	t.Helper()
	ten, err := s.CreateTenant(context.Background(), "outbox-"+store.NewID(), false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tenancy.With(context.Background(), ten.ID)
}

// commit records n events of kind in one transaction of ctx's tenant and
// returns their ids.
func commit(t *testing.T, s *store.Store, ctx context.Context, kind string, n int) []string {
	t.Helper()
	evs := make([]store.NewEvent, n)
	for i := range evs {
		evs[i] = store.NewEvent{Type: kind, Subject: fmt.Sprintf("/invoice/%d", i), Data: map[string]int{"n": i}, At: time.Now()}
	}
	if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.AddEvents(ctx, evs) }); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.ListEvents(ctx, store.EventFilter{EventType: kind}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, n)
	for _, e := range got[len(got)-n:] {
		ids = append(ids, e.ID)
	}
	return ids
}

func start(t *testing.T, r *outbox.Runner) {
	t.Helper()
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop(context.Background()) })
}

func reopen(t *testing.T, opts store.Options) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background(), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	return s
}

// Two consumers of the same events, beside webhook delivery: one fails
// every attempt, the webhook receiver answers 500, and the third consumer
// still gets every event once, promptly. The failing one retries on its
// schedule, is dead-lettered when it runs out, shows in the lag, and
// handles its events once retried after a fix.
func TestFailingConsumerHoldsBackNoOther(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := tenant(t, s)
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))
		t.Cleanup(down.Close)
		if _, err := webhook.Create(ctx, s, webhook.Webhook{URL: down.URL, EventTypes: []string{"InvoiceIssued"}, Format: webhook.FormatEventGrid,
			Secret: webhook.NewSecret(), DisableValidation: true}, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
		schedule, _ := retries.Parse("20ms*50")
		d := webhook.New(webhook.Options{Store: s, Egress: egress.Policy{Private: true}, Schedule: schedule, Timeout: time.Second})
		d.Start()
		t.Cleanup(func() { _ = d.Stop(context.Background()) })

		reg := prometheus.NewRegistry()
		r := outbox.New(outbox.Options{Store: s, Poll: 20 * time.Millisecond, Metrics: outbox.NewMetrics(reg, s, nil)})
		steady, broken := newSeen(), newSeen()
		var fixed atomic.Bool
		must(t, r.Register(outbox.Consumer{Name: "steady", Kinds: []string{"InvoiceIssued"},
			Handle: func(_ context.Context, ten string, e store.Event) error { steady.add(ten, e); return nil }}))
		must(t, r.Register(outbox.Consumer{Name: "broken", Kinds: []string{"InvoiceIssued", "CreditNoteIssued"},
			Schedule: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond},
			Handle: func(_ context.Context, ten string, e store.Event) error {
				broken.add(ten, e)
				if !fixed.Load() {
					return errors.New("bank file rejected")
				}
				return nil
			}}))
		start(t, r)

		var ids []string
		for range 5 {
			ids = append(ids, commit(t, s, ctx, "InvoiceIssued", 4)...)
		}
		other := commit(t, s, ctx, "PaymentCompleted", 2) // taken by nobody
		// Another tenant's events reach the handler with their tenant.
		ctx2 := tenant(t, s)
		theirs := commit(t, s, ctx2, "InvoiceIssued", 3)
		waitFor(t, "the steady consumer to get 23 events", 10*time.Second, func() bool { return steady.distinct() == 23 })
		for _, id := range append(ids, theirs...) {
			if n := steady.count(id); n != 1 {
				t.Errorf("steady consumer got event %s %d times", id, n)
			}
			want := tenantOf(ctx)
			if slices.Contains(theirs, id) {
				want = tenantOf(ctx2)
			}
			if steady.tenants[id] != want {
				t.Errorf("event %s handed over with tenant %q, want %q", id, steady.tenants[id], want)
			}
		}
		ids = append(ids, theirs...)
		for _, id := range other {
			if steady.count(id) != 0 || broken.count(id) != 0 {
				t.Errorf("event %s of a kind no consumer takes was handed over", id)
			}
		}
		// The broken consumer: 1 attempt + 3 retries each, then Dead.
		waitFor(t, "23 dead jobs", 10*time.Second, func() bool {
			dead, err := s.DeadOutboxJobs(context.Background(), "broken", 100)
			return err == nil && len(dead) == 23
		})
		for _, id := range ids {
			if n := broken.count(id); n != 4 {
				t.Errorf("broken consumer tried event %s %d times, want 4", id, n)
			}
		}
		dead, _ := s.DeadOutboxJobs(context.Background(), "broken", 1)
		if dead[0].LastError != "bank file rejected" || dead[0].Attempts != 4 || dead[0].EventType != "InvoiceIssued" {
			t.Errorf("dead job: %+v", dead[0])
		}
		lags, unrelayed, err := s.ConsumerLags(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]store.ConsumerLag{}
		for _, l := range lags {
			byName[l.Consumer] = l
		}
		if byName["broken"].Dead != 23 || byName["broken"].Pending != 0 || byName["steady"].Pending != 0 || byName["steady"].Dead != 0 ||
			byName[webhook.ConsumerName].Pending == 0 || unrelayed != 0 {
			t.Errorf("lags %+v, unrelayed %d", lags, unrelayed)
		}
		if got := gauge(t, reg, "kadens_outbox_dead", "broken"); got != 23 {
			t.Errorf("kadens_outbox_dead{consumer=broken} = %v", got)
		}

		// Fixed and retried: each dead event is handled once more.
		fixed.Store(true)
		n, err := s.RetryDeadOutboxJobs(context.Background(), "broken", nil, time.Now())
		if err != nil || n != 23 {
			t.Fatalf("retry: %d, %v", n, err)
		}
		waitFor(t, "the retried jobs", 10*time.Second, func() bool {
			lags, _, err := s.ConsumerLags(context.Background())
			return err == nil && lags[0].Consumer == "broken" && lags[0].Pending == 0 && lags[0].Dead == 0
		})
		for _, id := range ids {
			if n := broken.count(id); n != 5 {
				t.Errorf("broken consumer got event %s %d times, want 5", id, n)
			}
		}
	})
}

// gauge reads the value of gauge name{consumer} from reg.
func gauge(t *testing.T, reg *prometheus.Registry, name, consumer string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if f.GetName() == name && l.GetName() == "consumer" && l.GetValue() == consumer {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{consumer=%q}", name, consumer)
	return 0
}

func tenantOf(ctx context.Context) string {
	t, _ := tenancy.From(ctx)
	return t
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A process that dies holding claims loses nothing: once the claims lapse
// another process (a new store and runner on the same database) hands the
// events over again, as a later attempt; and events the dead process never
// relayed are relayed by the new one.
func TestLapsedClaimRedelivers(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			opts := storetest.Options(t, eng)
			first := reopen(t, opts)
			ctx := tenant(t, first)
			if err := first.RegisterOutboxConsumer(context.Background(), "collector", []string{"InvoiceIssued"}, time.Now()); err != nil {
				t.Fatal(err)
			}
			claimed := commit(t, first, ctx, "InvoiceIssued", 3)
			now := time.Now()
			if n, err := first.RelayEvents(context.Background(), now, 512); err != nil || n != 3 {
				t.Fatalf("relay: %d, %v", n, err)
			}
			jobs, err := first.ClaimOutboxJobs(context.Background(), "collector", now, now.Add(300*time.Millisecond), 10)
			if err != nil || len(jobs) != 3 {
				t.Fatalf("claim: %d jobs, %v", len(jobs), err)
			}
			for i, j := range jobs {
				if j.Event.ID != claimed[i] || j.Attempt != 1 || j.Event.EventType != "InvoiceIssued" || j.TenantID != tenantOf(ctx) {
					t.Errorf("job %d: %+v", i, j)
				}
			}
			// A second claim while the lease runs finds nothing.
			if again, err := first.ClaimOutboxJobs(context.Background(), "collector", now, now.Add(time.Minute), 10); err != nil || len(again) != 0 {
				t.Fatalf("claimed %d jobs under a running lease (%v)", len(again), err)
			}
			unrelayed := commit(t, first, ctx, "InvoiceIssued", 2)
			first.Close() // the process dies

			second := reopen(t, opts)
			attempts := map[string]int{}
			var mu sync.Mutex
			r := outbox.New(outbox.Options{Store: second, Poll: 20 * time.Millisecond})
			must(t, r.Register(outbox.Consumer{Name: "collector", Kinds: []string{"InvoiceIssued"},
				Handle: func(ctx context.Context, _ string, e store.Event) error {
					mu.Lock()
					defer mu.Unlock()
					attempts[e.ID]++
					return nil
				}}))
			start(t, r)
			waitFor(t, "5 events", 10*time.Second, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(attempts) == 5
			})
			for _, id := range append(claimed, unrelayed...) {
				if attempts[id] != 1 {
					t.Errorf("event %s handled %d times by the second process", id, attempts[id])
				}
			}
		})
	}
}

// Several processes (stores and runners on one database, each relaying and
// claiming) never hand an event to the same consumer twice while their
// claims hold, whichever process committed it.
func TestProcessesNeverDoubleDeliver(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			opts := storetest.Options(t, eng)
			var stores []*store.Store
			for range 2 {
				stores = append(stores, reopen(t, opts))
			}
			ctx := tenant(t, stores[0])
			a, b := newSeen(), newSeen()
			var runners []*outbox.Runner
			for _, s := range stores {
				r := outbox.New(outbox.Options{Store: s, Poll: 5 * time.Millisecond})
				must(t, r.Register(outbox.Consumer{Name: "collector", Kinds: []string{"InvoiceIssued"}, Concurrency: 4,
					Handle: func(_ context.Context, ten string, e store.Event) error { a.add(ten, e); return nil }}))
				must(t, r.Register(outbox.Consumer{Name: "delivery", Kinds: []string{"InvoiceIssued"}, Concurrency: 2,
					Handle: func(_ context.Context, ten string, e store.Event) error {
						time.Sleep(time.Millisecond) // a slower consumer
						b.add(ten, e)
						return nil
					}}))
				start(t, r)
				runners = append(runners, r)
			}
			var all []string
			for i := range 20 {
				all = append(all, commit(t, stores[i%2], ctx, "InvoiceIssued", 10)...)
			}
			waitFor(t, "200 events to each consumer", 30*time.Second, func() bool { return a.distinct() == 200 && b.distinct() == 200 })
			// Stopped, no runner has a handler running: a second hand-over
			// could only have begun before this.
			for _, r := range runners {
				must(t, r.Stop(context.Background()))
			}
			for _, id := range all {
				if a.count(id) != 1 || b.count(id) != 1 {
					t.Errorf("event %s handed over %d and %d times", id, a.count(id), b.count(id))
				}
			}
		})
	}
}

// A Permanent error dead-letters at once; a panicking handler is an error
// (retried), not the end of the process.
func TestPermanentErrorsAndPanics(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := tenant(t, s)
		var calls atomic.Int32
		r := outbox.New(outbox.Options{Store: s, Poll: 10 * time.Millisecond})
		must(t, r.Register(outbox.Consumer{Name: "einvoice", Kinds: []string{"InvoiceIssued"},
			Handle: func(context.Context, string, store.Event) error {
				calls.Add(1)
				return outbox.Permanent(errors.New("buyer has no Peppol id"))
			}}))
		must(t, r.Register(outbox.Consumer{Name: "panicky", Kinds: []string{"InvoiceIssued"}, Schedule: []time.Duration{10 * time.Millisecond},
			Handle: func(context.Context, string, store.Event) error { panic("boom") }}))
		start(t, r)
		commit(t, s, ctx, "InvoiceIssued", 1)
		waitFor(t, "both dead", 10*time.Second, func() bool {
			x, _ := s.DeadOutboxJobs(context.Background(), "einvoice", 10)
			y, _ := s.DeadOutboxJobs(context.Background(), "panicky", 10)
			return len(x) == 1 && len(y) == 1
		})
		if calls.Load() != 1 {
			t.Errorf("a permanent failure was tried %d times", calls.Load())
		}
		y, _ := s.DeadOutboxJobs(context.Background(), "panicky", 10)
		if y[0].Attempts != 2 || !strings.Contains(y[0].LastError, "panicked: boom") {
			t.Errorf("panicking job: %+v", y[0])
		}
	})
}

func TestRegisterRefusesBadConsumers(t *testing.T) {
	ok := func(context.Context, string, store.Event) error { return nil }
	for _, c := range []outbox.Consumer{
		{Name: "", Kinds: []string{"InvoiceIssued"}, Handle: ok},
		{Name: "Bank Collection", Kinds: []string{"InvoiceIssued"}, Handle: ok},
		{Name: "bank", Handle: ok},
		{Name: "bank", Kinds: []string{"InvoiceIssued"}},
	} {
		if err := outbox.New(outbox.Options{}).Register(c); err == nil {
			t.Errorf("registered %+v", c)
		}
	}
	r := outbox.New(outbox.Options{})
	must(t, r.Register(outbox.Consumer{Name: "bank", Kinds: []string{"InvoiceIssued"}, Handle: ok}))
	if err := r.Register(outbox.Consumer{Name: "bank", Kinds: []string{"InvoiceIssued"}, Handle: ok}); err == nil {
		t.Error("registered a name twice")
	}
}

// A retired consumer loses its queue and gets no further jobs; the
// others keep theirs.
func TestRetiredConsumerGetsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := tenant(t, s)
		bg := context.Background()
		for _, name := range []string{"audit", "old-bank"} {
			must(t, s.RegisterOutboxConsumer(bg, name, []string{"InvoiceIssued"}, time.Now()))
		}
		relay := func() {
			now := time.Now()
			if _, err := s.RelayEvents(bg, now, 512); err != nil {
				t.Fatal(err)
			}
		}
		commit(t, s, ctx, "InvoiceIssued", 2)
		relay()
		must(t, s.RetireOutboxConsumer(bg, "old-bank"))
		if err := s.RetireOutboxConsumer(bg, "old-bank"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("retiring twice: %v", err)
		}
		commit(t, s, ctx, "InvoiceIssued", 1)
		relay()
		lags, _, err := s.ConsumerLags(bg)
		if err != nil {
			t.Fatal(err)
		}
		if len(lags) != 2 || lags[0].Consumer != "audit" || lags[0].Pending != 3 || lags[1].Consumer != webhook.ConsumerName {
			t.Errorf("lags after retiring: %+v", lags)
		}
		if jobs, err := s.ClaimOutboxJobs(bg, "old-bank", time.Now(), time.Now().Add(time.Minute), 10); err != nil || len(jobs) != 0 {
			t.Errorf("a retired consumer claimed %d jobs (%v)", len(jobs), err)
		}
	})
}
