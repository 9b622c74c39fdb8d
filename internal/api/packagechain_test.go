package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

// introChain creates the contract's intro offer: three template packages
// (99, 149 and 199 NOK a month) and the chain through them, all from
// bodies written with the contract's field names.
func introChain(t *testing.T, e *apitest.Env, c *apiCatalog) (p99, p149, p199, chain string) {
	t.Helper()
	p99 = create(t, e.Tenant, "/package", contractPackage("Digital intro", "99.00", c.digital, c.monthly))
	p149 = create(t, e.Tenant, "/package", contractPackage("Digital intro, step 2", "149.00", c.digital, c.monthly))
	p199 = create(t, e.Tenant, "/package", contractPackage("Digital", "199.00", c.digital, c.monthly))
	chain = create(t, e.Tenant, "/packagechain", fmt.Sprintf(`{
  "name": "Intro offer",
  "description": "1 month at 99, then 3 months at 149, then 199/month",
  "packageChain": {
    "steps": [
      {"step": 1, "nextPackageId": %q},
      {"step": 2, "nextPackageId": %q, "periods": 3},
      {"step": 3, "nextPackageId": %q}
    ]
  }
}`, p99, p149, p199))
	return
}

func TestIntroChainContractBodies(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		p99, p149, p199, chain := introChain(t, e, c)
		r := e.Do("GET", "/packagechain/"+chain, nil)
		m := jsonMap(t, r)
		wantSteps := fmt.Sprintf(`{"steps":[{"nextPackageId":%q,"periods":1,"step":1},{"nextPackageId":%q,"periods":3,"step":2},{"nextPackageId":%q,"periods":1,"step":3}]}`, p99, p149, p199)
		if m["id"] != chain || m["name"] != "Intro offer" || m["description"] != "1 month at 99, then 3 months at 149, then 199/month" ||
			canon(t, m["packageChain"]) != wantSteps {
			t.Fatalf("read back %s", r.Body)
		}
		// The contract's step fields alone (no periods) are accepted too,
		// in any order.
		bare := create(t, e.Tenant, "/packagechain", fmt.Sprintf(`{"name": "Bare", "description": "", "packageChain": {"steps": [
			{"step": 2, "nextPackageId": %q}, {"step": 1, "nextPackageId": %q}]}}`, p199, p99))
		if got := canon(t, jsonMap(t, e.Do("GET", "/packagechain/"+bare, nil))["packageChain"]); got != fmt.Sprintf(`{"steps":[{"nextPackageId":%q,"periods":1,"step":1},{"nextPackageId":%q,"periods":1,"step":2}]}`, p99, p199) {
			t.Errorf("bare chain: %s", got)
		}

		// Link the entry templates to the chain; ordering one starts on its step.
		link := func(id, name, price string) {
			t.Helper()
			body := strings.Replace(contractPackage(name, price, c.digital, c.monthly), `"packageChainId": null`, `"packageChainId": "`+chain+`"`, 1)
			if r := e.Do("PUT", "/package/"+id, body); r.Status != http.StatusNoContent {
				t.Fatalf("link %s: %d %s", name, r.Status, r.Body)
			}
		}
		link(p99, "Digital intro", "99.00")
		link(p149, "Digital intro, step 2", "149.00")
		if got := jsonMap(t, e.Do("GET", "/package/"+p99, nil))["packageChainId"]; got != chain {
			t.Errorf("packageChainId read back %v", got)
		}
		tests := []struct {
			id, total, periods string
			step               string
		}{
			{p99, "99.00", "1", "1"},
			{p149, "149.00", "3", "2"},
		}
		for _, tt := range tests {
			m := jsonMap(t, e.Do("POST", "/package/"+tt.id+"/preview", nil))
			if m["subscriptionPackageChainId"] != chain || canon(t, m["chainStepOrder"]) != tt.step ||
				canon(t, m["chainStepPeriods"]) != tt.periods || canon(t, m["totalPrice"]) != tt.total {
				t.Errorf("preview of step %s: %v", tt.step, m)
			}
		}
		// 199 is sold on its own too: no chain.
		m = jsonMap(t, e.Do("POST", "/package/"+p199+"/preview", nil))
		if m["subscriptionPackageChainId"] != nil || m["chainStepOrder"] != nil || canon(t, m["totalPrice"]) != "199.00" {
			t.Errorf("unchained preview: %v", m)
		}
		// A template linked to a chain it is not a step of cannot be ordered.
		other := create(t, e.Tenant, "/package", strings.Replace(contractPackage("Other", "10", c.digital, c.monthly),
			`"packageChainId": null`, `"packageChainId": "`+chain+`"`, 1))
		if got := e.Do("POST", "/package/"+other+"/preview", nil).Fields(t); !slices.Equal(got, []string{"packageChainId"}) {
			t.Errorf("preview of a template outside its chain: %v", got)
		}
		// The chain's packages list.
		var listed []struct{ ID string }
		e.Do("GET", "/package?packageChainId="+chain, nil).JSON(t, &listed)
		if len(listed) != 3 || listed[0].ID != p99 || listed[1].ID != p149 || listed[2].ID != other {
			t.Errorf("packages of the chain: %v", listed)
		}
		// A step package's currency is fixed while the chain uses it.
		body := strings.Replace(contractPackage("Digital", "199", c.digital, c.monthly), `"NOK"`, `"SEK"`, 1)
		if got := e.Do("PUT", "/package/"+p199, body).Fields(t); !slices.Equal(got, []string{"Currency"}) {
			t.Errorf("currency change of a chain step: %v", got)
		}
	})
}

func TestChainValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		p99, p149, p199, chain := introChain(t, e, c)
		sek := create(t, e.Tenant, "/package", strings.Replace(contractPackage("Digitalt", "99", c.digital, c.monthly), `"NOK"`, `"SEK"`, 1))
		b := e.NewTenant("tenant-b", true)
		bc := newAPICatalog(t, e, b)
		foreign := create(t, b, "/package", contractPackage("Theirs", "99", bc.digital, bc.monthly))

		body := func(steps ...string) string {
			return `{"name": "c", "packageChain": {"steps": [` + strings.Join(steps, ",") + `]}}`
		}
		step := func(n any, id string) string { return fmt.Sprintf(`{"step": %v, "nextPackageId": %q}`, n, id) }
		cases := []struct {
			name   string
			body   string
			fields []string
		}{
			{"gap", body(step(1, p99), step(2, p149), step(4, p199)), []string{"packageChain.steps[2].step"}},
			{"duplicate step", body(step(1, p99), step(2, p149), step(2, p199)), []string{"packageChain.steps[2].step"}},
			{"unknown package", body(step(1, p99), step(2, store.NewID())), []string{"packageChain.steps[1].nextPackageId"}},
			{"another tenant's package", body(step(1, p99), step(2, foreign)), []string{"packageChain.steps[1].nextPackageId"}},
			{"mixed currency", body(step(1, p99), step(2, sek), step(3, p199)), []string{"packageChain.steps[1].nextPackageId"}},
			{"step 0", body(step(0, p99)), []string{"packageChain.steps[0].step"}},
			{"step left out", body(step(1, p99), `{"nextPackageId": "`+p149+`"}`), []string{"packageChain.steps[1].step"}},
			{"package left out", body(step(1, p99), `{"step": 2}`), []string{"packageChain.steps[1].nextPackageId"}},
			{"package id not a uuid", body(step(1, "intro")), []string{"packageChain.steps[0].nextPackageId"}},
			{"periods out of range", body(`{"step": 1, "nextPackageId": "` + p99 + `", "periods": 0}`), []string{"packageChain.steps[0].periods"}},
			{"no steps", body(), []string{"packageChain.steps"}},
			{"no packageChain", `{"name": "c"}`, []string{"packageChain"}},
			{"everything at once", `{"name": "", "packageChain": {"steps": [` + step(1, foreign) + "," + step(1, sek) + "," + step(5, p99) + `]}}`,
				[]string{"name", "packageChain.steps[0].nextPackageId", "packageChain.steps[1].step", "packageChain.steps[2].step",
					"packageChain.steps[2].nextPackageId"}},
			{"step as a string", body(step(`"1"`, p99)), []string{"packageChain.steps.step"}},
			{"steps as an object", `{"name": "c", "packageChain": {"steps": {}}}`, []string{"packageChain.steps"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if got := e.Do("POST", "/packagechain", tc.body).Fields(t); !slices.Equal(got, tc.fields) {
					t.Errorf("POST fields %v, want %v", got, tc.fields)
				}
				if got := e.Do("PUT", "/packagechain/"+chain, tc.body).Fields(t); !slices.Equal(got, tc.fields) {
					t.Errorf("PUT fields %v, want %v", got, tc.fields)
				}
			})
		}
	})
}

func TestChainListUpdateDelete(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		p99, p149, p199, chain := introChain(t, e, c)
		short := create(t, e.Tenant, "/packagechain", map[string]any{"name": "Short", "packageChain": map[string]any{
			"steps": []map[string]any{{"step": 1, "nextPackageId": p149}, {"step": 2, "nextPackageId": p199}}}})
		ids := func(query string) []string {
			t.Helper()
			var cs []struct{ ID string }
			r := e.Do("GET", "/packagechain"+query, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("GET /packagechain%s: %d %s", query, r.Status, r.Body)
			}
			r.JSON(t, &cs)
			var out []string
			for _, c := range cs {
				out = append(out, c.ID)
			}
			return out
		}
		if got := ids(""); !slices.Equal(got, []string{chain, short}) {
			t.Errorf("all: %v", got)
		}
		if got := ids("?packageId=" + p99); !slices.Equal(got, []string{chain}) {
			t.Errorf("using 99: %v", got)
		}
		if got := ids("?packageId=" + p199); !slices.Equal(got, []string{chain, short}) {
			t.Errorf("using 199: %v", got)
		}
		if got := ids("?limit=1"); !slices.Equal(got, []string{chain}) {
			t.Errorf("first page: %v", got)
		}
		wantEmpty(t, e.Do("GET", "/packagechain?packageId="+store.NewID(), nil), "filter on no package")

		// PUT replaces the steps.
		if r := e.Do("PUT", "/packagechain/"+short, map[string]any{"name": "Shorter", "packageChain": map[string]any{
			"steps": []map[string]any{{"step": 1, "nextPackageId": p199, "periods": 2}}}}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		m := jsonMap(t, e.Do("GET", "/packagechain/"+short, nil))
		if m["name"] != "Shorter" || canon(t, m["packageChain"]) != fmt.Sprintf(`{"steps":[{"nextPackageId":%q,"periods":2,"step":1}]}`, p199) {
			t.Errorf("after PUT: %v", m)
		}
		if r := e.Do("PUT", "/packagechain/"+store.NewID(), map[string]any{"name": "x", "packageChain": map[string]any{
			"steps": []map[string]any{{"step": 1, "nextPackageId": p199}}}}); r.Status != http.StatusNotFound {
			t.Errorf("PUT unknown: %d", r.Status)
		}

		// A chain a template links to is not deleted.
		linked := strings.Replace(contractPackage("Digital intro", "99", c.digital, c.monthly), `"packageChainId": null`, `"packageChainId": "`+chain+`"`, 1)
		if r := e.Do("PUT", "/package/"+p99, linked); r.Status != http.StatusNoContent {
			t.Fatalf("link: %d %s", r.Status, r.Body)
		}
		r := e.Do("DELETE", "/packagechain/"+chain, nil)
		if got := r.Fields(t); !slices.Equal(got, []string{"id"}) || !strings.Contains(string(r.Body), p99) {
			t.Errorf("delete linked chain: %s", r.Body)
		}
		if r := e.Do("DELETE", "/packagechain/"+short, nil); r.Status != http.StatusNoContent {
			t.Errorf("delete unlinked chain: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/packagechain/"+short, nil); r.Status != http.StatusNotFound {
			t.Errorf("after DELETE: %d", r.Status)
		}
	})
}
