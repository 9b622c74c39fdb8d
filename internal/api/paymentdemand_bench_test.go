package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

// BenchmarkListPaymentDemands: GET /paymentdemand?limit=100 over 100
// demands of 100 subscriptions, half of them paid, through the whole
// request path on SQLite. The page's INFO-Subscription fields take three
// statements for the page (demandViews), not three or four per demand.
func BenchmarkListPaymentDemands(b *testing.B) {
	e := apitest.Start(b, store.SQLite, nil)
	tn := e.NewTenant("bench-demands", true)
	sd := tn.Seed(b)
	org := sd.Organization(seed.Nordavis)
	product := sd.Product(seed.Product{Name: "Digital", Category: "digital", VATRate: "0"})
	plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
	pkg := sd.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{product}, Plans: []string{plan}})
	subscriber := sd.Subscriber(seed.Kari)
	for i := range 100 {
		r := tn.Do("POST", "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": subscriber})
		if r.Status != http.StatusCreated {
			b.Fatalf("order: %d %s", r.Status, r.Body)
		}
		var o struct {
			SubscriptionID string `json:"subscriptionId"`
		}
		if r = tn.Do("POST", "/order/"+r.ID(b)+"/complete", nil); r.Status != http.StatusOK {
			b.Fatalf("complete: %d %s", r.Status, r.Body)
		}
		r.JSON(b, &o)
		if i%2 == 0 {
			continue
		}
		var invs []store.Invoice
		tn.Do("GET", "/invoice?subscriptionId="+o.SubscriptionID, nil).JSON(b, &invs)
		if r := tn.Do("POST", "/payment", map[string]any{"invoiceId": invs[0].ID, "status": "Succeeded",
			"amount": json.Number(invs[0].Gross.String()), "currency": invs[0].Currency, "provider": "Manual",
			"providerReference": fmt.Sprintf("bench-%d", i)}); r.Status != http.StatusCreated {
			b.Fatalf("pay: %d %s", r.Status, r.Body)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		r := tn.Do("GET", "/paymentdemand?limit=100", nil)
		if r.Status != http.StatusOK {
			b.Fatalf("list: %d %s", r.Status, r.Body)
		}
	}
}
