package store_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

var t0 = time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)

func newTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, t0)
}

func TestTenants(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, err := s.CreateTenant(ctx, "acme", true, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateTenant(ctx, "acme", false, t0); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate name: want ErrConflict, got %v", err)
		}
		got, err := s.TenantByName(ctx, "acme")
		if err != nil || got.ID != a.ID || !got.Test || !got.CreatedAt.Equal(t0) {
			t.Fatalf("by name: got %+v, %v; want %+v", got, err, a)
		}
		if _, err := s.TenantByID(ctx, store.NewID()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown id: want ErrNotFound, got %v", err)
		}
		if _, err := s.TenantByID(ctx, "not-a-uuid"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("malformed id: want ErrNotFound, got %v", err)
		}
	})
}

func TestMigrateTwiceIsHarmless(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		if err := s.Migrate(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
	})
}

func TestOrganizationCRUD(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		in := store.Organization{Name: "Nordavis AS", OrganizationNumber: "923609016", Country: "NO", Currency: "NOK",
			TimeZone: "Europe/Oslo", PricesIncludeVAT: true, LogoURL: "https://example.com/l.svg"}
		o, err := s.CreateOrganization(ctx, in, t0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Organization(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got != o {
			t.Fatalf("read back %+v, want %+v", got, o)
		}
		o.Name, o.Country, o.PricesIncludeVAT = "Nordavis Sverige AB", "SE", false
		later := t0.Add(time.Hour)
		upd, err := s.UpdateOrganization(ctx, o, later)
		if err != nil {
			t.Fatal(err)
		}
		if upd.Name != o.Name || upd.Country != "SE" || upd.PricesIncludeVAT || !upd.UpdatedAt.Equal(later) || !upd.CreatedAt.Equal(t0) {
			t.Fatalf("update: got %+v", upd)
		}
		if err := s.DeleteOrganization(ctx, o.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Organization(ctx, o.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after delete: want ErrNotFound, got %v", err)
		}
		if err := s.DeleteOrganization(ctx, o.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("second delete: want ErrNotFound, got %v", err)
		}
	})
}

func TestOrganizationsAreTenantScoped(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newTenant(t, s, "a"), newTenant(t, s, "b")
		o, err := s.CreateOrganization(a, store.Organization{Name: "A AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Organization(b, o.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("read across tenants: want ErrNotFound, got %v", err)
		}
		o2 := o
		o2.Name = "stolen"
		if _, err := s.UpdateOrganization(b, o2, t0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("update across tenants: want ErrNotFound, got %v", err)
		}
		if err := s.DeleteOrganization(b, o.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete across tenants: want ErrNotFound, got %v", err)
		}
		list, _, err := s.ListOrganizations(b, store.OrganizationFilter{}, store.Page{Limit: 10})
		if err != nil || len(list) != 0 {
			t.Errorf("list across tenants: got %d rows, %v", len(list), err)
		}
		if got, err := s.Organization(a, o.ID); err != nil || got.Name != "A AS" {
			t.Errorf("owner's row changed: %+v, %v", got, err)
		}
		if _, err := s.Organization(context.Background(), o.ID); !errors.Is(err, tenancy.ErrNoTenant) {
			t.Errorf("no tenant in context: want ErrNoTenant, got %v", err)
		}
	})
}

func TestListOrganizationsPagesAndFilters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		want := map[string]bool{}
		for i, c := range []string{"NO", "SE", "NO", "DK", "NO"} {
			o, err := s.CreateOrganization(ctx, store.Organization{Name: "org", Country: c, Currency: "NOK", TimeZone: "Europe/Oslo"}, t0.Add(time.Duration(i)))
			if err != nil {
				t.Fatal(err)
			}
			want[o.ID] = true
		}
		seen := map[string]bool{}
		p := store.Page{Limit: 2}
		for pages := 0; ; pages++ {
			if pages > 3 {
				t.Fatal("paging does not end")
			}
			items, next, err := s.ListOrganizations(ctx, store.OrganizationFilter{}, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range items {
				if seen[o.ID] {
					t.Fatalf("id %s on two pages", o.ID)
				}
				seen[o.ID] = true
			}
			if next == "" {
				break
			}
			p.After = next
		}
		if len(seen) != len(want) {
			t.Fatalf("paged through %d organizations, want %d", len(seen), len(want))
		}
		no, _, err := s.ListOrganizations(ctx, store.OrganizationFilter{Country: "NO"}, store.Page{Limit: 100})
		if err != nil || len(no) != 3 {
			t.Fatalf("country filter: %d rows, %v", len(no), err)
		}
	})
}

// TestSQLitePageSize: a new SQLite database gets 8 KiB pages in WAL mode,
// and one created before (with SQLite's default 4 KiB) opens as it is.
func TestSQLitePageSize(t *testing.T) {
	ctx := context.Background()
	pragma := func(s *store.Store, name string) string {
		t.Helper()
		var v string
		if err := s.DB().QueryRowContext(ctx, "PRAGMA "+name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	dir := t.TempDir()
	s, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := pragma(s, "page_size"); got != "8192" {
		t.Errorf("new database: page_size %s, want 8192", got)
	}
	if got := pragma(s, "journal_mode"); got != "wal" {
		t.Errorf("new database: journal_mode %s, want wal", got)
	}
	if err := s.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening keeps the data (createSQLite leaves an existing file alone).
	s, err = store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTenant(ctx, "after-reopen", true, t0); err != nil {
		t.Fatalf("reopened database: %v", err)
	}
	s.Close()

	// A database made with 4 KiB pages, as earlier versions did.
	old := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(old, "kadens.db")+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE before_upgrade (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err = store.Open(ctx, store.Options{DataDir: old})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := pragma(s, "page_size"); got != "4096" {
		t.Errorf("existing database: page_size %s, want 4096 (kept)", got)
	}
	var n int
	if err := s.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM before_upgrade").Scan(&n); err != nil {
		t.Errorf("existing database lost its table: %v", err)
	}
}
