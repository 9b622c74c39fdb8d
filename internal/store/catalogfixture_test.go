package store_test

// The catalog's test fixture, for the store's tests whose records name a
// catalog (orders, agreements). The catalog's own tests are in
// internal/catalogdb, which has the same helpers.

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

var catalogNow = time.Date(2026, 2, 1, 9, 30, 0, 123456000, time.UTC)

func catalogTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, catalogNow)
}

func mustProduct(t *testing.T, s *store.Store, ctx context.Context, name, category, rate string) catalog.Product {
	t.Helper()
	return seed.NewStore(t, s, ctx, catalogNow).Product(seed.Product{Name: name, Category: category, VATRate: rate})
}

func mustPlan(t *testing.T, s *store.Store, ctx context.Context, name string, unit period.Unit, count int) catalog.BillingPlan {
	t.Helper()
	return seed.NewStore(t, s, ctx, catalogNow).Plan(seed.Plan{Name: name, Unit: string(unit), Count: count,
		MinimumDueDays: seed.Days(14), PaymentTermsDays: seed.Days(14)})
}

// catalogFixture is a small catalog of one tenant.
type catalogFixture struct {
	s                                *store.Store
	ctx                              context.Context
	print, digital, magazine, sunday catalog.Product
	invoice, avtale, yearly          catalog.BillingPlan
}

func newCatalogFixture(t *testing.T, s *store.Store, ctx context.Context) *catalogFixture {
	t.Helper()
	return &catalogFixture{
		s: s, ctx: ctx,
		print:    mustProduct(t, s, ctx, "Printed paper", "print", "0"),
		digital:  mustProduct(t, s, ctx, "Digital news", "digital", "0"),
		magazine: mustProduct(t, s, ctx, "Weekend magazine", "magazine", "25"),
		sunday:   mustProduct(t, s, ctx, "Sunday edition", "print", "0"),
		invoice:  mustPlan(t, s, ctx, "Monthly invoice", period.Month, 1),
		avtale:   mustPlan(t, s, ctx, "Monthly AvtaleGiro", period.Month, 1),
		yearly:   mustPlan(t, s, ctx, "Yearly", period.Year, 1),
	}
}

func share(s string) *catalog.Percent {
	p := catalog.NewPercent(decimal.RequireFromString(s))
	return &p
}

// template is a print + digital bundle using every field.
func (f *catalogFixture) template() catalog.TemplatePackage {
	editions := 26
	c, _ := money.LookupCurrency("NOK")
	return catalog.TemplatePackage{
		Name: "Print + digital", Description: "Paper and app", Currency: "NOK",
		Price: catalog.NewAmount(44900, c), Units: 2, NumberOfEditions: &editions, AutomaticStop: true,
		PermanentDiscount: catalog.NewPercent(decimal.RequireFromString("12.5")),
		Products: []catalog.PackageProduct{
			{ProductID: f.print.ID, Share: share("66.6667")},
			{ProductID: f.digital.ID, Share: share("33.3333")},
		},
		AdditionalProducts: []catalog.AdditionalProduct{
			{ProductID: f.magazine.ID, Price: catalog.NewAmount(4900, c)},
			{ProductID: f.sunday.ID, Price: catalog.NewAmount(2950, c), SelectedByDefault: true},
		},
		BillingPlans:   []string{f.avtale.ID, f.invoice.ID},
		Contract:       &catalog.Contract{BindingPeriods: 12, Terms: "Bound for 12 months"},
		AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 5, PriceOverride: true, DiscountOverride: false},
	}
}

func (f *catalogFixture) create(t *testing.T, tp catalog.TemplatePackage) catalog.TemplatePackage {
	t.Helper()
	out, err := catalogdb.CreatePackage(f.ctx, f.s, tp, catalogNow)
	if err != nil {
		t.Fatalf("create package: %v", err)
	}
	return out
}
