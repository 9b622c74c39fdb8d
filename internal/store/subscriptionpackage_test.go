package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestMigrationSubscriptionPackages: migration 00020 moves the package of
// every existing period into subscription_packages, one row per tenant and
// text, keyed by the same hash the store computes for new periods (so a
// new period of a migrated package adds no row), and every period reads
// back with its package, in lists too.
func TestMigrationSubscriptionPackages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		tenant, err := tenancy.From(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fixture := scheduleFixture(t, s, ctx, 3) // package "Digital", stored by the store
		// A text the store would not write byte for byte (key order,
		// spacing, non-ASCII), as an older version might have.
		const legacy = `{"name": "Papir + digital – månedlig", "currency": "NOK", "units": 2}`
		var old []string
		err = s.RedoMigration(context.Background(), 20, func() error {
			for range 2 {
				id := store.NewID()
				old = append(old, id)
				if _, err := s.DB().Exec(`INSERT INTO subscriptions (id, tenant_id, subscriber_id, organization_id, currency, package,
					choices, step_period, time_zone, anchor, period_index, period_start, period_end, version, created_at)
					VALUES ($1, $2, $3, $4, 'NOK', $5, '{}', 1, 'Europe/Oslo', $6, 0, $6, $6, 1, $6)`,
					id, tenant, fixture[0].SubscriberID, fixture[0].OrganizationID, legacy, t0.Format("2006-01-02T15:04:05.000000Z")); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		rows := storedPackages(t, s, tenant)
		sum := sha256.Sum256([]byte(legacy))
		if len(rows) != 2 || rows[hex.EncodeToString(sum[:])] != legacy {
			t.Fatalf("stored packages after the migration: %v", rows)
		}
		for _, id := range old {
			sub, err := s.Subscription(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if sub.Package.Name != "Papir + digital – månedlig" || sub.Package.Units != 2 {
				t.Errorf("migrated period %s: package %+v", id, sub.Package)
			}
		}
		for _, f := range fixture {
			sub, err := s.Subscription(ctx, f.ID)
			if err != nil {
				t.Fatal(err)
			}
			if sub.Package.Name != "Digital" {
				t.Errorf("period %s re-migrated: package %+v", f.ID, sub.Package)
			}
		}
		items, _, err := s.ListSubscriptionItems(ctx, store.SubscriptionFilter{}, store.Page{Limit: 10}, false)
		if err != nil || len(items) != 5 {
			t.Fatalf("list: %d items, %v", len(items), err)
		}
		for _, it := range items {
			var p store.PackageSummary
			if err := json.Unmarshal(it.PackageJSON, &p); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: "Papir + digital – månedlig", false: "Digital"}[it.ID == old[0] || it.ID == old[1]]; p.Name != want {
				t.Errorf("list item %s: package %s, want %s", it.ID, p.Name, want)
			}
		}

		// A new period of a migrated package (as the store encodes it) finds
		// the migrated row.
		sub := fixture[0]
		sub.ID = store.NewID()
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.InsertSubscription(ctx, sub) }); err != nil {
			t.Fatal(err)
		}
		if n := len(storedPackages(t, s, tenant)); n != 2 {
			t.Errorf("%d stored packages after a period of a known package, want 2", n)
		}
	})
}

// TestSubscriptionPackagesStoredOnce: periods share a stored package per
// tenant and content; a changed package is a new row that reads and lists
// back, and another tenant's equal package is its own row.
func TestSubscriptionPackagesStoredOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctxA, ctxB := newTenant(t, s, "a"), newTenant(t, s, "b")
		subs := scheduleFixture(t, s, ctxA, 40)
		scheduleFixture(t, s, ctxB, 2)
		tenantA, _ := tenancy.From(ctxA)
		tenantB, _ := tenancy.From(ctxB)
		if a, b := storedPackages(t, s, tenantA), storedPackages(t, s, tenantB); len(a) != 1 || len(b) != 1 {
			t.Fatalf("stored packages: tenant a %d, tenant b %d; want one each", len(a), len(b))
		}

		changed := subs[7]
		changed.Package = catalog.SubscriptionPackage{Name: "Helg", Currency: "NOK", Units: 3}
		if err := s.InTx(ctxA, func(tx *store.Tx) error { return tx.UpdateSubscription(ctxA, changed) }); err != nil {
			t.Fatal(err)
		}
		if n := len(storedPackages(t, s, tenantA)); n != 2 {
			t.Errorf("%d stored packages after a change, want 2", n)
		}
		got, err := s.Subscription(ctxA, changed.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Package.Name != "Helg" || got.Package.Units != 3 {
			t.Errorf("changed package reads back as %+v", got.Package)
		}
		for _, full := range []bool{false, true} {
			items, _, err := s.ListSubscriptionItems(ctxA, store.SubscriptionFilter{}, store.Page{Limit: 100}, full)
			if err != nil || len(items) != 40 {
				t.Fatalf("list: %d items, %v", len(items), err)
			}
			for _, it := range items {
				var p catalog.SubscriptionPackage
				if err := json.Unmarshal(it.PackageJSON, &p); err != nil {
					t.Fatal(err)
				}
				want := "Digital"
				if it.ID == changed.ID {
					want = "Helg"
				}
				if p.Name != want {
					t.Errorf("list (full %v) item %s: package %q, want %q", full, it.ID, p.Name, want)
				}
			}
		}
		// Tenant b's list shows its own periods with their package.
		items, _, err := s.ListSubscriptionItems(ctxB, store.SubscriptionFilter{}, store.Page{Limit: 100}, false)
		if err != nil || len(items) != 2 {
			t.Fatalf("tenant b list: %d items, %v", len(items), err)
		}
	})
}

// storedPackages returns the tenant's subscription_packages, text by hash.
func storedPackages(t *testing.T, s *store.Store, tenant string) map[string]string {
	t.Helper()
	rows, err := s.DB().Query(`SELECT hash, package FROM subscription_packages WHERE tenant_id = $1`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var h, p string
		if err := rows.Scan(&h, &p); err != nil {
			t.Fatal(err)
		}
		out[h] = p
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
