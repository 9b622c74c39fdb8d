package store_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

func TestSubscriberCRUD(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, other := newTenant(t, s, "a"), newTenant(t, s, "b")
		in := store.Subscriber{
			ExternalID: "crm-1", Name: "Kari Nordmann", Email: "Kari@Example.no", Phone: "+47 912 34 567",
			Address: store.Address{Line1: "Storgata 1", PostalCode: "0155", City: "Oslo", Country: "NO"},
			Country: "NO",
			Contacts: []store.Contact{{Role: store.ContactInvoice, Name: "Regnskap AS", Email: "faktura@regnskap.no",
				Address: store.Address{Line1: "Postboks 7", City: "Oslo", Country: "NO"}}},
		}
		sub, err := s.CreateSubscriber(ctx, in, t0)
		if err != nil {
			t.Fatal(err)
		}
		if sub.SubscriberNumber != 1 || !sub.CreatedAt.Equal(t0) || !store.ValidID(sub.ID) {
			t.Fatalf("created %+v", sub)
		}
		got, err := s.Subscriber(ctx, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, sub) {
			t.Fatalf("read back\n%+v\nwant\n%+v", got, sub)
		}
		if _, err := s.Subscriber(other, sub.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant reads: %v", err)
		}

		// Uniqueness errors say which rule broke, and match ErrConflict.
		_, err = s.CreateSubscriber(ctx, store.Subscriber{Name: "B", ExternalID: "crm-1"}, t0)
		if !errors.Is(err, store.ErrExternalIDTaken) || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate external id: %v", err)
		}
		_, err = s.CreateSubscriber(ctx, store.Subscriber{Name: "B", SubscriberNumber: 1}, t0)
		if !errors.Is(err, store.ErrSubscriberNumberTaken) || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate number: %v", err)
		}
		b, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "B"}, t0)
		if err != nil || b.SubscriberNumber != 2 || b.Contacts == nil {
			t.Fatalf("second subscriber: %+v, %v", b, err)
		}

		// Update: zero number keeps it; cleared external id is stored as none.
		later := t0.Add(time.Hour)
		sub.Name, sub.ExternalID, sub.SubscriberNumber, sub.Contacts = "Kari Hansen", "", 0, nil
		upd, err := s.UpdateSubscriber(ctx, sub, later)
		if err != nil {
			t.Fatal(err)
		}
		if upd.Name != "Kari Hansen" || upd.ExternalID != "" || upd.SubscriberNumber != 1 || len(upd.Contacts) != 0 ||
			!upd.UpdatedAt.Equal(later) || !upd.CreatedAt.Equal(t0) {
			t.Fatalf("updated %+v", upd)
		}
		list, _, err := s.ListSubscribers(ctx, store.SubscriberFilter{ExternalID: "crm-1"}, store.Page{Limit: 10})
		if err != nil || len(list) != 0 {
			t.Fatalf("cleared external id still matches: %v, %v", list, err)
		}
		b.SubscriberNumber = 1
		if _, err := s.UpdateSubscriber(ctx, b, later); !errors.Is(err, store.ErrSubscriberNumberTaken) {
			t.Fatalf("update to a taken number: %v", err)
		}
		if _, err := s.UpdateSubscriber(other, sub, later); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant updates: %v", err)
		}

		if err := s.DeleteSubscriber(other, sub.ID, later); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant deletes: %v", err)
		}
		if err := s.DeleteSubscriber(ctx, sub.ID, later); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Subscriber(ctx, sub.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after delete: %v", err)
		}
		if err := s.DeleteSubscriber(ctx, sub.ID, later); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if err := s.DeleteSubscriber(ctx, "nope", later); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("malformed id: %v", err)
		}
	})
}

func TestSubscriberListFilters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		for _, in := range []store.Subscriber{
			{Name: "Ola Østby", Email: "Ola@Example.no", ExternalID: "x1"},
			{Name: "ØSTBY AS", Email: "post@ostby.no"},
			{Name: "50% off_shop", Email: "ola@example.no.other"},
		} {
			if _, err := s.CreateSubscriber(ctx, in, t0); err != nil {
				t.Fatal(err)
			}
		}
		count := func(f store.SubscriberFilter) int {
			t.Helper()
			list, _, err := s.ListSubscribers(ctx, f, store.Page{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			return len(list)
		}
		for _, tc := range []struct {
			f    store.SubscriberFilter
			want int
		}{
			{store.SubscriberFilter{}, 3},
			{store.SubscriberFilter{Email: "OLA@example.NO"}, 1},
			{store.SubscriberFilter{Name: "østby"}, 2},
			{store.SubscriberFilter{Name: "%"}, 1},
			{store.SubscriberFilter{Name: "f_s"}, 1},
			{store.SubscriberFilter{Name: "o_a"}, 0},
			{store.SubscriberFilter{SubscriberNumber: 2}, 1},
			{store.SubscriberFilter{ExternalID: "x1", Name: "ola"}, 1},
			{store.SubscriberFilter{ExternalID: "x1", Name: "as"}, 0},
		} {
			if got := count(tc.f); got != tc.want {
				t.Errorf("%+v: %d, want %d", tc.f, got, tc.want)
			}
		}
	})
}
