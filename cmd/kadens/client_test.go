package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/store/storetest"
)

// client create prints the token URL of the server running on the same
// database (which recorded its public URLs when it started), not one
// derived from the command's own defaults; --idp-url overrides it.
func TestClientCreatePrintsRunningServersTokenURL(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			opts := storetest.Options(t, eng)
			storage := map[string]string{"KADENS_DATA_DIR": opts.DataDir, "KADENS_DATABASE_URL": opts.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			if _, err := kadens(t, storage, "tenant", "create", "--name", "acme"); err != nil {
				t.Fatal(err)
			}
			clientCreate := func(args ...string) (tokenURL, stderr string) {
				t.Helper()
				var out, errOut bytes.Buffer
				err := run(context.Background(), append([]string{"client", "create", "--tenant", "acme", "--json"}, args...), &out, &errOut,
					func(k string) string { return storage[k] })
				var cl struct{ TokenURL string }
				if err != nil || json.Unmarshal(out.Bytes(), &cl) != nil {
					t.Fatalf("client create: %v %q %s", err, out.String(), errOut.String())
				}
				return cl.TokenURL, errOut.String()
			}
			// No server has started: the default, with a warning.
			if u, warn := clientCreate(); u != "http://127.0.0.1:8080/idp/oauth/token" || !strings.Contains(warn, "no server has started") {
				t.Fatalf("before serve: %q, warning %q", u, warn)
			}

			addr := freeAddr(t)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			serveEnv := map[string]string{"KADENS_LISTEN": addr, "KADENS_BASE_URL": "http://" + addr + "/"}
			for k, v := range storage {
				serveEnv[k] = v
			}
			// serve logs "listening" (at info) once its listeners are up.
			serveEnv["KADENS_LOG_LEVEL"] = "info"
			logged := &syncBuffer{}
			go func() {
				done <- run(ctx, []string{"serve"}, io.Discard, logged, func(k string) string { return serveEnv[k] })
			}()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve: %v", err)
				}
			}()
			logged.waitFor(t, "msg=listening", done)
			// The CLI knows nothing of the server's settings, yet prints its URL.
			u, warn := clientCreate()
			if u != "http://"+addr+"/idp/oauth/token" || warn != "" {
				t.Fatalf("beside serve: %q (warning %q), want the server's token url", u, warn)
			}
			resp, err := http.Post(u, "application/x-www-form-urlencoded", strings.NewReader("grant_type=client_credentials"))
			if err != nil {
				t.Fatalf("the printed token url does not work: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized { // reached the token endpoint, which wants credentials
				t.Fatalf("token url answered %d", resp.StatusCode)
			}
			if u, _ := clientCreate("--idp-url", "https://login.example.com"); u != "https://login.example.com/oauth/token" {
				t.Fatalf("with --idp-url: %q", u)
			}
		})
	}
}
