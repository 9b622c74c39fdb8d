package api_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

func validSubscriber() map[string]any {
	return map[string]any{
		"Name": "Kari Nordmann", "email": "Kari@Example.no", "Phone": "+47 (912) 34-567",
		"address":    map[string]any{"line1": "Storgata 1", "line2": "H0201", "PostalCode": "0155", "city": "Oslo", "country": "no"},
		"country":    "no",
		"externalId": "crm-1",
		"contacts": []any{
			map[string]any{"role": "Invoice", "name": "Regnskap AS", "email": "faktura@regnskap.no",
				"address": map[string]any{"line1": "Postboks 7", "postalCode": "0101", "city": "Oslo", "country": "NO"}},
			map[string]any{"Role": "delivery", "name": "Ola Nordmann", "phone": "91234567"},
		},
	}
}

func getSubscriber(t *testing.T, tn apitest.Tenant, id string) store.Subscriber {
	t.Helper()
	r := tn.Do("GET", "/subscriber/"+id, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /subscriber/%s: %d %s", id, r.Status, r.Body)
	}
	var s store.Subscriber
	r.JSON(t, &s)
	return s
}

func listSubscribers(t *testing.T, tn apitest.Tenant, query string) []store.Subscriber {
	t.Helper()
	r := tn.Do("GET", "/subscriber?"+query, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /subscriber?%s: %d %s", query, r.Status, r.Body)
	}
	if strings.TrimSpace(string(r.Body)) == "null" {
		t.Fatalf("GET /subscriber?%s: null instead of an array", query)
	}
	var list []store.Subscriber
	r.JSON(t, &list)
	return list
}

func TestSubscriberLifecycle(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		r := e.Do("POST", "/subscriber", validSubscriber())
		id := r.ID(t)
		if !store.ValidID(id) {
			t.Fatalf("id %q is not a uuid", id)
		}
		if loc := r.Header.Get("Location"); loc != apitest.BaseURL+"/subscriber/"+id {
			t.Fatalf("Location %q", loc)
		}
		s := getSubscriber(t, e.Tenant, id)
		want := store.Subscriber{
			ID: id, SubscriberNumber: 1, ExternalID: "crm-1", Name: "Kari Nordmann", Email: "Kari@Example.no",
			Phone:   "+47 (912) 34-567",
			Address: store.Address{Line1: "Storgata 1", Line2: "H0201", PostalCode: "0155", City: "Oslo", Country: "NO"},
			Country: "NO",
			Contacts: []store.Contact{
				{Role: store.ContactInvoice, Name: "Regnskap AS", Email: "faktura@regnskap.no",
					Address: store.Address{Line1: "Postboks 7", PostalCode: "0101", City: "Oslo", Country: "NO"}},
				{Role: store.ContactDelivery, Name: "Ola Nordmann", Phone: "91234567"},
			},
			CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		}
		if !reflect.DeepEqual(s, want) {
			t.Fatalf("read back\n%+v\nwant\n%+v", s, want)
		}
		if s.CreatedAt.IsZero() || !s.CreatedAt.Equal(s.UpdatedAt) {
			t.Fatalf("timestamps %v %v", s.CreatedAt, s.UpdatedAt)
		}
		raw := string(e.Do("GET", "/subscriber/"+id, nil).Body)
		for _, k := range []string{`"subscriberNumber":1,`, `"externalId"`, `"postalCode"`, `"role":"Invoice"`, `"createdAt"`} {
			if !strings.Contains(raw, k) {
				t.Errorf("output lacks %s: %s", k, raw)
			}
		}

		// A minimal subscriber gets the next number and empty, non-null parts.
		id2 := e.Do("POST", "/subscriber", map[string]any{"name": "Nils"}).ID(t)
		s2 := getSubscriber(t, e.Tenant, id2)
		if s2.SubscriberNumber != 2 || s2.Contacts == nil || len(s2.Contacts) != 0 || s2.ExternalID != "" {
			t.Fatalf("minimal subscriber: %+v", s2)
		}
		if raw := string(e.Do("GET", "/subscriber/"+id2, nil).Body); !strings.Contains(raw, `"contacts":[]`) {
			t.Errorf("empty contacts not an array: %s", raw)
		}

		// PUT replaces: left-out optional fields are cleared, the number is kept.
		upd := map[string]any{"name": "Kari Nordmann-Hansen", "email": "kari@hansen.no", "country": "SE"}
		if r := e.Do("PUT", "/subscriber/"+id, upd); r.Status != http.StatusNoContent || len(r.Body) != 0 {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		s = getSubscriber(t, e.Tenant, id)
		if s.Name != "Kari Nordmann-Hansen" || s.Email != "kari@hansen.no" || s.Country != "SE" || s.SubscriberNumber != 1 ||
			s.ExternalID != "" || s.Phone != "" || s.Address != (store.Address{}) || len(s.Contacts) != 0 {
			t.Fatalf("after PUT: %+v", s)
		}
		if s.UpdatedAt.Before(s.CreatedAt) {
			t.Fatalf("updatedAt %v before createdAt %v", s.UpdatedAt, s.CreatedAt)
		}
		// A given number replaces the old one.
		upd["subscriberNumber"] = 77
		if r := e.Do("PUT", "/subscriber/"+id, upd); r.Status != http.StatusNoContent {
			t.Fatalf("PUT number: %d %s", r.Status, r.Body)
		}
		if s := getSubscriber(t, e.Tenant, id); s.SubscriberNumber != 77 {
			t.Fatalf("number after PUT: %d", s.SubscriberNumber)
		}
		if r := e.Do("PUT", "/subscriber/"+store.NewID(), upd); r.Status != http.StatusNotFound || len(r.Body) != 0 {
			t.Fatalf("PUT unknown: %d %q", r.Status, r.Body)
		}

		if r := e.Do("DELETE", "/subscriber/"+id, nil); r.Status != http.StatusNoContent || len(r.Body) != 0 {
			t.Fatalf("DELETE: %d %q", r.Status, r.Body)
		}
		if r := e.Do("GET", "/subscriber/"+id, nil); r.Status != http.StatusNotFound || len(r.Body) != 0 {
			t.Fatalf("GET after DELETE: %d %q", r.Status, r.Body)
		}
		if r := e.Do("DELETE", "/subscriber/"+id, nil); r.Status != http.StatusNotFound {
			t.Fatalf("second DELETE: %d", r.Status)
		}
		if list := listSubscribers(t, e.Tenant, ""); len(list) != 1 || list[0].ID != id2 {
			t.Fatalf("list after delete: %+v", list)
		}
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			if f := e.Do(m, "/subscriber/not-a-uuid", upd).Fields(t); !slices.Equal(f, []string{"id"}) {
				t.Errorf("%s malformed id names %v", m, f)
			}
		}
	})
}

func TestSubscriberValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		long := strings.Repeat("x", 201)
		cases := []struct {
			name   string
			body   any
			fields []string
		}{
			{"every bad field at once", map[string]any{
				"name": "  ", "email": "not-an-email", "phone": "call me", "country": "XX",
				"address":    map[string]any{"line1": long, "postalCode": strings.Repeat("1", 21), "country": "ZZ"},
				"externalId": long, "subscriberNumber": 0,
				"contacts": []any{
					map[string]any{"role": "Billing", "email": "a@", "phone": "1234"},
					map[string]any{"name": long, "address": map[string]any{"country": "Norway"}},
					map[string]any{"role": "Invoice"},
					map[string]any{"role": "invoice"},
				},
			}, []string{"name", "email", "phone", "address.line1", "address.postalCode", "address.country", "country",
				"externalId", "subscriberNumber",
				"contacts[0].role", "contacts[0].email", "contacts[0].phone",
				"contacts[1].role", "contacts[1].name", "contacts[1].address.country",
				"contacts[3].role"}},
			{"name required", map[string]any{"email": "a@example.com"}, []string{"name"}},
			{"name too long", map[string]any{"name": long}, []string{"name"}},
			{"email with a display name", map[string]any{"name": "A", "email": "Kari <kari@example.no>"}, []string{"email"}},
			{"phone with too many digits", map[string]any{"name": "A", "phone": "+47 1234567890123456789"}, []string{"phone"}},
			{"negative number", map[string]any{"name": "A", "subscriberNumber": -3}, []string{"subscriberNumber"}},
			{"wrong type: name", map[string]any{"name": 42}, []string{"name"}},
			{"wrong type: number as string", map[string]any{"name": "A", "subscriberNumber": "12"}, []string{"subscriberNumber"}},
			{"wrong type: fractional number", map[string]any{"name": "A", "subscriberNumber": 1.5}, []string{"subscriberNumber"}},
			{"number beyond int64", `{"name":"A","subscriberNumber":99999999999999999999}`, []string{"subscriberNumber"}},
			{"wrong type: address", map[string]any{"name": "A", "address": "Storgata 1"}, []string{"address"}},
			{"wrong type: contacts", map[string]any{"name": "A", "contacts": map[string]any{"role": "Invoice"}}, []string{"contacts"}},
			{"wrong type: nested", map[string]any{"name": "A", "contacts": []any{map[string]any{"role": "Invoice", "address": map[string]any{"city": 5}}}}, []string{"contacts.address.city"}},
			{"wrong type: contact", map[string]any{"name": "A", "contacts": []any{"Invoice"}}, []string{"contacts"}},
			{"array body", []any{1}, []string{"body"}},
			{"malformed JSON", `{"name": "A",`, []string{"body"}},
			{"empty body", "", []string{"body"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got := e.Do("POST", "/subscriber", tc.body).Fields(t)
				if !slices.Equal(got, tc.fields) {
					t.Fatalf("400 names %v, want %v", got, tc.fields)
				}
			})
		}
		// PUT validates the same way.
		id := e.Do("POST", "/subscriber", map[string]any{"name": "A"}).ID(t)
		if got := e.Do("PUT", "/subscriber/"+id, map[string]any{"name": "", "email": "x"}).Fields(t); !slices.Equal(got, []string{"name", "email"}) {
			t.Fatalf("PUT 400 names %v", got)
		}
		if list := listSubscribers(t, e.Tenant, ""); len(list) != 1 {
			t.Fatalf("invalid requests left %d subscribers, want 1", len(list))
		}
		// Good values at the edges are accepted; null means absent.
		ok := map[string]any{"name": strings.Repeat("é", 200), "phone": "12345", "email": "a.b+c@sub.example.co.uk",
			"contacts": nil, "address": nil, "subscriberNumber": nil, "externalId": nil}
		e.Do("POST", "/subscriber", ok).ID(t)
	})
}

func TestSubscriberNumbersAndExternalIDs(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		number := func(id string) int64 { t.Helper(); return getSubscriber(t, e.Tenant, id).SubscriberNumber }
		a := e.Do("POST", "/subscriber", map[string]any{"name": "A", "externalId": "ext-a"}).ID(t)
		if n := number(a); n != 1 {
			t.Fatalf("first number %d", n)
		}
		// Duplicates are 400s naming the field; they consume no number.
		if f := e.Do("POST", "/subscriber", map[string]any{"name": "B", "externalId": "ext-a"}).Fields(t); !slices.Equal(f, []string{"externalId"}) {
			t.Fatalf("duplicate externalId names %v", f)
		}
		if f := e.Do("POST", "/subscriber", map[string]any{"name": "B", "subscriberNumber": 1}).Fields(t); !slices.Equal(f, []string{"subscriberNumber"}) {
			t.Fatalf("duplicate subscriberNumber names %v", f)
		}
		b := e.Do("POST", "/subscriber", map[string]any{"name": "B"}).ID(t)
		if n := number(b); n != 2 {
			t.Fatalf("after failed creates the next number is %d, want 2", n)
		}
		// Subscribers without an external id do not clash with each other.
		e.Do("POST", "/subscriber", map[string]any{"name": "C", "externalId": ""}).ID(t)
		// An explicit number does not move the series (a client cannot make
		// it run out, or jump)...
		big := e.Do("POST", "/subscriber", map[string]any{"name": "D", "subscriberNumber": 5000}).ID(t)
		if n := number(big); n != 5000 {
			t.Fatalf("explicit number stored as %d", n)
		}
		if n := number(e.Do("POST", "/subscriber", map[string]any{"name": "E"}).ID(t)); n != 4 {
			t.Fatalf("after an explicit 5000 the next number is %d, want 4", n)
		}
		// ...and the series passes over one it reaches.
		if n := number(e.Do("POST", "/subscriber", map[string]any{"name": "F", "subscriberNumber": 5}).ID(t)); n != 5 {
			t.Fatalf("explicit 5 stored as %d", n)
		}
		if n := number(e.Do("POST", "/subscriber", map[string]any{"name": "G"}).ID(t)); n != 6 {
			t.Fatalf("after an explicit 5 the next number is %d, want 6", n)
		}
		// PUT is held to the same rules, and a PUT to its own values is fine.
		if f := e.Do("PUT", "/subscriber/"+b, map[string]any{"name": "B", "externalId": "ext-a"}).Fields(t); !slices.Equal(f, []string{"externalId"}) {
			t.Fatalf("PUT duplicate externalId names %v", f)
		}
		if f := e.Do("PUT", "/subscriber/"+b, map[string]any{"name": "B", "subscriberNumber": 5000}).Fields(t); !slices.Equal(f, []string{"subscriberNumber"}) {
			t.Fatalf("PUT duplicate subscriberNumber names %v", f)
		}
		if r := e.Do("PUT", "/subscriber/"+a, map[string]any{"name": "A2", "externalId": "ext-a", "subscriberNumber": 1}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT own values: %d %s", r.Status, r.Body)
		}
		if r := e.Do("PUT", "/subscriber/"+b, map[string]any{"name": "B", "subscriberNumber": 9000}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT new number: %d %s", r.Status, r.Body)
		}
		if n := number(e.Do("POST", "/subscriber", map[string]any{"name": "H"}).ID(t)); n != 7 {
			t.Fatalf("after PUT to 9000 the next number is %d, want 7", n)
		}
		// A deleted subscriber's external id is free again; its number is
		// behind the series and not reassigned.
		e.Do("DELETE", "/subscriber/"+a, nil)
		if n := number(e.Do("POST", "/subscriber", map[string]any{"name": "A again", "externalId": "ext-a"}).ID(t)); n != 8 {
			t.Fatalf("number after delete %d, want 8", n)
		}
	})
}

// TestSubscriberNumberExtremes: a client-chosen number at the end of int64
// is refused naming the field, on POST and PUT; the largest allowed one is
// stored, and subscribers created without a number still get the series'
// next number, before and after it is deleted. (It used to be accepted, and
// then every subscriber without a number was refused: "no number is left to
// assign".)
func TestSubscriberNumberExtremes(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		number := func(id string) int64 { t.Helper(); return getSubscriber(t, e.Tenant, id).SubscriberNumber }
		for _, n := range []any{int64(math.MaxInt64), store.MaxSubscriberNumber + 1, 0, -1} {
			if f := e.Do("POST", "/subscriber", map[string]any{"name": "X", "subscriberNumber": n}).Fields(t); !slices.Equal(f, []string{"subscriberNumber"}) {
				t.Fatalf("subscriberNumber %v: 400 names %v", n, f)
			}
		}
		top := e.Do("POST", "/subscriber", map[string]any{"name": "Top", "subscriberNumber": store.MaxSubscriberNumber}).ID(t)
		if n := number(top); n != store.MaxSubscriberNumber {
			t.Fatalf("stored %d", n)
		}
		first := e.Do("POST", "/subscriber", map[string]any{"name": "First"}).ID(t)
		if n := number(first); n != 1 {
			t.Fatalf("after a chosen %d the next number is %d, want 1", int64(store.MaxSubscriberNumber), n)
		}
		if f := e.Do("PUT", "/subscriber/"+first, map[string]any{"name": "First", "subscriberNumber": int64(math.MaxInt64)}).Fields(t); !slices.Equal(f, []string{"subscriberNumber"}) {
			t.Fatalf("PUT MaxInt64: 400 names %v", f)
		}
		if r := e.Do("DELETE", "/subscriber/"+top, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if n := number(e.Do("POST", "/subscriber", map[string]any{"name": "Second"}).ID(t)); n != 2 {
			t.Fatalf("after the delete the next number is %d, want 2", n)
		}
	})
}

func TestSubscriberFilters(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		ids := map[string]string{}
		for _, s := range []map[string]any{
			{"name": "Kari Nordmann", "email": "Kari@Example.no", "externalId": "crm-1"},
			{"name": "Ola Østby", "email": "ola@example.no", "externalId": "crm-2"},
			{"name": "ØSTBY Eiendom AS", "email": "post@ostby.no"},
			{"name": "100% Media_AS", "email": "kari@example.no.evil"},
		} {
			ids[s["name"].(string)] = e.Do("POST", "/subscriber", s).ID(t)
		}
		names := func(query string) []string {
			t.Helper()
			var out []string
			for _, s := range listSubscribers(t, e.Tenant, query) {
				out = append(out, s.Name)
			}
			slices.Sort(out)
			return out
		}
		cases := []struct {
			query string
			want  []string
		}{
			{"", []string{"100% Media_AS", "Kari Nordmann", "Ola Østby", "ØSTBY Eiendom AS"}},
			{"externalId=crm-2", []string{"Ola Østby"}},
			{"ExternalId=crm-1", []string{"Kari Nordmann"}},
			{"externalId=CRM-1", nil},
			{"subscriberNumber=3", []string{"ØSTBY Eiendom AS"}},
			{"SubscriberNumber=1", []string{"Kari Nordmann"}},
			{"subscriberNumber=99", nil},
			{"email=kari%40example.no", []string{"Kari Nordmann"}},
			{"email=KARI%40EXAMPLE.NO", []string{"Kari Nordmann"}},
			{"email=kari%40example", nil},
			{"name=østby", []string{"Ola Østby", "ØSTBY Eiendom AS"}},
			{"name=NORD", []string{"Kari Nordmann"}},
			{"name=%25", []string{"100% Media_AS"}},
			{"name=a_as", []string{"100% Media_AS"}},
			{"name=a_a", []string{"100% Media_AS"}},
			{"name=i%25m", nil},
			{"name=o_a", nil},
			{"name=&email=", []string{"100% Media_AS", "Kari Nordmann", "Ola Østby", "ØSTBY Eiendom AS"}},
			{"name=østby&externalId=crm-2", []string{"Ola Østby"}},
			{"name=østby&email=kari%40example.no", nil},
		}
		for _, tc := range cases {
			if got := names(tc.query); !slices.Equal(got, tc.want) {
				t.Errorf("?%s: %v, want %v", tc.query, got, tc.want)
			}
		}
		for _, bad := range []string{"subscriberNumber=x", "subscriberNumber=0", "subscriberNumber=1.5", "subscriberNumber=99999999999999999999"} {
			if f := e.Do("GET", "/subscriber?"+bad, nil).Fields(t); !slices.Equal(f, []string{"subscriberNumber"}) {
				t.Errorf("?%s names %v", bad, f)
			}
		}
		if f := e.Do("GET", "/subscriber?subscriberNumber=x&limit=0", nil).Fields(t); len(f) != 2 {
			t.Errorf("two bad parameters name %v", f)
		}
	})
}

func TestSubscriberPaging(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		for i := range 7 {
			name := fmt.Sprintf("Paged %d", i)
			if i%2 == 1 {
				name = fmt.Sprintf("Other %d", i)
			}
			e.Do("POST", "/subscriber", map[string]any{"name": name}).ID(t)
		}
		var seen []string
		path := "/subscriber?name=paged&limit=2"
		for pages := 0; path != ""; pages++ {
			if pages > 3 {
				t.Fatal("paging does not end")
			}
			r := e.Do("GET", path, nil)
			var list []store.Subscriber
			r.JSON(t, &list)
			if len(list) > 2 {
				t.Fatalf("page of %d, limit 2", len(list))
			}
			for _, s := range list {
				if !strings.HasPrefix(s.Name, "Paged") {
					t.Fatalf("filter lost on a later page: %q", s.Name)
				}
				seen = append(seen, s.ID)
			}
			path = ""
			if link := r.Header.Get("Link"); link != "" {
				u, rel, _ := strings.Cut(link, ">; ")
				if rel != `rel="next"` || !strings.HasPrefix(u, "<"+apitest.BaseURL+"/subscriber?") {
					t.Fatalf("Link %q", link)
				}
				path = strings.TrimPrefix(u, "<"+apitest.BaseURL)
			}
		}
		if len(seen) != 4 || !slices.IsSorted(seen) || len(slices.Compact(slices.Clone(seen))) != 4 {
			t.Fatalf("paged through %v, want 4 distinct subscribers in id order", seen)
		}
		if all := listSubscribers(t, e.Tenant, "limit=1000"); len(all) != 7 {
			t.Fatalf("limit=1000: %d", len(all))
		}
		for _, q := range []string{"limit=0", "limit=1001", "cursor=abc"} {
			if f := e.Do("GET", "/subscriber?"+q, nil).Fields(t); len(f) != 1 {
				t.Errorf("%s: fields %v", q, f)
			}
		}
	})
}

func TestSubscriberTenantIsolation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		body := validSubscriber()
		id := e.Do("POST", "/subscriber", body).ID(t)
		b := e.NewTenant("tenant-b", false)
		for _, tc := range []struct {
			method string
			body   any
		}{{"GET", nil}, {"PUT", map[string]any{"name": "Hijacked"}}, {"DELETE", nil}} {
			if r := b.Do(tc.method, "/subscriber/"+id, tc.body); r.Status != http.StatusNotFound || len(r.Body) != 0 {
				t.Errorf("tenant B %s: %d %q, want empty 404", tc.method, r.Status, r.Body)
			}
		}
		for _, q := range []string{"", "externalId=crm-1", "subscriberNumber=1", "email=kari%40example.no", "name=kari"} {
			if list := listSubscribers(t, b, q); len(list) != 0 {
				t.Errorf("tenant B lists %d of tenant A's subscribers for ?%s", len(list), q)
			}
		}
		// Numbers and external ids are per tenant: B starts at 1 and may reuse A's external id.
		bid := b.Do("POST", "/subscriber", body).ID(t)
		if s := getSubscriber(t, b, bid); s.SubscriberNumber != 1 || s.ExternalID != "crm-1" {
			t.Fatalf("tenant B's subscriber: %+v", s)
		}
		if s := getSubscriber(t, e.Tenant, id); s.Name != "Kari Nordmann" || s.SubscriberNumber != 1 {
			t.Errorf("tenant A's subscriber changed: %+v", s)
		}
		if n := getSubscriber(t, e.Tenant, e.Do("POST", "/subscriber", map[string]any{"name": "A2"}).ID(t)).SubscriberNumber; n != 2 {
			t.Errorf("tenant A's next number %d, want 2", n)
		}
	})
}

func TestSubscriberConcurrentNumbers(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		const n = 50
		var (
			wg   sync.WaitGroup
			ids  = make([]string, n)
			fail = make(chan string, n)
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Do("POST", "/subscriber", map[string]any{"name": fmt.Sprintf("Burst %d", i)})
				if r.Status != http.StatusCreated {
					fail <- fmt.Sprintf("%d %s", r.Status, r.Body)
					return
				}
				var id string
				if err := json.Unmarshal(r.Body, &id); err != nil {
					fail <- err.Error()
					return
				}
				ids[i] = id
			}()
		}
		wg.Wait()
		close(fail)
		for msg := range fail {
			t.Fatalf("concurrent create: %s", msg)
		}
		var numbers []int64
		for _, s := range listSubscribers(t, e.Tenant, "limit=1000") {
			numbers = append(numbers, s.SubscriberNumber)
		}
		slices.Sort(numbers)
		if len(numbers) != n {
			t.Fatalf("%d subscribers, want %d", len(numbers), n)
		}
		for i, got := range numbers {
			if got != int64(i+1) {
				t.Fatalf("numbers are not 1..%d without gaps or repeats: %v", n, numbers)
			}
		}
	})
}
