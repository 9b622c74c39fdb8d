package api_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

func validOrg() map[string]any {
	return map[string]any{"Name": "Nordavis AS", "organizationNumber": "923609016", "Country": "NO",
		"currency": "NOK", "TimeZone": "Europe/Oslo", "pricesIncludeVat": true, "logoUrl": "https://example.com/logo.svg"}
}

func TestOrganizationLifecycle(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		r := e.Do("POST", "/organization", validOrg())
		id := r.ID(t)
		if !store.ValidID(id) {
			t.Fatalf("id %q is not a uuid", id)
		}
		if loc := r.Header.Get("Location"); loc != apitest.BaseURL+"/organization/"+id {
			t.Fatalf("Location %q", loc)
		}
		var o store.Organization
		e.Do("GET", "/organization/"+id, nil).JSON(t, &o)
		if o.Name != "Nordavis AS" || o.Country != "NO" || o.Currency != "NOK" || o.TimeZone != "Europe/Oslo" || !o.PricesIncludeVAT || o.OrganizationNumber != "923609016" {
			t.Fatalf("read back %+v", o)
		}
		// camelCase output, case-insensitive input.
		raw := string(e.Do("GET", "/organization/"+id, nil).Body)
		for _, k := range []string{`"organizationNumber"`, `"timeZone"`, `"pricesIncludeVat"`, `"createdAt"`} {
			if !strings.Contains(raw, k) {
				t.Errorf("output lacks %s: %s", k, raw)
			}
		}
		upd := validOrg()
		delete(upd, "Name")
		delete(upd, "Country")
		upd["NAME"], upd["country"], upd["timezone"] = "Nordavis Sverige AB", "se", "Europe/Stockholm"
		if r := e.Do("PUT", "/organization/"+id, upd); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		e.Do("GET", "/organization/"+id, nil).JSON(t, &o)
		if o.Name != "Nordavis Sverige AB" || o.Country != "SE" || o.TimeZone != "Europe/Stockholm" {
			t.Fatalf("after PUT: %+v", o)
		}
		var list []store.Organization
		e.Do("GET", "/organization", nil).JSON(t, &list)
		if len(list) != 1 || list[0].ID != id {
			t.Fatalf("list: %+v", list)
		}
		if r := e.Do("DELETE", "/organization/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE: %d", r.Status)
		}
		if r := e.Do("GET", "/organization/"+id, nil); r.Status != http.StatusNotFound || len(r.Body) != 0 {
			t.Fatalf("GET after DELETE: %d %q", r.Status, r.Body)
		}
		if r := e.Do("GET", "/organization/not-a-uuid", nil); !slices.Equal(r.Fields(t), []string{"id"}) {
			t.Fatalf("malformed id must name id")
		}
	})
}

func TestOrganizationValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		cases := []struct {
			name   string
			body   any
			fields []string
		}{
			{"every bad field at once", map[string]any{"name": "", "country": "XX", "currency": "KRONE", "timeZone": "Mars/Olympus", "logoUrl": "ftp://x"},
				[]string{"name", "country", "currency", "timeZone", "logoUrl"}},
			{"required fields missing", map[string]any{}, []string{"name", "country", "currency"}},
			{"wrong JSON type", map[string]any{"name": 42, "country": "NO", "currency": "NOK"}, []string{"name"}},
			{"wrong JSON type for a bool", map[string]any{"name": "A", "country": "NO", "currency": "NOK", "pricesIncludeVat": "yes"}, []string{"pricesIncludeVat"}},
			{"NUL in text", `{"name":"A\u0000B","country":"NO","currency":"NOK"}`, []string{"name"}},
			{"array instead of object", []any{1, 2}, []string{"body"}},
			{"malformed JSON", `{"name": "A",`, []string{"body"}},
			{"empty body", "", []string{"body"}},
			{"trailing data", `{"name":"A","country":"NO","currency":"NOK"} {}`, []string{"body"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got := e.Do("POST", "/organization", tc.body).Fields(t)
				if !slices.Equal(got, tc.fields) {
					t.Fatalf("400 names %v, want %v", got, tc.fields)
				}
			})
		}
		var list []store.Organization
		e.Do("GET", "/organization", nil).JSON(t, &list)
		if len(list) != 0 {
			t.Fatalf("invalid requests left %d organizations behind", len(list))
		}
	})
}

func TestOrganizationTenantIsolation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		id := e.Do("POST", "/organization", validOrg()).ID(t)
		b := e.NewTenant("tenant-b", false)
		for _, tc := range []struct {
			method string
			body   any
		}{{"GET", nil}, {"PUT", validOrg()}, {"DELETE", nil}} {
			if r := b.Do(tc.method, "/organization/"+id, tc.body); r.Status != http.StatusNotFound || len(r.Body) != 0 {
				t.Errorf("tenant B %s: %d %q, want empty 404", tc.method, r.Status, r.Body)
			}
		}
		var list []store.Organization
		b.Do("GET", "/organization", nil).JSON(t, &list)
		if len(list) != 0 {
			t.Errorf("tenant B lists %d of tenant A's organizations", len(list))
		}
		var o store.Organization
		e.Do("GET", "/organization/"+id, nil).JSON(t, &o)
		if o.Name != "Nordavis AS" {
			t.Errorf("tenant A's organization changed: %+v", o)
		}
	})
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		first := e.Do("POST", "/organization", validOrg(), "Idempotency-Key", "order-42")
		second := e.Do("POST", "/organization", validOrg(), "Idempotency-Key", "order-42")
		if first.ID(t) != second.ID(t) || first.Header.Get("Location") != second.Header.Get("Location") {
			t.Fatalf("replay differs: %s vs %s", first.Body, second.Body)
		}
		if second.Header.Get("Idempotent-Replayed") != "true" {
			t.Error("replay not marked Idempotent-Replayed")
		}
		var list []store.Organization
		e.Do("GET", "/organization", nil).JSON(t, &list)
		if len(list) != 1 {
			t.Fatalf("%d organizations, want 1", len(list))
		}
		other := validOrg()
		other["name"] = "Another AS"
		if r := e.Do("POST", "/organization", other, "Idempotency-Key", "order-42"); r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("same key, different body: %d", r.Status)
		}
		// A 400 is remembered too: the retry gets the same answer.
		bad := map[string]any{"name": ""}
		a := e.Do("POST", "/organization", bad, "Idempotency-Key", "bad-1")
		b := e.Do("POST", "/organization", bad, "Idempotency-Key", "bad-1")
		if a.Status != 400 || b.Status != 400 || string(a.Body) != string(b.Body) {
			t.Fatalf("400 replay: %d %d", a.Status, b.Status)
		}
		// Concurrent retries create one organization.
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.Do("POST", "/organization", other, "Idempotency-Key", "burst")
			}()
		}
		wg.Wait()
		e.Do("GET", "/organization", nil).JSON(t, &list)
		if len(list) != 2 {
			t.Fatalf("after a burst of retries: %d organizations, want 2", len(list))
		}
	})
}

func TestPagingLinkHeader(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		for range 5 {
			e.Do("POST", "/organization", validOrg()).ID(t)
		}
		seen := map[string]bool{}
		path := "/organization?limit=2"
		for pages := 0; path != ""; pages++ {
			if pages > 3 {
				t.Fatal("paging does not end")
			}
			r := e.Do("GET", path, nil)
			var list []store.Organization
			r.JSON(t, &list)
			for _, o := range list {
				seen[o.ID] = true
			}
			path = ""
			if link := r.Header.Get("Link"); link != "" {
				u, rel, _ := strings.Cut(link, ">; ")
				if rel != `rel="next"` || !strings.HasPrefix(u, "<"+apitest.BaseURL+"/organization?") {
					t.Fatalf("Link %q", link)
				}
				path = strings.TrimPrefix(u, "<"+apitest.BaseURL)
			}
		}
		if len(seen) != 5 {
			t.Fatalf("paged through %d organizations, want 5", len(seen))
		}
		for _, q := range []string{"limit=0", "limit=1001", "limit=x", "cursor=abc"} {
			if f := e.Do("GET", "/organization?"+q, nil).Fields(t); len(f) != 1 {
				t.Errorf("%s: fields %v", q, f)
			}
		}
	})
}

func TestConventions(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, store.SQLite, map[string]string{"KADENS_BODY_LIMIT": "2048"})
	big := validOrg()
	big["name"] = strings.Repeat("x", 4096)
	if r := e.Do("POST", "/organization", big); r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d", r.Status)
	}
	r := e.Do("GET", "/organization", nil, "X-Request-Id", "client-req-1")
	if r.Header.Get("X-Request-Id") != "client-req-1" {
		t.Errorf("X-Request-Id not echoed: %q", r.Header.Get("X-Request-Id"))
	}
	if id := e.Do("GET", "/organization", nil).Header.Get("X-Request-Id"); len(id) < 16 {
		t.Errorf("generated X-Request-Id %q", id)
	}
	if r := e.Do("GET", "/nowhere", nil); r.Status != http.StatusNotFound || len(r.Body) != 0 {
		t.Errorf("unknown path: %d %q", r.Status, r.Body)
	}
	if r := e.Do("PATCH", "/organization", nil); r.Status != http.StatusMethodNotAllowed || len(r.Body) != 0 || !strings.Contains(r.Header.Get("Allow"), "POST") {
		t.Errorf("wrong method: %d %q allow=%q", r.Status, r.Body, r.Header.Get("Allow"))
	}
	// A database failure is a JSON 500 that carries the request id.
	e.Store.Close()
	r = e.Do("GET", "/organization", nil, "X-Request-Id", "req-500")
	var se struct{ Code, Message, RequestID string }
	r.JSON(t, &se)
	if r.Status != http.StatusInternalServerError || se.RequestID != "req-500" || se.Code != "internal_error" || strings.Contains(se.Message, "sql") {
		t.Errorf("500: %d %s", r.Status, r.Body)
	}
}

func TestOrganizationWithSubscriptionsIsKept(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		sub, _, _ := beginSubscription(t, e, e.Tenant, time.Now().Add(24*time.Hour))
		if f := e.Do("DELETE", "/organization/"+sub.OrganizationID, nil).Fields(t); !slices.Equal(f, []string{"id"}) {
			t.Fatalf("deleting an organization with subscriptions: fields %v", f)
		}
		if r := e.Do("GET", "/organization/"+sub.OrganizationID, nil); r.Status != 200 {
			t.Fatalf("organization gone: %d", r.Status)
		}
	})
}
