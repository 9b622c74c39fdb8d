package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestListPage walks a list with a filter argument before the cursor, so
// the parameters Page appends are numbered after the filter's: an empty
// list is [] (not nil), and the pages follow each other to the last, whose
// cursor is "".
func TestListPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		now := time.Now().UTC()
		ctx := seed.Tenant(t, s, "list-page", now)
		tenant, err := tenancy.From(ctx)
		if err != nil {
			t.Fatal(err)
		}
		scan := func(row store.Scanner) (string, error) {
			var id string
			err := row.Scan(&id)
			return id, err
		}
		list := func(p store.Page) ([]string, string, error) {
			f := store.TenantFilter("", tenant)
			f.Add("name <> ?", "left out")
			return store.ListPage(ctx, s.Reader(), scan, `SELECT id FROM proration_policies`, f, "id", p,
				func(id string) string { return id })
		}
		got, next, err := list(store.Page{Limit: 2})
		if err != nil || got == nil || len(got) != 0 || next != "" {
			t.Fatalf("empty list: %#v, %q, %v", got, next, err)
		}
		var want []string
		for i, name := range []string{"a", "b", "left out", "c", "d", "e"} {
			pol, err := invoicing.CreateProrationPolicy(ctx, s, invoicing.ProrationPolicy{Name: name,
				PaidProration: "NoProration", NotPaidProration: "NoProration"}, now.Add(time.Duration(i)*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if name != "left out" {
				want = append(want, pol.ID)
			}
		}
		slices.Sort(want)
		var all []string
		var sizes []int
		for p := (store.Page{Limit: 2}); ; {
			got, next, err := list(p)
			if err != nil {
				t.Fatal(err)
			}
			all, sizes = append(all, got...), append(sizes, len(got))
			if next == "" {
				break
			}
			if next != got[len(got)-1] {
				t.Fatalf("cursor %q is not the page's last id %q", next, got[len(got)-1])
			}
			p.After = next
		}
		if fmt.Sprint(sizes) != "[2 2 1]" || !slices.Equal(all, want) {
			t.Fatalf("pages of %v: %v, want %v", sizes, all, want)
		}
	})
}
