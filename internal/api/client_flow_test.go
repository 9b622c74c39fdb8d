package api_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/kadens/kadens/client"
	"github.com/kadens/kadens/internal/apitest"
)

// TestClientOrderToInvoice runs the first hour of an integrator through the
// typed client generated from /openapi.json: catalog, subscriber, order,
// completion, the invoice and paging, a 400 naming its fields and another
// tenant's 404. Every response is also checked against the document.
func TestClientOrderToInvoice(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		ctx := t.Context()
		c := e.Tenant.Client()
		must := func(id string, err error) string {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		org := must(c.CreateOrganization(ctx, client.OrganizationInput{Name: client.Ptr("Nordavis AS"),
			Country: client.Ptr("NO"), Currency: client.Ptr("NOK")}))
		product := must(c.CreateProduct(ctx, client.ProductInput{Name: client.Ptr("Digital"), VATRate: client.Ptr(client.Decimal("25"))}))
		plan := must(c.CreateBillingPlan(ctx, client.BillingPlanInput{Name: client.Ptr("Monthly"), IntervalUnit: client.Ptr("Month")}))
		pkg := must(c.CreatePackage(ctx, client.PackageInput{Name: client.Ptr("Digital"), Currency: client.Ptr("NOK"),
			Price: client.Ptr(client.Decimal("199.00")), BillingPlans: []string{plan},
			Products: []client.PackageProductInput{{ProductID: &product}}}))
		sub := must(c.CreateSubscriber(ctx, client.SubscriberInput{Name: client.Ptr("Kari Nordmann"), Country: client.Ptr("NO")}))
		order := must(c.CreateOrder(ctx, client.OrderInput{OrganizationID: &org, TemplatePackageID: &pkg, SubscriberID: &sub},
			client.WithIdempotencyKey("order-1")))
		again := must(c.CreateOrder(ctx, client.OrderInput{OrganizationID: &org, TemplatePackageID: &pkg, SubscriberID: &sub},
			client.WithIdempotencyKey("order-1")))
		if again != order {
			t.Fatalf("idempotent replay gave order %s, want %s", again, order)
		}
		done, err := c.CompleteOrder(ctx, order)
		if err != nil {
			t.Fatal(err)
		}
		if done.Status != "Completed" || done.SubscriptionID == nil || done.CompletedAt == nil {
			t.Fatalf("completed order: %+v", done)
		}

		invoices, err := c.ListInvoices(ctx, &client.ListInvoicesParams{SubscriberID: sub})
		if err != nil {
			t.Fatal(err)
		}
		if len(invoices.Items) != 1 || invoices.Next != "" {
			t.Fatalf("%d invoices (next %q), want 1", len(invoices.Items), invoices.Next)
		}
		inv := invoices.Items[0]
		// 199.00 including 25 % VAT: exact decimals, never floats.
		if inv.Gross != "199.00" || inv.Net != "159.20" || inv.VAT != "39.80" || inv.Currency != "NOK" {
			t.Fatalf("invoice amounts gross %s net %s vat %s %s", inv.Gross, inv.Net, inv.VAT, inv.Currency)
		}
		got, err := c.GetInvoice(ctx, inv.ID, nil)
		if err != nil || got.KID != inv.KID || len(got.Lines) == 0 || got.Buyer.Name != "Kari Nordmann" {
			t.Fatalf("GET invoice: %+v, %v", got, err)
		}

		// Paging follows the Link header's cursor.
		for i := range 2 {
			must(c.CreateProduct(ctx, client.ProductInput{Name: client.Ptr("Extra " + string(rune('A'+i))), VATRate: client.Ptr(client.Decimal("0"))}))
		}
		var names []string
		params := &client.ListProductsParams{Limit: 2}
		for {
			page, err := c.ListProducts(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range page.Items {
				names = append(names, p.Name)
			}
			if page.Next == "" {
				break
			}
			params.Cursor = page.Next
		}
		if !slices.Equal(names, []string{"Digital", "Extra A", "Extra B"}) {
			t.Fatalf("paged products %v", names)
		}

		// A 400 names its fields; the typed error carries them.
		_, err = c.CreateOrganization(ctx, client.OrganizationInput{Name: client.Ptr("X"), Country: client.Ptr("XX")})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != http.StatusBadRequest || ce.Validation == nil {
			t.Fatalf("invalid organization: %v", err)
		}
		var fields []string
		for _, f := range ce.Validation.Errors {
			fields = append(fields, f.Field)
		}
		if !slices.Contains(fields, "country") || !slices.Contains(fields, "currency") {
			t.Fatalf("400 names %v, want country and currency", fields)
		}

		// Another tenant's client sees none of it.
		other := e.NewTenant("tenant-b", true).Client()
		if _, err := other.GetOrder(ctx, order); client.StatusOf(err) != http.StatusNotFound {
			t.Fatalf("other tenant's GET order: %v, want 404", err)
		}
		if page, err := other.ListInvoices(ctx, nil); err != nil || len(page.Items) != 0 {
			t.Fatalf("other tenant's invoices: %d, %v", len(page.Items), err)
		}
	})
}
