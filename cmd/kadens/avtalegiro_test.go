package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestAvtaleGiroCommands imports a mandate file with `kadens avtalegiro
// import` (twice: the second changes nothing; a broken file names its
// line), creates a claim through the API and writes the claim file with
// `kadens avtalegiro export`.
func TestAvtaleGiroCommands(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e := apitest.Start(t, eng, nil)
			tn := e.Tenant
			if r := tn.Do("POST", "/testclock/advance", map[string]any{"to": "2027-01-04T09:00:00Z"}); r.Status != 200 {
				t.Fatalf("advance: %d", r.Status)
			}
			account := tn.Do("POST", "/avtalegiro/account", map[string]any{"bankAccountNumber": "12345678903", "customerUnitId": "12345678",
				"kidAlgorithm": "MOD10", "kidLength": 15, "baseComboApiEndpointUrl": "https://bank.example"}).ID(t)
			env := map[string]string{"KADENS_DATA_DIR": e.Config.DataDir, "KADENS_DATABASE_URL": e.Config.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			file := "../../internal/avtalegiro/ocrgiro/testdata/mandates.txt"
			out, err := kadens(t, env, "avtalegiro", "import", file, "--tenant", tn.ID)
			if err != nil || !strings.Contains(out, "2 mandates new or changed, 1 deleted") && !strings.Contains(out, "2 mandates new or changed, 0 deleted") {
				t.Fatalf("import: %v\n%s", err, out)
			}
			out, err = kadens(t, env, "avtalegiro", "import", "--tenant", tn.ID, file)
			if err != nil || !strings.Contains(out, "nothing changed") {
				t.Fatalf("import again: %v\n%s", err, out)
			}
			content, _ := os.ReadFile(file)
			broken := filepath.Join(t.TempDir(), "broken.txt")
			_ = os.WriteFile(broken, []byte(strings.Replace(string(content), "J000", "X000", 1)), 0o644)
			if out, err = kadens(t, env, "avtalegiro", "import", broken, "--tenant", tn.ID); err == nil || !strings.Contains(err.Error(), "line 3") {
				t.Fatalf("broken: %v\n%s", err, out)
			}

			var mandates []struct{ ID string }
			tn.Do("GET", "/avtalegiro/mandate?KID=000123400001012", nil).JSON(t, &mandates)
			if len(mandates) != 1 {
				t.Fatalf("mandates: %+v", mandates)
			}
			tn.Do("POST", "/avtalegiro/claim", map[string]any{"mandateId": mandates[0].ID, "amount": 299, "dueDate": "2027-01-15"}).ID(t)
			dst := filepath.Join(t.TempDir(), "claims.txt")
			out, err = kadens(t, env, "avtalegiro", "export", "--tenant", tn.ID, "--account", account, "-o", dst)
			if err != nil || !strings.Contains(out, "1 transactions") {
				t.Fatalf("export: %v\n%s", err, out)
			}
			written, _ := os.ReadFile(dst)
			if !strings.Contains(string(written), "NY2121300000001150127") {
				t.Fatalf("file:\n%s", written)
			}
			out, err = kadens(t, env, "avtalegiro", "export", "--tenant", tn.ID, "--account", account, "-o", dst)
			if err != nil || !strings.Contains(out, "nothing to send") {
				t.Fatalf("export again: %v\n%s", err, out)
			}
		})
	}
}
