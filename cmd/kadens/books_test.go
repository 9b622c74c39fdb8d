package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestBooksCommands: the example chart installed by `kadens books chart`,
// an order's invoice posted by the running server's consumer, then
// `books recognize` (twice: the rerun moves nothing), `books reconcile`
// (zero), `books csv` and `saft export` writing the file under its
// Norwegian name; bad input is a usage error.
func TestBooksCommands(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e := apitest.Start(t, eng, nil)
			tn := e.Tenant
			env := map[string]string{"KADENS_DATA_DIR": e.Config.DataDir, "KADENS_DATABASE_URL": e.Config.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			sd := tn.Seed(t)
			org := sd.Organization(seed.Nordavis)
			if out, err := kadens(t, env, "books", "chart", "--tenant", tn.ID, "--org", org, "--example", "NO"); err != nil || !strings.Contains(out, "installed") {
				t.Fatalf("chart: %v\n%s", err, out)
			}
			if _, err := kadens(t, env, "books", "chart", "--tenant", tn.ID, "--org", org, "--example", "DK"); err == nil {
				t.Fatal("example DK accepted")
			}
			product := sd.Product(seed.Product{Name: "Nordavis Digital", Category: "digital", VATRate: "0"})
			plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
			pkg := sd.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{product}, Plans: []string{plan}})
			sub := sd.Subscriber(seed.Kari)
			order := tn.Do("POST", "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sub}).ID(t)
			if r := tn.Do("POST", "/order/"+order+"/complete", nil); r.Status != http.StatusOK {
				t.Fatalf("complete: %d %s", r.Status, r.Body)
			}
			// The server's consumer posts after the order's commit.
			for i := 0; ; i++ {
				_, err := kadens(t, env, "books", "reconcile", "--tenant", tn.ID, "--org", org)
				if err == nil {
					break
				}
				if i == 50 {
					t.Fatalf("reconcile: %v", err)
				}
			}
			if out, err := kadens(t, env, "books", "recognize", "--tenant", tn.ID, "--org", org, "--through", "2099-12-31"); err != nil ||
				strings.Contains(out, "recognised 0 ") {
				t.Fatalf("recognize: %v\n%s", err, out)
			}
			if out, err := kadens(t, env, "books", "recognize", "--tenant", tn.ID, "--org", org, "--through", "2099-12-31"); err != nil ||
				!strings.Contains(out, "recognised 0 ") {
				t.Fatalf("recognize again: %v\n%s", err, out)
			}
			if out, err := kadens(t, env, "books", "csv", "--tenant", tn.ID, "--org", org); err != nil || !strings.Contains(out, "RECOG,1,") {
				t.Fatalf("csv: %v\n%s", err, out)
			}
			dir := t.TempDir()
			if out, err := kadens(t, env, "saft", "export", "--tenant", tn.ID, "--org", org, "--from", "2000-01-01", "--to", "2099-12-31", "--dir", dir); err != nil {
				t.Fatalf("saft: %v\n%s", err, out)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "SAF-T Financial_923609016_*_1_1.xml"))
			if len(files) != 1 {
				t.Fatalf("files %v", files)
			}
			if raw, _ := os.ReadFile(files[0]); !strings.Contains(string(raw), "<NumberOfEntries>2</NumberOfEntries>") {
				t.Errorf("saft file:\n%s", raw)
			}
			if _, err := kadens(t, env, "saft", "export", "--tenant", tn.ID, "--org", org); err == nil {
				t.Error("saft export without dates accepted")
			}
		})
	}
}
