package server_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/config"
	"github.com/kadens/kadens/internal/server"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestOperationalEndpoints(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		if st, body := get(t, e.URL+"/healthz"); st != 200 || !strings.Contains(body, "ok") {
			t.Fatalf("/healthz: %d %s", st, body)
		}
		if st, body := get(t, e.URL+"/readyz"); st != 200 {
			t.Fatalf("/readyz: %d %s", st, body)
		}
		e.Do("GET", "/organization/"+store.NewID(), nil)
		// Providers' callbacks are mounted beside the API (none of today's
		// providers takes one: 404, counted under the callback route).
		res, err := http.Post(e.URL+"/provider/Autogiro/callback/"+e.Tenant.ID, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("callback of a provider without one: %d", res.StatusCode)
		}
		st, metrics := get(t, e.URL+"/metrics")
		if st != 200 {
			t.Fatalf("/metrics: %d", st)
		}
		for _, want := range []string{
			`kadens_http_requests_total{method="GET",route="GET /organization/{id}",status="404",surface="api"} 1`,
			`kadens_http_request_duration_seconds_bucket{method="GET",route="GET /organization/{id}",surface="api"`,
			`kadens_http_requests_total{method="POST",route="POST /provider/{type}/callback/{tenantId}",status="404",surface="ops"} 1`,
			`go_sql_open_connections{db_name="write"}`,
			`kadens_outbox_pending{consumer="webhook"} 0`,
			`kadens_outbox_unrelayed_events 0`,
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		// Once the database is gone the process is alive but not ready.
		e.Store.Close()
		if st, _ := get(t, e.URL+"/readyz"); st != http.StatusServiceUnavailable {
			t.Fatalf("/readyz without database: %d", st)
		}
		if st, _ := get(t, e.URL+"/healthz"); st != 200 {
			t.Fatalf("/healthz without database: %d", st)
		}
	})
}

func newConfig(t *testing.T, vars map[string]string) *config.Config {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	cfg := config.Register(fs, func(k string) string { return vars[k] })
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestSeparateIdPListener(t *testing.T) {
	opts := storetest.Options(t, store.SQLite)
	cfg := newConfig(t, map[string]string{
		"KADENS_LISTEN": "127.0.0.1:0", "KADENS_IDP_LISTEN": "127.0.0.1:0", "KADENS_DATA_DIR": opts.DataDir,
		"KADENS_IDP_URL": "https://login.kadens.test",
	})
	srv, err := server.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	st, body := get(t, "http://"+srv.Addrs["idp"]+"/.well-known/openid-configuration")
	if st != 200 || !strings.Contains(body, `"issuer":"https://login.kadens.test"`) {
		t.Fatalf("idp on its own listener: %d %s", st, body)
	}
	if st, _ := get(t, "http://"+srv.Addrs["main"]+"/idp/.well-known/openid-configuration"); st != 404 {
		t.Fatalf("idp still mounted on the main listener: %d", st)
	}
	// The main page links the identity provider where it is.
	if st, page := get(t, "http://"+srv.Addrs["main"]+"/"); st != 200 ||
		!strings.Contains(page, `href="https://login.kadens.test/.well-known/openid-configuration"`) {
		t.Fatalf("/ does not link the separate identity provider: %d\n%s", st, page)
	}
}

// TestGracefulShutdownDrainsRequests shows that a request in flight when
// shutdown begins still gets its answer. The client speaks HTTP/1.1 on a
// bare connection so that each step waits on what the server did: its
// "100 Continue" says the handler is reading the body, a refused dial says
// shutdown has closed the listener; only then does the rest of the body go.
func TestGracefulShutdownDrainsRequests(t *testing.T) {
	e := apitest.Start(t, store.SQLite, nil)
	u, err := url.Parse(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"Slow AS","country":"NO","currency":"NOK"}`
	fmt.Fprintf(conn, "POST /organization HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nS4-TenantId: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		u.Host, e.Tenant.Token, e.Tenant.ID, len(body))
	br := bufio.NewReader(conn)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("before the body: %q %v, want 100 Continue", line, err)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line after the interim response
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Server.Shutdown() }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			break // the listener is closed: shutdown has begun
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts 10 s after shutdown began")
		}
		runtime.Gosched()
	}
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("in-flight request: %v", err)
	}
	resp.Body.Close()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("in-flight request got %d, want 201", resp.StatusCode)
	}
}
