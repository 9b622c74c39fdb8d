package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

func TestBillingPlanLifecycle(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		id := create(t, e.Tenant, "/billingplan", `{"Name": "Quarterly", "intervalUnit": "month", "IntervalCount": 3}`)
		m := jsonMap(t, e.Do("GET", "/billingplan/"+id, nil))
		if m["name"] != "Quarterly" || m["intervalUnit"] != "Month" || canon(t, m["intervalCount"]) != "3" ||
			canon(t, m["minimumDueDays"]) != "14" || canon(t, m["paymentTermsDays"]) != "14" {
			t.Errorf("read back with defaults: %v", m)
		}
		body := map[string]any{"name": "Weekly", "description": "d", "intervalUnit": "WEEK", "intervalCount": 1, "minimumDueDays": 0, "paymentTermsDays": 7}
		if r := e.Do("PUT", "/billingplan/"+id, body); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		m = jsonMap(t, e.Do("GET", "/billingplan/"+id, nil))
		if m["intervalUnit"] != "Week" || canon(t, m["minimumDueDays"]) != "0" || canon(t, m["paymentTermsDays"]) != "7" || m["description"] != "d" {
			t.Errorf("after PUT: %v", m)
		}
		yearly := create(t, e.Tenant, "/billingplan", map[string]any{"name": "Yearly", "intervalUnit": "Year"})
		var list []struct{ ID string }
		e.Do("GET", "/billingplan?intervalUnit=year", nil).JSON(t, &list)
		if len(list) != 1 || list[0].ID != yearly {
			t.Errorf("yearly plans: %v", list)
		}
		if got := e.Do("GET", "/billingplan?intervalUnit=Fortnight", nil).Fields(t); !slices.Equal(got, []string{"intervalUnit"}) {
			t.Errorf("bad filter: %v", got)
		}
		if r := e.Do("DELETE", "/billingplan/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE: %d", r.Status)
		}
		if r := e.Do("GET", "/billingplan/"+id, nil); r.Status != http.StatusNotFound {
			t.Errorf("after DELETE: %d", r.Status)
		}
		if r := e.Do("DELETE", "/billingplan/"+store.NewID(), nil); r.Status != http.StatusNotFound {
			t.Errorf("DELETE unknown: %d", r.Status)
		}
	})
}

func TestBillingPlanValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		cases := []struct {
			name   string
			body   string
			fields []string
		}{
			{"required fields missing", `{}`, []string{"name", "intervalUnit"}},
			{"every bad field at once", `{"name": "", "intervalUnit": "Quarter", "intervalCount": 0, "minimumDueDays": -1, "paymentTermsDays": 400}`,
				[]string{"name", "intervalUnit", "intervalCount", "minimumDueDays", "paymentTermsDays"}},
			{"count too large", `{"name": "a", "intervalUnit": "Day", "intervalCount": 1201}`, []string{"intervalCount"}},
			{"count as a string", `{"name": "a", "intervalUnit": "Day", "intervalCount": "1"}`, []string{"intervalCount"}},
			{"unit as a number", `{"name": "a", "intervalUnit": 1}`, []string{"intervalUnit"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if got := e.Do("POST", "/billingplan", tc.body).Fields(t); !slices.Equal(got, tc.fields) {
					t.Errorf("fields %v, want %v", got, tc.fields)
				}
			})
		}
	})
}

func TestBillingPlanInUse(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		pkg := create(t, e.Tenant, "/package", contractPackage("Digital", "199", c.digital, c.monthly))
		r := e.Do("DELETE", "/billingplan/"+c.monthly, nil)
		if got := r.Fields(t); !slices.Equal(got, []string{"id"}) || !strings.Contains(string(r.Body), pkg) {
			t.Errorf("delete in use: %s", r.Body)
		}
		// The interval of a plan in use is fixed: package prices are per period.
		r = e.Do("PUT", "/billingplan/"+c.monthly, map[string]any{"name": "Monthly", "intervalUnit": "Year", "intervalCount": 2})
		if got := r.Fields(t); !slices.Equal(got, []string{"intervalUnit", "intervalCount"}) {
			t.Errorf("interval change in use: %v", got)
		}
		// Anything else may change, and previews copy the new values.
		if r := e.Do("PUT", "/billingplan/"+c.monthly, map[string]any{"name": "Monthly (new terms)", "intervalUnit": "Month", "paymentTermsDays": 30}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		m := jsonMap(t, e.Do("POST", "/package/"+pkg+"/preview", nil))
		if bp := m["billingPlan"].(map[string]any); bp["name"] != "Monthly (new terms)" || canon(t, bp["paymentTermsDays"]) != "30" {
			t.Errorf("preview billing plan: %v", bp)
		}
		// An unused plan may change its interval.
		if r := e.Do("PUT", "/billingplan/"+c.yearly, map[string]any{"name": "Biennial", "intervalUnit": "Year", "intervalCount": 2}); r.Status != http.StatusNoContent {
			t.Errorf("interval change of an unused plan: %d %s", r.Status, r.Body)
		}
	})
}
