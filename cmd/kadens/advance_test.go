package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// watchWriter keeps what is written and closes a channel once a text
// appears in it: a test waits for a log line as an event.
type watchWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	waits map[string]chan struct{}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for text, ch := range w.waits {
		if bytes.Contains(w.buf.Bytes(), []byte(text)) {
			close(ch)
			delete(w.waits, text)
		}
	}
	return len(p), nil
}

// seen returns a channel closed once text has been written.
func (w *watchWriter) seen(text string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	if bytes.Contains(w.buf.Bytes(), []byte(text)) {
		close(ch)
		return ch
	}
	if w.waits == nil {
		w.waits = map[string]chan struct{}{}
	}
	w.waits[text] = ch
	return ch
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor waits for ch, failing the test with what the servers logged
// after a generous bound (a safety net: the event is what is waited for).
func waitFor(t *testing.T, ch <-chan struct{}, what string, logs ...*watchWriter) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(2 * time.Minute):
		var all []string
		for _, l := range logs {
			all = append(all, l.String())
		}
		t.Fatalf("no %s; the servers logged:\n%s", what, strings.Join(all, "\n---\n"))
	}
}

// TestAdvanceCountsWorkOfAnotherServer: two `kadens serve` on one database
// with a short --engine-lease both get the same test clock advance while a
// third worker holds the tenant. One of them does the work once the lease
// is free, the other waits for it and finds nothing left to do; both answer
// with what was performed (the renewals the database holds), where the one
// that only waited answered renewals: 0 before.
func TestAdvanceCountsWorkOfAnotherServer(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			t.Parallel()
			opts := storetest.Options(t, eng)
			env := map[string]string{"KADENS_DATA_DIR": opts.DataDir, "KADENS_DATABASE_URL": opts.DatabaseURL,
				"KADENS_LOG_LEVEL": "info", "KADENS_ENGINE_LEASE": "1s",
				// One public address for both, as behind a load balancer: a
				// token from either is good at both.
				"KADENS_BASE_URL": "http://kadens.test", "KADENS_IDP_URL": "http://kadens.test/idp"}
			getenv := func(k string) string { return env[k] }
			// The first server migrates the database; the second starts on it.
			serveOne := func() (string, *watchWriter) {
				addr := freeAddr(t)
				logs := &watchWriter{}
				listening := logs.seen("msg=listening")
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- run(ctx, []string{"serve", "--listen", addr}, &bytes.Buffer{}, logs, getenv) }()
				t.Cleanup(func() {
					cancel()
					if err := <-done; err != nil {
						t.Errorf("serve on %s: %v", addr, err)
					}
				})
				select {
				case <-listening:
				case err := <-done:
					done <- err
					t.Fatalf("serve ended: %v\n%s", err, logs.String())
				case <-time.After(2 * time.Minute):
					t.Fatalf("serve did not start:\n%s", logs.String())
				}
				return addr, logs
			}
			addrA, logsA := serveOne()
			addrB, logsB := serveOne()

			out, err := kadens(t, env, "tenant", "create", "--name", "clocks", "--test", "--json")
			if err != nil {
				t.Fatal(err)
			}
			var ten struct{ ID string }
			_ = json.Unmarshal([]byte(out), &ten)
			out, err = kadens(t, env, "client", "create", "--tenant", "clocks", "--json", "--listen", addrA)
			if err != nil {
				t.Fatal(err)
			}
			var cl struct{ ClientID, ClientSecret string }
			_ = json.Unmarshal([]byte(out), &cl)
			tok := token(t, "http://"+addrA+"/idp/oauth/token", cl.ClientID, cl.ClientSecret)
			call := func(addr, method, path string, body, v any) int {
				b, _ := json.Marshal(body)
				req, _ := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(b))
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("S4-TenantId", ten.ID)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("%s %s: %v", method, path, err)
					return 0
				}
				defer resp.Body.Close()
				if v != nil {
					_ = json.NewDecoder(resp.Body).Decode(v)
				}
				return resp.StatusCode
			}
			id := func(path string, body any) string {
				var s string
				if st := call(addrA, "POST", path, body, &s); st != 201 {
					t.Fatalf("POST %s: %d", path, st)
				}
				return s
			}
			if st := call(addrA, "POST", "/testclock/advance", map[string]any{"to": "2027-01-01T00:00:00Z"}, nil); st != 200 {
				t.Fatalf("advance: %d", st)
			}
			sd := seed.NewAPI(t, id)
			org := sd.Organization(seed.Organization{Name: "Org", Country: "NO", Currency: "NOK"})
			prod := sd.Product(seed.Product{Name: "Digital", VATRate: "0"})
			plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month", MinimumDueDays: seed.Days(10)})
			pkg := sd.Package(seed.Package{Name: "Digital", Price: "199", Units: 1, Products: []string{prod}, Plans: []string{plan}})
			const subscriptions = 30
			for i := range subscriptions {
				o := id("/order", map[string]any{"organizationId": org, "templatePackageId": pkg,
					"subscriber": map[string]any{"name": fmt.Sprintf("S%d", i), "country": "NO"}, "requestedStart": "2027-01-01T00:00:00+01:00"})
				if st := call(addrA, "POST", "/order/"+o+"/complete", nil, nil); st != 200 {
					t.Fatalf("complete: %d", st)
				}
			}

			// A third worker holds the tenant, so both advances wait.
			st, err := store.Open(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if ok, err := st.AcquireEngineLease(context.Background(), ten.ID, "the test", time.Now(), time.Now().Add(time.Hour)); err != nil || !ok {
				t.Fatalf("hold the lease: %v %v", ok, err)
			}
			waitingA := logsA.seen("test clock advance waits")
			waitingB := logsB.seen("test clock advance waits")
			type answer struct {
				status int
				stats  map[string]int
			}
			answers := make([]answer, 2)
			var wg sync.WaitGroup
			for i, addr := range []string{addrA, addrB} {
				wg.Go(func() {
					var res struct {
						Stats map[string]int `json:"performed"`
					}
					answers[i].status = call(addr, "POST", "/testclock/advance", map[string]any{"to": "2028-01-01T00:00:00Z"}, &res)
					answers[i].stats = res.Stats
				})
			}
			waitFor(t, waitingA, "wait of server A", logsA, logsB)
			waitFor(t, waitingB, "wait of server B", logsA, logsB)
			if err := st.ReleaseEngineLease(context.Background(), ten.ID, "the test"); err != nil {
				t.Fatal(err)
			}
			wg.Wait()

			renewals := countSubscriptions(t, opts, ten.ID) - subscriptions
			if renewals < subscriptions*11 {
				t.Fatalf("%d renewals in the database; the advance did not run", renewals)
			}
			for i, a := range answers {
				if a.status != 200 || a.stats["renewals"] != renewals {
					t.Errorf("server %c answered %d %v, want renewals: %d (what the database holds)", 'A'+i, a.status, a.stats, renewals)
				}
			}
			if fmt.Sprint(answers[0].stats) != fmt.Sprint(answers[1].stats) {
				t.Errorf("the servers disagree: %v and %v", answers[0].stats, answers[1].stats)
			}
		})
	}
}
