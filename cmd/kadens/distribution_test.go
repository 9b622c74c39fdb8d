package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestDistributionExport: `kadens distribution export` writes the same
// file as GET /distribution/{date}, to stdout and to --out, in each view
// and format; `distribution publish` publishes the day (revision 1, then
// 2); bad input is a usage error that writes no file.
func TestDistributionExport(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			t.Parallel()
			e := apitest.Start(t, eng, nil)
			tn := e.Tenant
			env := map[string]string{"KADENS_DATA_DIR": e.Config.DataDir, "KADENS_DATABASE_URL": e.Config.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			sd := tn.Seed(t)
			org := sd.Organization(seed.Nordavis)
			paper := sd.Product(seed.Product{Name: "Avisa papir", Category: "print", VATRate: "0"})
			plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
			pkg := sd.Package(seed.Package{Name: "Papir", Price: "399.00", Products: []string{paper}, Plans: []string{plan}})
			if r := tn.Do("PUT", "/product/"+paper+"/deliveryschedule", map[string]any{"weekdays": []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}}); r.Status != http.StatusNoContent {
				t.Fatalf("schedule: %d %s", r.Status, r.Body)
			}
			for _, s := range []seed.Subscriber{seed.Kari, {Name: "Ola Nordmann", Email: "ola@example.no", Country: "NO"}} {
				order := tn.Do("POST", "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sd.Subscriber(s)}).ID(t)
				if r := tn.Do("POST", "/order/"+order+"/complete", nil); r.Status != http.StatusOK {
					t.Fatalf("complete: %d %s", r.Status, r.Body)
				}
			}
			oslo, _ := time.LoadLocation("Europe/Oslo")
			day := time.Now().In(oslo).AddDate(0, 0, 1).Format(time.DateOnly)
			for _, q := range []struct {
				view, format string
				lines        int // -1: as many as the API's
			}{{"list", "csv", 3}, {"delta", "jsonl", -1}, {"counts", "csv", 2}} {
				api := tn.Do("GET", "/distribution/"+day+"?view="+q.view+"&format="+q.format, nil)
				if api.Status != http.StatusOK {
					t.Fatalf("GET: %d %s", api.Status, api.Body)
				}
				out, err := kadens(t, env, "distribution", "export", "--tenant", tn.ID, "--date", day, "--view", q.view, "--format", q.format)
				if err != nil || out != string(api.Body) || (q.lines >= 0 && strings.Count(out, "\n") != q.lines) {
					t.Errorf("%s %s: %v\n%q\nwant the API's\n%q", q.view, q.format, err, out, api.Body)
				}
				file := filepath.Join(t.TempDir(), "list")
				if _, err := kadens(t, env, "distribution", "export", "--tenant", tn.ID, "--date", day, "--view", q.view, "--format", q.format, "--out", file); err != nil {
					t.Fatalf("--out: %v", err)
				}
				if raw, _ := os.ReadFile(file); string(raw) != string(api.Body) {
					t.Errorf("%s %s --out:\n%s", q.view, q.format, raw)
				}
			}
			if out, err := kadens(t, env, "distribution", "publish", "--tenant", tn.ID, "--date", day); err != nil || !strings.Contains(out, "(revision 1): 2 copies") {
				t.Errorf("publish: %v %q", err, out)
			}
			if out, err := kadens(t, env, "distribution", "publish", "--tenant", tn.ID, "--date", day, "--json"); err != nil || !strings.Contains(out, `"revision": 2`) {
				t.Errorf("publish again: %v %q", err, out)
			}
			if _, err := kadens(t, env, "distribution", "publish", "--tenant", tn.ID, "--date", "2030-02-30"); err == nil {
				t.Error("publish of a bad date accepted")
			}
			bad := filepath.Join(t.TempDir(), "bad")
			for _, args := range [][]string{{"--date", "2030-02-30"}, {"--date", day, "--view", "all"}, {"--date", day, "--format", "xml"}, {}} {
				if _, err := kadens(t, env, append([]string{"distribution", "export", "--tenant", tn.ID, "--out", bad}, args...)...); err == nil {
					t.Errorf("export %v accepted", args)
				}
			}
			if _, err := os.Stat(bad); !os.IsNotExist(err) {
				t.Errorf("a refused export wrote %s", bad)
			}
		})
	}
}
