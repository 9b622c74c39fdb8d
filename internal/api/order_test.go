package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// orderView is an order as GET /order/{id} shows it.
type orderView struct {
	ID                     string          `json:"id"`
	Status                 string          `json:"status"`
	OrganizationID         string          `json:"organizationId"`
	TemplatePackageID      string          `json:"templatePackageId"`
	TemplatePackageChoices json.RawMessage `json:"templatePackageChoices"`
	SubscriberID           *string         `json:"subscriberId"`
	Subscriber             *struct {
		Name             string          `json:"name"`
		ExternalID       string          `json:"externalId"`
		SubscriberNumber *int64          `json:"subscriberNumber"`
		Contacts         []store.Contact `json:"contacts"`
	} `json:"subscriber"`
	PaymentAgreementID *string        `json:"paymentAgreementId"`
	InvoiceContact     *store.Contact `json:"invoiceContact"`
	RequestedStart     *time.Time     `json:"requestedStart"`
	SubscriptionID     *string        `json:"subscriptionId"`
	CreatedAt          time.Time      `json:"createdAt"`
	CompletedAt        *time.Time     `json:"completedAt"`
	CancelledAt        *time.Time     `json:"cancelledAt"`
}

// orderFixture is what orders need: an organization, a catalog with an
// ordinary monthly package (1 to 5 units, an add-on), an AutomaticStop
// package, and a subscriber.
type orderFixture struct {
	*apiCatalog
	e                 *apitest.Env
	tn                apitest.Tenant
	org, pkg, stopPkg string
	subscriber        string
}

func newOrderFixture(t *testing.T, e *apitest.Env, tn apitest.Tenant) *orderFixture {
	t.Helper()
	c := newAPICatalog(t, e, tn)
	f := &orderFixture{apiCatalog: c, e: e, tn: tn}
	sd := tn.Seed(t)
	f.org = sd.Organization(seed.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo"})
	f.pkg = create(t, tn, "/package", f.packageBody(5, false))
	f.stopPkg = create(t, tn, "/package", f.packageBody(1, true))
	f.subscriber = sd.Subscriber(seed.Subscriber{Name: "Kari Nordmann", ExternalID: "crm-1"})
	return f
}

func (f *orderFixture) packageBody(maxUnits int, stop bool) string {
	return fmt.Sprintf(`{"Name": "Digital", "Currency": "NOK", "Price": 199.00, "AutomaticStop": %t,
		"products": [{"productId": %q}], "additionalProducts": [{"productId": %q, "price": 49.00}],
		"BillingPlans": [%q], "allowedChoices": {"minUnits": 1, "maxUnits": %d}}`, stop, f.digital, f.magazine, f.monthly, maxUnits)
}

// order is a valid POST /order body for the fixture's subscriber.
func (f *orderFixture) order() map[string]any {
	return map[string]any{
		"organizationId": f.org, "templatePackageId": f.pkg, "subscriberId": f.subscriber,
		"templatePackageChoices": map[string]any{"units": 2, "additionalProducts": []any{map[string]any{"productId": f.magazine}}},
	}
}

func getOrder(t *testing.T, tn apitest.Tenant, id string) orderView {
	t.Helper()
	r := tn.Do("GET", "/order/"+id, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /order/%s: %d %s", id, r.Status, r.Body)
	}
	var o orderView
	r.JSON(t, &o)
	return o
}

func completeOrder(t *testing.T, tn apitest.Tenant, id string) orderView {
	t.Helper()
	r := tn.Do("POST", "/order/"+id+"/complete", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("complete %s: %d %s", id, r.Status, r.Body)
	}
	var o orderView
	r.JSON(t, &o)
	return o
}

func tenantCtx(tn apitest.Tenant) context.Context { return tenancy.With(context.Background(), tn.ID) }

func countSubscriptions(t *testing.T, e *apitest.Env, tn apitest.Tenant) int {
	t.Helper()
	subs, _, err := e.Store.ListSubscriptions(tenantCtx(tn), store.SubscriptionFilter{}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(subs)
}

func eventsOf(t *testing.T, e *apitest.Env, tn apitest.Tenant, kind string) []store.Event {
	t.Helper()
	evs, _, err := e.Store.ListEvents(tenantCtx(tn), store.EventFilter{EventType: kind}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// tenantClock is the tenant's time: a test tenant's clock.
func tenantClock(t *testing.T, e *apitest.Env, tn apitest.Tenant) time.Time {
	t.Helper()
	ten, err := e.Store.TenantByID(context.Background(), tn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ten.Clock != nil {
		return *ten.Clock
	}
	return ten.CreatedAt
}

func oslo(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Oslo")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestOrderCompleteForExistingSubscriber(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		now := tenantClock(t, e, e.Tenant)
		r := e.Do("POST", "/order", f.order())
		id := r.ID(t)
		if loc := r.Header.Get("Location"); loc != apitest.BaseURL+"/order/"+id {
			t.Errorf("Location %q", loc)
		}
		o := getOrder(t, e.Tenant, id)
		if o.Status != "Created" || o.OrganizationID != f.org || o.TemplatePackageID != f.pkg || o.SubscriberID == nil ||
			*o.SubscriberID != f.subscriber || o.Subscriber != nil || o.SubscriptionID != nil || o.CompletedAt != nil {
			t.Fatalf("created order %+v", o)
		}
		// A test tenant's order is dated by its clock.
		if !o.CreatedAt.Equal(now) {
			t.Errorf("createdAt %s, want the tenant clock %s", o.CreatedAt, now)
		}
		wantChoices := `{"billingPlanId":null,"units":2,"products":null,"additionalProducts":[{"productId":"` + f.magazine + `"}],"price":null,"permanentDiscount":null}`
		if string(o.TemplatePackageChoices) != wantChoices {
			t.Errorf("choices %s, want %s", o.TemplatePackageChoices, wantChoices)
		}
		if countSubscriptions(t, e, e.Tenant) != 0 {
			t.Fatal("a created order made a subscription")
		}

		done := completeOrder(t, e.Tenant, id)
		if done.Status != "Completed" || done.SubscriptionID == nil || done.SubscriberID == nil || *done.SubscriberID != f.subscriber ||
			done.PaymentAgreementID == nil || done.CompletedAt == nil || !done.CompletedAt.Equal(now) {
			t.Fatalf("completed order %+v", done)
		}
		if again := getOrder(t, e.Tenant, id); again.Status != "Completed" || *again.SubscriptionID != *done.SubscriptionID {
			t.Fatalf("GET after complete %+v", again)
		}

		// The subscription: the order's package, starting at local midnight
		// of today on the tenant's clock, with the default Invoice agreement.
		subs, _, err := e.Store.ListSubscriptions(tenantCtx(e.Tenant), store.SubscriptionFilter{}, store.Page{Limit: 10})
		if err != nil || len(subs) != 1 {
			t.Fatalf("%d subscriptions, %v", len(subs), err)
		}
		sub := subs[0]
		wantStart := period.StartOfDay(now, oslo(t))
		if sub.ID != *done.SubscriptionID || sub.SubscriberID != f.subscriber || sub.OrganizationID != f.org ||
			sub.OrderID == nil || *sub.OrderID != id || sub.PaymentAgreementID == nil || *sub.PaymentAgreementID != *done.PaymentAgreementID ||
			!sub.PeriodStart.Equal(wantStart) || sub.Package.Units != 2 || len(sub.Package.AdditionalProducts) != 1 ||
			sub.Package.TotalPrice.Minor != 2*19900+4900 || sub.Currency != "NOK" {
			t.Fatalf("subscription %+v, want start %s", sub, wantStart)
		}
		if g := e.Do("GET", "/subscription/"+sub.ID, nil); g.Status != http.StatusNotFound {
			// The subscription endpoint is served: it shows the same.
			var v struct {
				ID           string    `json:"id"`
				SubscriberID string    `json:"subscriberId"`
				OrderID      *string   `json:"orderId"`
				PeriodStart  time.Time `json:"periodStart"`
				Status       string    `json:"status"`
			}
			g.JSON(t, &v)
			if g.Status != http.StatusOK || v.ID != sub.ID || v.SubscriberID != f.subscriber || v.OrderID == nil || *v.OrderID != id ||
				!v.PeriodStart.Equal(wantStart) || v.Status != "Active" {
				t.Fatalf("GET /subscription/%s: %d %s", sub.ID, g.Status, g.Body)
			}
		}

		// Completing again is harmless: the same answer, nothing new.
		second := e.Do("POST", "/order/"+id+"/complete", nil)
		var twice orderView
		second.JSON(t, &twice)
		if second.Status != http.StatusOK || *twice.SubscriptionID != *done.SubscriptionID || !twice.CompletedAt.Equal(*done.CompletedAt) {
			t.Fatalf("second complete: %d %s", second.Status, second.Body)
		}
		if n := countSubscriptions(t, e, e.Tenant); n != 1 {
			t.Fatalf("%d subscriptions after completing twice", n)
		}
		processed := eventsOf(t, e, e.Tenant, "OrderProcessed")
		createdEvs := eventsOf(t, e, e.Tenant, "SubscriptionCreated")
		if len(processed) != 1 || len(createdEvs) != 1 {
			t.Fatalf("%d OrderProcessed and %d SubscriptionCreated events, want 1 each", len(processed), len(createdEvs))
		}
		var data map[string]any
		if err := json.Unmarshal(processed[0].Data, &data); err != nil {
			t.Fatal(err)
		}
		if data["orderId"] != id || data["subscriberId"] != f.subscriber || data["subscriptionId"] != sub.ID || data["firstPeriodCreated"] != true ||
			processed[0].Subject != "/order/"+id || !processed[0].EventTime.Equal(now) {
			t.Fatalf("OrderProcessed %+v", processed[0])
		}

		// A completed order cannot be cancelled.
		if got := e.Do("POST", "/order/"+id+"/cancel", nil).Fields(t); !slices.Equal(got, []string{"id"}) {
			t.Fatalf("cancel of a completed order names %v", got)
		}
		// The subscriber now has a live subscription and cannot be deleted.
		del := e.Do("DELETE", "/subscriber/"+f.subscriber, nil)
		if got := del.Fields(t); !slices.Equal(got, []string{"id"}) || !strings.Contains(string(del.Body), "live subscription") {
			t.Fatalf("delete of a subscriber with a live subscription: %s", del.Body)
		}
	})
}

func TestOrderForNewSubscriber(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		body := f.order()
		delete(body, "subscriberId")
		body["subscriber"] = map[string]any{
			"name": "Ola Nordmann", "email": "ola@example.no", "country": "no", "externalSubscriberId": "crm-77", "subscriberNumber": 5000,
			"contacts": []any{map[string]any{"role": "Delivery", "name": "Ola", "address": map[string]any{"line1": "Storgata 2", "city": "Oslo"}}},
		}
		body["invoiceContact"] = map[string]any{"name": "Regnskap AS", "email": "faktura@regnskap.no"}
		id := e.Do("POST", "/order", body).ID(t)
		o := getOrder(t, e.Tenant, id)
		if o.SubscriberID != nil || o.Subscriber == nil || o.Subscriber.ExternalID != "crm-77" || o.Subscriber.SubscriberNumber == nil ||
			*o.Subscriber.SubscriberNumber != 5000 || o.InvoiceContact == nil || o.InvoiceContact.Role != store.ContactInvoice {
			t.Fatalf("order %+v", o)
		}
		// A second order for the same new subscriber (same external id, a
		// number to be assigned) is accepted now ...
		twinBody := f.order()
		delete(twinBody, "subscriberId")
		twinBody["subscriber"] = map[string]any{"name": "Ola N.", "externalId": "crm-77"}
		twin := e.Do("POST", "/order", twinBody).ID(t)
		if n := len(listSubscribers(t, e.Tenant, "externalId=crm-77")); n != 0 {
			t.Fatal("creating an order created the subscriber")
		}

		done := completeOrder(t, e.Tenant, id)
		if done.SubscriberID == nil || done.SubscriptionID == nil {
			t.Fatalf("completed %+v", done)
		}
		found := listSubscribers(t, e.Tenant, "externalId=crm-77")
		if len(found) != 1 || found[0].ID != *done.SubscriberID || found[0].SubscriberNumber != 5000 || found[0].Name != "Ola Nordmann" ||
			found[0].Country != "NO" {
			t.Fatalf("new subscriber %+v", found)
		}
		roles := map[store.ContactRole]string{}
		for _, c := range found[0].Contacts {
			roles[c.Role] = c.Name
		}
		if len(found[0].Contacts) != 2 || roles[store.ContactInvoice] != "Regnskap AS" || roles[store.ContactDelivery] != "Ola" {
			t.Fatalf("contacts %+v", found[0].Contacts)
		}

		// ... but cannot complete: the external id is taken now. Nothing of
		// it remains, and it can still be cancelled.
		if got := e.Do("POST", "/order/"+twin+"/complete", nil).Fields(t); !slices.Equal(got, []string{"subscriber.externalId"}) {
			t.Fatalf("completing a duplicate new subscriber names %v", got)
		}
		if o := getOrder(t, e.Tenant, twin); o.Status != "Created" || o.SubscriberID != nil {
			t.Fatalf("failed completion left %+v", o)
		}
		if n := countSubscriptions(t, e, e.Tenant); n != 1 {
			t.Fatalf("%d subscriptions", n)
		}
		if n := len(listSubscribers(t, e.Tenant, "")); n != 2 {
			t.Fatalf("%d subscribers, want the fixture's and the new one", n)
		}
		// A new order for a taken external id or number is refused at once.
		r := e.Do("POST", "/order", body)
		if got := r.Fields(t); !slices.Equal(got, []string{"subscriber.externalSubscriberId", "subscriber.subscriberNumber"}) {
			t.Fatalf("taken external id and number name %v", got)
		}

		// An existing subscriber's Invoice contact is replaced by the order's.
		body = f.order()
		body["invoiceContact"] = map[string]any{"email": "ap@example.no"}
		completeOrder(t, e.Tenant, e.Do("POST", "/order", body).ID(t))
		sub := getSubscriber(t, e.Tenant, f.subscriber)
		if len(sub.Contacts) != 1 || sub.Contacts[0].Role != store.ContactInvoice || sub.Contacts[0].Email != "ap@example.no" {
			t.Fatalf("existing subscriber's contacts %+v", sub.Contacts)
		}
	})
}

func TestOrderChoicesAreCheckedAtCreateAndComplete(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		body := f.order()
		body["templatePackageChoices"] = map[string]any{"units": 9, "billingPlanId": f.yearly,
			"additionalProducts": []any{map[string]any{"productId": f.sunday}}, "price": 10}
		got := e.Do("POST", "/order", body).Fields(t)
		want := []string{"templatePackageChoices.billingPlanId", "templatePackageChoices.units",
			"templatePackageChoices.price", "templatePackageChoices.additionalProducts[0].productId"}
		if !slices.Equal(got, want) {
			t.Fatalf("invalid choices name %v, want %v", got, want)
		}

		// Valid today (3 units of 1..5) ...
		body = f.order()
		body["templatePackageChoices"] = map[string]any{"units": 3}
		id := e.Do("POST", "/order", body).ID(t)
		// ... invalid once the template allows at most 2.
		if r := e.Do("PUT", "/package/"+f.pkg, f.packageBody(2, false)); r.Status != http.StatusNoContent {
			t.Fatalf("PUT package: %d %s", r.Status, r.Body)
		}
		if got := e.Do("POST", "/order/"+id+"/complete", nil).Fields(t); !slices.Equal(got, []string{"templatePackageChoices.units"}) {
			t.Fatalf("completion with stale choices names %v", got)
		}
		if o := getOrder(t, e.Tenant, id); o.Status != "Created" {
			t.Fatalf("status %s after a refused completion", o.Status)
		}
		if n := countSubscriptions(t, e, e.Tenant); n != 0 {
			t.Fatalf("%d subscriptions", n)
		}

		// Deleting a template orders came from archives it; its open orders
		// can no longer be completed, and it can no longer be ordered.
		if r := e.Do("DELETE", "/package/"+f.pkg, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE package: %d", r.Status)
		}
		if m := jsonMap(t, e.Do("GET", "/package/"+f.pkg, nil)); m["archivedAt"] == nil {
			t.Fatal("a package with orders was not archived")
		}
		if got := e.Do("POST", "/order/"+id+"/complete", nil).Fields(t); !slices.Contains(got, "templatePackageId") {
			t.Fatalf("completing an order of an archived template names %v", got)
		}
		if got := e.Do("POST", "/order", f.order()).Fields(t); !slices.Equal(got, []string{"templatePackageId"}) {
			t.Fatalf("ordering an archived template names %v", got)
		}
		// A template nobody ordered is still deleted.
		unused := create(t, e.Tenant, "/package", f.packageBody(1, false))
		if r := e.Do("DELETE", "/package/"+unused, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE unused package: %d", r.Status)
		}
		if r := e.Do("GET", "/package/"+unused, nil); r.Status != http.StatusNotFound {
			t.Fatalf("unused package after DELETE: %d", r.Status)
		}
	})
}

func TestOrderCancel(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		id := e.Do("POST", "/order", f.order()).ID(t)
		for range 2 {
			r := e.Do("POST", "/order/"+id+"/cancel", nil)
			var o orderView
			r.JSON(t, &o)
			if r.Status != http.StatusOK || o.Status != "Cancelled" || o.CancelledAt == nil || !o.CancelledAt.Equal(tenantClock(t, e, e.Tenant)) {
				t.Fatalf("cancel: %d %s", r.Status, r.Body)
			}
		}
		if got := e.Do("POST", "/order/"+id+"/complete", nil).Fields(t); !slices.Equal(got, []string{"id"}) {
			t.Fatalf("completing a cancelled order names %v", got)
		}
		if n := countSubscriptions(t, e, e.Tenant); n != 0 {
			t.Fatalf("%d subscriptions", n)
		}
		if n := len(eventsOf(t, e, e.Tenant, "OrderProcessed")); n != 0 {
			t.Fatalf("%d OrderProcessed events", n)
		}
	})
}

func TestOrderConcurrentCompletes(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		body := f.order()
		delete(body, "subscriberId")
		body["subscriber"] = map[string]any{"name": "Race", "externalId": "crm-race"}
		id := e.Do("POST", "/order", body).ID(t)
		const n = 20
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			subs  = make([]string, n)
			fail  = make(chan string, n)
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := e.Do("POST", "/order/"+id+"/complete", nil)
				var o orderView
				if r.Status != http.StatusOK || json.Unmarshal(r.Body, &o) != nil || o.SubscriptionID == nil {
					fail <- fmt.Sprintf("%d %s", r.Status, r.Body)
					return
				}
				subs[i] = *o.SubscriptionID
			}()
		}
		close(start)
		wg.Wait()
		close(fail)
		for msg := range fail {
			t.Fatalf("concurrent complete: %s", msg)
		}
		for _, s := range subs {
			if s != subs[0] {
				t.Fatalf("completions answered different subscriptions: %v", subs)
			}
		}
		if got := countSubscriptions(t, e, e.Tenant); got != 1 {
			t.Fatalf("%d subscriptions, want 1", got)
		}
		if got := len(listSubscribers(t, e.Tenant, "externalId=crm-race")); got != 1 {
			t.Fatalf("%d new subscribers, want 1", got)
		}
		if p, c := len(eventsOf(t, e, e.Tenant, "OrderProcessed")), len(eventsOf(t, e, e.Tenant, "SubscriptionCreated")); p != 1 || c != 1 {
			t.Fatalf("%d OrderProcessed and %d SubscriptionCreated events, want 1 each", p, c)
		}
	})
}

func TestOrderTenantIsolation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		id := e.Do("POST", "/order", f.order()).ID(t)
		other := e.NewTenant("tenant-b", true)
		for _, c := range []struct{ method, path string }{
			{"GET", "/order/" + id}, {"POST", "/order/" + id + "/complete"}, {"POST", "/order/" + id + "/cancel"},
		} {
			if r := other.Do(c.method, c.path, nil); r.Status != http.StatusNotFound || len(r.Body) != 0 {
				t.Errorf("%s %s by another tenant: %d %s", c.method, c.path, r.Status, r.Body)
			}
		}
		if r := other.Do("GET", "/order", nil); r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "[]" {
			t.Errorf("other tenant's list: %d %s", r.Status, r.Body)
		}
		// Another tenant cannot order from this tenant's data either.
		of := newOrderFixture(t, e, other)
		body := f.order()
		body["organizationId"], body["subscriberId"] = of.org, of.subscriber
		if got := e.Do("POST", "/order", body).Fields(t); !slices.Equal(got, []string{"organizationId", "subscriberId"}) {
			t.Errorf("foreign organization and subscriber name %v", got)
		}
		if o := getOrder(t, e.Tenant, id); o.Status != "Created" {
			t.Fatalf("other tenant changed the order: %s", o.Status)
		}
		for _, path := range []string{"/order/nope", "/order/nope/complete", "/order/nope/cancel"} {
			method := "POST"
			if path == "/order/nope" {
				method = "GET"
			}
			if got := e.Do(method, path, nil).Fields(t); !slices.Equal(got, []string{"id"}) {
				t.Errorf("%s %s names %v", method, path, got)
			}
		}
		if r := e.Do("GET", "/order/"+store.NewID(), nil); r.Status != http.StatusNotFound {
			t.Errorf("unknown order: %d", r.Status)
		}
	})
}

func TestOrderValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		other := create(t, e.Tenant, "/subscriber", map[string]any{"name": "Other"})
		// The other subscriber's default agreement, made by completing an order.
		ob := f.order()
		ob["subscriberId"] = other
		otherAgreement := *completeOrder(t, e.Tenant, e.Do("POST", "/order", ob).ID(t)).PaymentAgreementID
		now := tenantClock(t, e, e.Tenant)
		with := func(changes map[string]any, drop ...string) map[string]any {
			b := f.order()
			for _, k := range drop {
				delete(b, k)
			}
			for k, v := range changes {
				b[k] = v
			}
			return b
		}
		newSub := map[string]any{"name": "New"}
		cases := []struct {
			name   string
			body   any
			fields []string
		}{
			{"empty", `{}`, []string{"organizationId", "templatePackageId", "subscriberId"}},
			{"unknown references", with(map[string]any{"organizationId": store.NewID(), "templatePackageId": store.NewID(), "subscriberId": store.NewID()}),
				[]string{"organizationId", "templatePackageId", "subscriberId"}},
			{"malformed ids", with(map[string]any{"organizationId": "org", "templatePackageId": "pkg", "subscriberId": "sub", "paymentAgreementId": "pa"}),
				[]string{"organizationId", "templatePackageId", "subscriberId", "paymentAgreementId"}},
			{"both subscriberId and subscriber", with(map[string]any{"subscriber": newSub}), []string{"subscriberId"}},
			{"bad new subscriber", with(map[string]any{"subscriber": map[string]any{"name": " ", "email": "x", "subscriberNumber": 0,
				"externalId": "a", "externalSubscriberId": "b"}}, "subscriberId"),
				[]string{"subscriber.externalSubscriberId", "subscriber.name", "subscriber.email", "subscriber.subscriberNumber"}},
			{"new subscriber's number beyond the bound", with(map[string]any{"subscriber": map[string]any{"name": "N",
				"subscriberNumber": int64(math.MaxInt64)}}, "subscriberId"), []string{"subscriber.subscriberNumber"}},
			{"agreement of another subscriber", with(map[string]any{"paymentAgreementId": otherAgreement}), []string{"paymentAgreementId"}},
			{"agreement for a new subscriber", with(map[string]any{"subscriber": newSub, "paymentAgreementId": otherAgreement}, "subscriberId"),
				[]string{"paymentAgreementId"}},
			{"empty invoice contact", with(map[string]any{"invoiceContact": map[string]any{"phone": "1"}}),
				[]string{"invoiceContact.phone", "invoiceContact"}},
			{"two invoice contacts", with(map[string]any{"subscriber": map[string]any{"name": "N", "contacts": []any{map[string]any{"role": "Invoice", "name": "A"}}},
				"invoiceContact": map[string]any{"name": "B"}}, "subscriberId"), []string{"invoiceContact"}},
			{"start not a time", with(map[string]any{"requestedStart": "tomorrow"}), []string{"requestedStart"}},
			{"start before today", with(map[string]any{"requestedStart": period.StartOfDay(now, oslo(t)).Add(-time.Second).Format(time.RFC3339)}),
				[]string{"requestedStart"}},
			{"choices not an object", with(map[string]any{"templatePackageChoices": []any{}}), []string{"templatePackageChoices"}},
			// Wrong JSON types are a 400 naming the field.
			{"organizationId as a number", with(map[string]any{"organizationId": 5}), []string{"organizationId"}},
			{"units as a string", with(map[string]any{"templatePackageChoices": map[string]any{"units": "2"}}), []string{"templatePackageChoices.units"}},
			{"price as a string", with(map[string]any{"templatePackageChoices": map[string]any{"price": "2"}}), []string{"templatePackageChoices.price"}},
			{"subscriber as a string", with(map[string]any{"subscriber": "Kari"}, "subscriberId"), []string{"subscriber"}},
			{"subscriber name as a number", with(map[string]any{"subscriber": map[string]any{"name": 5}}, "subscriberId"), []string{"subscriber.name"}},
			{"requestedStart as a number", with(map[string]any{"requestedStart": 20250101}), []string{"requestedStart"}},
			{"invoice contact as an array", with(map[string]any{"invoiceContact": []any{}}), []string{"invoiceContact"}},
			{"not JSON", `{"organizationId": `, []string{"body"}},
			{"no body", "", []string{"body"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got := e.Do("POST", "/order", tc.body).Fields(t)
				if !slices.Equal(got, tc.fields) {
					t.Fatalf("400 names %v, want %v", got, tc.fields)
				}
			})
		}
		if list, _, err := e.Store.ListOrders(tenantCtx(e.Tenant), store.OrderFilter{}, store.Page{Limit: 100}); err != nil || len(list) != 1 {
			t.Fatalf("invalid requests stored orders: %d, %v", len(list), err)
		}
		// Its own live agreement, a start later today and a currency other
		// than the organization's are fine.
		eur := create(t, e.Tenant, "/package", strings.Replace(f.packageBody(5, false), `"NOK"`, `"EUR"`, 1))
		ok := with(map[string]any{"paymentAgreementId": otherAgreement, "subscriberId": other, "templatePackageId": eur,
			"templatePackageChoices": nil, "requestedStart": period.StartOfDay(now, oslo(t)).Format(time.RFC3339)})
		e.Do("POST", "/order", ok).ID(t)
	})
}

func TestOrderRequestedStartAndTestClock(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		loc := oslo(t)
		now := tenantClock(t, e, e.Tenant)
		// Ten days ahead, in the afternoon: the subscription starts at local
		// midnight of that day.
		later := now.Add(10 * 24 * time.Hour).In(loc)
		req := time.Date(later.Year(), later.Month(), later.Day(), 15, 30, 0, 0, loc)
		body := f.order()
		body["requestedStart"] = req.Format(time.RFC3339)
		id := e.Do("POST", "/order", body).ID(t)
		if o := getOrder(t, e.Tenant, id); o.RequestedStart == nil || !o.RequestedStart.Equal(req) {
			t.Fatalf("requestedStart %v, want %s", o.RequestedStart, req)
		}
		done := completeOrder(t, e.Tenant, id)
		sub, err := e.Store.Subscription(tenantCtx(e.Tenant), *done.SubscriptionID)
		if err != nil {
			t.Fatal(err)
		}
		if want := period.StartOfDay(req, loc); !sub.PeriodStart.Equal(want) {
			t.Fatalf("period starts %s, want %s", sub.PeriodStart, want)
		}

		// The tenant's clock moves; orders follow it. A requested start that
		// has passed by completion starts the subscription today.
		early := e.Do("POST", "/order", body).ID(t)
		to := req.Add(5 * 24 * time.Hour).UTC().Truncate(time.Second)
		if r := e.Do("POST", "/testclock/advance", map[string]any{"to": to.Format(time.RFC3339)}); r.Status != http.StatusOK {
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		id = e.Do("POST", "/order", f.order()).ID(t)
		if o := getOrder(t, e.Tenant, id); !o.CreatedAt.Equal(to) {
			t.Fatalf("createdAt %s, want the advanced clock %s", o.CreatedAt, to)
		}
		done = completeOrder(t, e.Tenant, early)
		if !done.CompletedAt.Equal(to) {
			t.Fatalf("completedAt %s, want %s", done.CompletedAt, to)
		}
		sub, err = e.Store.Subscription(tenantCtx(e.Tenant), *done.SubscriptionID)
		if err != nil {
			t.Fatal(err)
		}
		if want := period.StartOfDay(to, loc); !sub.PeriodStart.Equal(want) {
			t.Fatalf("late completion starts %s, want %s", sub.PeriodStart, want)
		}
	})
}

func TestOrderList(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		second := create(t, e.Tenant, "/organization", map[string]any{"name": "Ukeavisen AS", "country": "NO", "currency": "NOK"})
		a := e.Do("POST", "/order", f.order()).ID(t)
		b := e.Do("POST", "/order", f.order()).ID(t)
		body := f.order()
		body["organizationId"] = second
		c := e.Do("POST", "/order", body).ID(t)
		completeOrder(t, e.Tenant, a)
		if r := e.Do("POST", "/order/"+b+"/cancel", nil); r.Status != http.StatusOK {
			t.Fatalf("cancel: %d", r.Status)
		}
		ids := func(query string) []string {
			t.Helper()
			r := e.Do("GET", "/order?"+query, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("GET /order?%s: %d %s", query, r.Status, r.Body)
			}
			var list []orderView
			r.JSON(t, &list)
			out := []string{}
			for _, o := range list {
				out = append(out, o.ID)
			}
			return out
		}
		for query, want := range map[string][]string{
			"":                             {a, b, c},
			"status=Completed":             {a},
			"Status=cancelled":             {b},
			"status=Created":               {c},
			"subscriberId=" + f.subscriber: {a, b, c},
			"organizationId=" + f.org:      {a, b},
			"OrganizationId=" + second:     {c},
			"organizationId=" + f.org + "&status=Created": {},
		} {
			if got := ids(query); !slices.Equal(got, want) {
				t.Errorf("?%s: %v, want %v", query, got, want)
			}
		}
		r := e.Do("GET", "/order?limit=2", nil)
		if link := r.Header.Get("Link"); !strings.Contains(link, `rel="next"`) {
			t.Fatalf("no next link: %q", link)
		}
		for query, field := range map[string]string{"status=Done": "status", "subscriberId=x": "subscriberId", "limit=0": "limit"} {
			if got := e.Do("GET", "/order?"+query, nil).Fields(t); !slices.Equal(got, []string{field}) {
				t.Errorf("?%s names %v", query, got)
			}
		}
		for _, q := range []string{"subscriberId=" + store.NewID(), "organizationId=" + store.NewID()} {
			wantEmpty(t, e.Do("GET", "/order?"+q, nil), "?"+q)
		}
	})
}

func TestSubscriberDeleteProtection(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		deleteNames := func(id, want string) {
			t.Helper()
			r := e.Do("DELETE", "/subscriber/"+id, nil)
			if got := r.Fields(t); !slices.Equal(got, []string{"id"}) || !strings.Contains(string(r.Body), want) {
				t.Fatalf("DELETE /subscriber/%s: %s, want a 400 on id about %q", id, r.Body, want)
			}
			getSubscriber(t, e.Tenant, id)
		}

		// An open order holds the subscriber; a cancelled one goes with it.
		id := e.Do("POST", "/order", f.order()).ID(t)
		deleteNames(f.subscriber, "open order")
		e.Do("POST", "/order/"+id+"/cancel", nil)
		if r := e.Do("DELETE", "/subscriber/"+f.subscriber, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE with only a cancelled order: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/order/"+id, nil); r.Status != http.StatusNotFound {
			t.Fatalf("cancelled order of a deleted subscriber: %d", r.Status)
		}

		// A one-period (AutomaticStop) subscription is live until its period
		// has ended; after that it is history, which is kept.
		sub := create(t, e.Tenant, "/subscriber", map[string]any{"name": "Per"})
		body := f.order()
		body["subscriberId"], body["templatePackageId"], body["templatePackageChoices"] = sub, f.stopPkg, nil
		done := completeOrder(t, e.Tenant, e.Do("POST", "/order", body).ID(t))
		deleteNames(sub, "live subscription")
		s, err := e.Store.Subscription(tenantCtx(e.Tenant), *done.SubscriptionID)
		if err != nil {
			t.Fatal(err)
		}
		to := s.PeriodEnd.Add(time.Hour)
		if r := e.Do("POST", "/testclock/advance", map[string]any{"to": to.Format(time.RFC3339)}); r.Status != http.StatusOK {
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		deleteNames(sub, "billing history")

		// A subscriber without anything is deleted.
		plain := create(t, e.Tenant, "/subscriber", map[string]any{"name": "Plain"})
		if r := e.Do("DELETE", "/subscriber/"+plain, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE plain subscriber: %d %s", r.Status, r.Body)
		}
	})
}
