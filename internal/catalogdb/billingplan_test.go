package catalogdb_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

func mustPlan(t *testing.T, s *store.Store, ctx context.Context, name string, unit period.Unit, count int) catalog.BillingPlan {
	t.Helper()
	return seed.NewStore(t, s, ctx, catalogNow).Plan(seed.Plan{Name: name, Unit: string(unit), Count: count,
		MinimumDueDays: seed.Days(14), PaymentTermsDays: seed.Days(14)})
}

func TestBillingPlanCRUD(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		b, err := catalogdb.CreateBillingPlan(ctx, s, catalog.BillingPlan{Name: "Quarterly", Description: "Every 3 months",
			IntervalUnit: period.Month, IntervalCount: 3, MinimumDueDays: 20, PaymentTermsDays: 10}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := catalogdb.BillingPlan(ctx, s, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Quarterly" || got.Description != "Every 3 months" || got.Interval() != (period.Interval{Unit: period.Month, Count: 3}) ||
			got.MinimumDueDays != 20 || got.PaymentTermsDays != 10 || !got.CreatedAt.Equal(b.CreatedAt) {
			t.Errorf("read back %+v", got)
		}
		got.IntervalUnit, got.IntervalCount, got.MinimumDueDays = period.Week, 2, 3
		up, err := catalogdb.UpdateBillingPlan(ctx, s, got, catalogNow.Add(time.Minute))
		if err != nil || up.Interval() != (period.Interval{Unit: period.Week, Count: 2}) || up.MinimumDueDays != 3 {
			t.Errorf("updated %+v, %v", up, err)
		}
		mustPlan(t, s, ctx, "Monthly", period.Month, 1)
		weekly, _, err := catalogdb.ListBillingPlans(ctx, s, catalogdb.BillingPlanFilter{IntervalUnit: period.Week}, store.Page{Limit: 10})
		if err != nil || len(weekly) != 1 || weekly[0].ID != b.ID {
			t.Errorf("weekly plans %v, %v", weekly, err)
		}
		if err := catalogdb.DeleteBillingPlan(ctx, s, b.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := catalogdb.BillingPlan(ctx, s, b.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
	})
}

func TestBillingPlansAreTenantScoped(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := catalogTenant(t, s, "a"), catalogTenant(t, s, "b")
		p := mustPlan(t, s, a, "Monthly", period.Month, 1)
		if _, err := catalogdb.BillingPlan(b, s, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get: %v", err)
		}
		if _, err := catalogdb.UpdateBillingPlan(b, s, p, catalogNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("update: %v", err)
		}
		if err := catalogdb.DeleteBillingPlan(b, s, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete: %v", err)
		}
		if m, _ := catalogdb.BillingPlansByID(b, s, []string{p.ID}); len(m) != 0 {
			t.Errorf("by id: %v", m)
		}
		if ps, _, _ := catalogdb.ListBillingPlans(b, s, catalogdb.BillingPlanFilter{}, store.Page{Limit: 10}); len(ps) != 0 {
			t.Errorf("list: %v", ps)
		}
	})
}

func TestDeleteProductOrPlanInUse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newCatalogFixture(t, s, ctx)
		tp := f.sd.TemplatePackage(f.Template())

		var inUse *store.InUseError
		err := catalogdb.DeleteProduct(ctx, s, f.Magazine.ID) // an additional product
		if !errors.As(err, &inUse) || !errors.Is(err, store.ErrConflict) || !slices.Equal(inUse.IDs, []string{tp.ID}) {
			t.Errorf("delete product in use: %v", err)
		}
		err = catalogdb.DeleteBillingPlan(ctx, s, f.Avtale.ID)
		if !errors.As(err, &inUse) || !slices.Equal(inUse.IDs, []string{tp.ID}) {
			t.Errorf("delete billing plan in use: %v", err)
		}
		if ids, err := catalogdb.PackagesUsingBillingPlan(ctx, s, f.Avtale.ID); err != nil || !slices.Equal(ids, []string{tp.ID}) {
			t.Errorf("packages using the plan: %v, %v", ids, err)
		}
		if _, err := catalogdb.Product(ctx, s, f.Magazine.ID); err != nil {
			t.Errorf("product in use was deleted: %v", err)
		}
		// Once the package is gone, both can go.
		if archived, err := catalogdb.DeletePackage(ctx, s, tp.ID, catalogNow); err != nil || archived {
			t.Fatalf("delete package: %v, archived %v", err, archived)
		}
		if err := catalogdb.DeleteProduct(ctx, s, f.Magazine.ID); err != nil {
			t.Error(err)
		}
		if err := catalogdb.DeleteBillingPlan(ctx, s, f.Avtale.ID); err != nil {
			t.Error(err)
		}
	})
}
