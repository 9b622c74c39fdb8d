package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine;
// the reader can wait for what the writer prints (waitFor).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// written is closed (and forgotten) by the next Write.
	written chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor returns once the buffer holds substr. If ended yields first (the
// command that writes has returned), the test fails with what was
// written; the value is put back for whoever waits on ended next. There is
// no deadline: a command that hangs is go test's -timeout to report, with
// every goroutine's stack.
func (s *syncBuffer) waitFor(t *testing.T, substr string, ended chan error) {
	t.Helper()
	if ok, err := s.until(substr, ended); !ok {
		t.Fatalf("ended (%v) before writing %q:\n%s", err, substr, s.String())
	}
}

// until is waitFor for any goroutine: false (with ended's value, put
// back) if ended yields before the buffer holds substr.
func (s *syncBuffer) until(substr string, ended chan error) (bool, error) {
	for {
		s.mu.Lock()
		found := strings.Contains(s.b.String(), substr)
		if s.written == nil {
			s.written = make(chan struct{})
		}
		written := s.written
		s.mu.Unlock()
		if found {
			return true, nil
		}
		select {
		case <-written:
		case err := <-ended:
			ended <- err
			return false, err
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// kadens runs the command line with env as its environment.
func kadens(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut, func(k string) string { return env[k] })
	if err != nil {
		t.Logf("kadens %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), err
}

func TestVersion(t *testing.T) {
	out, err := kadens(t, nil, "version")
	if err != nil || !strings.HasPrefix(out, "kadens ") {
		t.Fatalf("version: %q %v", out, err)
	}
}

func TestUnknownCommand(t *testing.T) {
	if _, err := kadens(t, nil, "frobnicate"); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("want unknown command error, got %v", err)
	}
	if _, err := kadens(t, nil, "tenant", "create"); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Fatalf("tenant create without name: %v", err)
	}
}

// TestServeDemoAndOperatorCommands runs `kadens serve --demo`, follows the
// printed instructions, and creates a tenant and client with the CLI while
// the server runs, on every engine.
func TestServeDemoAndOperatorCommands(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			opts := storetest.Options(t, eng)
			addr := freeAddr(t)
			env := map[string]string{"KADENS_DATA_DIR": opts.DataDir, "KADENS_DATABASE_URL": opts.DatabaseURL,
				"KADENS_LISTEN": addr, "KADENS_LOG_LEVEL": "warn"}
			ctx, cancel := context.WithCancel(context.Background())
			out := &syncBuffer{}
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, []string{"serve", "--demo"}, out, io.Discard, func(k string) string { return env[k] })
			}()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve: %v", err)
				}
			}()
			// The instructions come once the listeners are up.
			out.waitFor(t, "API reference", done)
			printed := out.String()
			if !strings.Contains(printed, "effective configuration") || !regexp.MustCompile(`(?m)^  listen +`+regexp.QuoteMeta(addr)+`$`).MatchString(printed) {
				t.Errorf("effective configuration not printed:\n%s", printed)
			}
			m := regexp.MustCompile(`curl -s -u '([^:]+):([^']+)' -d grant_type=client_credentials (\S+)`).FindStringSubmatch(printed)
			tm := regexp.MustCompile(`S4-TenantId: ([0-9a-f-]{36})`).FindStringSubmatch(printed)
			if m == nil || tm == nil {
				t.Fatalf("instructions lack the curl commands:\n%s", printed)
			}
			tok := token(t, m[3], m[1], m[2])
			var orgs []map[string]any
			getJSON(t, "http://"+addr+"/organization", tok, tm[1], &orgs)
			if len(orgs) != 1 || orgs[0]["name"] == "" {
				t.Fatalf("demo organizations: %v", orgs)
			}

			// Operator commands against the same database while serve runs.
			tout, err := kadens(t, env, "tenant", "create", "--name", "acme", "--json")
			if err != nil {
				t.Fatal(err)
			}
			var ten struct{ ID string }
			if err := json.Unmarshal([]byte(tout), &ten); err != nil || !store.ValidID(ten.ID) {
				t.Fatalf("tenant create --json printed %q", tout)
			}
			if _, err := kadens(t, env, "tenant", "create", "--name", "acme"); err == nil {
				t.Fatal("duplicate tenant name accepted")
			}
			cout, err := kadens(t, env, "client", "create", "--tenant", "acme", "--json")
			if err != nil {
				t.Fatal(err)
			}
			var cl struct{ ClientID, ClientSecret, TokenURL string }
			if err := json.Unmarshal([]byte(cout), &cl); err != nil || cl.ClientSecret == "" || cl.TokenURL != "http://"+addr+"/idp/oauth/token" {
				t.Fatalf("client create --json printed %q", cout)
			}
			acme := token(t, cl.TokenURL, cl.ClientID, cl.ClientSecret)
			getJSON(t, "http://"+addr+"/organization", acme, ten.ID, &orgs)
			if len(orgs) != 0 {
				t.Fatalf("new tenant sees %d organizations", len(orgs))
			}
			if _, err := kadens(t, env, "key", "rotate"); err != nil {
				t.Fatal(err)
			}
			again, err := kadens(t, env, "migrate")
			if err != nil || !strings.Contains(again, "up to date") {
				t.Fatalf("migrate: %q %v", again, err)
			}
		})
	}
}

func token(t *testing.T, tokenURL, id, secret string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", tokenURL, strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return body.AccessToken
}

func getJSON(t *testing.T, u, tok, tenant string, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("S4-TenantId", tenant)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
