package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestAutogiroCommands: `kadens autogiro export` writes the file the API
// would, `kadens autogiro import` applies a mandate advice, and the same
// file again changes nothing.
func TestAutogiroCommands(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e := apitest.Start(t, eng, nil)
			tn := e.Tenant
			post := func(path string, body any) string {
				t.Helper()
				r := tn.Do("POST", path, body)
				if r.Status != 201 {
					t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
				}
				return r.ID(t)
			}
			org := post("/organization", map[string]any{"name": "Nordavis AB", "country": "SE", "currency": "SEK", "timeZone": "Europe/Stockholm"})
			account := post("/autogiro/account", map[string]any{"organizationId": org, "bankgiroCustomerNumber": "543210", "bankgiroNumber": "5432-1096"})
			sub := post("/subscriber", map[string]any{"name": "Tolvan"})
			mandate := post("/autogiro/mandate", map[string]any{"accountId": account, "subscriberId": sub, "payerNumber": "1001",
				"clearingNumber": "3300", "bankAccountNumber": "121212-1212", "payerId": "19121212-1212"})

			env := map[string]string{"KADENS_DATA_DIR": e.Config.DataDir, "KADENS_DATABASE_URL": e.Config.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			dir := t.TempDir()
			file := filepath.Join(dir, "out.txt")
			out, err := kadens(t, env, "autogiro", "export", "--tenant", tn.ID, "--organization", org, "-o", file)
			if err != nil || !strings.Contains(out, "1 new mandates") {
				t.Fatalf("export: %v\n%s", err, out)
			}
			b, err := os.ReadFile(file)
			if err != nil || len(b) != 2*82 || !strings.Contains(string(b), "04005432109600000000000010013300001212121212191212121212") {
				t.Fatalf("file %q %v", b, err)
			}
			if _, err := kadens(t, env, "autogiro", "export", "--tenant", tn.ID, "--organization", org, "-o", file); err == nil ||
				!strings.Contains(err.Error(), "nothing is pending") {
				t.Fatalf("second export: %v", err)
			}
			if _, err := kadens(t, env, "autogiro", "export", "--organization", org); err == nil {
				t.Fatal("export without --tenant passed")
			}

			advice, err := os.ReadFile("../../internal/autogiro/testdata/mandate-advice.txt")
			if err != nil {
				t.Fatal(err)
			}
			report := filepath.Join(dir, "medavi.txt")
			if err := os.WriteFile(report, advice, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err = kadens(t, env, "autogiro", "import", report, "--tenant", tn.ID)
			if err != nil || !strings.Contains(out, "mandates 1 active") {
				t.Fatalf("import: %v\n%s", err, out)
			}
			var m struct{ Status string }
			tn.Do("GET", "/autogiro/mandate/"+mandate, nil).JSON(t, &m)
			if m.Status != "Active" {
				t.Fatalf("mandate %s after import", m.Status)
			}
			out, err = kadens(t, env, "autogiro", "import", "--tenant", "tenant-a", report)
			if err != nil || !strings.Contains(out, "imported before") {
				t.Fatalf("repeated import: %v\n%s", err, out)
			}
			bad := filepath.Join(dir, "bad.txt")
			if err := os.WriteFile(bad, []byte(strings.Replace(string(advice), "092026112599000000004", "092026112599000000005", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := kadens(t, env, "autogiro", "import", "--tenant", tn.ID, bad); err == nil || !strings.Contains(err.Error(), "line 6") {
				t.Fatalf("bad import: %v", err)
			}
		})
	}
}
