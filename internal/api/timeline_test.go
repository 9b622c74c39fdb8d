package api_test

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

// TestTimelineAPI: GET /subscription/{id}/timeline answers the app's
// timeline of the series (internal/app's TestTimeline holds its rules):
// the period, the cancellation and its events, oldest first; another tenant's
// or an unknown subscription is a 404, a malformed id a 400.
func TestTimelineAPI(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		sub, _, _ := beginSubscription(t, e, e.Tenant, time.Now().Add(24*time.Hour))
		if r := e.Do("POST", "/subscription/"+sub.ID+"/cancel", map[string]any{"mode": "Immediately"}); r.Status != 200 {
			t.Fatalf("cancel: %d", r.Status)
		}
		var entries []struct {
			At                    time.Time
			Kind, ID, Path, Cause string
			SubscriptionID        string `json:"subscriptionId"`
		}
		r := e.Do("GET", "/subscription/"+sub.ID+"/timeline", nil)
		if r.Status != 200 {
			t.Fatalf("timeline: %d", r.Status)
		}
		r.JSON(t, &entries)
		pos := map[string]int{}
		for i, en := range entries {
			if en.SubscriptionID != sub.ID {
				t.Errorf("%s %s belongs to %s, want %s", en.Kind, en.ID, en.SubscriptionID, sub.ID)
			}
			if i > 0 && en.At.Before(entries[i-1].At) {
				t.Errorf("entry %d (%s) at %s is before entry %d at %s", i, en.Kind, en.At, i-1, entries[i-1].At)
			}
			key := en.Kind
			if en.Kind == "event" {
				key += ":" + en.Cause
			}
			if _, seen := pos[key]; !seen {
				pos[key] = i
			}
		}
		for _, k := range []string{"period", "cancellation", "event:SubscriptionCancelled"} {
			if _, ok := pos[k]; !ok {
				t.Fatalf("no %s in the timeline: %+v", k, entries)
			}
		}
		if entries[pos["period"]].ID != sub.ID || entries[pos["period"]].Path != "/subscription/"+sub.ID {
			t.Errorf("period entry %+v, want the subscription itself", entries[pos["period"]])
		}
		if r := e.Do("GET", "/subscription/"+store.NewID()+"/timeline", nil); r.Status != 404 {
			t.Errorf("unknown subscription: %d, want 404", r.Status)
		}
		if r := e.NewTenant("tenant-b", false).Do("GET", "/subscription/"+sub.ID+"/timeline", nil); r.Status != 404 {
			t.Errorf("tenant B reads tenant A's timeline: %d, want 404", r.Status)
		}
		if r := e.Do("GET", "/subscription/not-an-id/timeline", nil); r.Status != 400 {
			t.Errorf("malformed id: %d, want 400", r.Status)
		}
	})
}
