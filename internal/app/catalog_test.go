package app_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// catalogApp is the application layer on s with a tenant in the context,
// as a surface without HTTP (the console) would call it.
func catalogApp(t *testing.T, s *store.Store) (*app.App, context.Context) {
	t.Helper()
	ctx := context.Background()
	tn, err := s.CreateTenant(ctx, "catalog", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(s, slog.New(slog.DiscardHandler), "test")
	return app.New(app.Options{Store: s, Engine: eng}), tenancy.With(ctx, tn.ID)
}

// fields are the fields of err's validation errors, in order.
func fields(t *testing.T, err error) []string {
	t.Helper()
	var verrs validation.Errors
	if !errors.As(err, &verrs) {
		t.Fatalf("error %v, want validation.Errors", err)
	}
	out := make([]string, len(verrs))
	for i, e := range verrs {
		out[i] = e.Field
	}
	return out
}

func nok(minor int64) catalog.Amount { return catalog.Amount{Minor: minor, Digits: 2} }

// TestCreatePackageChecksTheCatalog: a template package is created through
// the application layer alone, and its rules hold there: a product the
// tenant does not have, and a taxPercent other than the product's VAT
// rate, are validation errors listed after the surface's own.
func TestCreatePackageChecksTheCatalog(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx := catalogApp(t, s)
		prod, err := a.CreateProduct(ctx, catalog.Product{Name: "Digital", VATRate: catalog.PercentOf(0), Active: true})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := a.CreateBillingPlan(ctx, catalog.BillingPlan{Name: "Monthly", IntervalUnit: period.Month, IntervalCount: 1, MinimumDueDays: 14, PaymentTermsDays: 14})
		if err != nil {
			t.Fatal(err)
		}
		tmpl := func(productID string) catalog.TemplatePackage {
			return catalog.TemplatePackage{Name: "Digital 199", Currency: "NOK", Price: nok(19900), Units: 1,
				PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: productID}},
				BillingPlans:   []string{plan.ID},
				AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}
		}

		missing := store.NewID()
		shape := validation.Errors{{Field: "Description", Message: "too long"}}
		_, err = a.CreatePackage(ctx, app.TemplateInput{Package: tmpl(missing), Invalid: shape})
		if got := fields(t, err); len(got) != 2 || got[0] != "Description" || got[1] != "products[0].productId" {
			t.Fatalf("unknown product: fields %v, want [Description products[0].productId]", got)
		}
		vat := decimal.NewFromInt(25)
		_, err = a.CreatePackage(ctx, app.TemplateInput{Package: tmpl(prod.ID), TaxPercents: []*decimal.Decimal{&vat}})
		if got := fields(t, err); len(got) != 1 || got[0] != "products[0].taxPercent" {
			t.Fatalf("taxPercent 25 for a zero-rated product: fields %v", got)
		}

		p, err := a.CreatePackage(ctx, app.TemplateInput{Package: tmpl(prod.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := a.Package(ctx, p.ID); err != nil || got.Name != "Digital 199" {
			t.Fatalf("package %+v, %v", got, err)
		}
		// The package offers the plan: its interval is fixed now.
		plan.IntervalUnit = period.Year
		if _, err := a.UpdateBillingPlan(ctx, plan); err == nil || fields(t, err)[0] != "intervalUnit" {
			t.Fatalf("interval change of an offered plan: %v", err)
		}
		// And the product cannot go while the package holds it.
		var inUse *store.InUseError
		if err := a.DeleteProduct(ctx, prod.ID); !errors.As(err, &inUse) {
			t.Fatalf("delete of a product in use: %v, want *store.InUseError", err)
		}
		if _, err := a.PreviewPackage(ctx, store.NewID(), catalog.Choices{}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("preview of no template: %v, want ErrNotFound", err)
		}
	})
}

// TestPriceChangeRules: a price change whose notice period has already
// begun at the tenant's time is refused on effectiveFrom, and one of a
// template that does not exist is ErrNotFound.
func TestPriceChangeRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx := catalogApp(t, s)
		req := engine.PriceChangeRequest{TargetTemplatePackageID: store.NewID(), EffectiveFrom: time.Now().AddDate(0, 0, 5), NoticeDays: 30}
		if _, err := a.SchedulePriceChange(ctx, store.NewID(), req); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("price change of no template: %v, want ErrNotFound", err)
		}
		if _, err := a.SubscriptionChain(ctx, store.NewID()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("chain of no subscription: %v, want ErrNotFound", err)
		}
		prod, err := a.CreateProduct(ctx, catalog.Product{Name: "Print", VATRate: catalog.PercentOf(0), Active: true})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := a.CreateBillingPlan(ctx, catalog.BillingPlan{Name: "Monthly", IntervalUnit: period.Month, IntervalCount: 1, MinimumDueDays: 14, PaymentTermsDays: 14})
		if err != nil {
			t.Fatal(err)
		}
		mk := func(price int64) string {
			p, err := a.CreatePackage(ctx, app.TemplateInput{Package: catalog.TemplatePackage{Name: "Print", Currency: "NOK", Price: nok(price), Units: 1,
				PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: prod.ID}}, BillingPlans: []string{plan.ID},
				AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			return p.ID
		}
		from, to := mk(19900), mk(24900)
		req.TargetTemplatePackageID = to
		_, err = a.SchedulePriceChange(ctx, from, req)
		if got := fields(t, err); len(got) != 1 || got[0] != "effectiveFrom" {
			t.Fatalf("price change inside its notice period: fields %v, want [effectiveFrom]", got)
		}
		req.EffectiveFrom = time.Now().AddDate(0, 0, 40)
		pc, err := a.SchedulePriceChange(ctx, from, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.RevokePriceChange(ctx, from, pc.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := a.PriceChange(ctx, from, pc.ID); err != nil || got.Status == store.PriceChangeScheduled {
			t.Fatalf("revoked price change %+v, %v", got, err)
		}
	})
}
