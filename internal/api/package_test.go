package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

// apiCatalog is a small catalog created through the API.
type apiCatalog struct {
	e                                *apitest.Env
	digital, print, magazine, sunday string // products
	monthly, avtale, yearly          string // billing plans
}

func create(t *testing.T, tn apitest.Tenant, path string, body any) string {
	t.Helper()
	r := tn.Do("POST", path, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	return r.ID(t)
}

func newAPICatalog(t *testing.T, e *apitest.Env, tn apitest.Tenant) *apiCatalog {
	t.Helper()
	sd := tn.Seed(t)
	return &apiCatalog{
		e:        e,
		digital:  sd.Product(seed.Product{Name: "Nordavis Digital", Category: "digital", VATRate: "0"}),
		print:    sd.Product(seed.Product{Name: "Nordavis Papir", Category: "print", VATRate: "0"}),
		magazine: sd.Product(seed.Product{Name: "Helgemagasinet", Category: "magazine", VATRate: "25"}),
		sunday:   sd.Product(seed.Product{Name: "Søndagsavis", Category: "print", VATRate: "0"}),
		monthly:  sd.Plan(seed.Plan{Name: "Monthly invoice", Unit: "Month"}),
		avtale:   sd.Plan(seed.Plan{Name: "Monthly AvtaleGiro", Unit: "month"}),
		yearly:   sd.Plan(seed.Plan{Name: "Yearly", Unit: "Year"}),
	}
}

// contractPackage is a POST /package body written from the contract's
// field table exactly as named there (PascalCase and camelCase mixed).
func contractPackage(name, price, product, plan string) string {
	return fmt.Sprintf(`{
  "Name": %q,
  "Description": "Digital news, every day",
  "Currency": "NOK",
  "Price": %s,
  "Units": 1,
  "NumberOfEditions": null,
  "AutomaticStop": false,
  "permanentDiscount": 0,
  "products": [{"productId": %q}],
  "BillingPlans": [%q],
  "packageChainId": null
}`, name, price, product, plan)
}

// bundleBody is a print + digital bundle using every template field.
func (c *apiCatalog) bundleBody() string {
	return fmt.Sprintf(`{
  "Name": "Papir + digital",
  "Description": "Avisen hver dag, på papir og digitalt",
  "Currency": "nok",
  "Price": 449.00,
  "Units": 1,
  "NumberOfEditions": 26,
  "AutomaticStop": false,
  "permanentDiscount": 10,
  "products": [{"productId": %q, "share": 70}, {"productId": %q, "share": 30}],
  "additionalProducts": [
    {"productId": %q, "price": 49.00},
    {"productId": %q, "price": 29.50, "selectedByDefault": true}
  ],
  "BillingPlans": [%q, %q],
  "contract": {"bindingPeriods": 12, "terms": "Bindingstid 12 måneder"},
  "packageChainId": null,
  "allowedChoices": {"minUnits": 1, "maxUnits": 5, "priceOverride": true}
}`, c.print, c.digital, c.magazine, c.sunday, c.monthly, c.avtale)
}

// jsonMap decodes a response keeping numbers as their literals, so money
// is compared exactly as it was sent.
func jsonMap(t *testing.T, r *apitest.Response) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("response %d is not a JSON object: %s", r.Status, r.Body)
	}
	return m
}

// canon re-encodes a JSON value compactly for comparisons.
func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPackageContractBodyIsAcceptedAndReadBack(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		r := e.Do("POST", "/package", contractPackage("Nordavis Digital", "199.00", c.digital, c.monthly))
		id := r.ID(t)
		if loc := r.Header.Get("Location"); loc != apitest.BaseURL+"/package/"+id {
			t.Errorf("Location %q", loc)
		}
		got := e.Do("GET", "/package/"+id, nil)
		if got.Status != http.StatusOK {
			t.Fatalf("GET: %d", got.Status)
		}
		m := jsonMap(t, got)
		want := map[string]string{
			"id": `"` + id + `"`, "name": `"Nordavis Digital"`, "description": `"Digital news, every day"`,
			"currency": `"NOK"`, "price": `199.00`, "units": `1`, "numberOfEditions": `null`,
			"automaticStop": `false`, "permanentDiscount": `0`,
			"products":           `[{"productId":"` + c.digital + `","share":null}]`,
			"additionalProducts": `[]`, "billingPlans": `["` + c.monthly + `"]`,
			"contract": `null`, "packageChainId": `null`, "archivedAt": `null`,
			"allowedChoices": `{"discountOverride":false,"maxUnits":1,"minUnits":1,"priceOverride":false}`,
		}
		for k, v := range want {
			if g := canon(t, m[k]); g != v {
				t.Errorf("%s = %s, want %s", k, g, v)
			}
		}
		// Money is an exact JSON number with the currency's decimals.
		if !strings.Contains(string(got.Body), `"price":199.00`) {
			t.Errorf("price not written as 199.00: %s", got.Body)
		}

		// The full bundle, every field used.
		id = create(t, e.Tenant, "/package", c.bundleBody())
		m = jsonMap(t, e.Do("GET", "/package/"+id, nil))
		want = map[string]string{
			"currency": `"NOK"`, "price": `449.00`, "numberOfEditions": `26`, "permanentDiscount": `10`,
			"products": `[{"productId":"` + c.print + `","share":70},{"productId":"` + c.digital + `","share":30}]`,
			"additionalProducts": `[{"price":49.00,"productId":"` + c.magazine + `","selectedByDefault":false},` +
				`{"price":29.50,"productId":"` + c.sunday + `","selectedByDefault":true}]`,
			"billingPlans":   `["` + c.monthly + `","` + c.avtale + `"]`,
			"contract":       `{"bindingPeriods":12,"earlyCancellation":"EndOfBinding","terms":"Bindingstid 12 måneder"}`, // the default rule, shown
			"allowedChoices": `{"discountOverride":false,"maxUnits":5,"minUnits":1,"priceOverride":true}`,
		}
		for k, v := range want {
			if g := canon(t, m[k]); g != v {
				t.Errorf("bundle %s = %s, want %s", k, g, v)
			}
		}

		// The output is a valid PUT body (input names match case-insensitively).
		out := e.Do("GET", "/package/"+id, nil).Body
		if r := e.Do("PUT", "/package/"+id, out); r.Status != http.StatusNoContent {
			t.Fatalf("PUT of the GET output: %d %s", r.Status, r.Body)
		}
		if again := jsonMap(t, e.Do("GET", "/package/"+id, nil)); canon(t, again["additionalProducts"]) != canon(t, m["additionalProducts"]) ||
			canon(t, again["contract"]) != canon(t, m["contract"]) {
			t.Errorf("round trip changed the package: %v", again)
		}
	})
}

func TestPackageValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		other := e.NewTenant("tenant-b", true)
		foreign := newAPICatalog(t, e, other)
		inactive := create(t, e.Tenant, "/product", map[string]any{"name": "Old", "vatRate": 0, "active": false})
		cases := []struct {
			name   string
			body   string
			fields []string
		}{
			{"required fields missing", `{}`, []string{"Name", "Currency", "Price", "products", "BillingPlans"}},
			{"every bad field at once", fmt.Sprintf(`{"Name": " ", "Currency": "KRONER", "Price": 1, "Units": 0,
				"NumberOfEditions": -1, "permanentDiscount": 120, "products": [{"productId": "x"}],
				"additionalProducts": [{"productId": %q}], "BillingPlans": ["monthly"], "contract": {},
				"packageChainId": "chain"}`, c.magazine),
				[]string{"Name", "Currency", "permanentDiscount", "additionalProducts[0].price", "contract.bindingPeriods",
					"Units", "NumberOfEditions", "products[0].productId", "BillingPlans[0]", "packageChainId"}},
			{"price with too many decimals", contractPackage("A", "199.001", c.digital, c.monthly), []string{"Price"}},
			{"negative price", contractPackage("A", "-1", c.digital, c.monthly), []string{"Price"}},
			{"price in exponent form", contractPackage("A", "1e2", c.digital, c.monthly), []string{"Price"}},
			{"unknown product and plan", contractPackage("A", "1", store.NewID(), store.NewID()), []string{"products[0].productId", "BillingPlans[0]"}},
			{"another tenant's product and plan", contractPackage("A", "1", foreign.digital, foreign.monthly), []string{"products[0].productId", "BillingPlans[0]"}},
			{"inactive product", contractPackage("A", "1", inactive, c.monthly), []string{"products[0].productId"}},
			{"shares not adding up", fmt.Sprintf(`{"Name":"A","Currency":"NOK","Price":1,"products":[{"productId":%q,"share":60},{"productId":%q,"share":30}],"BillingPlans":[%q]}`,
				c.print, c.digital, c.monthly), []string{"products"}},
			{"billing plans of different intervals", fmt.Sprintf(`{"Name":"A","Currency":"NOK","Price":1,"products":[{"productId":%q}],"BillingPlans":[%q,%q]}`,
				c.digital, c.monthly, c.yearly), []string{"BillingPlans[1]"}},
			{"a product twice", fmt.Sprintf(`{"Name":"A","Currency":"NOK","Price":1,"products":[{"productId":%q}],"additionalProducts":[{"productId":%q,"price":1}],"BillingPlans":[%q]}`,
				c.digital, c.digital, c.monthly), []string{"additionalProducts[0].productId"}},
			{"unknown chain", fmt.Sprintf(`{"Name":"A","Currency":"NOK","Price":1,"products":[{"productId":%q}],"BillingPlans":[%q],"packageChainId":%q}`,
				c.digital, c.monthly, store.NewID()), []string{"packageChainId"}},
			{"units outside the allowed range", fmt.Sprintf(`{"Name":"A","Currency":"NOK","Price":1,"Units":3,"products":[{"productId":%q}],"BillingPlans":[%q],"allowedChoices":{"minUnits":1,"maxUnits":2}}`,
				c.digital, c.monthly), []string{"allowedChoices.maxUnits"}},
			// Wrong JSON types are a 400 naming the field, never a 500.
			{"price as a string", strings.Replace(contractPackage("A", "1", c.digital, c.monthly), `"Price": 1`, `"Price": "199"`, 1), []string{"Price"}},
			{"units as a string", strings.Replace(contractPackage("A", "1", c.digital, c.monthly), `"Units": 1`, `"Units": "1"`, 1), []string{"Units"}},
			{"units as a fraction", strings.Replace(contractPackage("A", "1", c.digital, c.monthly), `"Units": 1`, `"Units": 1.5`, 1), []string{"Units"}},
			{"products as an object", `{"products": {"productId": "x"}}`, []string{"products"}},
			{"billing plans as a string", `{"BillingPlans": "monthly"}`, []string{"BillingPlans"}},
			{"share as a string", `{"products": [{"productId": "x", "share": "50"}]}`, []string{"products.share"}},
			{"discount as a bool", `{"permanentDiscount": true}`, []string{"permanentDiscount"}},
			{"not JSON", `{"Name": `, []string{"body"}},
			{"NUL in text", strings.Replace(contractPackage("A", "1", c.digital, c.monthly), `"Digital news, every day"`, `"a\u0000"`, 1), []string{"Description"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Do("POST", "/package", tc.body)
				if got := r.Fields(t); !slices.Equal(got, tc.fields) {
					t.Errorf("fields %v, want %v: %s", got, tc.fields, r.Body)
				}
			})
		}
	})
}

func TestPackagePreview(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		id := create(t, e.Tenant, "/package", c.bundleBody())
		preview := func(body any) *apitest.Response {
			t.Helper()
			return e.Do("POST", "/package/"+id+"/preview", body)
		}
		// Defaults: 449.00 + Sunday 29.50 = 478.50, −10 % = 430.65.
		for _, body := range []any{nil, "", "{}"} {
			r := preview(body)
			if r.Status != http.StatusOK {
				t.Fatalf("preview %q: %d %s", body, r.Status, r.Body)
			}
			m := jsonMap(t, r)
			if m["fullPrice"] != json.Number("478.50") || m["totalPrice"] != json.Number("430.65") || m["discount"] != json.Number("47.85") {
				t.Errorf("defaults: full %v total %v discount %v", m["fullPrice"], m["totalPrice"], m["discount"])
			}
			if bp := m["billingPlan"].(map[string]any); bp["billingPlanId"] != c.monthly || bp["intervalUnit"] != "Month" {
				t.Errorf("billing plan %v", bp)
			}
		}
		// Every kind of choice: (399.00 × 3 + 49.00) × 0.9 = 1121.40, split
		// 70/30 over the base and the magazine at its price.
		r := preview(fmt.Sprintf(`{"billingPlanId": %q, "units": 3, "additionalProducts": [{"productId": %q}], "price": 399}`, c.avtale, c.magazine))
		if r.Status != http.StatusOK {
			t.Fatalf("choices: %d %s", r.Status, r.Body)
		}
		m := jsonMap(t, r)
		if m["units"] != json.Number("3") || m["price"] != json.Number("399.00") || m["fullPrice"] != json.Number("1246.00") || m["totalPrice"] != json.Number("1121.40") {
			t.Errorf("choices: %s", r.Body)
		}
		lines := ""
		for _, k := range []string{"products", "additionalProducts"} {
			for _, l := range m[k].([]any) {
				lm := l.(map[string]any)
				lines += fmt.Sprintf("%s %s %s/%s; ", lm["name"], lm["vatRate"], lm["fullAmount"], lm["amount"])
			}
		}
		if want := "Nordavis Papir 0 837.90/754.11; Nordavis Digital 0 359.10/323.19; Helgemagasinet 25 49.00/44.10; "; lines != want {
			t.Errorf("lines\n got %s\nwant %s", lines, want)
		}
		if m["billingPlan"].(map[string]any)["billingPlanId"] != c.avtale {
			t.Errorf("billing plan choice ignored: %v", m["billingPlan"])
		}
		// Every invalid choice in one answer.
		r = preview(fmt.Sprintf(`{"billingPlanId": %q, "units": 6, "additionalProducts": [{"productId": %q}], "price": 1.001, "permanentDiscount": 5}`, c.yearly, c.digital))
		if got, want := r.Fields(t), []string{"billingPlanId", "units", "price", "permanentDiscount", "additionalProducts[0].productId"}; !slices.Equal(got, want) {
			t.Errorf("invalid choices: %v, want %v", got, want)
		}
		// Wrong types.
		if got := preview(`{"units": "3"}`).Fields(t); !slices.Equal(got, []string{"units"}) {
			t.Errorf("units as a string: %v", got)
		}
		if got := preview(`{"price": "cheap"}`).Fields(t); !slices.Equal(got, []string{"price"}) {
			t.Errorf("price as a string: %v", got)
		}
		if got := preview(`[1]`).Fields(t); !slices.Equal(got, []string{"body"}) {
			t.Errorf("array body: %v", got)
		}
		if r := e.Do("POST", "/package/"+store.NewID()+"/preview", nil); r.Status != http.StatusNotFound {
			t.Errorf("preview of an unknown package: %d", r.Status)
		}
		if got := e.Do("POST", "/package/nope/preview", nil).Fields(t); !slices.Equal(got, []string{"id"}) {
			t.Errorf("malformed id: %v", got)
		}
	})
}

func TestPackageUpdateDeleteAndArchive(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		id := create(t, e.Tenant, "/package", c.bundleBody())
		before := jsonMap(t, e.Do("POST", "/package/"+id+"/preview", nil))

		// PUT replaces the template; a later preview sees it, the earlier
		// instance (a copy) does not change.
		if r := e.Do("PUT", "/package/"+id, contractPackage("Digital", "199", c.digital, c.monthly)); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		after := jsonMap(t, e.Do("POST", "/package/"+id+"/preview", nil))
		if after["totalPrice"] != json.Number("199.00") || before["totalPrice"] != json.Number("430.65") || len(before["products"].([]any)) != 2 {
			t.Errorf("before %v, after %v", before["totalPrice"], after["totalPrice"])
		}
		// PUT validates like POST, and 404s on unknown ids.
		if got := e.Do("PUT", "/package/"+id, `{"Name": ""}`).Fields(t); !slices.Contains(got, "Name") {
			t.Errorf("PUT validation: %v", got)
		}
		if r := e.Do("PUT", "/package/"+store.NewID(), contractPackage("Digital", "199", c.digital, c.monthly)); r.Status != http.StatusNotFound {
			t.Errorf("PUT unknown: %d", r.Status)
		}

		// A template no chain uses is deleted.
		if r := e.Do("DELETE", "/package/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/package/"+id, nil); r.Status != http.StatusNotFound || len(r.Body) != 0 {
			t.Errorf("GET after DELETE: %d %s", r.Status, r.Body)
		}
		if r := e.Do("DELETE", "/package/"+id, nil); r.Status != http.StatusNotFound {
			t.Errorf("second DELETE: %d", r.Status)
		}

		// A template a chain uses is archived: readable, not listed, not
		// orderable, still a valid chain step.
		step := create(t, e.Tenant, "/package", contractPackage("149", "149", c.digital, c.monthly))
		chain := create(t, e.Tenant, "/packagechain", map[string]any{"name": "c", "packageChain": map[string]any{
			"steps": []map[string]any{{"step": 1, "nextPackageId": step, "periods": 3}}}})
		if r := e.Do("DELETE", "/package/"+step, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE of a chain step: %d %s", r.Status, r.Body)
		}
		m := jsonMap(t, e.Do("GET", "/package/"+step, nil))
		if m["archivedAt"] == nil {
			t.Fatalf("not archived: %v", m)
		}
		var listed []map[string]any
		e.Do("GET", "/package", nil).JSON(t, &listed)
		if len(listed) != 0 {
			t.Errorf("archived package listed: %v", listed)
		}
		e.Do("GET", "/package?archived=true", nil).JSON(t, &listed)
		if len(listed) != 1 || listed[0]["id"] != step {
			t.Errorf("archived list: %v", listed)
		}
		if got := e.Do("POST", "/package/"+step+"/preview", nil).Fields(t); !slices.Equal(got, []string{"id"}) {
			t.Errorf("preview of an archived package: %v", got)
		}
		if r := e.Do("PUT", "/packagechain/"+chain, map[string]any{"name": "c2", "packageChain": map[string]any{
			"steps": []map[string]any{{"step": 1, "nextPackageId": step}}}}); r.Status != http.StatusNoContent {
			t.Errorf("archived package as a chain step: %d %s", r.Status, r.Body)
		}
	})
}

func TestPackageListFiltersAndPaging(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newAPICatalog(t, e, e.Tenant)
		bundle := create(t, e.Tenant, "/package", c.bundleBody())
		digital := create(t, e.Tenant, "/package", contractPackage("Digital", "199", c.digital, c.monthly))
		yearly := create(t, e.Tenant, "/package", contractPackage("Digital yearly", "1990", c.digital, c.yearly))
		sek := create(t, e.Tenant, "/package", strings.Replace(contractPackage("Digitalt", "99", c.digital, c.monthly), `"NOK"`, `"SEK"`, 1))
		chain := create(t, e.Tenant, "/packagechain", map[string]any{"name": "c", "packageChain": map[string]any{
			"steps": []map[string]any{{"step": 1, "nextPackageId": digital}}}})
		linked := strings.Replace(contractPackage("Digital", "199", c.digital, c.monthly), `"packageChainId": null`, `"packageChainId": "`+chain+`"`, 1)
		if r := e.Do("PUT", "/package/"+digital, linked); r.Status != http.StatusNoContent {
			t.Fatalf("link: %d %s", r.Status, r.Body)
		}
		ids := func(query string) []string {
			t.Helper()
			r := e.Do("GET", "/package"+query, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("GET /package%s: %d %s", query, r.Status, r.Body)
			}
			var ps []struct{ ID string }
			r.JSON(t, &ps)
			var out []string
			for _, p := range ps {
				out = append(out, p.ID)
			}
			return out
		}
		tests := []struct {
			query string
			want  []string
		}{
			{"", []string{bundle, digital, yearly, sek}},
			{"?currency=sek", []string{sek}},
			{"?productId=" + c.magazine, []string{bundle}},
			{"?productId=" + c.digital, []string{bundle, digital, yearly, sek}},
			{"?billingPlanId=" + c.yearly, []string{yearly}},
			{"?packageChainId=" + chain, []string{digital}},
			{"?archived=false&currency=NOK", []string{bundle, digital, yearly}},
			{"?archived=true", nil},
		}
		for _, tt := range tests {
			if got := ids(tt.query); !slices.Equal(got, tt.want) {
				t.Errorf("%s: %v, want %v", tt.query, got, tt.want)
			}
		}
		// Filters naming a parent that does not exist match nothing.
		for _, q := range []string{"productId", "billingPlanId", "packageChainId"} {
			wantEmpty(t, e.Do("GET", "/package?"+q+"="+store.NewID(), nil), q+" of nothing")
		}
		if got := e.Do("GET", "/package?productId=x&archived=maybe&limit=0", nil).Fields(t); !slices.Equal(got, []string{"limit", "productId", "archived"}) {
			t.Errorf("bad filters: %v", got)
		}
		// Paging follows the Link header.
		r := e.Do("GET", "/package?limit=3", nil)
		link := r.Header.Get("Link")
		if !strings.HasPrefix(link, "<"+apitest.BaseURL+"/package?") || !strings.HasSuffix(link, `>; rel="next"`) {
			t.Fatalf("Link %q", link)
		}
		next := strings.TrimPrefix(strings.TrimSuffix(link, `>; rel="next"`), "<"+apitest.BaseURL)
		if got := ids(strings.TrimPrefix(next, "/package")); !slices.Equal(got, []string{sek}) {
			t.Errorf("second page %v", got)
		}
	})
}

func TestCatalogIsTenantScoped(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		a := newAPICatalog(t, e, e.Tenant)
		pkg := create(t, e.Tenant, "/package", a.bundleBody())
		chain := create(t, e.Tenant, "/packagechain", map[string]any{"name": "c", "packageChain": map[string]any{
			"steps": []map[string]any{{"step": 1, "nextPackageId": pkg}}}})
		b := e.NewTenant("tenant-b", true)
		bc := newAPICatalog(t, e, b)

		type op struct{ method, path string }
		var ops []op
		for _, res := range []struct{ kind, id string }{
			{"product", a.digital}, {"billingplan", a.monthly}, {"package", pkg}, {"packagechain", chain},
		} {
			ops = append(ops, op{"GET", "/" + res.kind + "/" + res.id}, op{"DELETE", "/" + res.kind + "/" + res.id})
		}
		ops = append(ops, op{"POST", "/package/" + pkg + "/preview"})
		for _, o := range ops {
			if r := b.Do(o.method, o.path, nil); r.Status != http.StatusNotFound || len(r.Body) != 0 {
				t.Errorf("tenant b %s %s: %d %s", o.method, o.path, r.Status, r.Body)
			}
		}
		// Lists filtered on a's records find nothing in b.
		for _, p := range []string{"/package?productId=" + a.digital, "/package?billingPlanId=" + a.monthly,
			"/package?packageChainId=" + chain, "/packagechain?packageId=" + pkg} {
			wantEmpty(t, b.Do("GET", p, nil), "tenant b GET "+p)
		}
		// PUT with a body that is valid for b is still 404.
		puts := map[string]any{
			"/product/" + a.digital:     map[string]any{"name": "x", "vatRate": 0},
			"/billingplan/" + a.monthly: map[string]any{"name": "x", "intervalUnit": "Month"},
			"/package/" + pkg:           contractPackage("x", "1", bc.digital, bc.monthly),
			"/packagechain/" + chain: map[string]any{"name": "x", "packageChain": map[string]any{"steps": []map[string]any{
				{"step": 1, "nextPackageId": create(t, b, "/package", contractPackage("x", "1", bc.digital, bc.monthly))}}}},
		}
		for path, body := range puts {
			if r := b.Do("PUT", path, body); r.Status != http.StatusNotFound {
				t.Errorf("tenant b PUT %s: %d %s", path, r.Status, r.Body)
			}
		}
		// Lists show only b's own.
		for _, path := range []string{"/product", "/billingplan", "/package", "/packagechain"} {
			body := string(b.Do("GET", path, nil).Body)
			for _, id := range []string{a.digital, a.monthly, pkg, chain} {
				if strings.Contains(body, id) {
					t.Errorf("tenant b's %s lists a's %s", path, id)
				}
			}
		}
		// b cannot build on a's catalog: a's ids are unknown there.
		r := b.Do("POST", "/package", contractPackage("x", "1", a.digital, a.monthly))
		if got := r.Fields(t); !slices.Equal(got, []string{"products[0].productId", "BillingPlans[0]"}) {
			t.Errorf("b's package with a's product and plan: %v", got)
		}
		// Everything of a is untouched.
		for _, path := range []string{"/product/" + a.digital, "/billingplan/" + a.monthly, "/package/" + pkg, "/packagechain/" + chain} {
			if r := e.Do("GET", path, nil); r.Status != http.StatusOK {
				t.Errorf("a's %s: %d", path, r.Status)
			}
		}
	})
}
