package analytics_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/nodetest"
	"github.com/kadens/kadens/internal/seed"
)

// nodeClients finds node and the installed client packages of
// testdata/odataclient, or skips when they are absent outside CI (.ci/run
// runs npm ci there and sets KADENS_TEST_REQUIRE_NODE, so there it never
// skips).
func nodeClients(t *testing.T) (node, dir string) {
	t.Helper()
	return nodetest.Find(t, filepath.Join("testdata", "odataclient"), "odata-query", "@odata/client")
}

// clientPeople are the subscribers the client test expects (its own list,
// so that other tests' fixtures can change).
var clientPeople = []seed.Subscriber{
	{Name: "Kari Nordmann", Email: "kari@example.no", Country: "NO"},
	{Name: "Ola Nordmann", Email: "ola@example.no", Country: "NO"},
	{Name: "Sven Svensson", Email: "sven@example.se", Country: "SE"},
	{Name: "Mette Hansen", Email: "mette@example.dk", Country: "DK"},
	{Name: "O'Brien", Email: "ob@example.ie", Country: "IE"},
}

// Real OData client libraries against a running Kadens: npm odata-query
// builds a URL for every query option, npm @odata/client sends it, parses
// the answer and follows @odata.nextLink (testdata/odataclient/run.js);
// the results are checked here, on both engines.
func TestODataClientLibraries(t *testing.T) {
	node, dir := nodeClients(t)
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		seedTenant(t, e.Tenant, clientPeople)
		billy := bill(t, e.Tenant, "Billy")
		// Another tenant's rows must not show in any answer.
		other := e.NewTenant("other", false)
		seedTenant(t, other, clientPeople)

		cmd := exec.Command(node, "run.js", e.URL+"/analytics/", e.Tenant.Token, e.Tenant.ID)
		cmd.Dir = dir
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run.js: %v\n%s", err, out)
		}
		var res map[string]struct {
			URL   string            `json:"url"`
			Pages []json.RawMessage `json:"pages"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("run.js output: %v\n%s", err, out)
		}
		type pageT struct {
			Count    *int64           `json:"@odata.count"`
			Value    []map[string]any `json:"value"`
			NextLink string           `json:"@odata.nextLink"`
			Error    any              `json:"error"`
		}
		pages := func(name string) []pageT {
			t.Helper()
			r, ok := res[name]
			if !ok {
				t.Fatalf("case %s: no result", name)
			}
			var ps []pageT
			for _, raw := range r.Pages {
				var p pageT
				if err := json.Unmarshal(raw, &p); err != nil {
					t.Fatalf("%s (%s): %v: %s", name, r.URL, err, raw)
				}
				if p.Error != nil {
					t.Fatalf("%s (%s): error %v", name, r.URL, p.Error)
				}
				ps = append(ps, p)
			}
			return ps
		}
		col := func(name, prop string) []string {
			t.Helper()
			var out []string
			for _, p := range pages(name) {
				for _, v := range p.Value {
					out = append(out, fmt.Sprint(v[prop]))
				}
			}
			return out
		}
		check := func(name string, got, want []string) {
			t.Helper()
			if !slices.Equal(got, want) {
				t.Errorf("%s (%s): got %q, want %q", name, res[name].URL, got, want)
			}
		}
		all := []string{"Billy", "Kari Nordmann", "Mette Hansen", "O'Brien", "Ola Nordmann", "Sven Svensson"}

		check("andInNot", col("andInNot", "Name"), []string{"Sven Svensson", "Billy", "Kari Nordmann"})
		check("orContainsTolowerEndswith", col("orContainsTolowerEndswith", "Name"), []string{"Kari Nordmann", "Mette Hansen", "Ola Nordmann"})
		if p := pages("dateFunctions"); p[0].Count == nil || *p[0].Count != int64(len(all)) || len(p[0].Value) != 2 {
			t.Errorf("dateFunctions (%s): count %v, %d rows; want %d, 2", res["dateFunctions"].URL, deref(p[0].Count), len(p[0].Value), len(all))
		}
		if p := pages("nullComparison"); p[0].Count == nil || *p[0].Count != int64(len(all)) {
			t.Errorf("nullComparison (%s): count %v, want %d", res["nullComparison"].URL, deref(p[0].Count), len(all))
		}
		check("quoteInLiteral", col("quoteInLiteral", "Email"), []string{"ob@example.ie"})
		check("topSkip", col("topSkip", "Name"), all[1:3])

		// Billy's two series, with every period's invoices nested.
		ex := pages("expandNested")[0].Value
		if len(ex) != 1 {
			t.Fatalf("expandNested (%s): %d subscribers", res["expandNested"].URL, len(ex))
		}
		subs, _ := ex[0]["Subscriptions"].([]any)
		invoices := 0
		var starts []string
		for _, s := range subs {
			m := s.(map[string]any)
			starts = append(starts, fmt.Sprint(m["PeriodStart"]))
			invs, ok := m["Invoices"].([]any)
			if !ok {
				t.Fatalf("expandNested: a subscription without Invoices: %v", m)
			}
			invoices += len(invs)
		}
		if len(subs) < len(billy.subscriptions) || invoices == 0 || !sort.IsSorted(sort.Reverse(sort.StringSlice(starts))) {
			t.Errorf("expandNested (%s): %d subscriptions (starts %v), %d invoices", res["expandNested"].URL, len(subs), starts, invoices)
		}

		// /$count answers text/plain; the client hands it over as it is.
		var n any
		if err := json.Unmarshal(res["countPath"].Pages[0], &n); err != nil || fmt.Sprint(n) != "3" {
			t.Errorf("countPath (%s): %s, want 3", res["countPath"].URL, res["countPath"].Pages[0])
		}
		countries := col("applyGroupBy", "Country")
		sort.Strings(countries)
		check("applyGroupBy", countries, []string{"DK", "IE", "NO", "SE"})
		if total := col("applyAggregate", "Total"); len(total) != 1 || total[0] == "0" || total[0] == "<nil>" {
			t.Errorf("applyAggregate (%s): %v", res["applyAggregate"].URL, total)
		}
		if ps := pages("paging"); len(ps) != 3 {
			t.Errorf("paging: %d pages, want 3 of 2", len(ps))
		}
		check("paging", col("paging", "Name"), all)
	})
}

func deref(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}
