package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// user create and list on both engines; the link a create prints sets the
// password, and --password-stdin sets one at once. Not parallel: it
// replaces stdin.
func TestUserCommands(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			opts := storetest.Options(t, eng)
			env := map[string]string{"KADENS_DATA_DIR": opts.DataDir, "KADENS_DATABASE_URL": opts.DatabaseURL, "KADENS_LOG_LEVEL": "warn",
				"KADENS_BASE_URL": "https://billing.avisa.example/"}
			if _, err := kadens(t, env, "tenant", "create", "--name", "avisa"); err != nil {
				t.Fatal(err)
			}
			out, err := kadens(t, env, "user", "create", "--tenant", "avisa", "--email", "Kari@avisa.example", "--role", "admin", "--name", "Kari")
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`(https://billing\.avisa\.example/console/setpassword\?token=\S+)\nexpires (\S+)`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no set-password link and expiry in:\n%s", out)
			}
			link, err := url.Parse(m[1])
			if err != nil {
				t.Fatal(err)
			}

			old := stdin
			stdin = strings.NewReader("a long enough password\n")
			t.Cleanup(func() { stdin = old })
			out, err = kadens(t, env, "user", "create", "--tenant", "avisa", "--email", "ola@avisa.example", "--role", "support",
				"--password-stdin", "--json")
			var created struct{ ID, Email, Role, SetPasswordLink string }
			if err != nil || json.Unmarshal([]byte(out), &created) != nil || created.ID == "" || created.Role != "support" ||
				created.SetPasswordLink != "" {
				t.Fatalf("create --password-stdin --json: %v %s", err, out)
			}

			for _, bad := range [][]string{
				{"--email", "kari@AVISA.example", "--role", "finance"}, // taken, ignoring case
				{"--email", "x@avisa.example", "--role", "root"},
				{"--email", "not an address", "--role", "finance"},
				{"--email", "x@avisa.example"},
			} {
				if _, err := kadens(t, env, append([]string{"user", "create", "--tenant", "avisa"}, bad...)...); err == nil {
					t.Errorf("user create %v succeeded", bad)
				}
			}
			if _, err := kadens(t, env, "user", "create", "--tenant", "nosuch", "--email", "x@avisa.example", "--role", "admin"); err == nil {
				t.Error("a user in no tenant was created")
			}

			out, err = kadens(t, env, "user", "list", "--tenant", "avisa")
			kari := strings.Index(out, "Kari@avisa.example (Kari)  [no password yet]")
			if err != nil || kari < 0 || strings.Index(out, "ola@avisa.example") < kari || strings.Count(out, "\n") != 2 {
				t.Fatalf("list: %v\n%s", err, out)
			}

			// What the commands made works: the link sets Kari's password,
			// and Ola logs in with the one from stdin.
			st, err := store.Open(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ten, err := st.TenantByName(t.Context(), "avisa")
			if err != nil {
				t.Fatal(err)
			}
			dir := staff.New(st, staff.Options{})
			if _, err := dir.UsePasswordLink(t.Context(), link.Query().Get("token"), "kari's new password"); err != nil {
				t.Fatalf("the printed link: %v", err)
			}
			if _, err := dir.Authenticate(t.Context(), ten.ID, "kari@avisa.example", "kari's new password"); err != nil {
				t.Fatal(err)
			}
			if u, err := dir.Authenticate(t.Context(), ten.ID, "ola@avisa.example", "a long enough password"); err != nil || u.ID != created.ID {
				t.Fatalf("the password from stdin: %+v %v", u, err)
			}
			if _, err := dir.Authenticate(t.Context(), ten.ID, "ola@avisa.example", "a long enough password\n"); !errors.Is(err, staff.ErrBadCredentials) {
				t.Fatalf("the line break was kept in the password: %v", err)
			}
		})
	}
}
