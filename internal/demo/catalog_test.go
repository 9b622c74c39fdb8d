package demo_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/demo"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestDemoCatalog checks the demo tenant's catalog is there, is what the
// issue promises, and prices as advertised.
func TestDemoCatalog(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		dir := t.TempDir()
		now := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)
		creds, created, err := demo.Ensure(context.Background(), s, engine.New(s, slog.New(slog.DiscardHandler), "demo-test"), dir, now)
		if err != nil || !created {
			t.Fatalf("Ensure: %v (created %v)", err, created)
		}
		ctx := tenancy.With(context.Background(), creds.TenantID)
		all := store.Page{Limit: 100}

		products, _, err := catalogdb.ListProducts(ctx, s, catalogdb.ProductFilter{}, all)
		if err != nil || len(products) != 3 {
			t.Fatalf("products: %v, %v", products, err)
		}
		plans, _, err := catalogdb.ListBillingPlans(ctx, s, catalogdb.BillingPlanFilter{}, all)
		if err != nil || len(plans) != 2 {
			t.Fatalf("billing plans: %v, %v", plans, err)
		}
		pkgs, _, err := catalogdb.ListPackages(ctx, s, catalogdb.PackageFilter{Currency: "NOK"}, all)
		if err != nil || len(pkgs) != 5 {
			t.Fatalf("packages: %d, %v", len(pkgs), err)
		}
		chains, _, err := catalogdb.ListPackageChains(ctx, s, catalogdb.PackageChainFilter{}, all)
		if err != nil || len(chains) != 1 || len(chains[0].PackageChain.Steps) != 3 {
			t.Fatalf("chains: %v, %v", chains, err)
		}

		// Every package previews, at the price its name promises; the intro
		// chain is 99 for 1 month, 149 for 3, then 199.
		byName := map[string]catalog.TemplatePackage{}
		for _, p := range pkgs {
			byName[p.Name] = p
		}
		want := map[string]string{
			"Digital – månedlig": "199.00", "Digital – årlig": "1990.00", "Papir + digital": "549.00",
			"Digital – intro 99": "99.00", "Digital – intro 149": "149.00",
		}
		for name, total := range want {
			p, ok := byName[name]
			if !ok {
				t.Fatalf("no package %q", name)
			}
			in, err := catalogdb.PackageForMerge(ctx, s, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			sp, err := catalog.Merge(in)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if sp.TotalPrice.String() != total {
				t.Errorf("%s costs %s, want %s", name, sp.TotalPrice, total)
			}
			if name == "Digital – intro 99" && (sp.ChainStepOrder == nil || *sp.ChainStepOrder != 1 || *sp.SubscriptionPackageChainID != chains[0].ID) {
				t.Errorf("intro is not chain step 1: %+v", sp)
			}
		}
		steps := chains[0].PackageChain.Steps
		if steps[0].NextPackageID != byName["Digital – intro 99"].ID || steps[1].NextPackageID != byName["Digital – intro 149"].ID ||
			steps[1].Periods != 3 || steps[2].NextPackageID != byName["Digital – månedlig"].ID {
			t.Errorf("intro chain steps: %+v", steps)
		}

		// A second start reuses the tenant and adds nothing.
		if _, created, err := demo.Ensure(context.Background(), s, engine.New(s, slog.New(slog.DiscardHandler), "demo-test"), dir, now); err != nil || created {
			t.Fatalf("second Ensure: %v (created %v)", err, created)
		}
		if again, _, _ := catalogdb.ListPackages(ctx, s, catalogdb.PackageFilter{}, all); len(again) != 5 {
			t.Errorf("second start added packages: %d", len(again))
		}
	})
}
