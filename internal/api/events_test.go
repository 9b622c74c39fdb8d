package api_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/idp"
)

func TestEventsList(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		sub, _, _ := beginSubscription(t, e, e.Tenant, time.Now().Add(24*time.Hour))
		if r := e.Do("POST", "/subscription/"+sub.ID+"/cancel", map[string]any{"mode": "Immediately"}); r.Status != 200 {
			t.Fatalf("cancel: %d", r.Status)
		}
		var all []struct {
			EventType, Subject string
			Data               map[string]string
		}
		e.Do("GET", "/events?subject=/subscription/"+sub.ID, nil).JSON(t, &all)
		kinds := map[string]int{}
		for _, ev := range all {
			kinds[ev.EventType]++
			if ev.Data["subscriptionId"] != sub.ID {
				t.Errorf("%s data %v", ev.EventType, ev.Data)
			}
		}
		if kinds["SubscriptionCancelled"] != 1 || kinds["SubscriptionDeactivated"] != 1 {
			t.Fatalf("events of the subscription: %v", kinds)
		}
		var cancelled []map[string]any
		e.Do("GET", "/events?eventType=SubscriptionCancelled", nil).JSON(t, &cancelled)
		if len(cancelled) != 1 {
			t.Fatalf("by type: %d", len(cancelled))
		}
		var theirs []map[string]any
		e.NewTenant("tenant-b", false).Do("GET", "/events", nil).JSON(t, &theirs)
		if len(theirs) != 0 {
			t.Fatalf("tenant B sees %d of tenant A's events", len(theirs))
		}
		if f := e.Do("GET", "/events?limit=0", nil).Fields(t); len(f) != 1 || f[0] != "limit" {
			t.Fatalf("bad limit: %v", f)
		}
	})
}

// TestEventsAudit: a change made through the API records the machine
// client that made it as the events' actor, and /events filtered by actor
// and time is the audit log; bad filters are a 400 naming the parameter.
func TestEventsAudit(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		sub, _, _ := beginSubscription(t, e, e.Tenant, time.Now().Add(24*time.Hour))
		// A second client of the tenant, e.g. the newspaper's web shop.
		id, secret, err := idp.NewClientCredentials(context.Background(), e.Store, e.Tenant.ID, "web shop", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		shop := []string{"Authorization", "Bearer " + e.FetchToken(id, secret)}
		if r := e.Do("POST", "/subscription/"+sub.ID+"/cancel", map[string]any{"mode": "Immediately"}, shop...); r.Status != 200 {
			t.Fatalf("cancel: %d", r.Status)
		}
		type event struct {
			EventType, Subject string
			Actor              struct{ Kind, ID string }
		}
		var byShop []event
		e.Do("GET", "/events?actorKind=client&actorId="+url.QueryEscape(id), nil).JSON(t, &byShop)
		kinds := map[string]bool{}
		for _, ev := range byShop {
			kinds[ev.EventType] = true
			if ev.Actor.Kind != "client" || ev.Actor.ID != id {
				t.Errorf("%s: actor %+v, want the shop's client %s", ev.EventType, ev.Actor, id)
			}
		}
		if !kinds["SubscriptionCancelled"] || !kinds["SubscriptionDeactivated"] {
			t.Fatalf("the shop's events: %v, want the cancellation's", kinds)
		}
		// The tenant's own client cancels another: its events are its own.
		sub2, _, _ := beginSubscription(t, e, e.Tenant, time.Now().Add(24*time.Hour))
		if r := e.Do("POST", "/subscription/"+sub2.ID+"/cancel", map[string]any{"mode": "Immediately"}); r.Status != 200 {
			t.Fatalf("cancel: %d", r.Status)
		}
		for _, ev := range byShop {
			if ev.Subject != "/subscription/"+sub.ID {
				t.Errorf("the shop's events hold %s %s", ev.EventType, ev.Subject)
			}
		}
		var clients []event
		e.Do("GET", "/events?actorKind=client", nil).JSON(t, &clients)
		ids := map[string]int{}
		for _, ev := range clients {
			ids[ev.Actor.ID]++
		}
		if len(ids) != 2 || ids[id] != len(byShop) {
			t.Fatalf("events by client: %v, want the shop's %d and the tenant client's", ids, len(byShop))
		}
		// The analytics API reads the same actors.
		var odata struct {
			Value []struct{ ActorKind, ActorId string }
		}
		e.Do("GET", "/analytics/Events?$filter="+url.QueryEscape("ActorId eq '"+id+"'"), nil).JSON(t, &odata)
		if len(odata.Value) != len(byShop) || odata.Value[0].ActorKind != "client" {
			t.Fatalf("OData Events by the shop: %+v, want %d of kind client", odata.Value, len(byShop))
		}
		var other []event
		e.Do("GET", "/events?actorKind=client&actorId=kc_nobody", nil).JSON(t, &other)
		if len(other) != 0 {
			t.Fatalf("another client's events: %d", len(other))
		}
		hour := time.Now().UTC().Add(time.Hour).Format(time.RFC3339)
		var later []event
		e.Do("GET", "/events?actorKind=client&from="+hour, nil).JSON(t, &later)
		if len(later) != 0 {
			t.Fatalf("events recorded from an hour ahead: %d", len(later))
		}
		var before []event
		e.Do("GET", "/events?actorKind=client&until="+hour, nil).JSON(t, &before)
		if len(before) < len(byShop) {
			t.Fatalf("events recorded before an hour ahead: %d, want at least %d", len(before), len(byShop))
		}
		for q, field := range map[string]string{"actorKind=robot": "actorKind", "from=yesterday": "from",
			"until=2026-13-01T00:00:00Z": "until", "actorId=" + strings.Repeat("x", 201): "actorId"} {
			if f := e.Do("GET", "/events?"+q, nil).Fields(t); len(f) != 1 || f[0] != field {
				t.Errorf("%s: fields %v, want [%s]", q, f, field)
			}
		}
		// Tenant B's audit log is its own.
		var theirs []event
		e.NewTenant("tenant-b", false).Do("GET", "/events?actorKind=client&actorId="+url.QueryEscape(id), nil).JSON(t, &theirs)
		if len(theirs) != 0 {
			t.Fatalf("tenant B sees %d of tenant A's events", len(theirs))
		}
	})
}
