package catalogdb_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

var catalogNow = time.Date(2026, 2, 1, 9, 30, 0, 123456000, time.UTC)

// catalogTenant creates a tenant and returns a context acting for it.
func catalogTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, catalogNow)
}

func vat(s string) catalog.Percent { return catalog.NewPercent(decimal.RequireFromString(s)) }

func mustProduct(t *testing.T, s *store.Store, ctx context.Context, name, category, rate string) catalog.Product {
	t.Helper()
	return seed.NewStore(t, s, ctx, catalogNow).Product(seed.Product{Name: name, Category: category, VATRate: rate})
}

func TestProductCRUD(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		p, err := catalogdb.CreateProduct(ctx, s, catalog.Product{Name: "Digital news", Description: "All articles", Category: "digital",
			VATRate: vat("12.5"), Active: true}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		if !store.ValidID(p.ID) || !p.CreatedAt.Equal(catalogNow.Truncate(time.Microsecond)) {
			t.Fatalf("created %+v", p)
		}
		got, err := catalogdb.Product(ctx, s, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Digital news" || got.Description != "All articles" || got.Category != "digital" ||
			got.VATRate.String() != "12.5" || !got.Active || !got.CreatedAt.Equal(p.CreatedAt) {
			t.Errorf("read back %+v", got)
		}
		got.Name, got.VATRate, got.Active = "Digital", vat("0"), false
		up, err := catalogdb.UpdateProduct(ctx, s, got, catalogNow.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if up.Name != "Digital" || up.VATRate.String() != "0" || up.Active || !up.UpdatedAt.After(up.CreatedAt) {
			t.Errorf("updated %+v", up)
		}
		if err := catalogdb.DeleteProduct(ctx, s, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := catalogdb.Product(ctx, s, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
		if err := catalogdb.DeleteProduct(ctx, s, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
		if _, err := catalogdb.UpdateProduct(ctx, s, p, catalogNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("update of a deleted product: %v", err)
		}
	})
}

func TestListProductsFiltersAndPages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		var ids []string
		for i, c := range []string{"digital", "print", "digital", "magazine", "digital"} {
			p := mustProduct(t, s, ctx, "p", c, "0")
			if i == 4 {
				p.Active = false
				if _, err := catalogdb.UpdateProduct(ctx, s, p, catalogNow); err != nil {
					t.Fatal(err)
				}
			}
			ids = append(ids, p.ID)
		}
		list := func(f catalogdb.ProductFilter, pg store.Page) ([]string, string) {
			t.Helper()
			ps, next, err := catalogdb.ListProducts(ctx, s, f, pg)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, p := range ps {
				out = append(out, p.ID)
			}
			return out, next
		}
		yes, no := true, false
		if got, _ := list(catalogdb.ProductFilter{Category: "digital"}, store.Page{Limit: 10}); !slices.Equal(got, []string{ids[0], ids[2], ids[4]}) {
			t.Errorf("digital: %v", got)
		}
		if got, _ := list(catalogdb.ProductFilter{Category: "digital", Active: &yes}, store.Page{Limit: 10}); !slices.Equal(got, []string{ids[0], ids[2]}) {
			t.Errorf("active digital: %v", got)
		}
		if got, _ := list(catalogdb.ProductFilter{Active: &no}, store.Page{Limit: 10}); !slices.Equal(got, []string{ids[4]}) {
			t.Errorf("inactive: %v", got)
		}
		page1, next := list(catalogdb.ProductFilter{}, store.Page{Limit: 3})
		page2, last := list(catalogdb.ProductFilter{}, store.Page{Limit: 3, After: next})
		if !slices.Equal(append(page1, page2...), ids) || next != ids[2] || last != "" {
			t.Errorf("pages %v / %v, cursors %q %q", page1, page2, next, last)
		}
	})
}

func TestProductsAreTenantScoped(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := catalogTenant(t, s, "a"), catalogTenant(t, s, "b")
		p := mustProduct(t, s, a, "Digital", "digital", "0")
		if _, err := catalogdb.Product(b, s, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get: %v", err)
		}
		if _, err := catalogdb.UpdateProduct(b, s, p, catalogNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("update: %v", err)
		}
		if err := catalogdb.DeleteProduct(b, s, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete: %v", err)
		}
		if ps, _, _ := catalogdb.ListProducts(b, s, catalogdb.ProductFilter{}, store.Page{Limit: 10}); len(ps) != 0 {
			t.Errorf("list: %v", ps)
		}
		if m, err := catalogdb.ProductsByID(b, s, []string{p.ID, "not-a-uuid"}); err != nil || len(m) != 0 {
			t.Errorf("by id: %v, %v", m, err)
		}
		if m, err := catalogdb.ProductsByID(a, s, []string{p.ID, p.ID, "not-a-uuid"}); err != nil || len(m) != 1 || m[p.ID].Name != "Digital" {
			t.Errorf("own by id: %v, %v", m, err)
		}
		if _, err := catalogdb.Product(context.Background(), s, p.ID); !errors.Is(err, tenancy.ErrNoTenant) {
			t.Errorf("without tenant: %v", err)
		}
	})
}
