package analytics_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
)

// TestSubscriptionStatusFilter checks that $filter on Subscriptions' Status,
// translated into range conditions an index can serve, picks exactly the
// periods whose computed Status (the CASE the main API's status follows,
// read back through $select) has that value — for eq, ne and in, at
// several positions of the tenant's test clock, with a cancelled chain.
func TestSubscriptionStatusFilter(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := client{t: t, e: e, tn: e.Tenant}
		b := bill(t, e.Tenant, "Kari")
		// Cancel one running period (its Status read from $select, the CASE).
		current := ""
		for _, v := range c.page("/Subscriptions?$select=Id,Status,SubscriberId").Value {
			if v["Status"] == "Active" && v["SubscriberId"] == b.subscriber {
				current = v["Id"].(string)
			}
		}
		if r := e.Tenant.Do("POST", "/subscription/"+current+"/cancel", map[string]any{"mode": "EndOfPeriod", "reason": "moving"}); r.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		all := func(path string) []string {
			var ids []string
			for next := path; next != ""; {
				p := c.page(next)
				for _, v := range p.Value {
					ids = append(ids, v["Id"].(string))
				}
				next = p.NextLink
			}
			sort.Strings(ids)
			return ids
		}
		oslo, _ := time.LoadLocation("Europe/Oslo")
		seen := map[string]bool{}
		for _, at := range []time.Time{{}, time.Date(2027, 3, 31, 23, 59, 0, 0, oslo), time.Date(2027, 4, 1, 0, 0, 0, 0, oslo),
			time.Date(2027, 4, 20, 0, 0, 0, 0, oslo), time.Date(2027, 7, 2, 0, 0, 0, 0, oslo)} {
			if !at.IsZero() {
				if r := e.Tenant.Do("POST", "/testclock/advance", map[string]any{"to": at.UTC().Format(time.RFC3339)}); r.Status != http.StatusOK {
					t.Fatalf("advance: %d %s", r.Status, r.Body)
				}
			}
			byStatus := map[string][]string{}
			var every []string
			for next := "/Subscriptions?$select=Id,Status"; next != ""; {
				p := c.page(next)
				for _, v := range p.Value {
					byStatus[v["Status"].(string)] = append(byStatus[v["Status"].(string)], v["Id"].(string))
					every = append(every, v["Id"].(string))
				}
				next = p.NextLink
			}
			for _, st := range []string{"Pending", "Active", "Completed", "Cancelled"} {
				want := append([]string{}, byStatus[st]...)
				sort.Strings(want)
				if len(want) > 0 {
					seen[st] = true
				}
				if got := all("/Subscriptions?$select=Id&$filter=" + q("Status eq '"+st+"'")); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("%v: Status eq %s gave %v, computed %v", at, st, got, want)
				}
				if got := all("/Subscriptions?$select=Id&$filter=" + q("'"+st+"' eq Status")); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("%v: %s eq Status gave %v, computed %v", at, st, got, want)
				}
				var others []string
				for s, ids := range byStatus {
					if s != st {
						others = append(others, ids...)
					}
				}
				sort.Strings(others)
				if got := all("/Subscriptions?$select=Id&$filter=" + q("Status ne '"+st+"'")); strings.Join(got, ",") != strings.Join(others, ",") {
					t.Errorf("%v: Status ne %s gave %v, computed %v", at, st, got, others)
				}
				if got := all("/Subscriptions?$select=Id&$filter=" + q("not (Status eq '"+st+"')")); strings.Join(got, ",") != strings.Join(others, ",") {
					t.Errorf("%v: not Status eq %s gave %v, computed %v", at, st, got, others)
				}
			}
			in := append(append([]string{}, byStatus["Active"]...), byStatus["Cancelled"]...)
			sort.Strings(in)
			if got := all("/Subscriptions?$select=Id&$filter=" + q("Status in ('Active','Cancelled')")); strings.Join(got, ",") != strings.Join(in, ",") {
				t.Errorf("%v: Status in gave %v, computed %v", at, got, in)
			}
			if n := c.get("/Subscriptions/$count?$filter=" + q("Status eq 'Active' or Status eq 'Pending'")); n.status != 200 {
				t.Errorf("count: %d %s", n.status, n.body)
			}
			if len(every) == 0 {
				t.Fatal("no subscriptions")
			}
		}
		for _, st := range []string{"Active", "Completed", "Cancelled"} {
			if !seen[st] {
				t.Errorf("the clock positions never showed a %s period: %v", st, seen)
			}
		}
		if a := c.get("/Subscriptions?$filter=" + q("Status eq 'Paused'")); a.status != http.StatusBadRequest {
			t.Errorf("unknown status: %d %s", a.status, a.body)
		}
		if a := c.get("/Subscriptions?$filter=" + q("Status in ('Active','Paused')")); a.status != http.StatusBadRequest {
			t.Errorf("unknown status in: %d %s", a.status, a.body)
		}
	})
}
