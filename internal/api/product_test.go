package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

func TestProductLifecycle(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		r := e.Do("POST", "/product", `{"Name": "Nordavis Digital", "description": "Alt innhold", "CATEGORY": "digital", "vatRate": 12.5}`)
		id := r.ID(t)
		if loc := r.Header.Get("Location"); loc != apitest.BaseURL+"/product/"+id {
			t.Errorf("Location %q", loc)
		}
		got := e.Do("GET", "/product/"+id, nil)
		m := jsonMap(t, got)
		if m["name"] != "Nordavis Digital" || m["description"] != "Alt innhold" || m["category"] != "digital" ||
			canon(t, m["vatRate"]) != "12.5" || m["active"] != true || m["createdAt"] == nil {
			t.Errorf("read back %s", got.Body)
		}
		if r := e.Do("PUT", "/product/"+id, map[string]any{"name": "Digital", "vatRate": 0, "active": false}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		m = jsonMap(t, e.Do("GET", "/product/"+id, nil))
		if m["name"] != "Digital" || canon(t, m["vatRate"]) != "0" || m["active"] != false || m["category"] != "" {
			t.Errorf("after PUT %v", m)
		}
		if r := e.Do("DELETE", "/product/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/product/"+id, nil); r.Status != http.StatusNotFound || len(r.Body) != 0 {
			t.Errorf("GET after DELETE: %d", r.Status)
		}
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			if r := e.Do(m, "/product/"+store.NewID(), map[string]any{"name": "x", "vatRate": 0}); r.Status != http.StatusNotFound {
				t.Errorf("%s of an unknown product: %d", m, r.Status)
			}
		}
		if got := e.Do("GET", "/product/nope", nil).Fields(t); !slices.Equal(got, []string{"id"}) {
			t.Errorf("malformed id: %v", got)
		}
	})
}

func TestProductValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		cases := []struct {
			name   string
			body   string
			fields []string
		}{
			{"required fields missing", `{}`, []string{"name", "vatRate"}},
			{"every bad field at once", `{"name": "` + strings.Repeat("x", 201) + `", "description": "` + strings.Repeat("x", 2001) +
				`", "category": "` + strings.Repeat("x", 101) + `", "vatRate": 100.5}`, []string{"name", "description", "category", "vatRate"}},
			{"negative VAT", `{"name": "a", "vatRate": -25}`, []string{"vatRate"}},
			{"VAT with too many decimals", `{"name": "a", "vatRate": 12.34567}`, []string{"vatRate"}},
			{"VAT as a string", `{"name": "a", "vatRate": "25"}`, []string{"vatRate"}},
			{"name as a number", `{"name": 1, "vatRate": 25}`, []string{"name"}},
			{"active as a string", `{"name": "a", "vatRate": 25, "active": "yes"}`, []string{"active"}},
			{"empty body", ``, []string{"body"}},
			{"control characters", `{"name": "a\u0000b", "category": "x\u0007", "description": "line\nbreak", "vatRate": 0}`, []string{"name", "category"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if got := e.Do("POST", "/product", tc.body).Fields(t); !slices.Equal(got, tc.fields) {
					t.Errorf("fields %v, want %v", got, tc.fields)
				}
			})
		}
	})
}

func TestProductListAndDeleteInUse(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		old := create(t, e.Tenant, "/product", map[string]any{"name": "Old", "category": "print", "vatRate": 0, "active": false})
		ids := func(query string) []string {
			t.Helper()
			var ps []struct{ ID string }
			r := e.Do("GET", "/product"+query, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("GET /product%s: %d %s", query, r.Status, r.Body)
			}
			r.JSON(t, &ps)
			var out []string
			for _, p := range ps {
				out = append(out, p.ID)
			}
			return out
		}
		if got := ids("?category=print"); !slices.Equal(got, []string{c.print, c.sunday, old}) {
			t.Errorf("print: %v", got)
		}
		if got := ids("?category=print&active=true"); !slices.Equal(got, []string{c.print, c.sunday}) {
			t.Errorf("active print: %v", got)
		}
		if got := ids("?active=false"); !slices.Equal(got, []string{old}) {
			t.Errorf("inactive: %v", got)
		}
		if got := ids("?category=none"); len(got) != 0 {
			t.Errorf("no match: %v", got)
		}
		if got := ids("?limit=2"); !slices.Equal(got, []string{c.digital, c.print}) {
			t.Errorf("first page: %v", got)
		}
		if got := e.Do("GET", "/product?active=maybe", nil).Fields(t); !slices.Equal(got, []string{"active"}) {
			t.Errorf("bad active: %v", got)
		}

		pkg := create(t, e.Tenant, "/package", c.bundleBody())
		r := e.Do("DELETE", "/product/"+c.sunday, nil) // an additional product of the bundle
		if got := r.Fields(t); !slices.Equal(got, []string{"id"}) || !strings.Contains(string(r.Body), pkg) {
			t.Errorf("delete in use: %s", r.Body)
		}
		// Deactivating is the way to retire it; the package keeps it.
		if r := e.Do("PUT", "/product/"+c.sunday, map[string]any{"name": "Søndagsavis", "vatRate": 0, "active": false}); r.Status != http.StatusNoContent {
			t.Fatalf("deactivate: %d %s", r.Status, r.Body)
		}
		if r := e.Do("PUT", "/package/"+pkg, c.bundleBody()); r.Status != http.StatusNoContent {
			t.Errorf("package keeping an inactive product: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/package", c.bundleBody()); !slices.Equal(r.Fields(t), []string{"additionalProducts[1].productId"}) {
			t.Errorf("new package with an inactive product: %s", r.Body)
		}
	})
}
