package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestKillMidAdvance kills `kadens serve` (SIGKILL) while it advances a
// tenant's clock, starts it again, advances again, and checks that the
// tenant ends in exactly the state of a tenant advanced without
// interruption.
func TestKillMidAdvance(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			opts := storetest.Options(t, eng)
			env := append(os.Environ(), "KADENS_DATA_DIR="+opts.DataDir, "KADENS_DATABASE_URL="+opts.DatabaseURL, "KADENS_LOG_LEVEL=warn", "KADENS_ENGINE_LEASE=2s")
			cli := func(args ...string) []byte {
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("kadens %s: %v", strings.Join(args, " "), err)
				}
				return out
			}
			addr := freeAddr(t)
			// server is a running `kadens serve`; ended yields once it has
			// exited.
			type server struct {
				cmd   *exec.Cmd
				ended chan error
			}
			start := func() server {
				// The server logs "listening" (at info) once its listeners
				// are up.
				cmd := exec.Command(bin, "serve", "--listen", addr, "--log-level", "info")
				cmd.Env = env
				logged := &syncBuffer{}
				cmd.Stderr = logged
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				ended := make(chan error, 1)
				go func() { ended <- cmd.Wait() }()
				logged.waitFor(t, "msg=listening", ended)
				return server{cmd, ended}
			}
			srv := start()
			defer func() { _ = srv.cmd.Process.Kill(); <-srv.ended }()

			type tenant struct{ id, token string }
			newTenant := func(name string) tenant {
				var ten struct{ ID string }
				_ = json.Unmarshal(cli("tenant", "create", "--name", name, "--test", "--json"), &ten)
				var cl struct{ ClientID, ClientSecret string }
				_ = json.Unmarshal(cli("client", "create", "--tenant", name, "--json", "--listen", addr), &cl)
				return tenant{ten.ID, token(t, "http://"+addr+"/idp/oauth/token", cl.ClientID, cl.ClientSecret)}
			}
			call := func(tn tenant, method, path string, body any, v any) int {
				b, _ := json.Marshal(body)
				req, _ := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(b))
				req.Header.Set("Authorization", "Bearer "+tn.token)
				req.Header.Set("S4-TenantId", tn.id)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return 0 // the server was killed
				}
				defer resp.Body.Close()
				data, _ := io.ReadAll(resp.Body)
				if v != nil && json.Unmarshal(data, v) != nil {
					t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
				}
				return resp.StatusCode
			}
			id := func(tn tenant, path string, body any) string {
				var s string
				if st := call(tn, "POST", path, body, &s); st != 201 {
					t.Fatalf("POST %s: %d", path, st)
				}
				return s
			}
			const subscriptions = 150
			setup := func(tn tenant) {
				if st := call(tn, "POST", "/testclock/advance", map[string]any{"to": "2027-01-01T00:00:00Z"}, nil); st != 200 {
					t.Fatalf("advance: %d", st)
				}
				sd := seed.NewAPI(t, func(path string, body any) string { return id(tn, path, body) })
				org := sd.Organization(seed.Organization{Name: "Org", Country: "NO", Currency: "NOK"})
				prod := sd.Product(seed.Product{Name: "Digital", VATRate: "0"})
				plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month", MinimumDueDays: seed.Days(10)})
				pkg := sd.Package(seed.Package{Name: "Digital", Price: "199", Units: 1, Products: []string{prod}, Plans: []string{plan}})
				for i := range subscriptions {
					o := id(tn, "/order", map[string]any{"organizationId": org, "templatePackageId": pkg,
						"subscriber":     map[string]any{"name": fmt.Sprintf("S%d", i), "country": "NO"},
						"requestedStart": fmt.Sprintf("2027-01-%02dT00:00:00+01:00", 1+i%28)})
					if st := call(tn, "POST", "/order/"+o+"/complete", nil, nil); st != 200 {
						t.Fatalf("complete: %d", st)
					}
				}
			}
			snapshot := func(tn tenant) string {
				var subs []struct {
					PeriodStart, PeriodEnd time.Time
					Status                 string
					NextID                 *string `json:"nextSubscriptionId"`
				}
				var lines []string
				path := "/subscription?limit=1000"
				for {
					var page []struct {
						PeriodStart, PeriodEnd time.Time
						Status                 string
						NextID                 *string `json:"nextSubscriptionId"`
					}
					req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
					req.Header.Set("Authorization", "Bearer "+tn.token)
					req.Header.Set("S4-TenantId", tn.id)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					_ = json.NewDecoder(resp.Body).Decode(&page)
					resp.Body.Close()
					subs = append(subs, page...)
					link := resp.Header.Get("Link")
					if link == "" {
						break
					}
					u := strings.TrimSuffix(strings.TrimPrefix(strings.Split(link, ">")[0], "<"), "")
					path = u[strings.Index(u, "/subscription"):]
				}
				for _, s := range subs {
					lines = append(lines, fmt.Sprintf("%s %s %s %v", s.PeriodStart.Format(time.RFC3339), s.PeriodEnd.Format(time.RFC3339), s.Status, s.NextID != nil))
				}
				sort.Strings(lines)
				return strings.Join(lines, "\n")
			}
			to := map[string]any{"to": "2029-01-01T00:00:00Z"}

			whole := newTenant("whole")
			setup(whole)
			if st := call(whole, "POST", "/testclock/advance", to, nil); st != 200 {
				t.Fatalf("uninterrupted advance: %d", st)
			}
			want := snapshot(whole)

			crashed := newTenant("crashed")
			setup(crashed)
			done := make(chan int, 1)
			go func() { done <- call(crashed, "POST", "/testclock/advance", to, nil) }()
			// Kill as soon as the first batches have committed.
			// The advance runs in another process: its commits can only be
			// polled for, until it answers.
			for countSubscriptions(t, opts, crashed.id) <= subscriptions {
				select {
				case st := <-done:
					t.Fatalf("the advance answered (%d) before any of its batches was seen; make it longer", st)
				case <-time.After(5 * time.Millisecond):
				}
			}
			_ = srv.cmd.Process.Signal(syscall.SIGKILL)
			<-srv.ended
			if st := <-done; st != 0 {
				t.Fatalf("the advance finished (%d) before the kill; make it longer", st)
			}
			// The kill must land between batches: some renewals committed,
			// not all.
			partial := countSubscriptions(t, opts, crashed.id)
			if total := strings.Count(want, "\n") + 1; partial <= subscriptions || partial >= total {
				t.Fatalf("%d subscriptions when killed (of %d); the kill did not land mid-advance", partial, total)
			}
			srv = start()
			if st := call(crashed, "POST", "/testclock/advance", to, nil); st != 200 {
				t.Fatalf("advance after the restart: %d", st)
			}
			if got := snapshot(crashed); got != want {
				t.Fatalf("state after a kill and a second advance differs from an uninterrupted run (%d vs %d lines)",
					strings.Count(got, "\n"), strings.Count(want, "\n"))
			}
		})
	}
}

func countSubscriptions(t *testing.T, opts store.Options, tenantID string) int {
	t.Helper()
	st, err := store.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	subs, _, err := st.ListSubscriptions(tenancy.With(context.Background(), tenantID), store.SubscriptionFilter{}, store.Page{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	return len(subs)
}
