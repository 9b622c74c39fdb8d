package analytics_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
)

// TestApplySumsAcrossCurrencies checks that $apply's sums of money — added
// up in minor units per currency and scaled once per group — equal the main
// API's invoice totals exactly for currencies with 0, 2 and 3 minor digits,
// per currency and across them.
func TestApplySumsAcrossCurrencies(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := client{t: t, e: e, tn: e.Tenant}
		sd := e.Tenant.Seed(t)
		org := sd.Organization(seed.Nordavis)
		prod := sd.Product(seed.Product{Name: "Digital", Category: "digital", VATRate: "0"})
		plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
		sub := sd.Subscriber(seed.Subscriber{Name: "Kari", Email: "kari@example.no", Country: "NO"})
		oslo, _ := time.LoadLocation("Europe/Oslo")
		if r := e.Tenant.Do("POST", "/testclock/advance", map[string]any{"to": time.Date(2027, 1, 10, 0, 0, 0, 0, oslo).UTC().Format(time.RFC3339)}); r.Status != http.StatusOK {
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		for _, cp := range [][2]string{{"NOK", "199.99"}, {"JPY", "1999"}, {"KWD", "12.345"}, {"NOK", "0.01"}} {
			pkg := sd.Package(seed.Package{Name: "P " + cp[0] + cp[1], Currency: cp[0], Price: cp[1], Products: []string{prod}, Plans: []string{plan}})
			r := e.Tenant.Do("POST", "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sub,
				"requestedStart": time.Date(2027, 2, 1, 0, 0, 0, 0, oslo).Format(time.RFC3339)})
			if r.Status != http.StatusCreated {
				t.Fatalf("order %v: %d %s", cp, r.Status, r.Body)
			}
			var id string
			r.JSON(t, &id)
			if r := e.Tenant.Do("POST", "/order/"+id+"/complete", nil); r.Status != http.StatusOK {
				t.Fatalf("complete %v: %d %s", cp, r.Status, r.Body)
			}
		}
		if r := e.Tenant.Do("POST", "/testclock/advance", map[string]any{"to": time.Date(2027, 3, 5, 0, 0, 0, 0, oslo).UTC().Format(time.RFC3339)}); r.Status != http.StatusOK {
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		var invs []struct {
			Currency string          `json:"currency"`
			Gross    decimal.Decimal `json:"gross"`
		}
		e.Tenant.Do("GET", "/invoice", nil).JSON(t, &invs)
		want := map[string]decimal.Decimal{}
		total := decimal.Zero
		counts := map[string]int{}
		for _, inv := range invs {
			want[inv.Currency] = want[inv.Currency].Add(inv.Gross)
			total = total.Add(inv.Gross)
			counts[inv.Currency]++
		}
		if len(want) != 3 {
			t.Fatalf("invoices in %d currencies: %v", len(want), want)
		}
		p := c.page("/Invoices?$apply=" + q("groupby((Currency),aggregate(Gross with sum as G,Net with sum as N,$count as Count,InvoiceNumber with sum as Numbers))"))
		if len(p.Value) != 3 {
			t.Fatalf("groups: %v", p.Value)
		}
		for _, v := range p.Value {
			cur := v["Currency"].(string)
			if got := decimal.RequireFromString(fmt.Sprint(v["G"])); !got.Equal(want[cur]) {
				t.Errorf("%s: sum %s, main API %s", cur, got, want[cur])
			}
			if fmt.Sprint(v["Count"]) != fmt.Sprint(counts[cur]) {
				t.Errorf("%s: count %v, main API %d", cur, v["Count"], counts[cur])
			}
		}
		all := c.page("/Invoices?$apply=" + q("aggregate(Gross with sum as G,$count as Count)"))
		if len(all.Value) != 1 || !decimal.RequireFromString(fmt.Sprint(all.Value[0]["G"])).Equal(total) || fmt.Sprint(all.Value[0]["Count"]) != fmt.Sprint(len(invs)) {
			t.Errorf("all: %v, main API %s over %d", all.Value, total, len(invs))
		}
		// Nothing matched: zero, not null, as before.
		none := c.page("/Invoices?$apply=" + q("filter(Currency eq 'SEK')/aggregate(Gross with sum as G,$count as Count)"))
		if len(none.Value) != 1 || fmt.Sprint(none.Value[0]["G"]) != "0" || fmt.Sprint(none.Value[0]["Count"]) != "0" {
			t.Errorf("none: %v", none.Value)
		}
		// A grouping that mixes in min stays one level and agrees.
		mixed := c.page("/Invoices?$apply=" + q("groupby((Currency),aggregate(Gross with sum as G,Gross with min as Lo))") + "&$orderby=Currency")
		if len(mixed.Value) != 3 || !strings.Contains(fmt.Sprint(mixed.Value), "JPY") {
			t.Errorf("mixed: %v", mixed.Value)
		}
		for _, v := range mixed.Value {
			if got := decimal.RequireFromString(fmt.Sprint(v["G"])); !got.Equal(want[v["Currency"].(string)]) {
				t.Errorf("mixed %v: sum %s", v["Currency"], got)
			}
		}
	})
}
