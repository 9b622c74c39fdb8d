package api_test

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
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
