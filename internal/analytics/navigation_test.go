package analytics_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/analytics"
	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
)

// seedEverything gives tn at least one row behind every navigation
// property of the model: a catalog, a dunning process (so unpaid invoices
// get reminders), a subscriber with an Invoice agreement and two
// subscriptions on it, two months of renewals, a payment made through the
// agreement, a credit note, and one subscription cancelled.
func seedEverything(t testing.TB, tn apitest.Tenant) {
	t.Helper()
	sd := tn.Seed(t)
	org := sd.Organization(seed.Nordavis)
	digital := sd.Product(seed.Product{Name: "Digital", Category: "digital", VATRate: "0"})
	magazine := sd.Product(seed.Product{Name: "Magasin", Category: "magazine", VATRate: "25"})
	plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
	pkg := sd.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{digital},
		Additional: []seed.Additional{{ProductID: magazine, Price: "49.00", SelectedByDefault: true}}, Plans: []string{plan}})
	subscriber := sd.Subscriber(seed.Subscriber{Name: "Kari", Email: "kari@example.no", Country: "NO"})
	do := func(method, path string, body any, want ...int) *apitest.Response {
		t.Helper()
		r := tn.Do(method, path, body)
		if !slices.Contains(want, r.Status) {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}
	var id string
	do("POST", "/dunningprocess", map[string]any{"name": "Standard", "reminderDays": []int{7}, "reminderFee": 35,
		"paymentStopDays": 60, "isDefault": true}, http.StatusCreated)
	do("POST", "/paymentagreement", map[string]any{"subscriberId": subscriber, "providerType": "Invoice"},
		http.StatusCreated, http.StatusOK).JSON(t, &id)
	agreement := id
	oslo, _ := time.LoadLocation("Europe/Oslo")
	advance := func(tm time.Time) {
		do("POST", "/testclock/advance", map[string]any{"to": tm.UTC().Format(time.RFC3339)}, http.StatusOK)
	}
	advance(time.Date(2027, 1, 10, 0, 0, 0, 0, oslo))
	for range 2 {
		do("POST", "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": subscriber,
			"paymentAgreementId": agreement, "requestedStart": time.Date(2027, 2, 1, 0, 0, 0, 0, oslo).Format(time.RFC3339)},
			http.StatusCreated).JSON(t, &id)
		do("POST", "/order/"+id+"/complete", nil, http.StatusOK)
	}
	advance(time.Date(2027, 3, 5, 0, 0, 0, 0, oslo))
	var invs []struct {
		ID    string      `json:"id"`
		Gross json.Number `json:"gross"`
	}
	do("GET", "/invoice", nil, http.StatusOK).JSON(t, &invs)
	if len(invs) < 2 {
		t.Fatalf("%d invoices, want at least 2", len(invs))
	}
	do("POST", "/payment", map[string]any{"invoiceId": invs[0].ID, "amount": invs[0].Gross, "currency": "NOK", "provider": "External",
		"status": "Succeeded", "providerReference": "bank-1", "paidAt": "2027-02-03T10:00:00+01:00", "paymentAgreementId": agreement}, http.StatusCreated)
	do("POST", "/invoice/"+invs[1].ID+"/credit", map[string]any{}, http.StatusCreated)
	type subscription struct{ ID, Status string }
	var subs []subscription
	do("GET", "/subscription", nil, http.StatusOK).JSON(t, &subs)
	i := slices.IndexFunc(subs, func(s subscription) bool { return s.Status == "Active" })
	if i < 0 {
		t.Fatalf("no active subscription: %+v", subs)
	}
	do("POST", "/subscription/"+subs[i].ID+"/cancel", map[string]any{"mode": "Immediately"}, http.StatusOK)
}

// literal is the OData literal of key value v of type t.
func literal(t analytics.Edm, v any) string {
	if t == analytics.String {
		return "'" + strings.ReplaceAll(fmt.Sprint(v), "'", "''") + "'"
	}
	return fmt.Sprint(v)
}

// TestEveryNavigation follows every navigation property of the model in
// every way OData offers — $expand, a path from one entity (and its
// $count), a $filter and an $orderby through it, and back through its
// partner — and filters every set on each of its Guid properties, on both
// engines, checking each answer against the others. A navigation whose
// two sides are of different types (text against uuid on PostgreSQL)
// answers 500 here.
func TestEveryNavigation(t *testing.T) {
	t.Parallel()
	m := analytics.NewModel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		seedEverything(t, e.Tenant)
		for _, set := range m.Sets {
			t.Run(set.Name, func(t *testing.T) {
				c := client{t: t, e: e, tn: e.Tenant}
				key, _ := set.Prop(set.Key)
				guidFilters(t, c, set)
				for _, n := range set.Navs {
					t.Run(n.Name, func(t *testing.T) {
						target, _ := m.Set(n.Target)
						tkey, _ := target.Prop(target.Key)
						navigation(t, client{t: t, e: e, tn: e.Tenant}, set, key, n, target, tkey)
					})
				}
			})
		}
	})
}

// guidFilters filters set on every Guid property at once, with the values
// of one of its rows, and expects that row back; and on each property
// with ids no row has (eq and in), and expects none.
func guidFilters(t *testing.T, c client, set *analytics.Set) {
	t.Helper()
	rows := c.page("/" + set.Name).Value
	if len(rows) == 0 {
		t.Fatalf("the seed has no %s", set.Name)
	}
	row := rows[0]
	var conds, unknown []string
	for _, p := range set.Props {
		if p.Type != analytics.Guid {
			continue
		}
		if v := row[p.Name]; v != nil {
			conds = append(conds, p.Name+" eq "+fmt.Sprint(v))
		} else {
			conds = append(conds, p.Name+" eq null")
		}
		unknown = append(unknown, p.Name+" eq 00000000-0000-0000-0000-000000000001",
			p.Name+" in (00000000-0000-0000-0000-000000000001,00000000-0000-0000-0000-000000000002)")
	}
	if none := c.page("/" + set.Name + "?$filter=" + q(strings.Join(unknown, " or "))); len(none.Value) != 0 {
		t.Errorf("%s filtered on unknown ids: %v", set.Name, none.Value)
	}
	if len(conds) == 0 {
		return
	}
	got := c.page("/" + set.Name + "?$filter=" + q(strings.Join(conds, " and ")))
	if !slices.ContainsFunc(got.Value, func(r map[string]any) bool { return r[set.Key] == row[set.Key] }) {
		t.Errorf("%s: filtering on its own ids (%s) lost the row: %v", set.Name, strings.Join(conds, " and "), got.Value)
	}
}

func navigation(t *testing.T, c client, set *analytics.Set, key *analytics.Prop, n analytics.Nav, target *analytics.Set, tkey *analytics.Prop) {
	// $expand from every row; keep the first row that has related rows.
	exp := c.page("/" + set.Name + "?$select=" + set.Key + "&$expand=" + q(n.Name+"($select="+target.Key+")"))
	var parent any
	var want []string
	for _, r := range exp.Value {
		var ids []string
		switch v := r[n.Name].(type) {
		case []any:
			for _, x := range v {
				ids = append(ids, fmt.Sprint(x.(map[string]any)[target.Key]))
			}
		case map[string]any:
			ids = []string{fmt.Sprint(v[target.Key])}
		case nil:
			if n.Many {
				t.Fatalf("$expand=%s gave a row null for a collection: %v", n.Name, r)
			}
		}
		if len(ids) > 0 {
			parent, want = r[set.Key], ids
			break
		}
	}
	if parent == nil {
		t.Fatalf("no %s has %s in the seed (%d rows)", set.Name, n.Name, len(exp.Value))
	}
	sort.Strings(want)
	base := "/" + set.Name + "(" + literal(key.Type, parent) + ")/" + n.Name
	if n.Many {
		got := c.page(base + "?$count=true")
		if ids := names(got, target.Key); !slices.Equal(sorted(ids), want) || got.Count == nil || int(*got.Count) != len(want) {
			t.Errorf("%s: %v (count %v), $expand gave %v", base, ids, got.Count, want)
		}
		if a := c.get(base + "/$count"); a.status != 200 || string(a.body) != fmt.Sprint(len(want)) {
			t.Errorf("%s/$count: %d %s, want %d", base, a.status, a.body, len(want))
		}
		// Back through the partner: the same rows, filtered on their parent.
		back := c.page(base + "?$filter=" + q(n.Partner+"/"+set.Key+" eq "+literal(key.Type, parent)))
		if ids := names(back, target.Key); !slices.Equal(sorted(ids), want) {
			t.Errorf("%s filtered on %s/%s: %v, want %v", base, n.Partner, set.Key, ids, want)
		}
		// Nested options inside $expand.
		nested := c.page("/" + set.Name + "?$filter=" + q(set.Key+" eq "+literal(key.Type, parent)) + "&$expand=" +
			q(n.Name+"($orderby="+target.Key+" desc;$top=1;$select="+target.Key+";$filter="+n.Partner+"/"+set.Key+" ne null)"))
		if len(nested.Value) != 1 {
			t.Fatalf("nested $expand: %v", nested.Value)
		}
		if got := nested.Value[0][n.Name].([]any); len(got) != 1 || fmt.Sprint(got[0].(map[string]any)[target.Key]) != want[len(want)-1] {
			t.Errorf("nested $expand of %s: %v, want [%s]", n.Name, got, want[len(want)-1])
		}
		return
	}
	a := c.get(base)
	var one map[string]any
	if a.status != 200 || json.Unmarshal(a.body, &one) != nil || fmt.Sprint(one[target.Key]) != want[0] {
		t.Errorf("%s: %d %s, $expand gave %s", base, a.status, a.body, want[0])
	}
	// $filter through the navigation: eq finds the parent, ne and in agree.
	lit := literal(tkey.Type, want[0])
	for cond, found := range map[string]bool{
		n.Name + "/" + target.Key + " eq " + lit + " and " + n.Name + "/" + target.Key + " in (" + lit + ")":    true,
		n.Name + "/" + target.Key + " ne " + lit + " or not (" + n.Name + "/" + target.Key + " eq " + lit + ")": false,
	} {
		got := c.page("/" + set.Name + "?$select=" + set.Key + "&$filter=" + q(cond))
		has := slices.ContainsFunc(got.Value, func(r map[string]any) bool { return r[set.Key] == parent })
		if has != found {
			t.Errorf("$filter=%s: has %v %v = %v, want %v", cond, set.Key, parent, has, found)
		}
	}
	// $orderby on every orderable property of the target, through the
	// navigation, in one request; the rows are the set's, all of them.
	var order []string
	for _, p := range target.Props {
		if p.Type != analytics.Decimal {
			order = append(order, n.Name+"/"+p.Name)
		}
	}
	all := c.page("/" + set.Name + "?$select=" + set.Key + "&$count=true")
	ordered := c.page("/" + set.Name + "?$select=" + set.Key + "&$orderby=" + q(strings.Join(order, ",")+" desc"))
	if len(ordered.Value) != len(all.Value) {
		t.Errorf("$orderby through %s: %d rows of %d", n.Name, len(ordered.Value), len(all.Value))
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}
