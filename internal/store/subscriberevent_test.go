package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestSubscriberEvents: subscriber and contact events are written with the
// change (none for a PUT that changes no contact, none for a change that
// rolls back), per contact, with stable contact ids.
func TestSubscriberEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, other := newTenant(t, s, "a"), newTenant(t, s, "b")
		seen := 0
		next := func(want string) []store.ContactEventData {
			t.Helper()
			evs, _, err := s.ListEvents(ctx, store.EventFilter{}, store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			evs = evs[seen:]
			seen += len(evs)
			var kinds []string
			var out []store.ContactEventData
			for _, e := range evs {
				var d store.ContactEventData
				if err := json.Unmarshal(e.Data, &d); err != nil {
					t.Fatal(err)
				}
				kind := e.EventType
				if strings.HasPrefix(kind, "SubscriberContact") {
					kind += ":" + string(d.Role)
					out = append(out, d)
				}
				kinds = append(kinds, kind)
			}
			if got := strings.Join(kinds, " "); got != want {
				t.Fatalf("events %q, want %q", got, want)
			}
			return out
		}
		kari, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "Kari", Email: "kari@example.no", Country: "NO",
			Contacts: []store.Contact{{Role: store.ContactInvoice, Name: "Regnskap"}}}, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		created := next("SubscriberCreated SubscriberContactCreated:Primary SubscriberContactCreated:Invoice")
		if created[0].ContactID != kari.ID || !created[0].IsPrimary || created[0].Source != store.SourceAPI ||
			created[1].ContactID != store.ContactID(kari.ID, store.ContactInvoice) || created[1].IsPrimary {
			t.Fatalf("contact events %+v", created)
		}
		// The event time is the time given; for a test tenant, its clock.
		evs, _, _ := s.ListEvents(ctx, store.EventFilter{EventType: store.EventSubscriberCreated}, store.Page{Limit: 1})
		if !evs[0].EventTime.Equal(t0.Add(time.Hour)) {
			t.Fatalf("eventTime %s, want %s", evs[0].EventTime, t0.Add(time.Hour))
		}
		test, err := s.CreateTenant(context.Background(), "clocked", true, t0)
		if err != nil {
			t.Fatal(err)
		}
		tctx := tenancy.With(context.Background(), test.ID)
		if _, err := s.CreateSubscriber(tctx, store.Subscriber{Name: "Test"}, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if evs, _, _ := s.ListEvents(tctx, store.EventFilter{}, store.Page{Limit: 1}); !evs[0].EventTime.Equal(t0) {
			t.Fatalf("test tenant eventTime %s, want its clock %s", evs[0].EventTime, t0)
		}

		if _, err := s.UpdateSubscriber(ctx, kari, t0); err != nil {
			t.Fatal(err)
		}
		next("")
		kari.Email = "kari@nordmann.no"
		kari.Contacts = []store.Contact{{Role: store.ContactInvoice, Name: "Regnskap AS"}, {Role: store.ContactDelivery, Name: "Hytta"}}
		if kari, err = s.UpdateSubscriber(ctx, kari, t0); err != nil {
			t.Fatal(err)
		}
		updated := next("SubscriberContactUpdated:Primary SubscriberContactUpdated:Invoice SubscriberContactCreated:Delivery")
		if updated[1].ContactID != created[1].ContactID {
			t.Fatalf("the invoice contact changed id: %s, %s", updated[1].ContactID, created[1].ContactID)
		}

		// A change that fails writes no events.
		if _, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "Ola", ExternalID: "crm-9"}, t0); err != nil {
			t.Fatal(err)
		}
		next("SubscriberCreated SubscriberContactCreated:Primary")
		kari.ExternalID, kari.Contacts = "crm-9", nil
		if _, err := s.UpdateSubscriber(ctx, kari, t0); err == nil {
			t.Fatal("a taken external id was accepted")
		}
		next("")

		if err := s.DeleteSubscriber(ctx, kari.ID, t0); err != nil {
			t.Fatal(err)
		}
		next("SubscriberContactDeleted:Primary SubscriberContactDeleted:Invoice SubscriberContactDeleted:Delivery SubscriberDeleted")

		if evs, _, err := s.ListEvents(other, store.EventFilter{}, store.Page{Limit: 10}); err != nil || len(evs) != 0 {
			t.Fatalf("the other tenant has %d events (%v)", len(evs), err)
		}
	})
}
