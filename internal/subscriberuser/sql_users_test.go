package subscriberuser_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

func TestSubscriberUsers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, other := newTenant(t, s, "a"), newTenant(t, s, "b")
		sub, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "Kari"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		otherSub, err := s.CreateSubscriber(other, store.Subscriber{Name: "Ola"}, t0)
		if err != nil {
			t.Fatal(err)
		}

		u, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: " Kari@Example.no ", PasswordHash: "$argon2id$x", SubscriberID: sub.ID}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		if !store.ValidID(u.ID) || u.Email != "Kari@Example.no" || !u.CreatedAt.Equal(t0) || u.SubscriberID != sub.ID {
			t.Fatalf("created %+v", u)
		}
		got, err := subscriberuser.UserByID(ctx, s, u.ID)
		if err != nil || got != u {
			t.Fatalf("read back %+v %v, want %+v", got, err, u)
		}
		if got, err := subscriberuser.SubscriberUserByEmail(ctx, s, "KARI@example.NO"); err != nil || got.ID != u.ID {
			t.Fatalf("by e-mail ignoring case: %+v %v", got, err)
		}

		// E-mail is unique per tenant ignoring case; another tenant may
		// have the same address.
		if _, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "kari@example.no"}, t0, t0); !errors.Is(err, subscriberuser.ErrEmailTaken) || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate e-mail: %v", err)
		}
		ou, err := subscriberuser.CreateSubscriberUser(other, s, subscriberuser.SubscriberUser{Email: "kari@example.no"}, t0, t0)
		if err != nil {
			t.Fatalf("same e-mail in another tenant: %v", err)
		}

		// Tenant isolation: reads, look-ups, lists, writes.
		if _, err := subscriberuser.UserByID(other, s, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant reads: %v", err)
		}
		if got, err := subscriberuser.SubscriberUserByEmail(other, s, "kari@example.no"); err != nil || got.ID != ou.ID {
			t.Fatalf("other tenant's look-up found %+v %v", got, err)
		}
		if _, err := subscriberuser.SetSubscriberUserDisabled(other, s, u.ID, true, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant disables: %v", err)
		}
		if err := subscriberuser.DeleteSubscriberUser(other, s, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant deletes: %v", err)
		}
		// Linking to another tenant's subscriber is refused, on create too.
		if _, err := subscriberuser.LinkSubscriberUser(ctx, s, u.ID, otherSub.ID, t0, t0); !errors.Is(err, subscriberuser.ErrNoSuchSubscriber) {
			t.Fatalf("link to another tenant's subscriber: %v", err)
		}
		if _, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "x@example.no", SubscriberID: otherSub.ID}, t0, t0); !errors.Is(err, subscriberuser.ErrNoSuchSubscriber) {
			t.Fatalf("create linked to another tenant's subscriber: %v", err)
		}

		later := t0.Add(time.Hour)
		d, err := subscriberuser.SetSubscriberUserDisabled(ctx, s, u.ID, true, later)
		if err != nil || !d.Disabled || !d.UpdatedAt.Equal(later) {
			t.Fatalf("disable: %+v %v", d, err)
		}
		if d, err = subscriberuser.LinkSubscriberUser(ctx, s, u.ID, "", later, later); err != nil || d.SubscriberID != "" {
			t.Fatalf("unlink: %+v %v", d, err)
		}
		if d, err = subscriberuser.SetSubscriberUserPassword(ctx, s, u.ID, "new", later); err != nil || d.PasswordHash != "new" {
			t.Fatalf("password: %+v %v", d, err)
		}
		b, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "b@example.no", SubscriberID: sub.ID}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := subscriberuser.SetSubscriberUserEmail(ctx, s, b.ID, "KARI@example.no", later); !errors.Is(err, subscriberuser.ErrEmailTaken) {
			t.Fatalf("e-mail change to a taken one: %v", err)
		}

		// Filters and paging.
		yes := true
		for _, c := range []struct {
			f    subscriberuser.SubscriberUserFilter
			want []string
		}{
			{subscriberuser.SubscriberUserFilter{}, []string{u.ID, b.ID}},
			{subscriberuser.SubscriberUserFilter{Email: "B@EXAMPLE.NO"}, []string{b.ID}},
			{subscriberuser.SubscriberUserFilter{SubscriberID: sub.ID}, []string{b.ID}},
			{subscriberuser.SubscriberUserFilter{Disabled: &yes}, []string{u.ID}},
		} {
			list, next, err := subscriberuser.ListSubscriberUsers(ctx, s, c.f, store.Page{Limit: 10})
			if err != nil || next != "" || len(list) != len(c.want) {
				t.Fatalf("list %+v: %+v %q %v", c.f, list, next, err)
			}
			for i := range list {
				if list[i].ID != c.want[i] {
					t.Fatalf("list %+v: %+v, want %v", c.f, list, c.want)
				}
			}
		}
		page, next, err := subscriberuser.ListSubscriberUsers(ctx, s, subscriberuser.SubscriberUserFilter{}, store.Page{Limit: 1})
		if err != nil || len(page) != 1 || next != u.ID {
			t.Fatalf("first page: %+v %q %v", page, next, err)
		}

		// Deleting the subscriber unlinks its users; the users stay.
		if err := s.DeleteSubscriber(ctx, sub.ID, later); err != nil {
			t.Fatal(err)
		}
		if got, err := subscriberuser.UserByID(ctx, s, b.ID); err != nil || got.SubscriberID != "" {
			t.Fatalf("after the subscriber's deletion: %+v %v", got, err)
		}

		if err := subscriberuser.DeleteSubscriberUser(ctx, s, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := subscriberuser.UserByID(ctx, s, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after delete: %v", err)
		}
		if err := subscriberuser.DeleteSubscriberUser(ctx, s, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}
		// Without a tenant in the context nothing is read.
		if _, err := subscriberuser.UserByID(tenancy.With(t.Context(), ""), s, b.ID); err == nil {
			t.Fatal("read without a tenant")
		}
	})
}
