package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestOrganizationPaymentDetails: address, bank account and registrations
// are stored, read and replaced with the rest of the organization, within
// its tenant only.
func TestOrganizationPaymentDetails(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newTenant(t, s, "a"), newTenant(t, s, "b")
		in := store.Organization{Name: "Nordavis AS", OrganizationNumber: "923609016", Country: "NO", Currency: "NOK",
			TimeZone: "Europe/Oslo", KIDAlgorithm: "MOD11", VATRegistered: true, BusinessRegister: true,
			Address:     store.Address{Line1: "Akersgata 55", Line2: "Postboks 1", PostalCode: "0180", City: "Oslo", Country: "NO"},
			BankAccount: store.BankAccount{AccountNumber: "86011117947", IBAN: "NO9386011117947", BIC: "DNBANOKK"}}
		o, err := s.CreateOrganization(a, in, t0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Organization(a, o.ID)
		if err != nil || got != o {
			t.Fatalf("read back %+v, %v; want %+v", got, err, o)
		}
		list, _, err := s.ListOrganizations(a, store.OrganizationFilter{}, store.Page{Limit: 10})
		if err != nil || len(list) != 1 || list[0] != o {
			t.Fatalf("list %+v, %v", list, err)
		}

		// Another tenant can neither change nor see them.
		hijack := o
		hijack.BankAccount = store.BankAccount{IBAN: "GB82WEST12345698765432"}
		if _, err := s.UpdateOrganization(b, hijack, t0.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant's update: %v, want ErrNotFound", err)
		}
		if _, err := s.Organization(b, o.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant's read: %v, want ErrNotFound", err)
		}

		o.Address, o.BankAccount = store.Address{}, store.BankAccount{IBAN: "SE4550000000058398257466", BIC: "ESSESESS"}
		o.VATRegistered, o.BusinessRegister = false, false
		upd, err := s.UpdateOrganization(a, o, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		o.UpdatedAt = upd.UpdatedAt
		if upd != o {
			t.Fatalf("update: got %+v, want %+v", upd, o)
		}
		if seller := store.SellerOf(upd); seller.BankAccount != o.BankAccount || seller.Address != o.Address || seller.VATRegistered ||
			seller.OrganizationID != o.ID || seller.Name != o.Name {
			t.Fatalf("seller %+v of %+v", seller, upd)
		}
	})
}

// TestMigrationOrganizationPayable: organizations that existed before
// migration 00017 are VAT-registered (their plans charge VAT), and the
// Norwegian AS and ASA among them are in Foretaksregisteret.
func TestMigrationOrganizationPayable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		tenant, err := tenancy.From(ctx)
		if err != nil {
			t.Fatal(err)
		}
		orgs := []struct {
			name, country string
			register      bool
		}{{"Nordavis AS", "NO", true}, {"Bygdeposten ASA", "NO", true}, {"Kari Konsult", "NO", false}, {"Nordavis AB", "SE", false}}
		ids := make([]string, len(orgs))
		err = s.RedoMigration(context.Background(), 17, func() error {
			for i, o := range orgs {
				ids[i] = store.NewID()
				if _, err := s.DB().Exec(`INSERT INTO organizations (tenant_id, id, name, organization_number, country, currency,
					time_zone, prices_include_vat, logo_url, created_at, updated_at) VALUES ($1, $2, $3, '', $4, 'NOK', 'Europe/Oslo',
					TRUE, '', $5, $5)`, tenant, ids[i], o.name, o.country, t0.Format("2006-01-02T15:04:05.000000Z")); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range orgs {
			o, err := s.Organization(ctx, ids[i])
			if err != nil {
				t.Fatal(err)
			}
			if !o.VATRegistered || o.BusinessRegister != want.register || o.Address != (store.Address{}) || o.BankAccount != (store.BankAccount{}) {
				t.Errorf("%s after migration: %+v", want.name, o)
			}
		}
	})
}
