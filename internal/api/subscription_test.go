package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// beginSubscription starts a monthly subscription for tenant tn at start,
// the way an order's completion does.
func beginSubscription(t *testing.T, e *apitest.Env, tn apitest.Tenant, start time.Time) (sub store.Subscription, subscriber, template string) {
	t.Helper()
	c := newAPICatalog(t, e, tn)
	sd := tn.Seed(t)
	org := sd.Organization(seed.Organization{Name: "Org", Country: "NO", Currency: "NOK"})
	subscriber = sd.Subscriber(seed.Subscriber{Name: "Kari", Country: "NO"})
	template = create(t, tn, "/package", contractPackage("Digital", "199", c.digital, c.monthly))
	ctx := tenancy.With(context.Background(), tn.ID)
	in, err := catalogdb.PackageForMerge(ctx, e.Store, template)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := catalog.Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	sub, err = engine.Begin(engine.NewSeries{SubscriberID: subscriber, OrganizationID: org, TimeZone: "Europe/Oslo", Package: pkg, Start: start}, start)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertSubscription(ctx, sub) }); err != nil {
		t.Fatal(err)
	}
	return sub, subscriber, template
}

func TestSubscriptionReadsAndFilters(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		var clock struct{ Now time.Time }
		e.Do("GET", "/testclock", nil).JSON(t, &clock)
		sub, subscriber, _ := beginSubscription(t, e, e.Tenant, clock.Now.AddDate(0, 0, 3))
		var v struct {
			ID, Status, SubscriberID string
			PeriodStart              time.Time
			Package                  struct{ TotalPrice json.RawMessage }
		}
		e.Do("GET", "/subscription/"+sub.ID, nil).JSON(t, &v)
		if v.ID != sub.ID || v.Status != "Pending" || v.SubscriberID != subscriber || string(v.Package.TotalPrice) != "199.00" {
			t.Fatalf("GET: %+v", v)
		}
		count := func(q string) int {
			var list []map[string]any
			r := e.Do("GET", "/subscription?"+q, nil)
			r.JSON(t, &list)
			return len(list)
		}
		if n := count("subscriberId=" + subscriber); n != 1 {
			t.Errorf("by subscriber: %d", n)
		}
		// A filter naming a parent that does not exist matches nothing
		// (product-decisions §2); an unknown parameter is a 400 naming it.
		for _, q := range []string{"subscriberId=" + store.NewID(), "organizationId=" + store.NewID()} {
			wantEmpty(t, e.Do("GET", "/subscription?"+q, nil), q)
		}
		if f := e.Do("GET", "/subscription?subscriberid="+subscriber+"&until=2030-01-01T00:00:00Z", nil).Fields(t); len(f) != 1 || f[0] != "until" {
			t.Errorf("unknown parameter: fields %v, want [until]", f)
		}
		if n, m := count("status=Pending"), count("status=Active"); n != 1 || m != 0 {
			t.Errorf("by status: pending %d, active %d", n, m)
		}
		var sched []map[string]any
		e.Do("GET", "/subscription/scheduled?until="+clock.Now.AddDate(0, 2, 0).Format(time.RFC3339), nil).JSON(t, &sched)
		if len(sched) != 1 {
			t.Errorf("scheduled renewals: %d", len(sched))
		}
		for _, q := range []string{"status=Sleeping", "subscriberId=nope", "activeAt=yesterday"} {
			if f := e.Do("GET", "/subscription?"+q, nil).Fields(t); len(f) != 1 {
				t.Errorf("%s: fields %v", q, f)
			}
		}
	})
}

func TestSubscriptionTenantIsolation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		sub, _, template := beginSubscription(t, e, e.Tenant, time.Now().Add(48*time.Hour))
		b := e.NewTenant("tenant-b", true)
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/subscription/" + sub.ID, nil},
			{"POST", "/subscription/" + sub.ID + "/cancel", map[string]any{"mode": "Immediately"}},
			{"POST", "/subscription/" + sub.ID + "/scheduledchange", map[string]any{"processingType": "OnRenewal", "templatePackageId": template}},
			{"GET", "/subscription/" + sub.ID + "/scheduledchange", nil},
			{"DELETE", "/subscription/" + sub.ID + "/scheduledchange/" + store.NewID(), nil},
		} {
			if r := b.Do(c.method, c.path, c.body); r.Status != http.StatusNotFound {
				t.Errorf("tenant B %s %s: %d %s", c.method, c.path, r.Status, r.Body)
			}
		}
		var list []map[string]any
		b.Do("GET", "/subscription", nil).JSON(t, &list)
		if len(list) != 0 {
			t.Errorf("tenant B lists %d subscriptions", len(list))
		}
		if v := e.Do("GET", "/subscription/"+sub.ID, nil); v.Status != 200 {
			t.Fatalf("owner: %d", v.Status)
		}
	})
}

func TestTestClock(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		var clock struct{ Now time.Time }
		e.Do("GET", "/testclock", nil).JSON(t, &clock)
		if time.Since(clock.Now) > time.Minute || clock.Now.After(time.Now()) {
			t.Fatalf("a new test tenant's clock starts at its creation, got %s", clock.Now)
		}
		to := clock.Now.AddDate(1, 0, 0).Truncate(time.Second)
		r := e.Do("POST", "/testclock/advance", map[string]any{"to": to.Format(time.RFC3339)})
		if r.Status != 200 {
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		e.Do("GET", "/testclock", nil).JSON(t, &clock)
		if !clock.Now.Equal(to) {
			t.Fatalf("clock %s after advancing to %s", clock.Now, to)
		}
		if f := e.Do("POST", "/testclock/advance", map[string]any{"to": to.Add(-time.Hour).Format(time.RFC3339)}).Fields(t); !slices.Equal(f, []string{"to"}) {
			t.Errorf("moving back: fields %v", f)
		}
		if f := e.Do("POST", "/testclock/advance", map[string]any{"to": "soon"}).Fields(t); !slices.Equal(f, []string{"to"}) {
			t.Errorf("bad time: fields %v", f)
		}
		live := e.NewTenant("live", false)
		if f := live.Do("GET", "/testclock", nil).Fields(t); !slices.Equal(f, []string{"S4-TenantId"}) {
			t.Errorf("live tenant GET: %v", f)
		}
		if f := live.Do("POST", "/testclock/advance", map[string]any{"to": to.Format(time.RFC3339)}).Fields(t); !slices.Equal(f, []string{"S4-TenantId"}) {
			t.Errorf("live tenant advance: %v", f)
		}
	})
}
