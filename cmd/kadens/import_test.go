package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestImportCommand runs `kadens import` on the documented example files
// (testdata/import, the template id filled in): a dry run that changes
// nothing, the import, a rerun that reports everything unchanged, the
// imported subscriptions read through the API, and a broken file whose
// problems name file, line and column.
func TestImportCommand(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e := apitest.Start(t, eng, nil)
			tn := e.Tenant
			if r := tn.Do("POST", "/testclock/advance", map[string]any{"to": "2027-03-10T09:00:00Z"}); r.Status != 200 {
				t.Fatalf("advance: %d", r.Status)
			}
			w := tn.Seed(t)
			w.Organization(seed.Nordavis)
			prod := w.Product(seed.Product{Name: "Digital", Category: "digital", VATRate: "25"})
			plan := w.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
			digital := w.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{prod}, Plans: []string{plan}, MinUnits: 1, MaxUnits: 3})
			env := map[string]string{"KADENS_DATA_DIR": e.Config.DataDir, "KADENS_DATABASE_URL": e.Config.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			dir := t.TempDir()
			for _, name := range []string{"tenant.jsonl", "tenant.csv"} {
				b, err := os.ReadFile(filepath.Join("../../testdata/import", name))
				if err != nil {
					t.Fatal(err)
				}
				_ = os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(string(b), "TEMPLATE_DIGITAL", digital)), 0o600)
			}
			jsonl, csv := filepath.Join(dir, "tenant.jsonl"), filepath.Join(dir, "tenant.csv")

			out, err := kadens(t, env, "import", "--tenant", tn.ID, "--dry-run", jsonl)
			if err != nil || !strings.Contains(out, "dry run (nothing changed)") || !strings.Contains(out, "subscriptions: 2 created") {
				t.Fatalf("dry run: %v\n%s", err, out)
			}
			var subs []map[string]any
			tn.Do("GET", "/subscription", nil).JSON(t, &subs)
			if len(subs) != 0 {
				t.Fatalf("the dry run wrote %d subscriptions", len(subs))
			}
			out, err = kadens(t, env, "import", "--tenant", tn.ID, jsonl)
			if err != nil || !strings.Contains(out, "subscribers: 3 created") || !strings.Contains(out, "payment agreements: 1 created") {
				t.Fatalf("import: %v\n%s", err, out)
			}
			out, err = kadens(t, env, "import", "--tenant", tn.ID, "--json", jsonl)
			var rep struct {
				Subscribers, Subscriptions struct{ Created, Unchanged int }
			}
			if err != nil || json.Unmarshal([]byte(out), &rep) != nil || rep.Subscribers.Unchanged != 3 || rep.Subscriptions.Unchanged != 2 || rep.Subscriptions.Created != 0 {
				t.Fatalf("rerun: %v\n%s", err, out)
			}
			tn.Do("GET", "/subscription", nil).JSON(t, &subs)
			if len(subs) != 2 {
				t.Fatalf("%d subscriptions after the import", len(subs))
			}
			for _, s := range subs {
				if s["periodEnd"] != "2027-03-30T22:00:00Z" && s["periodEnd"] != "2027-03-31T22:00:00Z" {
					t.Errorf("imported period %v–%v", s["periodStart"], s["periodEnd"])
				}
			}
			// The CSV file is the same tenant with one more subscription
			// on a second agreement: that is what it adds.
			out, err = kadens(t, env, "import", "--tenant", tn.ID, csv)
			if err != nil || !strings.Contains(out, "subscriptions: 1 created, 0 updated, 2 unchanged") || !strings.Contains(out, "subscribers: 0 created, 0 updated, 3 unchanged") {
				t.Fatalf("csv: %v\n%s", err, out)
			}

			broken := filepath.Join(dir, "broken.csv")
			_ = os.WriteFile(broken, []byte("subscriberExternalId,name,subscriptionSourceId,templatePackageId,periodStart,periodEnd\nC-9,Nils,SUB-9,"+digital+",2027-03-01,2027-13-01\n"), 0o600)
			out, err = kadens(t, env, "import", "--tenant", tn.ID, broken)
			if err == nil || !strings.Contains(out, "broken.csv:2: periodEnd: ") {
				t.Fatalf("broken: %v\n%s", err, out)
			}
		})
	}
}
