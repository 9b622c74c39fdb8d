package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// catalogNow is when the records of the tests that name a catalog (orders,
// agreements) are created.
var catalogNow = time.Date(2026, 2, 1, 9, 30, 0, 123456000, time.UTC)

func catalogTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, catalogNow)
}

// orderFixture is what an order refers to, in one tenant: seed's small
// catalog and its every-field bundle, a seller and a subscriber.
type orderFixture struct {
	seed.Catalog
	org store.Organization
	pkg catalog.TemplatePackage
	sub store.Subscriber
}

func newOrderFixture(t *testing.T, s *store.Store, ctx context.Context) orderFixture {
	t.Helper()
	sd := seed.NewStore(t, s, ctx, catalogNow)
	f := orderFixture{Catalog: sd.Catalog()}
	f.pkg = sd.TemplatePackage(f.Template())
	f.org = sd.Organization(seed.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo",
		PricesIncludeVAT: seed.Bool(true)})
	f.sub = sd.Subscriber(seed.Subscriber{Name: "Kari Nordmann"})
	return f
}

func TestOrderRoundTripAndStatusChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		other := catalogTenant(t, s, "b")
		f := newOrderFixture(t, s, ctx)
		units := 3
		price := decimal.RequireFromString("149.50")
		start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		in := store.Order{
			OrganizationID: f.org.ID, TemplatePackageID: f.pkg.ID,
			Choices: catalog.Choices{BillingPlanID: f.Invoice.ID, Units: &units, AdditionalProducts: []string{}, Price: &price},
			NewSubscriber: &store.Subscriber{Name: "Ola", ExternalID: "crm-9", SubscriberNumber: 77,
				Contacts: []store.Contact{{Role: store.ContactDelivery, Name: "Ola"}}},
			InvoiceContact: &store.Contact{Name: "Regnskap AS", Email: "faktura@example.no"},
			RequestedStart: &start,
		}
		o, err := s.CreateOrder(ctx, in, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		if o.Status != store.OrderCreated || !o.CreatedAt.Equal(catalogNow.Truncate(time.Microsecond)) || o.SubscriberID != nil ||
			o.InvoiceContact == nil || o.InvoiceContact.Role != store.ContactInvoice || !o.RequestedStart.Equal(start) {
			t.Fatalf("created %+v", o)
		}
		got, err := s.Order(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Choices.BillingPlanID != f.Invoice.ID || *got.Choices.Units != 3 || got.Choices.AdditionalProducts == nil ||
			len(got.Choices.AdditionalProducts) != 0 || !got.Choices.Price.Equal(price) {
			t.Fatalf("choices %+v", got.Choices)
		}
		if n := got.NewSubscriber; n == nil || n.Name != "Ola" || n.ExternalID != "crm-9" || n.SubscriberNumber != 77 ||
			len(n.Contacts) != 1 || n.Contacts[0].Role != store.ContactDelivery {
			t.Fatalf("new subscriber %+v", got.NewSubscriber)
		}
		if _, err := s.Order(other, o.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant reads: %v", err)
		}

		// An order must name a subscriber or carry one.
		if _, err := s.CreateOrder(ctx, store.Order{OrganizationID: f.org.ID, TemplatePackageID: f.pkg.ID}, catalogNow); err == nil {
			t.Fatal("an order without subscriber was stored")
		}
		// References into another tenant are refused by the foreign keys.
		if _, err := s.CreateOrder(other, store.Order{OrganizationID: f.org.ID, TemplatePackageID: f.pkg.ID, SubscriberID: &f.sub.ID}, catalogNow); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("order in another tenant's catalog: %v", err)
		}

		// Claiming is a one-time transition.
		later := catalogNow.Add(time.Hour)
		for i, want := range []bool{true, false} {
			err := s.InTx(ctx, func(tx *store.Tx) error {
				claimed, err := tx.ClaimOrder(ctx, o.ID, later)
				if err != nil {
					return err
				}
				if claimed != want {
					t.Errorf("claim %d: %v, want %v", i, claimed, want)
				}
				if !claimed {
					return nil
				}
				sub, err := tx.InsertSubscriber(ctx, *o.NewSubscriber, later)
				if err != nil {
					return err
				}
				if sub.SubscriberNumber != 77 || sub.ExternalID != "crm-9" {
					t.Errorf("inserted %+v", sub)
				}
				sub, err = tx.SetInvoiceContact(ctx, sub, *o.InvoiceContact, later)
				if err != nil {
					return err
				}
				if len(sub.Contacts) != 2 || sub.Contacts[1].Role != store.ContactInvoice || sub.Contacts[1].Name != "Regnskap AS" {
					t.Errorf("contacts %+v", sub.Contacts)
				}
				a, err := tx.InvoiceAgreement(ctx, sub.ID, later)
				if err != nil {
					return err
				}
				if live, err := tx.LivePaymentAgreement(ctx, sub.ID, a.ID); err != nil || live.ProviderType != store.ProviderInvoice {
					t.Errorf("live agreement %+v, %v", live, err)
				}
				if _, err := tx.LivePaymentAgreement(ctx, f.sub.ID, a.ID); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("another subscriber's agreement: %v", err)
				}
				// A subscription is needed for FinishOrder's foreign key;
				// without one the order stays claimed but unfinished, which
				// this test rolls back.
				return errRollback
			})
			if want && !errors.Is(err, errRollback) || !want && err != nil {
				t.Fatalf("claim %d: %v", i, err)
			}
			if want {
				// Rolled back: still Created, the number and external id free.
				if got, _ := s.Order(ctx, o.ID); got.Status != store.OrderCreated {
					t.Fatalf("after rollback: %s", got.Status)
				}
				if list, _, _ := s.ListSubscribers(ctx, store.SubscriberFilter{ExternalID: "crm-9"}, store.Page{Limit: 5}); len(list) != 0 {
					t.Fatalf("rolled-back subscriber stored: %+v", list)
				}
				err := s.InTx(ctx, func(tx *store.Tx) error {
					claimed, err := tx.ClaimOrder(ctx, o.ID, later)
					if err == nil && !claimed {
						err = errors.New("not claimed")
					}
					return err
				})
				if err != nil {
					t.Fatalf("claim after rollback: %v", err)
				}
			}
		}
		done, err := s.Order(ctx, o.ID)
		if err != nil || done.Status != store.OrderCompleted || !done.CompletedAt.Equal(later) {
			t.Fatalf("claimed order %+v, %v", done, err)
		}

		// Cancelling works on Created orders only and is repeatable.
		o2, err := s.CreateOrder(ctx, store.Order{OrganizationID: f.org.ID, TemplatePackageID: f.pkg.ID, SubscriberID: &f.sub.ID}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			c, err := s.CancelOrder(ctx, o2.ID, later)
			if err != nil || c.Status != store.OrderCancelled || !c.CancelledAt.Equal(later) {
				t.Fatalf("cancel: %+v, %v", c, err)
			}
		}
		if c, err := s.CancelOrder(ctx, done.ID, later); err != nil || c.Status != store.OrderCompleted {
			t.Fatalf("cancel of a completed order: %+v, %v", c, err)
		}
		if _, err := s.CancelOrder(other, o2.ID, later); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant cancels: %v", err)
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			claimed, err := tx.ClaimOrder(ctx, o2.ID, later)
			if claimed {
				t.Error("a cancelled order was claimed")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}

		// Lists filter and page.
		list, next, err := s.ListOrders(ctx, store.OrderFilter{}, store.Page{Limit: 1})
		if err != nil || len(list) != 1 || list[0].ID != o.ID || next == "" {
			t.Fatalf("page 1: %v %q %v", list, next, err)
		}
		list, next, err = s.ListOrders(ctx, store.OrderFilter{}, store.Page{Limit: 1, After: next})
		if err != nil || len(list) != 1 || list[0].ID != o2.ID || next != "" {
			t.Fatalf("page 2: %v %q %v", list, next, err)
		}
		for _, tc := range []struct {
			f    store.OrderFilter
			want int
		}{
			{store.OrderFilter{Status: store.OrderCancelled}, 1},
			{store.OrderFilter{Status: store.OrderCreated}, 0},
			{store.OrderFilter{SubscriberID: f.sub.ID}, 1},
			{store.OrderFilter{OrganizationID: f.org.ID, Status: store.OrderCompleted}, 1},
			{store.OrderFilter{SubscriberID: "not-an-id"}, 0},
		} {
			if list, _, err := s.ListOrders(ctx, tc.f, store.Page{Limit: 10}); err != nil || len(list) != tc.want {
				t.Errorf("%+v: %d orders, %v", tc.f, len(list), err)
			}
		}
		if list, _, err := s.ListOrders(other, store.OrderFilter{}, store.Page{Limit: 10}); err != nil || len(list) != 0 {
			t.Fatalf("other tenant lists %d orders, %v", len(list), err)
		}
	})
}

var errRollback = errors.New("roll back")

func TestDeletePackageArchivesWhatOrdersUse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newOrderFixture(t, s, ctx)
		if _, err := s.CreateOrder(ctx, store.Order{OrganizationID: f.org.ID, TemplatePackageID: f.pkg.ID, SubscriberID: &f.sub.ID}, catalogNow); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			archived, err := catalogdb.DeletePackage(ctx, s, f.pkg.ID, catalogNow.Add(time.Hour))
			if err != nil || !archived {
				t.Fatalf("delete of an ordered package: archived %v, %v", archived, err)
			}
		}
		if p, err := catalogdb.Package(ctx, s, f.pkg.ID); err != nil || p.ArchivedAt == nil {
			t.Fatalf("package %+v, %v", p, err)
		}
	})
}

func TestDeleteSubscriberWithOrders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newOrderFixture(t, s, ctx)
		o, err := s.CreateOrder(ctx, store.Order{OrganizationID: f.org.ID, TemplatePackageID: f.pkg.ID, SubscriberID: &f.sub.ID}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		var inUse *store.InUseError
		if err := s.DeleteSubscriber(ctx, f.sub.ID, catalogNow); !errors.As(err, &inUse) || inUse.By != "open order" || inUse.IDs[0] != o.ID {
			t.Fatalf("delete with an open order: %v", err)
		}
		if _, err := s.CancelOrder(ctx, o.ID, catalogNow); err != nil {
			t.Fatal(err)
		}
		// A cancelled order goes with its subscriber.
		if err := s.DeleteSubscriber(ctx, f.sub.ID, catalogNow); err != nil {
			t.Fatalf("delete with a cancelled order: %v", err)
		}
		if _, err := s.Order(ctx, o.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("cancelled order after the delete: %v", err)
		}

		// A payment agreement is history: the subscriber stays.
		sub, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "B"}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.InvoiceAgreement(ctx, sub.ID, catalogNow)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSubscriber(ctx, sub.ID, catalogNow); !errors.Is(err, store.ErrSubscriberHasHistory) {
			t.Fatalf("delete with an agreement: %v", err)
		}
		if _, err := s.Subscriber(ctx, sub.ID); err != nil {
			t.Fatalf("refused delete removed the subscriber: %v", err)
		}
	})
}
