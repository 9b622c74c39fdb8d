package api_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/webhook"
)

// wantFields asserts that r is a 400 naming exactly fields.
func wantFields(t *testing.T, what string, r *apitest.Response, fields ...string) {
	t.Helper()
	if r.Status != http.StatusBadRequest {
		t.Fatalf("%s: want 400 naming %v, got %d %s", what, fields, r.Status, r.Body)
	}
	if got := r.Fields(t); !slices.Equal(got, fields) {
		t.Fatalf("%s: fields %q, want %q (%s)", what, got, fields, r.Body)
	}
}

// NUL and other control characters, invalid UTF-8 and unpaired surrogates
// in any string of a body are a 400 naming the property's path, on both
// engines (PostgreSQL cannot store NUL: it answered 500; SQLite stored it),
// and nothing is written. Descriptions keep their line breaks.
func TestControlCharactersInBodies(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		order := func(extra string) string {
			return fmt.Sprintf(`{"organizationId": %q, "templatePackageId": %q, %s}`, f.org, f.pkg, extra)
		}
		for _, tc := range []struct {
			path, body, field string
		}{
			{"/subscriber", `{"name": "Kari\u0000 Nordmann"}`, "name"},
			{"/subscriber", `{"name": "Kari", "externalId": "crm\u0000-1"}`, "externalId"},
			{"/subscriber", `{"name": "Kari", "externalId": "crm\n1"}`, "externalId"},
			{"/subscriber", `{"name": "Kari", "email": "kari\t@example.no"}`, "email"},
			{"/subscriber", `{"name": "Kari", "address": {"line1": "Storgata 1\u0000", "city": "Oslo"}}`, "address.line1"},
			{"/subscriber", `{"name": "Kari", "contacts": [{"role": "Delivery", "name": "Ola"}, {"role": "Invoice", "name": "\u0085Regnskap"}]}`, "contacts[1].name"},
			{"/subscriber", "{\"name\": \"Kari \xff\"}", "name"},
			{"/subscriber", `{"name": "Kari \ud800"}`, "name"},
			{"/order", order(`"subscriber": {"name": "Kari", "contacts": [{"role": "Invoice", "name": "Ola\u0000"}]}`), "subscriber.contacts[0].name"},
			{"/order", order(`"subscriber": {"name": "Kari", "externalSubscriberId": "x\u001by"}`), "subscriber.externalSubscriberId"},
			{"/order", order(fmt.Sprintf(`"subscriberId": %q, "invoiceContact": {"name": "Regnskap\u0000AS"}`, f.subscriber)), "invoiceContact.name"},
			{"/order", order(fmt.Sprintf(`"subscriberId": %q, "invoiceContact": {"name": "R", "address": {"city": "O\u0000slo"}}`, f.subscriber)), "invoiceContact.address.city"},
			{"/product", `{"name": "Digital", "category": "digital\u0000", "vatRate": 0}`, "category"},
			{"/product", `{"name": "Digital", "description": "Every day\u0000", "vatRate": 0}`, "description"},
			{"/organization", `{"name": "Nordavis\u0000", "country": "NO", "currency": "NOK", "timeZone": "Europe/Oslo"}`, "name"},
		} {
			r := e.Do("POST", tc.path, tc.body)
			wantFields(t, fmt.Sprintf("POST %s %s", tc.path, tc.body), r, tc.field)
		}
		for _, list := range []string{"/subscriber", "/order", "/product", "/organization"} {
			var items []map[string]any
			e.Do("GET", list, nil).JSON(t, &items)
			for _, it := range items {
				for k, v := range it {
					if s, ok := v.(string); ok && strings.ContainsAny(s, "\x00\x1b\u0085\ufffd") {
						t.Fatalf("%s stored %s = %q", list, k, s)
					}
				}
			}
		}
		// Free text keeps its line breaks and tabs.
		id := create(t, e.Tenant, "/product", map[string]any{"name": "Papir", "description": "Line 1\n\tLine 2", "vatRate": 0})
		if m := jsonMap(t, e.Do("GET", "/product/"+id, nil)); m["description"] != "Line 1\n\tLine 2" {
			t.Fatalf("description %q", m["description"])
		}
	})
}

// A control character or invalid UTF-8 in any query parameter of any list
// is a 400 naming the parameter, on both engines.
func TestControlCharactersInQueryParameters(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		var doc openAPIDoc
		e.Raw("GET", "/openapi.json", nil).JSON(t, &doc)
		param := regexp.MustCompile(`\{[^}]+\}`)
		checked := 0
		for path, ops := range doc.Paths {
			op, ok := ops["get"]
			if !ok {
				continue
			}
			target := param.ReplaceAllString(path, "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d71")
			for _, p := range op.Parameters {
				if p.In != "query" {
					continue
				}
				// An operation whose 400 the document gives no body (the
				// contract's account-source list) answers a bare 400.
				bare := false
				if r400, ok := op.Responses["400"].(map[string]any); ok {
					_, hasBody := r400["content"]
					bare = !hasBody
				}
				for _, bad := range []string{"a%00b", "Issued%0A", "%C2%85", "%FF"} {
					r := e.Do("GET", target+"?"+p.Name+"="+bad, nil)
					if bare {
						if r.Status != http.StatusBadRequest || len(r.Body) != 0 {
							t.Errorf("GET %s?%s=%s: %d %q, want a 400 without a body", target, p.Name, bad, r.Status, r.Body)
						}
						continue
					}
					wantFields(t, "GET "+target+"?"+p.Name+"="+bad, r, p.Name)
				}
				checked++
			}
		}
		if checked < 10 {
			t.Fatalf("only %d query parameters checked", checked)
		}
		// Text still passes.
		if r := e.Do("GET", "/subscriber?externalId=%C3%A6%C3%B8%C3%A5&limit=5", nil); r.Status != http.StatusOK {
			t.Fatalf("a Norwegian external id: %d %s", r.Status, r.Body)
		}
	})
}

// Unknown properties are a 400 naming each with its path; nothing is
// created. Known names still match case-insensitively.
func TestUnknownPropertiesAreRefused(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		body := fmt.Sprintf(`{"OrganizationId": %q, "templatePackageId": %q, "subscriberId": %q,
			"templatePackageChoices": {"priceOverrid": 10}, "paymentAgreementParams": {"providerType": "Invoice"},
			"invoiceContact": {"name": "Regnskap AS", "fullPrice": 100}, "requestedStrat": "2027-02-01T00:00:00Z"}`, f.org, f.pkg, f.subscriber)
		r := e.Do("POST", "/order", body)
		wantFields(t, "POST /order", r, "templatePackageChoices.priceOverrid", "paymentAgreementParams", "invoiceContact.fullPrice", "requestedStrat")
		if !strings.Contains(string(r.Body), "did you mean requestedStart?") {
			t.Fatalf("no suggestion: %s", r.Body)
		}
		wantFields(t, "POST /subscriber", e.Do("POST", "/subscriber", `{"Name": "Kari", "nmae": "Kari"}`), "nmae")
		wantFields(t, "POST /subscriber with an id", e.Do("POST", "/subscriber", `{"id": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d71", "name": "Kari"}`), "id")
		var orders []map[string]any
		e.Do("GET", "/order", nil).JSON(t, &orders)
		if len(orders) != 0 {
			t.Fatalf("orders created: %v", orders)
		}
		if got := len(listSubscribers(t, e.Tenant, "")); got != 1 {
			t.Fatalf("%d subscribers, want the fixture's 1", got)
		}
	})
}

// Every resource with a PUT takes back what its GET answered, modified:
// the read-only properties (id, timestamps, status, …) are accepted and
// ignored, so GET-modify-PUT works while unknown properties are refused.
func TestGetModifyPutRoundTrips(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		c := newAPICatalog(t, e, tn)
		f := newBillingFixture(t, e, tn)
		policy := create(t, tn, "/prorationpolicy", map[string]any{"name": "Default"})
		step := create(t, tn, "/package", contractPackage("149", "149", c.digital, c.monthly))
		resources := map[string]struct {
			id     string
			change map[string]any
		}{
			"/organization":    {f.org, map[string]any{"name": "Nordavis Media AS"}},
			"/product":         {c.digital, map[string]any{"name": "Nordavis Digital+", "description": "All\nof it"}},
			"/billingplan":     {c.monthly, map[string]any{"name": "Monthly (invoice)"}},
			"/package":         {f.pkg, map[string]any{"name": "Digital 2"}},
			"/subscriber":      {f.subscriber, map[string]any{"name": "Kari Nordmann-Hansen"}},
			"/prorationpolicy": {policy, map[string]any{"name": "Default policy"}},
			"/dunningprocess": {create(t, tn, "/dunningprocess", map[string]any{"name": "Standard", "reminderDays": []int{7, 14},
				"reminderFee": 35, "prorationPolicyId": policy}), map[string]any{"name": "Standard dunning"}},
			"/packagechain": {create(t, tn, "/packagechain", map[string]any{"name": "Intro", "packageChain": map[string]any{
				"steps": []map[string]any{{"step": 1, "nextPackageId": step, "periods": 3}}}}), map[string]any{"name": "Intro offer"}},
			"/webhook": {create(t, tn, "/webhook", map[string]any{"url": "https://93.184.215.14/x", "eventTypes": []string{"InvoiceIssued"},
				"secret": webhook.NewSecret(), "disableValidation": true}), map[string]any{"eventTypes": []any{"InvoiceIssued", "OrderProcessed"}}},
			"/autogiro/account": {create(t, tn, "/autogiro/account", map[string]any{"organizationId": f.org, "bankgiroCustomerNumber": "543210",
				"bankgiroNumber": "5432-1096"}), map[string]any{"name": "Autogiro"}},
			"/avtalegiro/account": {create(t, tn, "/avtalegiro/account", agAccountBody("12345678903", "https://bank.example")),
				map[string]any{"name": "Avis AvtaleGiro"}},
		}
		// Sub-resources with a PUT (a resource's settings), by their path.
		sub := map[string]struct {
			path   string
			change map[string]any
		}{
			"/product/{id}/deliveryschedule":             {"/product/" + c.digital + "/deliveryschedule", map[string]any{"weekdays": []any{"Fri", "Sat"}}},
			"/organization/{id}/deliverystoprules":       {"/organization/" + f.org + "/deliverystoprules", map[string]any{"minDays": 4}},
			"/organization/{id}/deliveryaddressrules":    {"/organization/" + f.org + "/deliveryaddressrules", map[string]any{"surchargePerEditionMinor": 500}},
			"/deliverypostalcode/{country}/{postalCode}": {"/deliverypostalcode/NO/3580", map[string]any{"route": "R8"}},
			"/bookkeeping/chart/{organizationId}":        {"/bookkeeping/chart/" + f.org, map[string]any{"deferredAccount": "2900"}},
		}
		// A vacation stop of a daily print subscription, ten days ahead.
		if r := tn.Do("PUT", "/product/"+c.print+"/deliveryschedule", map[string]any{"weekdays": []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}}); r.Status != http.StatusNoContent {
			t.Fatalf("schedule: %d %s", r.Status, r.Body)
		}
		paper := tn.Seed(t).Package(seed.Package{Name: "Papir", Price: "399.00", Products: []string{c.print}, Plans: []string{c.monthly}})
		paperSub := create(t, tn, "/order", map[string]any{"organizationId": f.org, "templatePackageId": paper, "subscriberId": f.subscriber})
		var completed struct{ SubscriptionID string }
		tn.Do("POST", "/order/"+paperSub+"/complete", nil).JSON(t, &completed)
		var clock struct{ Now time.Time }
		tn.Do("GET", "/testclock", nil).JSON(t, &clock)
		day := func(n int) string { return clock.Now.In(time.UTC).AddDate(0, 0, n).Format(time.DateOnly) }
		stops := "/subscription/" + completed.SubscriptionID + "/deliverystop"
		stop := create(t, tn, stops, map[string]any{"firstDate": day(10), "lastDate": day(14)})
		sub["/subscription/{id}/deliverystop/{stopId}"] = struct {
			path   string
			change map[string]any
		}{stops + "/" + stop, map[string]any{"lastDate": day(15)}}
		// A temporary delivery address of it, twenty days ahead.
		if r := tn.Do("PUT", "/deliverypostalcode/NO/3580", map[string]any{"carrier": "Hallingdal Bud", "route": "R7", "deliverable": true}); r.Status != http.StatusNoContent {
			t.Fatalf("postal code: %d %s", r.Status, r.Body)
		}
		addresses := "/subscription/" + completed.SubscriptionID + "/deliveryaddress"
		address := create(t, tn, addresses, map[string]any{"kind": "Temporary", "firstDate": day(20), "lastDate": day(24), "name": "Kari Nordmann",
			"line1": "Hyttevegen 3", "postalCode": "3580", "city": "Geilo", "country": "NO"})
		sub["/subscription/{id}/deliveryaddress/{addressId}"] = struct {
			path   string
			change map[string]any
		}{addresses + "/" + address, map[string]any{"lastDate": day(25), "city": "Geilo sentrum"}}
		if r := tn.Do("POST", "/bookkeeping/chart/"+f.org+"/example", map[string]any{"country": "NO"}); r.Status/100 != 2 {
			t.Fatalf("install the example chart: %d %s", r.Status, r.Body)
		}
		// PUTs whose round trip another test shows: they answer 202, as
		// the contract says, not 204.
		elsewhere := map[string]string{
			"/authorizations/identityprovider/account/idp-a/{id}": "TestIdentityProviderAccounts",
			"/authorizations/identityprovider/account/idp-b/{id}": "TestIdentityProviderAccounts",
			// The merchant's keys are write-only (GET never shows them), so
			// a PUT must carry them again: nothing to round-trip.
			"/vipps/merchant": "TestVippsAPI",
		}
		var doc openAPIDoc
		e.Raw("GET", "/openapi.json", nil).JSON(t, &doc)
		for path, ops := range doc.Paths {
			_, put := ops["put"]
			_, get := ops["get"]
			// A PUT without a GET on its path is an action on the resource
			// (PUT /authorizations/user/{id}/password), with nothing to
			// round-trip.
			if put && get && elsewhere[path] == "" {
				_, covered := resources[strings.TrimSuffix(path, "/{id}")]
				if _, ok := sub[path]; !covered && !ok {
					t.Errorf("PUT %s has no round trip here", path)
				}
			}
		}
		type roundTrip struct {
			path   string
			change map[string]any
		}
		var trips []roundTrip
		for base, res := range resources {
			trips = append(trips, roundTrip{base + "/" + res.id, res.change})
		}
		for _, res := range sub {
			trips = append(trips, roundTrip(res))
		}
		for _, res := range trips {
			path := res.path
			before := jsonMap(t, e.Do("GET", path, nil))
			for k, v := range res.change {
				before[k] = v
			}
			if r := e.Do("PUT", path, before); r.Status != http.StatusNoContent {
				t.Errorf("PUT %s with its GET body: %d %s", path, r.Status, r.Body)
				continue
			}
			after := jsonMap(t, e.Do("GET", path, nil))
			for k, v := range res.change {
				if fmt.Sprint(after[k]) != fmt.Sprint(v) {
					t.Errorf("PUT %s: %s is %v, want %v", path, k, after[k], v)
				}
			}
			before["colour"] = "blue"
			wantFields(t, "PUT "+path+" with an unknown property", e.Do("PUT", path, before), "colour")
		}
	})
}

// A non-ASCII, control-character or over-long Idempotency-Key is a 400
// naming the header, and the request is not carried out.
func TestIdempotencyKeyMustBeVisibleASCII(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		for _, key := range []string{"ordre-æøå", "two words", strings.Repeat("k", 256)} {
			r := e.Do("POST", "/product", map[string]any{"name": "Digital " + key[:3], "vatRate": 0}, "Idempotency-Key", key)
			wantFields(t, "key "+key, r, "Idempotency-Key")
		}
		var products []map[string]any
		e.Do("GET", "/product", nil).JSON(t, &products)
		if len(products) != 0 {
			t.Fatalf("created with a refused key: %v", products)
		}
		key := strings.Repeat("k", 255)
		first := e.Do("POST", "/product", map[string]any{"name": "Digital", "vatRate": 0}, "Idempotency-Key", key)
		again := e.Do("POST", "/product", map[string]any{"name": "Digital", "vatRate": 0}, "Idempotency-Key", key)
		if first.ID(t) != again.ID(t) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("a 255-character key did not replay: %s %s", first.Body, again.Body)
		}
	})
}

// A test clock cannot be moved to where later orders could not be
// represented (year 9999 broke every later order with a 500); the answer
// names the bound. Just below it, orders still complete.
func TestTestClockBound(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		for _, to := range []string{"9999-06-01T00:00:00Z", "3000-01-01T00:00:00Z"} {
			r := e.Do("POST", "/testclock/advance", map[string]any{"to": to})
			wantFields(t, "advance to "+to, r, "to")
			if !strings.Contains(string(r.Body), "3000-01-01T00:00:00Z") {
				t.Fatalf("the answer does not name the bound: %s", r.Body)
			}
		}
		if r := e.Do("POST", "/testclock/advance", map[string]any{"to": "2999-12-01T00:00:00Z"}); r.Status != http.StatusOK {
			t.Fatalf("advance below the bound: %d %s", r.Status, r.Body)
		}
		if sub := f.order(nil); sub == "" {
			t.Fatal("no subscription")
		}
		if r := e.Do("POST", "/testclock/advance", map[string]any{"to": "2999-12-31T23:59:59Z"}); r.Status != http.StatusOK {
			t.Fatalf("renewal at the bound: %d %s", r.Status, r.Body)
		}
		if n := len(f.invoices("")); n != 2 {
			t.Fatalf("%d invoices, want the order's and its renewal's", n)
		}
	})
}

// Paths match case-insensitively and with a trailing slash; the 404 and
// 405 rules hold for the spellings too.
func TestPathSpellings(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		id := e.Do("POST", "/Product/", map[string]any{"name": "Digital", "vatRate": 0}).ID(t)
		for _, p := range []string{"/PRODUCT/" + strings.ToUpper(id), "/product/" + id + "/", "/Product/" + id} {
			if r := e.Do("GET", p, nil); r.Status != http.StatusOK {
				t.Errorf("GET %s: %d %s", p, r.Status, r.Body)
			}
		}
		var list []map[string]any
		e.Do("GET", "/Product/?limit=1", nil).JSON(t, &list)
		if len(list) != 1 {
			t.Fatalf("GET /Product/?limit=1: %v", list)
		}
		r := e.Do("PATCH", "/Product/", nil)
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, POST" {
			t.Fatalf("PATCH /Product/: %d Allow %q", r.Status, r.Header.Get("Allow"))
		}
		for _, p := range []string{"/Nosuch/", "/product/" + id + "/nosuch/", "/productx/"} {
			if r := e.Do("GET", p, nil); r.Status != http.StatusNotFound || len(r.Body) != 0 {
				t.Errorf("GET %s: %d %s", p, r.Status, r.Body)
			}
		}
	})
}

// TestEmptyPathSegments: a path with an empty, "." or ".." segment is an
// empty 404, never a redirect to its cleaned form (Go's ServeMux answered
// /subscription//changePaymentAgreement with one) — on the API, the
// operational routes and /analytics alike. The client here does not follow
// redirects, so one would show.
func TestEmptyPathSegments(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		id := e.Do("POST", "/product", map[string]any{"name": "Digital", "vatRate": 0}).ID(t)
		hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for _, c := range []struct{ method, path string }{
			{"POST", "/subscription//changePaymentAgreement"},
			{"POST", "/subscription/" + id + "//cancel"},
			{"GET", "//product"},
			{"GET", "/product//" + id},
			{"GET", "/product/./" + id},
			{"GET", "/subscriber/../product/" + id},
			{"GET", "/product/" + id + "//"},
			{"GET", "//healthz"},
			{"GET", "/analytics//Subscribers"},
			{"GET", "/analytics/./Subscribers"},
		} {
			req, err := http.NewRequest(c.method, e.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+e.Tenant.Token)
			req.Header.Set("S4-TenantId", e.Tenant.ID)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound || len(body) != 0 || resp.Header.Get("Location") != "" {
				t.Errorf("%s %s: %d Location %q %s, want an empty 404", c.method, c.path, resp.StatusCode, resp.Header.Get("Location"), body)
			}
		}
		// The canonical spellings still answer.
		for _, p := range []string{"/product/" + id, "/product/" + id + "/", "/healthz", "/analytics/Subscribers"} {
			if r := e.Do("GET", p, nil); r.Status != http.StatusOK {
				t.Errorf("GET %s: %d %s", p, r.Status, r.Body)
			}
		}
	})
}

// Completing orders while charges and allowances are booked on the same
// subscriber account: every request succeeds. The order's first invoice
// bills the account's open items, which a concurrent booking or another
// completion changes; the completion retries that conflict instead of
// answering 409 for another request's timing.
func TestOrderCompletionRacesAccountItems(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10))
		f.order(nil)
		account := f.invoices("")[0].SubscriberAccountID
		const n = 12
		orders := make([]string, n)
		for i := range orders {
			orders[i] = create(t, f.tn, "/order", map[string]any{"organizationId": f.org, "templatePackageId": f.pkg, "subscriberId": f.subscriber})
		}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			fail  = make(chan string, 3*n)
		)
		run := func(method, path string, body any, want int) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if r := f.tn.Do(method, path, body); r.Status != want {
					fail <- fmt.Sprintf("%s %s: %d %s", method, path, r.Status, r.Body)
				}
			}()
		}
		for i := range n {
			run("POST", "/order/"+orders[i]+"/complete", nil, http.StatusOK)
			run("POST", "/subscriberaccount/"+account+"/charge", map[string]any{"amount": 10, "description": "Extra copy", "vatRate": 25}, http.StatusCreated)
			run("POST", "/subscriberaccount/"+account+"/allowance", map[string]any{"amount": 5, "description": "Goodwill", "vatRate": 25}, http.StatusCreated)
		}
		close(start)
		wg.Wait()
		close(fail)
		for msg := range fail {
			t.Error(msg)
		}
		if got := len(f.invoices("")); got != n+1 {
			t.Fatalf("%d invoices, want %d", got, n+1)
		}
	})
}
