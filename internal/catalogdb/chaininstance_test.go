package catalogdb_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestChainInstanceRoundTrip: an instance reads back exactly as written
// (packages and choices of every step), by the API's single read and the
// engine's batch read, and only in its own tenant.
func TestChainInstanceRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		other := catalogTenant(t, s, "b")
		units := 2
		id := store.NewID()
		inst := catalog.ChainInstance{ID: id, ChainID: store.NewID(), Name: "Intro", CreatedAt: catalogNow.Truncate(1000),
			Steps: []catalog.InstanceStep{
				{Step: 1, TemplatePackageID: store.NewID(), Periods: 2,
					Package: catalog.SubscriptionPackage{Name: "Intro 10", Currency: "NOK", Units: 2, SubscriptionPackageChainID: &id,
						Products: []catalog.Line{{ProductID: "p1", Name: "Digital"}}},
					Choices: catalog.Choices{Units: &units, Products: []string{"p1"}}},
				{Step: 2, TemplatePackageID: store.NewID(), Periods: 1,
					Package: catalog.SubscriptionPackage{Name: "Regular", Currency: "NOK", Units: 1, SubscriptionPackageChainID: &id}},
			}}
		if err := s.InTx(ctx, func(tx *store.Tx) error { return catalogdb.InsertChainInstance(ctx, tx, inst) }); err != nil {
			t.Fatal(err)
		}
		got, err := catalogdb.ChainInstance(ctx, s, id)
		if err != nil {
			t.Fatal(err)
		}
		same := func(a, b catalog.ChainInstance) bool {
			// Packages compare by their JSON (nil and empty lists read
			// back alike), choices by their stored form.
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) || len(a.Steps) != len(b.Steps) {
				return false
			}
			for i := range a.Steps {
				ca, _ := store.EncodeChoices(a.Steps[i].Choices)
				cb, _ := store.EncodeChoices(b.Steps[i].Choices)
				if ca != cb {
					return false
				}
			}
			return true
		}
		if !same(got, inst) {
			t.Errorf("read back\n%+v\nwant\n%+v", got, inst)
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			m, err := catalogdb.ChainInstances(ctx, tx, []string{id, store.NewID(), "not-a-uuid"})
			if err != nil {
				return err
			}
			if len(m) != 1 || !same(m[id], inst) {
				t.Errorf("batch read %+v", m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalogdb.ChainInstance(other, s, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant reads the instance: %v", err)
		}
		err = s.InTx(other, func(tx *store.Tx) error {
			m, err := catalogdb.ChainInstances(other, tx, []string{id})
			if err == nil && len(m) != 0 {
				t.Errorf("another tenant's batch read found %v", m)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
