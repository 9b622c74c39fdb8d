package analytics_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
)

type billed struct {
	subscriber, plan, digital, magazine string
	subscriptions                       []string
}

// bill gives tenant tn a catalog, a subscriber with two subscriptions
// (199 + 49 NOK a month), a month of renewals and one payment.
func bill(t *testing.T, tn apitest.Tenant, name string) billed {
	t.Helper()
	sd := tn.Seed(t)
	org := sd.Organization(seed.Nordavis)
	b := billed{
		digital:  sd.Product(seed.Product{Name: "Digital", Category: "digital", VATRate: "0"}),
		magazine: sd.Product(seed.Product{Name: "Magasin", Category: "magazine", VATRate: "25"}),
	}
	b.plan = sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
	pkg := sd.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{b.digital},
		Additional: []seed.Additional{{ProductID: b.magazine, Price: "49.00", SelectedByDefault: true}}, Plans: []string{b.plan}})
	b.subscriber = sd.Subscriber(seed.Subscriber{Name: name, Email: strings.ToLower(name) + "@example.no", Country: "NO"})
	do := func(method, path string, body any, want int) *apitest.Response {
		r := tn.Do(method, path, body)
		if r.Status != want {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}
	oslo, _ := time.LoadLocation("Europe/Oslo")
	do("POST", "/testclock/advance", map[string]any{"to": time.Date(2027, 1, 10, 0, 0, 0, 0, oslo).UTC().Format(time.RFC3339)}, http.StatusOK)
	for range 2 {
		r := do("POST", "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": b.subscriber,
			"requestedStart": time.Date(2027, 2, 1, 0, 0, 0, 0, oslo).Format(time.RFC3339)}, http.StatusCreated)
		var id string
		r.JSON(t, &id)
		r = do("POST", "/order/"+id+"/complete", nil, http.StatusOK)
		var o struct {
			SubscriptionID string `json:"subscriptionId"`
		}
		r.JSON(t, &o)
		b.subscriptions = append(b.subscriptions, o.SubscriptionID)
	}
	do("POST", "/testclock/advance", map[string]any{"to": time.Date(2027, 3, 5, 0, 0, 0, 0, oslo).UTC().Format(time.RFC3339)}, http.StatusOK)
	var invs []struct {
		ID    string          `json:"id"`
		Gross decimal.Decimal `json:"gross"`
	}
	do("GET", "/invoice", nil, http.StatusOK).JSON(t, &invs)
	if len(invs) == 0 {
		t.Fatal("no invoices")
	}
	do("POST", "/payment", map[string]any{"invoiceId": invs[0].ID, "amount": json.Number(invs[0].Gross.String()), "currency": "NOK", "provider": "External",
		"status": "Succeeded", "providerReference": name + "-1", "paidAt": "2027-02-03T10:00:00+01:00"}, http.StatusCreated)
	return b
}

func TestAnalyticsOverBilling(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := client{t: t, e: e, tn: e.Tenant}
		a := bill(t, e.Tenant, "Kari")
		other := e.NewTenant("other", true)
		o := bill(t, other, "Intruder")

		// Invoices and their totals agree with the main API.
		var invs []struct {
			ID    string          `json:"id"`
			Gross decimal.Decimal `json:"gross"`
		}
		if r := e.Do("GET", "/invoice", nil); r.Status != 200 {
			t.Fatal(r.Status)
		} else {
			r.JSON(t, &invs)
		}
		total := decimal.Zero
		for _, inv := range invs {
			total = total.Add(inv.Gross)
		}
		p := c.page("/Invoices?$select=Id,Gross,Status&$count=true")
		if p.Count == nil || int(*p.Count) != len(invs) || len(p.Value) != len(invs) {
			t.Fatalf("invoices: %d of %d", len(p.Value), len(invs))
		}
		agg := c.page("/Invoices?$apply=" + q("aggregate(Gross with sum as Total,$count as N)"))
		if got := fmt.Sprint(agg.Value[0]["Total"]); !decimal.RequireFromString(got).Equal(total) {
			t.Errorf("sum of gross %s, main API %s", got, total)
		}

		// Revenue per month per product from the invoice lines.
		rev := c.page("/InvoiceLines?$apply=" + q("compute(year(IssueDate) as Year,month(IssueDate) as Month)/groupby((Year,Month,ProductId),aggregate(Net with sum as Revenue,$count as Lines))"))
		var rows []string
		for _, v := range rev.Value {
			rows = append(rows, fmt.Sprintf("%v-%v %v %v x%v", v["Year"], v["Month"], v["ProductId"] == a.digital, v["Revenue"], v["Lines"]))
		}
		sort.Strings(rows)
		if len(rows) == 0 || !strings.Contains(strings.Join(rows, "\n"), "true 398 x2") {
			t.Errorf("revenue rows:\n%s", strings.Join(rows, "\n"))
		}
		for _, v := range rev.Value {
			if v["ProductId"] == o.digital || v["ProductId"] == o.magazine {
				t.Errorf("other tenant's product in $apply: %v", v)
			}
		}

		// Active subscriptions per plan, by the tenant's clock.
		act := c.page("/Subscriptions?$apply=" + q("filter(Status eq 'Active')/groupby((BillingPlanId),aggregate($count as Active))"))
		if len(act.Value) != 1 || act.Value[0]["BillingPlanId"] != a.plan || fmt.Sprint(act.Value[0]["Active"]) != "2" {
			t.Errorf("active per plan: %v", act.Value)
		}
		subs := c.page("/Subscriptions?$filter=" + q("Status eq 'Active'") + "&$select=Id,Price,PackageName,PeriodStart,Status")
		if len(subs.Value) != 2 || fmt.Sprint(subs.Value[0]["Price"]) != "248" || subs.Value[0]["PackageName"] != "Digital" {
			t.Errorf("active subscriptions: %v", subs.Value)
		}

		// INFO-Subscription's KPI names.
		daily := c.page("/DailyPaidAmounts?$filter=" + q("Date eq 2027-02-03"))
		if len(daily.Value) != 1 || !decimal.RequireFromString(fmt.Sprint(daily.Value[0]["Amount"])).Equal(invs[0].Gross) {
			t.Errorf("daily paid: %v (paid %s)", daily.Value, invs[0].Gross)
		}
		if cs := c.page("/CanceledSubscriptions"); len(cs.Value) != 0 {
			t.Errorf("cancelled: %v", cs.Value)
		}

		// Payments: navigation Subscriber, expand, nav paths.
		pay := c.page("/Payments?$expand=Subscriber($select=Name)")
		if len(pay.Value) != 1 || pay.Value[0]["Subscriber"].(map[string]any)["Name"] != "Kari" || pay.Value[0]["PaidAt"] != "2027-02-03T09:00:00Z" {
			t.Fatalf("payments: %v", pay.Value)
		}
		pid := pay.Value[0]["Id"].(string)
		one := c.get("/Payments(" + pid + ")/Subscriber")
		if one.status != 200 || !strings.Contains(string(one.body), `"Name":"Kari"`) || !strings.Contains(string(one.body), "$entity") {
			t.Errorf("navigation: %d %s", one.status, one.body)
		}
		if n := c.page("/Payments?$filter=" + q("Subscriber/Name eq 'Kari' and Amount ge 248 and Amount lt 248.01")); len(n.Value) != 1 {
			t.Errorf("nav path filter: %v", n.Value)
		}
		subsWith := c.page("/Subscribers?$expand=" + q("Subscriptions($filter=Status eq 'Active';$orderby=PeriodStart desc;$top=1;$select=Id),Invoices($select=Gross;$expand=Lines($select=Net,ProductId))"))
		if len(subsWith.Value) != 1 || len(subsWith.Value[0]["Subscriptions"].([]any)) != 1 || len(subsWith.Value[0]["Invoices"].([]any)) != len(invs) {
			t.Errorf("nested expand: %v", subsWith.Value)
		}

		// Nothing of the other tenant is reachable.
		for _, path := range []string{
			"/Subscribers(" + o.subscriber + ")", "/Subscribers(" + o.subscriber + ")/Invoices",
			"/Subscriptions(" + o.subscriptions[0] + ")", "/BillingPlans(" + o.plan + ")/Subscriptions",
		} {
			if r := c.get(path); r.status != 404 {
				t.Errorf("%s: %d %s", path, r.status, r.body)
			}
		}
		for _, path := range []string{
			"/Invoices?$filter=" + q("SubscriberId eq "+o.subscriber),
			"/InvoiceLines?$filter=" + q("ProductId eq "+o.digital),
			"/Payments?$filter=" + q("Subscriber/Name eq 'Intruder'"),
			"/Subscriptions?$filter=" + q("BillingPlan/Name eq 'Monthly' and SubscriberId eq "+o.subscriber),
		} {
			// 200 and empty: any other answer (a 500 of a mistyped join on
			// PostgreSQL) would hide whether the filter leaks.
			if r := c.get(path); r.status != 200 || !strings.Contains(string(r.body), `"value":[]`) {
				t.Errorf("%s: %d %s", path, r.status, r.body)
			}
		}
		if r := c.get("/Subscriptions?$apply=" + q("filter(SubscriberId eq "+o.subscriber+")/aggregate($count as N)") + "&$filter=" + q("N gt 0")); r.status != 400 {
			t.Errorf("$apply beside $filter: %d %s", r.status, r.body)
		}
		n := c.page("/Subscriptions?$apply=" + q("filter(SubscriberId eq "+o.subscriber+")/aggregate($count as N)"))
		if fmt.Sprint(n.Value[0]["N"]) != "0" {
			t.Errorf("$apply counted another tenant's rows: %v", n.Value)
		}
		// Expanding from our rows never brings the other tenant's children.
		ex := c.page("/Products?$expand=InvoiceLines($select=InvoiceId)")
		for _, prod := range ex.Value {
			for _, l := range prod["InvoiceLines"].([]any) {
				if l.(map[string]any)["InvoiceId"] == nil {
					t.Errorf("line without invoice: %v", l)
				}
			}
		}
		oc := client{t: t, e: e, tn: other}
		if got := oc.page("/Payments?$expand=Subscriber"); len(got.Value) != 1 || got.Value[0]["Subscriber"].(map[string]any)["Name"] != "Intruder" {
			t.Errorf("other tenant's view: %v", got.Value)
		}
	})
}
