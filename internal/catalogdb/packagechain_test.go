package catalogdb_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

func TestPackageChainCRUD(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newCatalogFixture(t, s, ctx)
		p99, p149, p199 := f.simple("99", "99"), f.simple("149", "149"), f.simple("199", "199")
		c, err := catalogdb.CreatePackageChain(ctx, s, catalog.Chain{Name: "Intro", Description: "99, 3 × 149, then 199",
			PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
				{Step: 3, NextPackageID: p199.ID, Periods: 1},
				{Step: 1, NextPackageID: p99.ID, Periods: 1},
				{Step: 2, NextPackageID: p149.ID, Periods: 3},
			}}}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := catalogdb.PackageChain(ctx, s, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantSteps := []catalog.ChainStep{{Step: 1, NextPackageID: p99.ID, Periods: 1}, {Step: 2, NextPackageID: p149.ID, Periods: 3}, {Step: 3, NextPackageID: p199.ID, Periods: 1}}
		if got.Name != "Intro" || got.Description != "99, 3 × 149, then 199" || !slices.Equal(got.PackageChain.Steps, wantSteps) ||
			!slices.Equal(c.PackageChain.Steps, wantSteps) || !got.CreatedAt.Equal(c.CreatedAt) {
			t.Errorf("read back %+v", got)
		}

		got.Name = "Intro offer"
		got.PackageChain.Steps = []catalog.ChainStep{{Step: 2, NextPackageID: p199.ID, Periods: 1}, {Step: 1, NextPackageID: p149.ID, Periods: 2}}
		up, err := catalogdb.UpdatePackageChain(ctx, s, got, catalogNow.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if up.Name != "Intro offer" || !slices.Equal(up.PackageChain.Steps, []catalog.ChainStep{{Step: 1, NextPackageID: p149.ID, Periods: 2}, {Step: 2, NextPackageID: p199.ID, Periods: 1}}) {
			t.Errorf("updated %+v", up)
		}

		other, err := catalogdb.CreatePackageChain(ctx, s, catalog.Chain{Name: "Other", PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
			{Step: 1, NextPackageID: p99.ID, Periods: 1}}}}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		list := func(fl catalogdb.PackageChainFilter) []string {
			t.Helper()
			cs, _, err := catalogdb.ListPackageChains(ctx, s, fl, store.Page{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range cs {
				out = append(out, c.ID)
				if len(c.PackageChain.Steps) == 0 {
					t.Errorf("chain %s listed without steps", c.ID)
				}
			}
			return out
		}
		if got := list(catalogdb.PackageChainFilter{}); !slices.Equal(got, []string{c.ID, other.ID}) {
			t.Errorf("all chains %v", got)
		}
		if got := list(catalogdb.PackageChainFilter{PackageID: p199.ID}); !slices.Equal(got, []string{c.ID}) {
			t.Errorf("chains using 199: %v", got)
		}
		if got := list(catalogdb.PackageChainFilter{PackageID: p99.ID}); !slices.Equal(got, []string{other.ID}) {
			t.Errorf("chains using 99: %v", got)
		}
		page, next, err := catalogdb.ListPackageChains(ctx, s, catalogdb.PackageChainFilter{}, store.Page{Limit: 1})
		if err != nil || len(page) != 1 || next != c.ID || len(page[0].PackageChain.Steps) != 2 {
			t.Errorf("first page %v %q %v", page, next, err)
		}

		// A chain a template links to cannot be deleted.
		p149.PackageChainID = &c.ID
		if _, err := catalogdb.UpdatePackage(ctx, s, p149, catalogNow); err != nil {
			t.Fatal(err)
		}
		var inUse *store.InUseError
		if err := catalogdb.DeletePackageChain(ctx, s, c.ID); !errors.As(err, &inUse) || !slices.Equal(inUse.IDs, []string{p149.ID}) {
			t.Errorf("delete linked chain: %v", err)
		}
		p149.PackageChainID = nil
		if _, err := catalogdb.UpdatePackage(ctx, s, p149, catalogNow); err != nil {
			t.Fatal(err)
		}
		if err := catalogdb.DeletePackageChain(ctx, s, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := catalogdb.PackageChain(ctx, s, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted chain: %v", err)
		}
		// Its steps went with it: 149 is no longer used by a chain.
		if archived, err := catalogdb.DeletePackage(ctx, s, p149.ID, catalogNow); err != nil || archived {
			t.Errorf("delete 149: archived %v, %v", archived, err)
		}
	})
}

func TestPackageChainsAreTenantScoped(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := catalogTenant(t, s, "a"), catalogTenant(t, s, "b")
		fa := newCatalogFixture(t, s, a)
		p := fa.simple("99", "99")
		c, err := catalogdb.CreatePackageChain(a, s, catalog.Chain{Name: "c", PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
			{Step: 1, NextPackageID: p.ID, Periods: 1}}}}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalogdb.PackageChain(b, s, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get: %v", err)
		}
		if _, err := catalogdb.UpdatePackageChain(b, s, c, catalogNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("update: %v", err)
		}
		if err := catalogdb.DeletePackageChain(b, s, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete: %v", err)
		}
		if cs, _, _ := catalogdb.ListPackageChains(b, s, catalogdb.PackageChainFilter{}, store.Page{Limit: 10}); len(cs) != 0 {
			t.Errorf("list: %v", cs)
		}
		// The schema refuses a chain of b whose step is a's package.
		if _, err := catalogdb.CreatePackageChain(b, s, catalog.Chain{Name: "x", PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
			{Step: 1, NextPackageID: p.ID, Periods: 1}}}}, catalogNow); !errors.Is(err, store.ErrConflict) {
			t.Errorf("chain of b with a's package: %v", err)
		}
	})
}
