package catalogdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// catalogFixture is seed's small catalog of one tenant, with the writer
// that made it for the packages the tests add.
type catalogFixture struct {
	seed.Catalog
	sd *seed.Store
}

func newCatalogFixture(t *testing.T, s *store.Store, ctx context.Context) *catalogFixture {
	t.Helper()
	sd := seed.NewStore(t, s, ctx, catalogNow)
	return &catalogFixture{Catalog: sd.Catalog(), sd: sd}
}

func nokAmount(t *testing.T, s string) catalog.Amount {
	t.Helper()
	c, _ := money.LookupCurrency("NOK")
	a, err := catalog.ParseAmount(decimal.RequireFromString(s), c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func share(s string) *catalog.Percent {
	p := catalog.NewPercent(decimal.RequireFromString(s))
	return &p
}

// simple is a one-product monthly package at price in NOK.
func (f *catalogFixture) simple(name, price string) catalog.TemplatePackage {
	return f.sd.Package(seed.Package{Name: name, Currency: "NOK", Price: price, Units: 1,
		Products: []string{f.Digital.ID}, Plans: []string{f.Invoice.ID}})
}

// comparable renders a package without what the store assigns.
func comparable(t *testing.T, tp catalog.TemplatePackage) string {
	t.Helper()
	tp.ID, tp.CreatedAt, tp.UpdatedAt = "", time.Time{}, time.Time{}
	b, err := json.Marshal(tp)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPackageRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newCatalogFixture(t, s, ctx)
		want := f.Template()
		created := f.sd.TemplatePackage(want)
		if !store.ValidID(created.ID) || created.ArchivedAt != nil {
			t.Fatalf("created %+v", created)
		}
		got, err := catalogdb.Package(ctx, s, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := comparable(t, got), comparable(t, want); a != b {
			t.Errorf("read back\n got %s\nwant %s", a, b)
		}
		if !got.CreatedAt.Equal(created.CreatedAt) {
			t.Errorf("created at %v, want %v", got.CreatedAt, created.CreatedAt)
		}

		// A package with nothing optional reads back with empty lists and nulls.
		bare := f.simple("Digital", "199")
		got, err = catalogdb.Package(ctx, s, bare.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		for _, k := range []string{"numberOfEditions", "contract", "packageChainId", "archivedAt"} {
			if m[k] != nil {
				t.Errorf("%s = %v, want null", k, m[k])
			}
		}
		if add, ok := m["additionalProducts"].([]any); !ok || len(add) != 0 {
			t.Errorf("additionalProducts = %v, want []", m["additionalProducts"])
		}
		if m["price"].(float64) != 199 {
			t.Errorf("price %v", m["price"])
		}

		// Update replaces fields and children.
		up := got
		up.Name, up.Price = "Digital+", nokAmount(t, "229.50")
		up.Products = []catalog.PackageProduct{{ProductID: f.Print.ID, Share: share("50")}, {ProductID: f.Digital.ID, Share: share("50")}}
		up.AdditionalProducts = []catalog.AdditionalProduct{{ProductID: f.Magazine.ID, Price: nokAmount(t, "10")}}
		up.BillingPlans = []string{f.Yearly.ID}
		after, err := catalogdb.UpdatePackage(ctx, s, up, catalogNow.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := comparable(t, after), comparable(t, up); a != b {
			t.Errorf("updated\n got %s\nwant %s", a, b)
		}
		if !after.UpdatedAt.After(after.CreatedAt) || !after.CreatedAt.Equal(bare.CreatedAt) {
			t.Errorf("timestamps %v %v", after.CreatedAt, after.UpdatedAt)
		}
		up.ID = store.NewID()
		if _, err := catalogdb.UpdatePackage(ctx, s, up, catalogNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("update of an unknown package: %v", err)
		}
	})
}

func TestListPackagesFilters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newCatalogFixture(t, s, ctx)
		bundle := f.sd.TemplatePackage(f.Template())
		digital := f.simple("Digital", "199")
		intro := f.simple("Intro", "99")
		sek := f.Template()
		sek.Currency = "SEK"
		sekPkg := f.sd.TemplatePackage(sek)
		chain, err := catalogdb.CreatePackageChain(ctx, s, catalog.Chain{Name: "Intro", PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
			{Step: 1, NextPackageID: intro.ID, Periods: 1}, {Step: 2, NextPackageID: digital.ID, Periods: 1}}}}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		intro.PackageChainID = &chain.ID
		if _, err := catalogdb.UpdatePackage(ctx, s, intro, catalogNow); err != nil {
			t.Fatal(err)
		}
		// Deleting the intro while the chain uses it archives it.
		if archived, err := catalogdb.DeletePackage(ctx, s, intro.ID, catalogNow); err != nil || !archived {
			t.Fatalf("delete intro: archived %v, %v", archived, err)
		}
		ids := func(fl catalogdb.PackageFilter) []string {
			t.Helper()
			ps, _, err := catalogdb.ListPackages(ctx, s, fl, store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, p := range ps {
				out = append(out, p.ID)
			}
			return out
		}
		tests := []struct {
			name string
			f    catalogdb.PackageFilter
			want []string
		}{
			{"active only by default", catalogdb.PackageFilter{}, []string{bundle.ID, digital.ID, sekPkg.ID}},
			{"archived", catalogdb.PackageFilter{Archived: true}, []string{intro.ID}},
			{"currency", catalogdb.PackageFilter{Currency: "SEK"}, []string{sekPkg.ID}},
			{"included product", catalogdb.PackageFilter{ProductID: f.Print.ID}, []string{bundle.ID, sekPkg.ID}},
			{"additional product", catalogdb.PackageFilter{ProductID: f.Sunday.ID}, []string{bundle.ID, sekPkg.ID}},
			{"billing plan", catalogdb.PackageFilter{BillingPlanID: f.Invoice.ID}, []string{bundle.ID, digital.ID, sekPkg.ID}},
			{"billing plan, archived", catalogdb.PackageFilter{BillingPlanID: f.Invoice.ID, Archived: true}, []string{intro.ID}},
			{"chain", catalogdb.PackageFilter{PackageChainID: chain.ID, Archived: true}, []string{intro.ID}},
			{"chain, active", catalogdb.PackageFilter{PackageChainID: chain.ID}, nil},
		}
		for _, tt := range tests {
			if got := ids(tt.f); !slices.Equal(got, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
			}
		}
		// Paging keeps children attached.
		p1, next, err := catalogdb.ListPackages(ctx, s, catalogdb.PackageFilter{}, store.Page{Limit: 2})
		if err != nil || len(p1) != 2 || next != p1[1].ID || len(p1[0].Products) != 2 || len(p1[1].BillingPlans) != 1 {
			t.Fatalf("page 1: %v, %q, %v", p1, next, err)
		}
		p2, last, err := catalogdb.ListPackages(ctx, s, catalogdb.PackageFilter{}, store.Page{Limit: 2, After: next})
		if err != nil || len(p2) != 1 || p2[0].ID != sekPkg.ID || last != "" || len(p2[0].AdditionalProducts) != 2 {
			t.Fatalf("page 2: %v, %q, %v", p2, last, err)
		}
	})
}

func TestDeletePackageArchivesWhatAChainUses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newCatalogFixture(t, s, ctx)
		step := f.simple("149", "149")
		chain, err := catalogdb.CreatePackageChain(ctx, s, catalog.Chain{Name: "c", PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
			{Step: 1, NextPackageID: step.ID, Periods: 3}}}}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		archived, err := catalogdb.DeletePackage(ctx, s, step.ID, catalogNow.Add(time.Hour))
		if err != nil || !archived {
			t.Fatalf("archived %v, %v", archived, err)
		}
		got, err := catalogdb.Package(ctx, s, step.ID)
		if err != nil || got.ArchivedAt == nil || !got.ArchivedAt.Equal(catalogNow.Add(time.Hour)) {
			t.Fatalf("archived package: %+v, %v", got, err)
		}
		// Archived packages can be edited and stay archived, and deleting
		// again keeps the first archive time.
		got.Name = "Renamed"
		if after, err := catalogdb.UpdatePackage(ctx, s, got, catalogNow.Add(2*time.Hour)); err != nil || after.ArchivedAt == nil || after.Name != "Renamed" {
			t.Fatalf("update archived: %+v, %v", after, err)
		}
		if archived, err := catalogdb.DeletePackage(ctx, s, step.ID, catalogNow.Add(3*time.Hour)); err != nil || !archived {
			t.Fatalf("second delete: %v, %v", archived, err)
		}
		if got, _ := catalogdb.Package(ctx, s, step.ID); !got.ArchivedAt.Equal(catalogNow.Add(time.Hour)) {
			t.Errorf("archive time moved to %v", got.ArchivedAt)
		}
		// Once the chain is gone, deleting deletes.
		if err := catalogdb.DeletePackageChain(ctx, s, chain.ID); err != nil {
			t.Fatal(err)
		}
		if archived, err := catalogdb.DeletePackage(ctx, s, step.ID, catalogNow); err != nil || archived {
			t.Fatalf("delete after the chain: %v, %v", archived, err)
		}
		if _, err := catalogdb.Package(ctx, s, step.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted package: %v", err)
		}
		if _, err := catalogdb.DeletePackage(ctx, s, step.ID, catalogNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete twice: %v", err)
		}
	})
}

func TestPackageForMerge(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newCatalogFixture(t, s, ctx)
		tp := f.sd.TemplatePackage(f.Template())
		in, err := catalogdb.PackageForMerge(ctx, s, tp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Products) != 4 || len(in.BillingPlans) != 2 || in.Chain != nil {
			t.Fatalf("merge input: %d products, %d plans, chain %v", len(in.Products), len(in.BillingPlans), in.Chain)
		}
		got, err := catalog.Merge(in)
		if err != nil {
			t.Fatal(err)
		}
		// (449.00 × 2 + 29.50) × 0.875 = 811.56 (811.5625)
		if got.TotalPrice.String() != "811.56" || got.BillingPlan.BillingPlanID != f.Avtale.ID || got.AdditionalProducts[0].Name != "Sunday edition" {
			t.Errorf("merged %+v", got)
		}

		// With a chain.
		chain, err := catalogdb.CreatePackageChain(ctx, s, catalog.Chain{Name: "c", PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
			{Step: 1, NextPackageID: tp.ID, Periods: 2}, {Step: 2, NextPackageID: tp.ID, Periods: 1}}}}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		tp.PackageChainID = &chain.ID
		if _, err := catalogdb.UpdatePackage(ctx, s, tp, catalogNow); err != nil {
			t.Fatal(err)
		}
		if in, err = catalogdb.PackageForMerge(ctx, s, tp.ID); err != nil || in.Chain == nil || len(in.Chain.PackageChain.Steps) != 2 {
			t.Fatalf("merge input with chain: %+v, %v", in.Chain, err)
		}
		got, err = catalog.Merge(in)
		if err != nil || *got.SubscriptionPackageChainID != chain.ID || *got.ChainStepOrder != 1 || *got.ChainStepPeriods != 2 {
			t.Errorf("chained merge: %+v, %v", got, err)
		}
		if _, err := catalogdb.PackageForMerge(ctx, s, store.NewID()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown template: %v", err)
		}
	})
}

func TestPackagesAreTenantScoped(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := catalogTenant(t, s, "a"), catalogTenant(t, s, "b")
		fa := newCatalogFixture(t, s, a)
		tp := fa.sd.TemplatePackage(fa.Template())
		if _, err := catalogdb.Package(b, s, tp.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get: %v", err)
		}
		if _, err := catalogdb.PackageForMerge(b, s, tp.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("merge input: %v", err)
		}
		if _, err := catalogdb.UpdatePackage(b, s, tp, catalogNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("update: %v", err)
		}
		if _, err := catalogdb.DeletePackage(b, s, tp.ID, catalogNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete: %v", err)
		}
		if m, _ := catalogdb.PackagesByID(b, s, []string{tp.ID}); len(m) != 0 {
			t.Errorf("by id: %v", m)
		}
		if ps, _, _ := catalogdb.ListPackages(b, s, catalogdb.PackageFilter{}, store.Page{Limit: 10}); len(ps) != 0 {
			t.Errorf("list: %v", ps)
		}
		// The schema itself refuses a package of b that points at a's
		// products and plans, whatever a caller forgot to check.
		if _, err := catalogdb.CreatePackage(b, s, fa.Template(), catalogNow); !errors.Is(err, store.ErrConflict) {
			t.Errorf("package of b with a's products: %v", err)
		}
	})
}
