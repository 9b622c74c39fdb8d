package app_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestOrderCommandsWithoutHTTP places, completes and tries to cancel an
// order through the application layer alone, as the console will, and
// checks the order's rules against the tenant's data there: an unknown
// organization and a requested start before the organization's today are
// named, and a completed order is not cancelled.
func TestOrderCommandsWithoutHTTP(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx := catalogApp(t, s)
		org, _, pkg := digitalCatalog(t, a, ctx)
		newSub := &app.OrderSubscriber{Subscriber: store.Subscriber{Name: "Kari Nordmann", Country: "NO", Contacts: []store.Contact{}}}

		yesterday := time.Now().Add(-48 * time.Hour)
		_, err := a.PlaceOrder(ctx, app.NewOrder{OrganizationID: store.NewID(), TemplatePackageID: pkg.ID, NewSubscriber: newSub})
		if got := fields(t, err); !slices.Contains(got, "organizationId") {
			t.Errorf("order for an unknown organization: fields %v, want organizationId", got)
		}
		_, err = a.PlaceOrder(ctx, app.NewOrder{OrganizationID: org.ID, TemplatePackageID: pkg.ID, NewSubscriber: newSub, RequestedStart: &yesterday})
		if got := fields(t, err); !slices.Equal(got, []string{"requestedStart"}) {
			t.Errorf("order starting before today: fields %v, want [requestedStart]", got)
		}

		o, err := a.PlaceOrder(ctx, app.NewOrder{OrganizationID: org.ID, TemplatePackageID: pkg.ID, NewSubscriber: newSub})
		if err != nil {
			t.Fatal(err)
		}
		if o.Status != store.OrderCreated {
			t.Fatalf("placed order in status %s, want Created", o.Status)
		}
		done, err := a.CompleteOrder(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if done.Status != store.OrderCompleted || done.SubscriptionID == nil {
			t.Fatalf("completed order: status %s, subscription %v", done.Status, done.SubscriptionID)
		}
		if sub, err := a.Subscription(ctx, *done.SubscriptionID); err != nil || sub.TemplatePackageID == nil || *sub.TemplatePackageID != pkg.ID {
			t.Fatalf("the order's subscription: %+v, %v", sub, err)
		}
		if _, err := a.CancelOrder(ctx, o.ID); !slices.Equal(fields(t, err), []string{"id"}) {
			t.Errorf("cancelling a completed order: %v, want an error on id", err)
		}
	})
}

// digitalCatalog is a Norwegian organization and a one-product catalog
// made through the app: a monthly billing plan and the package "Digital
// 199" (199.00 NOK a month, no VAT) on it.
func digitalCatalog(t *testing.T, a *app.App, ctx context.Context) (store.Organization, catalog.BillingPlan, catalog.TemplatePackage) {
	t.Helper()
	org, err := a.CreateOrganization(ctx, store.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo", KIDAlgorithm: "MOD10"})
	if err != nil {
		t.Fatal(err)
	}
	prod, err := a.CreateProduct(ctx, catalog.Product{Name: "Digital", VATRate: catalog.PercentOf(0), Active: true})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.CreateBillingPlan(ctx, catalog.BillingPlan{Name: "Monthly", IntervalUnit: period.Month, IntervalCount: 1, MinimumDueDays: 14, PaymentTermsDays: 14})
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := a.CreatePackage(ctx, app.TemplateInput{Package: catalog.TemplatePackage{Name: "Digital 199", Currency: "NOK", Price: nok(19900), Units: 1,
		PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: prod.ID}},
		BillingPlans: []string{plan.ID}, AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return org, plan, pkg
}
