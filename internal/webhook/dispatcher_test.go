package webhook_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/nodetest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/webhook"
)

// message is one request a receiver got.
type message struct {
	ID, Timestamp, Signature, Tenant string
	Body                             []byte
	Status                           int // what the receiver answered
}

// receiver is a real HTTP endpoint that records what it receives. fail
// decides the answer to a message (0 = 200).
type receiver struct {
	mu   sync.Mutex
	msgs []message
	fail func(m message, seen int) int
	srv  *httptest.Server
}

func newReceiver(t *testing.T, fail func(m message, seen int) int) *receiver {
	r := &receiver{fail: fail}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	m := message{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
		Signature: req.Header.Get("webhook-signature"), Tenant: req.Header.Get("S4-TenantId"), Body: body, Status: 200}
	r.mu.Lock()
	seen := 0
	for _, o := range r.msgs {
		if o.ID == m.ID {
			seen++
		}
	}
	if r.fail != nil {
		if s := r.fail(m, seen); s != 0 {
			m.Status = s
		}
	}
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	w.WriteHeader(m.Status)
}

func (r *receiver) messages() []message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]message(nil), r.msgs...)
}

// delivered returns the event ids received with a 2xx answer.
func (r *receiver) delivered(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, m := range r.messages() {
		if m.Status != 200 {
			continue
		}
		var evs []webhook.EventGridEvent
		if err := json.Unmarshal(m.Body, &evs); err != nil {
			t.Fatalf("body is not an EventGrid array: %v: %s", err, m.Body)
		}
		for _, e := range evs {
			out[e.ID] = true
		}
	}
	return out
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// setup makes a tenant with a Validated webhook for InvoiceIssued at url.
func setup(t *testing.T, s *store.Store, url string) (context.Context, webhook.Webhook) {
	t.Helper()
	ctx := seed.Tenant(t, s, "webhooks-"+store.NewID(), time.Now())
	w, err := webhook.Create(ctx, s, webhook.Webhook{URL: url, EventTypes: []string{"InvoiceIssued"}, Format: webhook.FormatEventGrid,
		Secret: webhook.NewSecret(), DisableValidation: true}, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return ctx, w
}

// commit records n InvoiceIssued events in one transaction and returns
// their ids.
func commit(t *testing.T, s *store.Store, ctx context.Context, n int) []string {
	t.Helper()
	evs := make([]store.NewEvent, n)
	for i := range evs {
		evs[i] = store.NewEvent{Type: "InvoiceIssued", Subject: fmt.Sprintf("/invoice/%d", i), Data: map[string]int{"n": i}, At: time.Now()}
	}
	if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.AddEvents(ctx, evs) }); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.ListEvents(ctx, store.EventFilter{}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, n)
	for _, e := range got[len(got)-n:] {
		ids = append(ids, e.ID)
	}
	return ids
}

func start(t *testing.T, s *store.Store, o webhook.Options) *webhook.Dispatcher {
	t.Helper()
	o.Store, o.Egress = s, egress.Policy{Private: true}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second
	}
	d := webhook.New(o)
	d.Start()
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	return d
}

func TestDeliversCommittedEventsSigned(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		rcv := newReceiver(t, nil)
		ctx, w := setup(t, s, rcv.srv.URL)
		start(t, s, webhook.Options{})
		ids := commit(t, s, ctx, 20)
		waitFor(t, "20 deliveries", 10*time.Second, func() bool { return len(rcv.delivered(t)) == 20 })
		got := rcv.delivered(t)
		for _, id := range ids {
			if !got[id] {
				t.Errorf("event %s not delivered", id)
			}
		}
		ten, _ := tenancy.From(ctx)
		for _, m := range rcv.messages() {
			if m.Tenant != ten {
				t.Errorf("S4-TenantId = %q, want %s", m.Tenant, ten)
			}
			if err := webhook.Verify(w.Secret, m.ID, m.Timestamp, m.Signature, m.Body, time.Now(), time.Minute); err != nil {
				t.Errorf("signature of %s: %v", m.ID, err)
			}
			if err := webhook.Verify(webhook.NewSecret(), m.ID, m.Timestamp, m.Signature, m.Body, time.Now(), time.Minute); err == nil {
				t.Errorf("signature of %s verifies under another secret", m.ID)
			}
		}
		// The delivery log shows every delivery Delivered after one attempt.
		// The 20 events were committed together, so they travel together
		// (EventGrid batches).
		waitFor(t, "deliveries recorded", 5*time.Second, func() bool {
			return eventsIn(t, s, ctx, w.ID, webhook.DeliveryDelivered) == 20
		})
		ds, _, _ := webhook.ListDeliveries(ctx, s, w.ID, webhook.DeliveryFilter{}, store.Page{Limit: 100})
		if len(ds) != len(rcv.messages()) {
			t.Errorf("%d deliveries, %d messages", len(ds), len(rcv.messages()))
		}
		for _, d := range ds {
			if len(d.Attempts) != 1 || d.Attempts[0].StatusCode == nil || *d.Attempts[0].StatusCode != 200 || len(d.EventIDs) == 0 {
				t.Errorf("delivery %s: %+v", d.ID, d)
			}
		}
	})
}

// Receiver down (connection refused), then answering 500 once per message,
// then up: every event arrives, each message's retries carry the same
// webhook-id and body, and the log records every attempt.
func TestReceiverDownRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		// The receiver is down: it drops every connection without an
		// answer until it comes back (one endpoint for the whole test, so
		// its address cannot be taken by something else meanwhile).
		rcv := &receiver{fail: func(m message, seen int) int {
			if seen == 0 {
				return http.StatusServiceUnavailable
			}
			return 0
		}}
		var up atomic.Bool
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if !up.Load() {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			rcv.serve(w, req)
		}))
		t.Cleanup(srv.Close)
		ctx, w := setup(t, s, srv.URL+"/hook")
		start(t, s, webhook.Options{Schedule: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
			200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond}})
		ids := commit(t, s, ctx, 5)
		waitFor(t, "two refused attempts each", 10*time.Second, func() bool {
			ds, _, err := webhook.ListDeliveries(ctx, s, w.ID, webhook.DeliveryFilter{}, store.Page{Limit: 100})
			events := 0
			for _, d := range ds {
				if len(d.Attempts) < 2 {
					return false
				}
				events += len(d.EventIDs)
			}
			return err == nil && events == 5
		})
		// The receiver comes back, failing each message once.
		up.Store(true)

		waitFor(t, "all 5 delivered", 15*time.Second, func() bool { return len(rcv.delivered(t)) == 5 })
		got := rcv.delivered(t)
		for _, id := range ids {
			if !got[id] {
				t.Errorf("event %s never arrived", id)
			}
		}
		byID := map[string][]message{}
		for _, m := range rcv.messages() {
			byID[m.ID] = append(byID[m.ID], m)
		}
		all, _, _ := webhook.ListDeliveries(ctx, s, w.ID, webhook.DeliveryFilter{}, store.Page{Limit: 100})
		if len(byID) != len(all) {
			t.Fatalf("%d distinct webhook-ids, want %d (one per delivery)", len(byID), len(all))
		}
		for id, ms := range byID {
			if len(ms) != 2 || ms[0].Status != 503 || ms[1].Status != 200 || !bytes.Equal(ms[0].Body, ms[1].Body) {
				t.Errorf("webhook-id %s: %d requests, want a 503 then a 200 with the same body", id, len(ms))
			}
		}
		waitFor(t, "log complete", 5*time.Second, func() bool {
			return eventsIn(t, s, ctx, w.ID, webhook.DeliveryDelivered) == 5
		})
		ds, _, _ := webhook.ListDeliveries(ctx, s, w.ID, webhook.DeliveryFilter{}, store.Page{Limit: 100})
		for _, d := range ds {
			n := len(d.Attempts)
			if n < 4 || d.Attempts[0].StatusCode != nil || d.Attempts[0].Error == "" ||
				*d.Attempts[n-2].StatusCode != 503 || *d.Attempts[n-1].StatusCode != 200 || d.NextAttemptAt != nil {
				t.Errorf("delivery %s log: %+v", d.ID, d.Attempts)
			}
		}
	})
}

func TestExhaustedScheduleFailsAndRedeliverReplays(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		var down sync.Map
		down.Store("yes", true)
		rcv := newReceiver(t, func(message, int) int {
			if _, ok := down.Load("yes"); ok {
				return http.StatusInternalServerError
			}
			return 0
		})
		ctx, w := setup(t, s, rcv.srv.URL)
		reg := prometheus.NewRegistry()
		start(t, s, webhook.Options{Schedule: []time.Duration{20 * time.Millisecond}, Metrics: webhook.NewMetrics(reg)})
		commit(t, s, ctx, 1)
		var failed webhook.WebhookDelivery
		waitFor(t, "Failed", 10*time.Second, func() bool {
			ds, _, _ := webhook.ListDeliveries(ctx, s, w.ID, webhook.DeliveryFilter{Status: webhook.DeliveryFailed}, store.Page{Limit: 10})
			if len(ds) == 1 {
				failed = ds[0]
			}
			return len(ds) == 1
		})
		if len(failed.Attempts) != 2 || failed.CompletedAt == nil {
			t.Fatalf("failed delivery: %+v", failed)
		}
		wantAttempts(t, reg, map[string]float64{webhook.OutcomeRetry: 1, webhook.OutcomeFailed: 1, webhook.OutcomeDelivered: 0})
		down.Delete("yes")
		if err := webhook.Redeliver(ctx, s, w.ID, failed.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "redelivered", 10*time.Second, func() bool { return len(rcv.delivered(t)) == 1 })
		wantAttempts(t, reg, map[string]float64{webhook.OutcomeRetry: 1, webhook.OutcomeFailed: 1, webhook.OutcomeDelivered: 1})
		for _, m := range rcv.messages() {
			if m.ID != failed.ID {
				t.Errorf("webhook-id %s, want the delivery id %s on every attempt", m.ID, failed.ID)
			}
		}
		// Another tenant cannot redeliver it.
		other, _ := s.CreateTenant(context.Background(), "other", false, time.Now())
		octx := tenancy.With(context.Background(), other.ID)
		if err := webhook.Redeliver(octx, s, w.ID, failed.ID, time.Now()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("cross-tenant redeliver: %v, want ErrNotFound", err)
		}
		if _, _, err := webhook.ListDeliveries(octx, s, w.ID, webhook.DeliveryFilter{}, store.Page{Limit: 10}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("cross-tenant deliveries: %v, want ErrNotFound", err)
		}
	})
}

// wantAttempts waits (briefly) for kadens_webhook_attempts_total to read
// want by outcome, with every attempt counted also timed: an attempt is
// counted when its answer reaches the dispatcher, a moment after the
// receiver saw the request.
func wantAttempts(t *testing.T, reg *prometheus.Registry, want map[string]float64) {
	t.Helper()
	var (
		got   map[string]float64
		total float64
		timed uint64
	)
	read := func() bool {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got, total, timed = map[string]float64{}, 0, 0
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				switch mf.GetName() {
				case "kadens_webhook_attempts_total":
					for _, l := range m.GetLabel() {
						if l.GetName() == "outcome" {
							got[l.GetValue()] = m.GetCounter().GetValue()
							total += m.GetCounter().GetValue()
						}
					}
				case "kadens_webhook_attempt_duration_seconds":
					timed = m.GetHistogram().GetSampleCount()
				}
			}
		}
		return maps.Equal(got, want) && uint64(total) == timed
	}
	deadline := time.Now().Add(5 * time.Second)
	for !read() {
		if time.Now().After(deadline) {
			t.Errorf("attempts by outcome %v (%d timed), want %v", got, timed, want)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRolledBackChangeSendsNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		rcv := newReceiver(t, nil)
		ctx, _ := setup(t, s, rcv.srv.URL)
		d := start(t, s, webhook.Options{})
		boom := errors.New("boom")
		err := s.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.AddEvent(ctx, "InvoiceIssued", "/invoice/rolled-back", map[string]string{}, time.Now()); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		ids := commit(t, s, ctx, 1)
		waitFor(t, "the committed event", 10*time.Second, func() bool { return len(rcv.delivered(t)) == 1 })
		// Stopped, the dispatcher has finished every attempt it began: what
		// the receiver holds now is all it will ever get from it.
		if err := d.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := rcv.delivered(t); len(got) != 1 || !got[ids[0]] || len(rcv.messages()) != 1 {
			t.Errorf("received %v, want only the committed event %s", got, ids[0])
		}
	})
}

// A process that dies after the commit, or after claiming the first
// attempt, loses nothing: another process (a new store and dispatcher on
// the same database) delivers.
func TestCrashBetweenCommitAndDelivery(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			opts := storetest.Options(t, eng)
			open := func() *store.Store {
				s, err := store.Open(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Migrate(context.Background(), slogDiscard()); err != nil {
					t.Fatal(err)
				}
				return s
			}
			rcv := newReceiver(t, nil)
			first := open()
			ctx, _ := setup(t, first, rcv.srv.URL)
			// The first batch is fanned out and its first attempts claimed, then
			// the process dies before sending: the claims lapse.
			claimed := commit(t, first, ctx, 3)
			now := time.Now()
			n, jobs, err := webhook.DispatchEvents(context.Background(), first, now, now.Add(300*time.Millisecond), 512, 512, 100)
			if err != nil || n != 3 || len(jobs) != 1 || len(jobs[0].Events) != 3 {
				t.Fatalf("dispatch: %d events, %d jobs, %v", n, len(jobs), err)
			}
			// The second batch is committed and the process dies before any
			// dispatcher saw it.
			committed := commit(t, first, ctx, 2)
			first.Close()

			second := open()
			defer second.Close()
			d := webhook.New(webhook.Options{Store: second, Egress: egress.Policy{Private: true}, Poll: 50 * time.Millisecond})
			d.Start()
			defer func() { _ = d.Stop(context.Background()) }()
			waitFor(t, "all 5 events", 10*time.Second, func() bool { return len(rcv.delivered(t)) == 5 })
			got := rcv.delivered(t)
			for _, id := range append(committed, claimed...) {
				if !got[id] {
					t.Errorf("event %s lost", id)
				}
			}
		})
	}
}

// Events committed while no dispatcher runs at all are delivered when one
// starts.
func TestEventsCommittedBeforeStartArrive(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		rcv := newReceiver(t, nil)
		ctx, _ := setup(t, s, rcv.srv.URL)
		ids := commit(t, s, ctx, 4)
		start(t, s, webhook.Options{})
		waitFor(t, "4 events", 10*time.Second, func() bool { return len(rcv.delivered(t)) == 4 })
		for _, id := range ids {
			if !rcv.delivered(t)[id] {
				t.Errorf("event %s not delivered", id)
			}
		}
	})
}

// Several processes on one database: every attempt is made by one of them,
// so a receiver that always answers 200 sees each delivery exactly once.
func TestProcessesShareDeliveries(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skip("needs PostgreSQL (several processes on one database)")
	}
	opts := storetest.Options(t, store.Postgres)
	var stores []*store.Store
	for range 3 {
		s, err := store.Open(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(context.Background(), slogDiscard()); err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	rcv := newReceiver(t, nil)
	ctx, _ := setup(t, stores[0], rcv.srv.URL)
	var ds []*webhook.Dispatcher
	for _, s := range stores {
		ds = append(ds, start(t, s, webhook.Options{Poll: 5 * time.Millisecond, Concurrency: 8}))
	}
	var all []string
	for i := range 20 {
		all = append(all, commit(t, stores[i%3], ctx, 10)...)
	}
	waitFor(t, "200 events", 20*time.Second, func() bool { return len(rcv.delivered(t)) == 200 })
	// Every attempt any process began has ended once all are stopped; a
	// second attempt of a delivery could only have begun before that.
	for _, d := range ds {
		if err := d.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for _, m := range rcv.messages() {
		seen[m.ID]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %s attempted %d times", id, n)
		}
	}
	if got := rcv.delivered(t); len(got) != len(all) {
		t.Errorf("%d events delivered of %d", len(got), len(all))
	}
}

// An independent Standard Webhooks implementation (npm standardwebhooks)
// verifies Kadens' signatures, in both formats.
func TestSignaturesVerifyWithStandardWebhooksJS(t *testing.T) {
	t.Parallel()
	node, dir := nodetest.Find(t, filepath.Join("testdata", "verify"), "standardwebhooks")
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		rcv := newReceiver(t, nil)
		ctx, eg := setup(t, s, rcv.srv.URL)
		ce, err := webhook.Create(ctx, s, webhook.Webhook{URL: rcv.srv.URL + "/ce", EventTypes: []string{"InvoiceIssued"},
			Format: webhook.FormatCloudEvents, Secret: webhook.NewSecret(), DisableValidation: true}, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		start(t, s, webhook.Options{})
		commit(t, s, ctx, 5)
		waitFor(t, "5 events in each format", 10*time.Second, func() bool {
			return eventsIn(t, s, ctx, eg.ID, webhook.DeliveryDelivered) == 5 && eventsIn(t, s, ctx, ce.ID, webhook.DeliveryDelivered) == 5
		})
		secrets := map[string]string{}
		ds, _, _ := webhook.ListDeliveries(ctx, s, eg.ID, webhook.DeliveryFilter{}, store.Page{Limit: 100})
		for _, d := range ds {
			secrets[d.ID] = eg.Secret
		}
		ds, _, _ = webhook.ListDeliveries(ctx, s, ce.ID, webhook.DeliveryFilter{}, store.Page{Limit: 100})
		for _, d := range ds {
			secrets[d.ID] = ce.Secret
		}
		var in bytes.Buffer
		msgs := rcv.messages()
		for _, m := range msgs {
			line, _ := json.Marshal(map[string]string{"secret": secrets[m.ID], "id": m.ID, "timestamp": m.Timestamp,
				"signature": m.Signature, "body": string(m.Body)})
			in.Write(append(line, '\n'))
		}
		// One tampered message must fail.
		tampered, _ := json.Marshal(map[string]string{"secret": secrets[msgs[0].ID], "id": msgs[0].ID, "timestamp": msgs[0].Timestamp,
			"signature": msgs[0].Signature, "body": string(msgs[0].Body) + " "})
		in.Write(append(tampered, '\n'))
		cmd := exec.Command(node, "verify.js")
		cmd.Dir, cmd.Stdin = dir, &in
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node verify.js: %v", err)
		}
		var results []string
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			results = append(results, sc.Text())
		}
		if len(results) != len(msgs)+1 {
			t.Fatalf("verifier answered %d lines for %d messages: %s", len(results), len(msgs)+1, out)
		}
		for i, r := range results[:len(msgs)] {
			if r != "ok" {
				t.Errorf("message %s (%s): %s", msgs[i].ID, msgs[i].Body, r)
			}
		}
		if !strings.HasPrefix(results[len(msgs)], "fail") {
			t.Errorf("tampered message verified: %s", results[len(msgs)])
		}
		var cloud int
		for _, m := range msgs {
			var e webhook.CloudEvent
			if json.Unmarshal(m.Body, &e) == nil && e.SpecVersion == "1.0" && e.Type == "InvoiceIssued" && e.ID != "" {
				cloud++
			}
		}
		if cloud != 5 {
			t.Errorf("%d CloudEvents messages, want 5", cloud)
		}
	})
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// eventsIn counts the events carried by a webhook's deliveries of status
// (any status when empty).
func eventsIn(t *testing.T, s *store.Store, ctx context.Context, webhookID, status string) int {
	t.Helper()
	ds, _, err := webhook.ListDeliveries(ctx, s, webhookID, webhook.DeliveryFilter{Status: status}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range ds {
		n += len(d.EventIDs)
	}
	return n
}

// Stop waits for attempts in flight (up to its context) and records their
// outcome; attempts still running when the context ends are cancelled,
// recorded as failed attempts, and stay Pending for their retry.
func TestStopWaitsForAttemptsInFlight(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		for _, c := range []struct {
			name   string
			wait   time.Duration
			status string
		}{{"finishes", 5 * time.Second, webhook.DeliveryDelivered}, {"times out", 50 * time.Millisecond, webhook.DeliveryPending}} {
			t.Run(c.name, func(t *testing.T) {
				got := make(chan struct{}, 1)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					got <- struct{}{}
					select {
					case <-time.After(500 * time.Millisecond):
					case <-r.Context().Done():
					}
				}))
				defer srv.Close()
				ctx, w := setup(t, s, srv.URL)
				d := webhook.New(webhook.Options{Store: s, Egress: egress.Policy{Private: true}, Timeout: 5 * time.Second})
				d.Start()
				commit(t, s, ctx, 1)
				<-got // the attempt is in flight
				stopCtx, cancel := context.WithTimeout(context.Background(), c.wait)
				defer cancel()
				err := d.Stop(stopCtx)
				if (err == nil) != (c.status == webhook.DeliveryDelivered) {
					t.Fatalf("Stop: %v", err)
				}
				ds, _, _ := webhook.ListDeliveries(ctx, s, w.ID, webhook.DeliveryFilter{}, store.Page{Limit: 10})
				if len(ds) != 1 || ds[0].Status != c.status {
					t.Fatalf("after Stop: %+v, want %s", ds, c.status)
				}
			})
		}
	})
}
