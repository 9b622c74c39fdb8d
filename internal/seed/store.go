package seed

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Tenant creates a tenant named name (not a test tenant: no test clock)
// and returns a context acting for it.
func Tenant(t testing.TB, s *store.Store, name string, now time.Time) context.Context {
	t.Helper()
	ten, err := s.CreateTenant(context.Background(), name, false, now)
	if err != nil {
		t.Fatalf("seed: create tenant %s: %v", name, err)
	}
	return tenancy.With(context.Background(), ten.ID)
}

// Store writes with the store's methods, in the tenant of its context, at
// a fixed time; each method returns the record as stored.
type Store struct {
	t   testing.TB
	s   *store.Store
	ctx context.Context
	now time.Time
}

// NewStore returns a writer for the tenant of ctx whose records are created
// at now.
func NewStore(t testing.TB, s *store.Store, ctx context.Context, now time.Time) *Store {
	return &Store{t: t, s: s, ctx: ctx, now: now}
}

func (w *Store) fail(what string, err error) {
	w.t.Helper()
	w.t.Fatalf("seed: create %s: %v", what, err)
}

// Organization creates a seller.
func (w *Store) Organization(o Organization) store.Organization {
	w.t.Helper()
	out, err := w.s.CreateOrganization(w.ctx, store.Organization{Name: o.Name, OrganizationNumber: o.OrganizationNumber,
		Country: orDefault(o.Country, "NO"), Currency: orDefault(o.Currency, "NOK"), TimeZone: orDefault(o.TimeZone, "Europe/Oslo"),
		PricesIncludeVAT: o.PricesIncludeVAT == nil || *o.PricesIncludeVAT}, w.now)
	if err != nil {
		w.fail("organization", err)
	}
	return out
}

// Product creates an active product.
func (w *Store) Product(p Product) catalog.Product {
	w.t.Helper()
	rate, err := price("vatRate", orDefault(p.VATRate, "0"))
	if err != nil {
		w.fail("product", err)
	}
	out, err := catalogdb.CreateProduct(w.ctx, w.s, catalog.Product{Name: p.Name, Category: p.Category, VATRate: catalog.NewPercent(rate), Active: true}, w.now)
	if err != nil {
		w.fail("product", err)
	}
	return out
}

// Plan creates a billing plan.
func (w *Store) Plan(p Plan) catalog.BillingPlan {
	w.t.Helper()
	unit, ok := period.ParseUnit(p.Unit)
	if !ok {
		w.fail("billing plan", fmt.Errorf("unit %q", p.Unit))
	}
	days := func(n *int) int {
		if n == nil {
			return 14
		}
		return *n
	}
	out, err := catalogdb.CreateBillingPlan(w.ctx, w.s, catalog.BillingPlan{Name: p.Name, IntervalUnit: unit, IntervalCount: max(p.Count, 1),
		MinimumDueDays: days(p.MinimumDueDays), PaymentTermsDays: days(p.PaymentTermsDays)}, w.now)
	if err != nil {
		w.fail("billing plan", err)
	}
	return out
}

// Package creates a template package.
func (w *Store) Package(p Package) catalog.TemplatePackage {
	w.t.Helper()
	code := strings.ToUpper(orDefault(p.Currency, "NOK"))
	cur, ok := money.LookupCurrency(code)
	if !ok {
		w.fail("package", fmt.Errorf("currency %q", code))
	}
	amount := func(s string) catalog.Amount {
		w.t.Helper()
		d, err := price("price", s)
		if err == nil {
			var a catalog.Amount
			if a, err = catalog.ParseAmount(d, cur); err == nil {
				return a
			}
		}
		w.fail("package", err)
		return catalog.Amount{}
	}
	units := max(p.Units, 1)
	tp := catalog.TemplatePackage{Name: p.Name, Currency: code, Price: amount(p.Price), Units: units, AutomaticStop: p.AutomaticStop,
		BillingPlans: p.Plans, AllowedChoices: catalog.AllowedChoices{MinUnits: units, MaxUnits: units}}
	if p.PermanentDiscount != "" {
		d, err := price("permanentDiscount", p.PermanentDiscount)
		if err != nil {
			w.fail("package", err)
		}
		tp.PermanentDiscount = catalog.NewPercent(d)
	}
	for _, id := range p.Products {
		tp.Products = append(tp.Products, catalog.PackageProduct{ProductID: id})
	}
	for _, x := range p.Additional {
		tp.AdditionalProducts = append(tp.AdditionalProducts, catalog.AdditionalProduct{ProductID: x.ProductID, Price: amount(x.Price),
			SelectedByDefault: x.SelectedByDefault})
	}
	if p.MinUnits != 0 {
		tp.AllowedChoices.MinUnits = p.MinUnits
	}
	if p.MaxUnits != 0 {
		tp.AllowedChoices.MaxUnits = p.MaxUnits
	}
	out, err := catalogdb.CreatePackage(w.ctx, w.s, tp, w.now)
	if err != nil {
		w.fail("package", err)
	}
	return out
}

// Subscriber creates a subscriber.
func (w *Store) Subscriber(s Subscriber) store.Subscriber {
	w.t.Helper()
	out, err := w.s.CreateSubscriber(w.ctx, store.Subscriber{Name: s.Name, Email: s.Email, Country: s.Country, ExternalID: s.ExternalID}, w.now)
	if err != nil {
		w.fail("subscriber", err)
	}
	return out
}
