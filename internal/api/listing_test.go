package api_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
)

// keys returns the property names of a JSON object.
func keys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not an object: %s", raw)
	}
	return slices.Sorted(maps.Keys(m))
}

// TestListItemsExpand: subscription list items carry the package's
// summary and ?expand=package the whole package, exactly as GET by id
// shows it; invoice list items leave out seller, buyer, lines and VAT
// totals until expand names them; everything else is the record as GET
// shows it. Unknown expansions are a 400 naming expand, and another tenant
// lists nothing of this one.
func TestListItemsExpand(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		subID := f.order(nil)
		f.advance(time.Now().AddDate(0, 2, 0)) // a renewal: two periods, two invoices

		get := func(path string) map[string]json.RawMessage {
			t.Helper()
			r := f.tn.Do("GET", path, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
			}
			var m map[string]json.RawMessage
			r.JSON(t, &m)
			return m
		}
		list := func(path string) []map[string]json.RawMessage {
			t.Helper()
			r := f.tn.Do("GET", path, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
			}
			var items []map[string]json.RawMessage
			r.JSON(t, &items)
			return items
		}

		// Subscriptions: the summary, then the whole package.
		compact := list("/subscription")
		if len(compact) < 2 {
			t.Fatalf("%d subscriptions, want the period and its renewal", len(compact))
		}
		summary := []string{"automaticStop", "billingPlan", "chainStepOrder", "chainStepPeriods", "currency", "name", "price",
			"subscriptionPackageChainId", "totalPrice", "units"}
		for _, item := range compact {
			id := string(item["id"])
			one := get("/subscription/" + jsonString(t, item["id"]))
			if got := keys(t, item["package"]); !slices.Equal(got, summary) {
				t.Errorf("subscription %s: list package has %v, want %v", id, got, summary)
			}
			var p, full struct {
				Name          string
				TotalPrice    json.RawMessage
				Price         json.RawMessage
				Units         int
				AutomaticStop bool
				BillingPlan   map[string]json.RawMessage
			}
			if err := json.Unmarshal(item["package"], &p); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(one["package"], &full); err != nil {
				t.Fatal(err)
			}
			if p.Name != full.Name || string(p.TotalPrice) != string(full.TotalPrice) || string(p.TotalPrice) != "248.00" ||
				string(p.Price) != string(full.Price) || p.Units != full.Units || p.AutomaticStop != full.AutomaticStop {
				t.Errorf("subscription %s: summary %+v, package %+v", id, p, full)
			}
			if got := keys(t, mustJSON(t, p.BillingPlan)); !slices.Equal(got, []string{"billingPlanId", "intervalCount", "intervalUnit", "name"}) ||
				string(p.BillingPlan["intervalUnit"]) != string(full.BillingPlan["intervalUnit"]) ||
				string(p.BillingPlan["billingPlanId"]) != string(full.BillingPlan["billingPlanId"]) {
				t.Errorf("subscription %s: billing plan summary %s, plan %v", id, mustJSON(t, p.BillingPlan), full.BillingPlan)
			}
			// Everything but the package is the record as GET shows it.
			for k, v := range one {
				if k != "package" && string(item[k]) != string(v) {
					t.Errorf("subscription %s: list %s = %s, GET %s", id, k, item[k], v)
				}
			}
			if len(item) != len(one) {
				t.Errorf("subscription %s: list item has %v, GET %v", id, slices.Sorted(maps.Keys(item)), slices.Sorted(maps.Keys(one)))
			}
		}
		for _, path := range []string{"/subscription?expand=package", "/subscription?expand=package&subscriberId=" + f.subscriber,
			"/subscription/scheduled?expand=package&until=2100-01-01T00:00:00Z"} {
			expanded := list(path)
			if len(expanded) == 0 {
				t.Fatalf("%s: empty", path)
			}
			for _, item := range expanded {
				one := get("/subscription/" + jsonString(t, item["id"]))
				if string(item["package"]) != string(one["package"]) {
					t.Errorf("%s: package\n%s\nGET's\n%s", path, item["package"], one["package"])
				}
			}
		}
		if sched := list("/subscription/scheduled?until=2100-01-01T00:00:00Z"); len(sched) == 0 || !slices.Equal(keys(t, sched[0]["package"]), summary) {
			t.Errorf("scheduled renewals: %d items, package %s", len(sched), sched[0]["package"])
		}

		// Invoices: compact by default; each part comes back when named.
		parts := []string{"buyer", "lines", "seller", "vatTotals"}
		invs := list("/invoice?subscriptionId=" + subID)
		if len(invs) != 1 {
			t.Fatalf("%d invoices of the first period", len(invs))
		}
		all := list("/invoice")
		for _, item := range all {
			one := get("/invoice/" + jsonString(t, item["id"]))
			for k, v := range one {
				if slices.Contains(parts, k) {
					if _, ok := item[k]; ok {
						t.Errorf("invoice list item has %s without expand", k)
					}
					continue
				}
				if string(item[k]) != string(v) {
					t.Errorf("invoice %s: list %s = %s, GET %s", item["id"], k, item[k], v)
				}
			}
		}
		for _, expand := range []string{"lines", "seller,buyer", "vatTotals&expand=lines", "seller,buyer,lines,vatTotals"} {
			for _, item := range list("/invoice?expand=" + expand) {
				one := get("/invoice/" + jsonString(t, item["id"]))
				for _, k := range parts {
					_, listed := item[k]
					if named := slices.Contains(splitExpand(expand), k); listed != named {
						t.Errorf("expand=%s: %s listed %v", expand, k, listed)
					} else if named && string(item[k]) != string(one[k]) {
						t.Errorf("expand=%s: %s\n%s\nGET's\n%s", expand, k, item[k], one[k])
					}
				}
			}
		}
		if lines := list("/invoice?expand=lines"); len(lines) == 0 || string(lines[0]["lines"]) == "[]" {
			t.Errorf("expanded lines are empty: %v", lines)
		}

		// Bad expansions name the parameter; another tenant sees nothing.
		for _, path := range []string{"/subscription?expand=lines", "/subscription/scheduled?expand=Package", "/invoice?expand=package",
			"/invoice?expand=lines,bogus"} {
			if got := f.tn.Do("GET", path, nil).Fields(t); !slices.Equal(got, []string{"expand"}) {
				t.Errorf("GET %s: fields %v, want [expand]", path, got)
			}
		}
		other := e.NewTenant("other", true)
		for _, path := range []string{"/subscription?expand=package", "/subscription/scheduled?until=2100-01-01T00:00:00Z", "/invoice?expand=lines"} {
			if r := other.Do("GET", path, nil); r.Status != http.StatusOK || string(r.Body) != "[]\n" {
				t.Errorf("other tenant GET %s: %d %s", path, r.Status, r.Body)
			}
		}
	})
}

// TestListPagesFollowLinks: the compact lists page by the Link header like
// every list, each item once.
func TestListPagesFollowLinks(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		for range 5 {
			f.order(nil)
		}
		for _, first := range []string{"/subscription?limit=2", "/invoice?limit=2&expand=lines"} {
			seen := map[string]bool{}
			pages := 0
			for path := first; path != ""; pages++ {
				r := f.tn.Do("GET", path, nil)
				if r.Status != http.StatusOK {
					t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
				}
				var items []struct{ ID string }
				r.JSON(t, &items)
				for _, it := range items {
					if seen[it.ID] {
						t.Fatalf("%s: %s twice", first, it.ID)
					}
					seen[it.ID] = true
				}
				path = ""
				if m := nextLink.FindStringSubmatch(r.Header.Get("Link")); m != nil {
					path = strings.TrimPrefix(m[1], apitest.BaseURL)
				}
			}
			if len(seen) != 5 || pages != 3 {
				t.Errorf("%s: %d items in %d pages, want 5 in 3", first, len(seen), pages)
			}
		}
	})
}

// splitExpand returns the names an expand query ("a,b&expand=c") names.
func splitExpand(q string) []string {
	var out []string
	for _, a := range strings.FieldsFunc(q, func(r rune) bool { return r == ',' || r == '&' }) {
		out = append(out, strings.TrimPrefix(a, "expand="))
	}
	return out
}

func jsonString(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("not a string: %s", raw)
	}
	return s
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestListRowsFollowChanges: list pages serve unchanged rows from caches
// keyed by the row's version (the store's rows and the API's rendered
// JSON); a page read after a change shows it — a payment, a status that
// turns Overdue with time alone, a cancellation — on both engines.
func TestListRowsFollowChanges(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		subA, subB := f.order(nil), f.order(nil)
		type row struct {
			ID, Status, CancelReason string
			SubscriptionID           string
		}
		list := func(path string) map[string]row {
			t.Helper()
			r := f.tn.Do("GET", path, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
			}
			var rows []row
			r.JSON(t, &rows)
			out := map[string]row{}
			for _, x := range rows {
				out[x.ID] = x
			}
			return out
		}
		invoiceOf := func(invs map[string]row, sub string) row {
			t.Helper()
			for _, inv := range invs {
				if inv.SubscriptionID == sub {
					return inv
				}
			}
			t.Fatalf("no invoice of %s in %v", sub, invs)
			return row{}
		}
		first := list("/invoice")
		if again := list("/invoice"); fmt.Sprint(again) != fmt.Sprint(first) {
			t.Fatalf("the same page twice differs:\n%v\n%v", first, again)
		}
		invA := f.invoice(invoiceOf(first, subA).ID)
		f.payInvoice(invA, invA.Gross.String())
		after := list("/invoice")
		if got := invoiceOf(after, subA).Status; got != "Paid" {
			t.Errorf("paid invoice listed %s", got)
		}
		if got := invoiceOf(after, subB).Status; got != "Issued" {
			t.Errorf("unpaid invoice listed %s before its due date", got)
		}
		f.advance(f.invoice(invoiceOf(after, subB).ID).DueAt.Add(24 * time.Hour))
		if got := invoiceOf(list("/invoice"), subB).Status; got != "Overdue" {
			t.Errorf("unpaid invoice listed %s after its due date", got)
		}

		subs := list("/subscription")
		if subs[subB].CancelReason != "" || subs[subB].Status != "Active" {
			t.Fatalf("subscription before cancelling: %+v", subs[subB])
		}
		f.cancel(subB, "Immediately")
		subs = list("/subscription")
		if subs[subB].CancelReason != "test" || subs[subB].Status != "Cancelled" {
			t.Errorf("cancelled subscription listed %+v", subs[subB])
		}
		if subs[subA].CancelReason != "" {
			t.Errorf("the other subscription listed %+v", subs[subA])
		}
	})
}
