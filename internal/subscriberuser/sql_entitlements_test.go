package subscriberuser_test

import (
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestEntitlementPlan: on SQLite the entitlement statement is index
// look-ups only, each starting from the user. A first version scanned the
// tenant's subscriptions and built a temporary index on every run (5× the
// cost with 200 subscriptions); the busiest route must not fall back to
// that unnoticed. (The API tests show what it answers, on both engines.)
func TestEntitlementPlan(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, store.SQLite)
	ctx := newTenant(t, s, "a")
	tenant, _ := tenancy.From(ctx)
	plan, err := subscriberuser.EntitlementPlan(ctx, s, tenant, store.NewID(), t0)
	if err != nil {
		t.Fatal(err)
	}
	searches := 0
	for _, step := range plan {
		if strings.HasPrefix(step, "SCAN") || strings.Contains(step, "AUTOMATIC") || strings.Contains(step, "TEMP B-TREE") {
			t.Errorf("plan step %q reads more than it needs:\n%s", step, strings.Join(plan, "\n"))
		}
		if strings.HasPrefix(step, "SEARCH") {
			searches++
			if strings.HasPrefix(step, "SEARCH s ") && !strings.Contains(step, "subscriber_id=? AND period_end>?") {
				t.Errorf("periods are not found by subscriber and end: %q", step)
			}
		}
	}
	if searches != 7 {
		t.Errorf("%d index searches, want 7 (user; user, periods; user, sources, accounts, periods):\n%s", searches, strings.Join(plan, "\n"))
	}
}
