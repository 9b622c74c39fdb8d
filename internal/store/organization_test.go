package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestOrganizationPaymentDetails: address, bank account and registrations
// are stored, read and replaced with the rest of the organization, within
// its tenant only.
func TestOrganizationPaymentDetails(t *testing.T) {
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
