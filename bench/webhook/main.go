// Command webhook measures webhook delivery: it opens a fresh store
// (SQLite in a temporary directory, or a fresh schema of a PostgreSQL
// database), registers a webhook pointing at a local receiver, runs the
// dispatcher as `kadens serve` does, and either commits events at a steady
// rate (commit-to-delivery latency with no backlog) or commits a burst at
// once (saturation throughput). Numbers go to docs/PERFORMANCE.md
// ("Webhooks").
//
//	go run ./bench/webhook -engine sqlite -rate 2500 -duration 20s
//	go run ./bench/webhook -engine postgres -pg 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go run ./bench/webhook -engine sqlite -burst 50000
//
// With -consumer the events go to an outbox consumer (internal/outbox)
// instead of a webhook registration: its handler signs and POSTs each event
// on its own, the like-for-like comparison with River in bench/webhook/river
// (docs/ARCHITECTURE.md, "Events and their consumers").
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/outbox"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/webhook"
)

func main() {
	engine := flag.String("engine", "sqlite", "sqlite or postgres")
	pg := flag.String("pg", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL URL (a fresh schema is created in it and dropped)")
	rate := flag.Int("rate", 2500, "events committed per second in the steady run")
	duration := flag.Duration("duration", 20*time.Second, "length of the steady run")
	tick := flag.Duration("tick", 10*time.Millisecond, "commit interval of the steady run (rate*tick events per commit)")
	burst := flag.Int("burst", 0, "instead of a steady run, commit this many events at once and measure how fast they drain")
	conc := flag.Int("concurrency", 64, "dispatcher attempts in flight")
	batch := flag.Int("batch", 100, "most events per EventGrid message (1: one POST per event)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	consumer := flag.Bool("consumer", false, "deliver through an outbox consumer (one signed POST per event, -concurrency handlers) instead of a webhook registration")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}

	ctx := context.Background()
	st, cleanup := openStore(ctx, *engine, *pg)
	defer cleanup()

	n := *burst
	if n == 0 {
		n = int(float64(*rate) * duration.Seconds())
	}
	rcv := newReceiver(n)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: rcv}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	ten, err := st.CreateTenant(ctx, "bench", false, time.Now())
	check(err)
	tctx := tenancy.With(ctx, ten.ID)
	hookURL := "http://" + ln.Addr().String() + "/hook"
	if !*consumer {
		_, err = webhook.Create(tctx, st, webhook.Webhook{URL: hookURL, EventTypes: []string{"InvoiceIssued"},
			Format: webhook.FormatEventGrid, Secret: webhook.NewSecret(), DisableValidation: true}, nil, time.Now())
		check(err)
	}

	warn := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The webhook dispatcher runs in both modes: it is what relays the
	// outbox in `kadens serve`.
	d := webhook.New(webhook.Options{Store: st, Egress: egress.Policy{Private: true}, Concurrency: *conc, Batch: *batch, Log: warn})
	d.Start()
	defer func() { _ = d.Stop(context.Background()) }()
	if *consumer {
		r := outbox.New(outbox.Options{Store: st, Log: warn})
		check(r.Register(outbox.Consumer{Name: "bench", Kinds: []string{"InvoiceIssued"}, Concurrency: *conc,
			Handle: postEach(hookURL, webhook.NewClient(egress.Policy{Private: true}, *conc))}))
		check(r.Start(ctx))
		defer func() { _ = r.Stop(context.Background()) }()
	}

	fmt.Printf("engine=%s cpus=%d go=%s consumer=%t\n", *engine, runtime.NumCPU(), runtime.Version(), *consumer)
	commitBatch := func(from, count int) {
		evs := make([]store.NewEvent, count)
		for i := range evs {
			evs[i] = store.NewEvent{Type: "InvoiceIssued", Subject: "/bench/" + strconv.Itoa(from+i),
				Data: map[string]string{"invoiceId": store.NewID()}, At: time.Now()}
		}
		check(st.InTx(tctx, func(tx *store.Tx) error { return tx.AddEvents(tctx, evs) }))
		now := time.Now().UnixNano()
		for i := range count {
			rcv.committed[from+i].Store(now)
		}
	}

	start := time.Now()
	if *burst > 0 {
		// Commit everything first (the dispatcher already drains meanwhile),
		// then wait for the rest.
		for i := 0; i < n; i += 500 {
			commitBatch(i, min(500, n-i))
		}
		fmt.Printf("burst: %d events committed in %s\n", n, time.Since(start).Round(time.Millisecond))
	} else {
		// Each tick commits what the rate owes since the start, so a late
		// tick (a busy machine) is made up for and the rate holds.
		t := time.NewTicker(*tick)
		for i := 0; i < n; {
			<-t.C
			owed := min(n, int(float64(*rate)*time.Since(start).Seconds())) - i
			if owed > 0 {
				commitBatch(i, owed)
				i += owed
			}
		}
		t.Stop()
		produced := time.Since(start)
		fmt.Printf("steady: %d events committed over %s (%.0f/s); backlog at the end: %d\n",
			n, produced.Round(time.Millisecond), float64(n)/produced.Seconds(), n-int(rcv.count.Load()))
	}
	deadline := time.Now().Add(5 * time.Minute)
	for rcv.count.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Duration(rcv.last.Load() - start.UnixNano())
	got := rcv.count.Load()
	fmt.Printf("delivered %d/%d events (duplicates %d) in %d POSTs in %s: %.0f events/s, %.0f POSTs/s\n", got, n, rcv.dups.Load(),
		rcv.posts.Load(), elapsed.Round(time.Millisecond), float64(got)/elapsed.Seconds(), float64(rcv.posts.Load())/elapsed.Seconds())
	lat := rcv.latencies()
	if len(lat) > 0 {
		q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		fmt.Printf("commit-to-delivery latency: p50 %s  p90 %s  p99 %s  max %s\n",
			q(0.50).Round(100*time.Microsecond), q(0.90).Round(100*time.Microsecond), q(0.99).Round(100*time.Microsecond), lat[len(lat)-1].Round(time.Millisecond))
	}
	if got < int64(n) {
		os.Exit(1)
	}
}

// postEach is the bench consumer's handler: the event as a one-element
// EventGrid array, signed, POSTed; a non-2xx answer is an error (retried).
func postEach(url string, client *http.Client) outbox.Handler {
	key, err := webhook.SecretKey(webhook.NewSecret())
	check(err)
	return func(ctx context.Context, tenant string, e store.Event) error {
		body, ctype, err := webhook.Encode(webhook.FormatEventGrid, tenant, []store.Event{e})
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		now := time.Now()
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("webhook-id", e.ID)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("webhook-signature", webhook.Sign(key, e.ID, now, body))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("answered %d", resp.StatusCode)
		}
		return nil
	}
}

// receiver counts deliveries and the latency from each event's commit.
type receiver struct {
	committed []atomic.Int64 // unix nanos after the commit, by sequence
	arrived   []atomic.Int64
	count     atomic.Int64
	posts     atomic.Int64
	dups      atomic.Int64
	last      atomic.Int64
}

func newReceiver(n int) *receiver {
	return &receiver{committed: make([]atomic.Int64, n), arrived: make([]atomic.Int64, n)}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now().UnixNano()
	r.posts.Add(1)
	body, _ := io.ReadAll(req.Body)
	var evs []struct {
		Subject string `json:"subject"`
	}
	if json.Unmarshal(body, &evs) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, e := range evs {
		seq, err := strconv.Atoi(strings.TrimPrefix(e.Subject, "/bench/"))
		if err != nil || seq >= len(r.arrived) {
			continue
		}
		if !r.arrived[seq].CompareAndSwap(0, now) {
			r.dups.Add(1)
			continue
		}
		r.count.Add(1)
		r.last.Store(now)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) latencies() []time.Duration {
	var out []time.Duration
	for i := range r.arrived {
		a, c := r.arrived[i].Load(), r.committed[i].Load()
		if a == 0 || c == 0 {
			continue
		}
		// An event can arrive before its commit time was noted (the
		// dispatcher woke before commitBatch stored it): count that as 0.
		out = append(out, time.Duration(max(0, a-c)))
	}
	slices.Sort(out)
	return out
}

func openStore(ctx context.Context, engine, pg string) (*store.Store, func()) {
	quiet := slog.New(slog.DiscardHandler)
	if engine == "sqlite" {
		dir, err := os.MkdirTemp("", "kadens-webhook-bench")
		check(err)
		st, err := store.Open(ctx, store.Options{DataDir: dir})
		check(err)
		check(st.Migrate(ctx, quiet))
		return st, func() { st.Close(); os.RemoveAll(dir) }
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "wb_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", pg)
	check(err)
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	check(err)
	u, err := url.Parse(pg)
	check(err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	st, err := store.Open(ctx, store.Options{DatabaseURL: u.String()})
	check(err)
	check(st.Migrate(ctx, quiet))
	return st, func() {
		st.Close()
		_, _ = admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
