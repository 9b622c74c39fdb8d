package analytics_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/analytics"
	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store/storetest"
)

// FuzzAnalytics sends arbitrary paths and query options to /analytics on
// a real listener of a server per engine (PostgreSQL too when
// KADENS_TEST_POSTGRES_URL is set), over a tenant with a row behind every
// navigation property: no answer is a 5xx (a query the translator let
// through that a database then refused, a panic), and a 200 with a JSON
// body is whole JSON (a page cut by a failure while streaming is not).
//
// In a path or an option, {Set} stands for the key of an existing row of
// that set (as a literal), so the corpus reaches entities and their
// navigations rather than only 404s. The seed corpus below runs in every
// go test; go test -fuzz=FuzzAnalytics ./internal/analytics explores.
func FuzzAnalytics(f *testing.F) {
	m := analytics.NewModel()
	type target struct {
		e    *apitest.Env
		keys *strings.Replacer
	}
	var targets []target
	for _, eng := range storetest.Engines() {
		e := apitest.Start(f, eng, nil)
		seedEverything(f, e.Tenant)
		var pairs []string
		for _, s := range m.Sets {
			key, _ := s.Prop(s.Key)
			var page struct{ Value []map[string]any }
			r := fuzzGet(f, e, "/analytics/"+s.Name, "$top=1&$select="+s.Key)
			if r == nil || r.StatusCode != 200 || json.NewDecoder(r.Body).Decode(&page) != nil || len(page.Value) == 0 {
				f.Fatalf("%s: no row to fuzz with", s.Name)
			}
			r.Body.Close()
			pairs = append(pairs, "{"+s.Name+"}", literal(key.Type, page.Value[0][s.Key]))
		}
		targets = append(targets, target{e, strings.NewReplacer(pairs...)})
	}
	for _, sd := range [][7]string{
		{"Subscribers", "Country eq 'NO' and contains(Name,'a')", "Name desc", "Name,Email", "Payments($top=1)", "", "$count=true"},
		{"Payments", "Subscriber/Country eq 'NO' and Amount gt 1.5", "PaidAt", "", "Subscriber", "", "$top=1"},
		{"InvoiceLines", "", "", "", "", "compute(year(IssueDate) as Y)/groupby((Y,ProductId),aggregate(Net with sum as R))", ""},
		{"Subscriptions", "Status eq 'Active' or date(PeriodStart) ge 2027-01-01", "Price desc,ChainStep", "", "Invoices($expand=Lines)", "", ""},
		{"Invoices", "year(IssueDate) eq 2027 and Status in ('Paid','Issued')", "", "", "", "aggregate(Gross with average as A,$count as N)", ""},
		{"Subscriptions", "BillingPlanId eq {BillingPlans}", "BillingPlan/Name", "", "BillingPlan", "", ""},
		{"BillingPlans({BillingPlans})/Subscriptions", "", "", "Id", "Subscriber", "", "$count=true"},
		{"BillingPlans({BillingPlans})/Subscriptions/$count", "Status eq 'Cancelled'", "", "", "", "", ""},
		{"Subscribers({Subscribers})", "", "", "Name", "Invoices($expand=Lines($select=Net))", "", ""},
		{"Payments({Payments})/PaymentAgreement", "", "", "", "Payments", "", ""},
		{"InvoiceLines({InvoiceLines})/Product", "", "", "", "", "", ""},
		{"Products({Products})/InvoiceLines", "Invoice/Subscription/BillingPlanId ne null", "Invoice/Gross desc", "", "Invoice", "", ""},
		{"Reminders", "PaymentDemand/Invoice/SubscriptionId eq {Subscriptions}", "", "", "PaymentDemand($expand=Payments)", "", "$skiptoken=WzBd"},
		{"CanceledSubscriptions", "", "BillingPlan/IntervalUnit,Organization/Name", "", "", "groupby((BillingPlanId),aggregate($count as N))", ""},
		{"DailyPaidAmounts", "Date ge 2027-01-01", "Amount desc", "", "", "", "$top=0&$skip=1"},
		{"$metadata", "", "", "", "", "", "$format=json"},
		{"Subscribers(Id={Subscribers})/Orders", "", "", "", "Package", "", ""},
		{"Subscribers('x')/Nope", "1 eq", "(", ")", "Nope", "x", "%zz&$top=-1&$skip=x"},
	} {
		f.Add(sd[0], sd[1], sd[2], sd[3], sd[4], sd[5], sd[6])
	}
	f.Fuzz(func(t *testing.T, path, filter, orderby, sel, expand, apply, raw string) {
		for _, tg := range targets {
			q := url.Values{}
			for k, v := range map[string]string{"$filter": filter, "$orderby": orderby, "$select": sel, "$expand": expand, "$apply": apply} {
				if v != "" {
					q.Set(k, tg.keys.Replace(v))
				}
			}
			query := q.Encode()
			if raw != "" {
				query += "&" + tg.keys.Replace(raw)
			}
			p := "/analytics/" + tg.keys.Replace(path)
			r := fuzzGet(t, tg.e, p, query)
			if r == nil {
				continue // the client would not send it (not a URL)
			}
			body, err := io.ReadAll(r.Body)
			r.Body.Close()
			switch {
			case r.StatusCode >= 500:
				t.Fatalf("%s?%s: %d %s", p, query, r.StatusCode, body)
			case err != nil:
				t.Fatalf("%s?%s: %d, body cut: %v", p, query, r.StatusCode, err)
			case r.StatusCode == 200 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") && !json.Valid(body):
				t.Fatalf("%s?%s: 200 with a cut or broken body: %.300s", p, query, body)
			}
		}
	})
}

// fuzzGet sends GET path?query to e as its tenant; nil when the input is
// not a request the client can send.
func fuzzGet(t testing.TB, e *apitest.Env, path, query string) *http.Response {
	t.Helper()
	u, err := url.Parse(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path, u.RawQuery = path, query
	req, err := http.NewRequest("GET", u.String(), nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+e.Tenant.Token)
	req.Header.Set("S4-TenantId", e.Tenant.ID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if strings.Contains(err.Error(), "control character") {
			return nil // refused by the client before sending
		}
		t.Fatalf("GET %s?%s: %v", path, query, err)
	}
	return resp
}
