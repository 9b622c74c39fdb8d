package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/api"
	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

// chainFixture: an organization, a monthly plan renewing 14 days ahead,
// eight products (0 % VAT) and a subscriber, on a test tenant.
type chainFixture struct {
	*billingFixture
	plan     string
	products []string
}

func newChainFixture(t *testing.T, e *apitest.Env, tn apitest.Tenant) *chainFixture {
	t.Helper()
	f := &chainFixture{billingFixture: &billingFixture{t: t, tn: tn}}
	sd := tn.Seed(t)
	f.org = sd.Organization(seed.Nordavis)
	f.plan = sd.Plan(seed.Plan{Name: "Monthly 14", Unit: "Month", MinimumDueDays: seed.Days(14), PaymentTermsDays: seed.Days(10)})
	for i := range 8 {
		f.products = append(f.products, sd.Product(seed.Product{Name: fmt.Sprintf("Title %d", i+1), Category: "digital", VATRate: "0"}))
	}
	f.subscriber = sd.Subscriber(seed.Kari)
	return f
}

// template is the body of a template of price with the given products
// (equal shares) linked to chain ("" for none).
func (f *chainFixture) template(name, price, chain string, products ...string) map[string]any {
	var ps []map[string]string
	for _, p := range products {
		ps = append(ps, map[string]string{"productId": p})
	}
	body := map[string]any{"Name": name, "Currency": "NOK", "Price": jsonNum(price), "Units": 1, "products": ps, "BillingPlans": []string{f.plan}}
	if chain != "" {
		body["packageChainId"] = chain
	}
	return body
}

type jsonNum string

func (n jsonNum) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// chain creates a chain of the templates, one period per step.
func (f *chainFixture) chain(templates ...string) string {
	return create(f.t, f.tn, "/packagechain", map[string]any{"name": "Intro", "packageChain": map[string]any{"steps": chainSteps(templates)}})
}

func chainSteps(templates []string) []map[string]any {
	var steps []map[string]any
	for i, id := range templates {
		steps = append(steps, map[string]any{"step": i + 1, "nextPackageId": id})
	}
	return steps
}

// link points template id (body) at chain.
func (f *chainFixture) link(id string, body map[string]any, chain string) {
	f.t.Helper()
	body["packageChainId"] = chain
	if r := f.tn.Do("PUT", "/package/"+id, body); r.Status != http.StatusNoContent {
		f.t.Fatalf("link %s: %d %s", id, r.Status, r.Body)
	}
}

// orderWith orders template with choices starting at start and completes
// the order; it returns the first subscription period.
func (f *chainFixture) orderWith(template string, choices map[string]any, start time.Time) string {
	f.t.Helper()
	body := map[string]any{"organizationId": f.org, "templatePackageId": template, "subscriberId": f.subscriber,
		"requestedStart": start.Format(time.RFC3339)}
	if choices != nil {
		body["templatePackageChoices"] = choices
	}
	id := create(f.t, f.tn, "/order", body)
	r := f.tn.Do("POST", "/order/"+id+"/complete", nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	var o struct {
		SubscriptionID string `json:"subscriptionId"`
	}
	r.JSON(f.t, &o)
	return o.SubscriptionID
}

// billed lists the subscriber's invoices as "Mon:gross" in period order.
func (f *chainFixture) billed() string {
	f.t.Helper()
	invs := f.invoices("subscriberId=" + f.subscriber)
	sort.Slice(invs, func(i, j int) bool { return invs[i].PeriodStart.Before(*invs[j].PeriodStart) })
	var out []string
	for _, inv := range invs {
		out = append(out, inv.PeriodStart.In(osloZone).Format("Jan")+":"+inv.Gross.String())
	}
	return strings.Join(out, " ")
}

func (f *chainFixture) instance(sub string) api.SubscriptionChainView {
	f.t.Helper()
	r := f.tn.Do("GET", "/subscription/"+sub+"/packagechain", nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET /subscription/%s/packagechain: %d %s", sub, r.Status, r.Body)
	}
	var v api.SubscriptionChainView
	r.JSON(f.t, &v)
	return v
}

// brief renders an instance's steps as "step:name:totalPrice:periods".
func brief(v api.SubscriptionChainView) string {
	var out []string
	for _, s := range v.Steps {
		out = append(out, fmt.Sprintf("%d:%s:%s:%d", s.Step, s.Package.Name, s.Package.TotalPrice, s.Periods))
	}
	return strings.Join(out, " ")
}

// TestChainInstanceIsFrozenAtOrder is the case: a subscription on
// the chain 10 → 20 → 30 stays on 10, 20, 30 when, after the order, step
// 2's template is repriced to 25 and the chain's step 3 is pointed at a
// 299 template. GET /subscription/{id}/packagechain shows the instance,
// another tenant gets 404 for it, and so does a period on no chain.
func TestChainInstanceIsFrozenAtOrder(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newChainFixture(t, e, e.Tenant)
		digital := f.products[0]
		bodyA, bodyB, bodyC := f.template("A", "10", "", digital), f.template("B", "20", "", digital), f.template("C", "30", "", digital)
		a, b, c := create(t, f.tn, "/package", bodyA), create(t, f.tn, "/package", bodyB), create(t, f.tn, "/package", bodyC)
		chain := f.chain(a, b, c)
		f.link(a, bodyA, chain)

		f.advance(osloDay(2027, 1, 10).Add(12 * time.Hour))
		first := f.orderWith(a, nil, osloDay(2027, 2, 1))
		v := f.instance(first)
		if v.ID == chain || v.PackageChainID != chain || !v.Frozen || v.SubscriptionID != first || v.CurrentStep != 1 ||
			v.CurrentPeriod != 1 || v.PeriodsLeft == nil || *v.PeriodsLeft != 0 {
			t.Fatalf("instance of the first period: %+v", v)
		}
		if got := brief(v); got != "1:A:10.00:1 2:B:20.00:1 3:C:30.00:1" {
			t.Fatalf("instance steps %s", got)
		}
		var sub struct {
			ChainID string `json:"subscriptionPackageChainId"`
			Package struct {
				ChainID string `json:"subscriptionPackageChainId"`
			} `json:"package"`
		}
		f.tn.Do("GET", "/subscription/"+first, nil).JSON(t, &sub)
		if sub.ChainID != v.ID || sub.Package.ChainID != v.ID {
			t.Errorf("subscription names chain %s, package %s; want the instance %s", sub.ChainID, sub.Package.ChainID, v.ID)
		}

		// The merchant edits the chain and a step's template.
		bodyB["Price"] = jsonNum("25")
		if r := f.tn.Do("PUT", "/package/"+b, bodyB); r.Status != http.StatusNoContent {
			t.Fatalf("PUT /package/B: %d %s", r.Status, r.Body)
		}
		d := create(t, f.tn, "/package", f.template("D", "299", "", digital))
		if r := f.tn.Do("PUT", "/packagechain/"+chain, map[string]any{"name": "Intro", "packageChain": map[string]any{
			"steps": chainSteps([]string{a, b, d})}}); r.Status/100 != 2 {
			t.Fatalf("PUT /packagechain: %d %s", r.Status, r.Body)
		}
		f.advance(osloDay(2027, 4, 20))
		if got := f.billed(); got != "Feb:10.00 Mar:20.00 Apr:30.00 May:30.00" {
			t.Errorf("billed %s, want 10, 20, 30, 30", got)
		}
		if got := brief(f.instance(first)); got != "1:A:10.00:1 2:B:20.00:1 3:C:30.00:1" {
			t.Errorf("instance after the edits: %s", got)
		}
		// The last period: step 3, which lasts until changed.
		var list []struct {
			ID string `json:"id"`
		}
		f.tn.Do("GET", "/subscription?subscriberId="+f.subscriber, nil).JSON(t, &list)
		last := list[len(list)-1].ID
		if lv := f.instance(last); lv.ID != v.ID || lv.CurrentStep != 3 || lv.PeriodsLeft != nil ||
			!slices.Equal([]bool{lv.Steps[0].Current, lv.Steps[1].Current, lv.Steps[2].Current}, []bool{false, false, true}) {
			t.Errorf("instance of the last period: %+v", lv)
		}

		// Another tenant cannot see it; a period on no chain has none.
		other := e.NewTenant("other", true)
		if r := other.Do("GET", "/subscription/"+first+"/packagechain", nil); r.Status != http.StatusNotFound {
			t.Errorf("another tenant: %d %s", r.Status, r.Body)
		}
		plain := f.orderWith(c, nil, osloDay(2027, 5, 1))
		if r := f.tn.Do("GET", "/subscription/"+plain+"/packagechain", nil); r.Status != http.StatusNotFound {
			t.Errorf("unchained subscription: %d %s", r.Status, r.Body)
		}
		if r := f.tn.Do("GET", "/subscription/"+store.NewID()+"/packagechain", nil); r.Status != http.StatusNotFound {
			t.Errorf("unknown subscription: %d %s", r.Status, r.Body)
		}
	})
}

// TestOrderChoosingProducts: an order choosing 2 of a template's 8
// products (800.00, equal shares) is billed 200.00 for those 2; the
// preview shows the same; the choice carries into the chain instance,
// where a step whose template lacks a chosen product gets its defaults.
// Unknown, foreign and repeated ids, and an empty choice, are a 400
// naming the element.
func TestOrderChoosingProducts(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newChainFixture(t, e, e.Tenant)
		p := f.products
		body8 := f.template("All eight", "800.00", "", p...)
		t8 := create(t, f.tn, "/package", body8)
		two := map[string]any{"products": []map[string]string{{"productId": p[2]}, {"productId": p[5]}}}

		// Preview.
		m := jsonMap(t, f.tn.Do("POST", "/package/"+t8+"/preview", two))
		if canon(t, m["totalPrice"]) != "200.00" || canon(t, m["fullPrice"]) != "200.00" {
			t.Errorf("preview: total %v full %v, want 200.00", m["totalPrice"], m["fullPrice"])
		}
		if lines, _ := m["products"].([]any); len(lines) != 2 || lines[0].(map[string]any)["productId"] != p[2] ||
			lines[1].(map[string]any)["productId"] != p[5] || canon(t, lines[0].(map[string]any)["amount"]) != "100.00" {
			t.Errorf("preview lines %v", m["products"])
		}

		// Bad choices.
		other := e.NewTenant("other", true)
		foreign := create(t, other, "/product", map[string]any{"name": "Foreign", "category": "digital", "vatRate": 0})
		bad := []struct {
			name     string
			products any
			fields   []string
		}{
			{"unknown id", []map[string]string{{"productId": p[2]}, {"productId": store.NewID()}}, []string{"products[1].productId"}},
			{"another tenant's product", []map[string]string{{"productId": foreign}}, []string{"products[0].productId"}},
			{"twice", []map[string]string{{"productId": p[2]}, {"productId": p[2]}}, []string{"products[1].productId"}},
			{"empty", []map[string]string{}, []string{"products"}},
		}
		for _, tt := range bad {
			if got := f.tn.Do("POST", "/package/"+t8+"/preview", map[string]any{"products": tt.products}).Fields(t); !slices.Equal(got, tt.fields) {
				t.Errorf("preview, %s: fields %v, want %v", tt.name, got, tt.fields)
			}
			r := f.tn.Do("POST", "/order", map[string]any{"organizationId": f.org, "templatePackageId": t8, "subscriberId": f.subscriber,
				"templatePackageChoices": map[string]any{"products": tt.products}})
			var want []string
			for _, fl := range tt.fields {
				want = append(want, "templatePackageChoices."+fl)
			}
			if got := r.Fields(t); !slices.Equal(got, want) {
				t.Errorf("order, %s: fields %v, want %v", tt.name, got, want)
			}
		}

		// A chain: the eight at 800, then three of them (p2, p5, p6) at
		// 300, then a template with only p0 at 500.
		t3 := create(t, f.tn, "/package", f.template("Three", "300.00", "", p[2], p[5], p[6]))
		t1 := create(t, f.tn, "/package", f.template("One", "500.00", "", p[0]))
		chain := f.chain(t8, t3, t1)
		f.link(t8, body8, chain)

		f.advance(osloDay(2027, 1, 10).Add(12 * time.Hour))
		first := f.orderWith(t8, two, osloDay(2027, 2, 1))
		if got := brief(f.instance(first)); got != "1:All eight:200.00:1 2:Three:200.00:1 3:One:500.00:1" {
			t.Errorf("instance %s", got)
		}
		invs := f.invoices("subscriptionId=" + first)
		if len(invs) != 1 {
			t.Fatalf("%d invoices of the first period", len(invs))
		}
		inv := invs[0]
		var got []string
		for _, l := range inv.Lines {
			got = append(got, *l.ProductID+":"+l.Gross.String())
		}
		if want := []string{p[2] + ":100.00", p[5] + ":100.00"}; !slices.Equal(got, want) || inv.Gross.String() != "200.00" {
			t.Errorf("first invoice lines %v gross %s; want %v, 200.00", got, inv.Gross, want)
		}
		f.advance(osloDay(2027, 3, 20))
		if got := f.billed(); got != "Feb:200.00 Mar:200.00 Apr:500.00" {
			t.Errorf("billed %s", got)
		}
		// The order shows its choice as sent.
		var orders []struct {
			Choices struct {
				Products []struct {
					ProductID string `json:"productId"`
				} `json:"products"`
			} `json:"templatePackageChoices"`
		}
		f.tn.Do("GET", "/order?subscriberId="+f.subscriber, nil).JSON(t, &orders)
		if len(orders) != 1 || len(orders[0].Choices.Products) != 2 || orders[0].Choices.Products[1].ProductID != p[5] {
			t.Errorf("orders %+v", orders)
		}
	})
}
