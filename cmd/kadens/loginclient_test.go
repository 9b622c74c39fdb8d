package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/store/storetest"
)

// login-client create, list and delete on both engines.
func TestLoginClientCommands(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			opts := storetest.Options(t, eng)
			env := map[string]string{"KADENS_DATA_DIR": opts.DataDir, "KADENS_DATABASE_URL": opts.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			if _, err := kadens(t, env, "tenant", "create", "--name", "avisa"); err != nil {
				t.Fatal(err)
			}
			out, err := kadens(t, env, "login-client", "create", "--tenant", "avisa", "--name", "web", "--redirect-uri",
				"https://avisa.example/cb", "--redirect-uri", "https://app.avisa.example/cb", "--logout-uri", "https://avisa.example/", "--json")
			var c struct{ ClientID, ClientSecret, Connection string }
			if err != nil || json.Unmarshal([]byte(out), &c) != nil || c.ClientSecret == "" || c.Connection != "avisa" {
				t.Fatalf("create: %v %s", err, out)
			}
			if _, err := kadens(t, env, "login-client", "create", "--tenant", "avisa", "--name", "bad", "--redirect-uri", "ftp://x"); err == nil {
				t.Fatal("a bad redirect address was accepted")
			}
			if out, err := kadens(t, env, "login-client", "list", "--tenant", "avisa"); err != nil || !strings.Contains(out, c.ClientID) ||
				!strings.Contains(out, "https://app.avisa.example/cb") {
				t.Fatalf("list: %v %s", err, out)
			}
			if _, err := kadens(t, env, "login-client", "delete", "--tenant", "avisa", "--id", c.ClientID); err != nil {
				t.Fatal(err)
			}
			if out, _ := kadens(t, env, "login-client", "list", "--tenant", "avisa"); strings.Contains(out, c.ClientID) {
				t.Fatalf("still listed after delete: %s", out)
			}
			if _, err := kadens(t, env, "login-client", "delete", "--tenant", "avisa", "--id", c.ClientID); err == nil {
				t.Fatal("deleting twice succeeded")
			}
		})
	}
}
