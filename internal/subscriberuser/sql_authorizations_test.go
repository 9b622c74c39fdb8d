package subscriberuser_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
)

// account returns a new subscriber account (of a new subscriber) in the
// context's tenant.
func account(t *testing.T, s *store.Store, ctx context.Context, name, currency string) (subscriber, account string) {
	t.Helper()
	sub, err := s.CreateSubscriber(ctx, store.Subscriber{Name: name}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InTx(ctx, func(tx *store.Tx) error {
		account, err = tx.EnsureAccount(ctx, sub.ID, currency, t0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return sub.ID, account
}

func TestAccountSources(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, other := newTenant(t, s, "a"), newTenant(t, s, "b")
		subA, accA := account(t, s, ctx, "Kari", "NOK")
		_, accB := account(t, s, ctx, "Ola", "NOK")
		_, otherAcc := account(t, s, other, "Per", "NOK")
		u, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "u@example.no"}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		v, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "v@example.no"}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		ou, err := subscriberuser.CreateSubscriberUser(other, s, subscriberuser.SubscriberUser{Email: "u@example.no"}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}

		a, err := subscriberuser.CreateAccountSource(ctx, s, u.ID, accA, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		if a.SubscriberID != subA || a.UserID != u.ID || a.SubscriberAccountID != accA || !a.CreatedAt.Equal(t0) {
			t.Fatalf("created %+v", a)
		}
		if got, err := subscriberuser.AccountSourceByID(ctx, s, a.ID); err != nil || got != a {
			t.Fatalf("read back %+v %v, want %+v", got, err, a)
		}
		if _, err := subscriberuser.CreateAccountSource(ctx, s, u.ID, accA, t0, t0); !errors.Is(err, subscriberuser.ErrAccountSourceExists) {
			t.Fatalf("twice: %v", err)
		}
		b, err := subscriberuser.CreateAccountSource(ctx, s, u.ID, accB, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		c, err := subscriberuser.CreateAccountSource(ctx, s, v.ID, accA, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		// References into another tenant are refused as unknown.
		for name, err := range map[string]error{
			"other tenant's account": errOf(subscriberuser.CreateAccountSource(ctx, s, u.ID, otherAcc, t0, t0)),
			"other tenant's user":    errOf(subscriberuser.CreateAccountSource(ctx, s, ou.ID, accA, t0, t0)),
			"not a uuid":             errOf(subscriberuser.CreateAccountSource(ctx, s, u.ID, "x", t0, t0)),
		} {
			if !errors.Is(err, subscriberuser.ErrNoSuchAccount) && !errors.Is(err, subscriberuser.ErrNoSuchUser) {
				t.Errorf("%s: %v", name, err)
			}
		}
		if _, err := subscriberuser.AccountSourceByID(other, s, a.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant reads: %v", err)
		}
		if err := subscriberuser.DeleteAccountSource(other, s, a.ID, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant deletes: %v", err)
		}

		for _, cse := range []struct {
			f    subscriberuser.AccountSourceFilter
			want []string
		}{
			{subscriberuser.AccountSourceFilter{}, []string{a.ID, b.ID, c.ID}},
			{subscriberuser.AccountSourceFilter{UserID: u.ID}, []string{a.ID, b.ID}},
			{subscriberuser.AccountSourceFilter{SubscriberAccountID: accA}, []string{a.ID, c.ID}},
			{subscriberuser.AccountSourceFilter{UserID: v.ID, SubscriberAccountID: accB}, nil},
		} {
			list, _, err := subscriberuser.ListAccountSources(ctx, s, cse.f, store.Page{Limit: 10})
			if err != nil || len(list) != len(cse.want) {
				t.Fatalf("list %+v: %+v %v", cse.f, list, err)
			}
			for i := range list {
				if list[i].ID != cse.want[i] {
					t.Fatalf("list %+v: %+v, want %v", cse.f, list, cse.want)
				}
			}
		}
		// A filter naming a parent the tenant lacks (another tenant's)
		// matches nothing: the contract's table lists no 404.
		for _, f := range []subscriberuser.AccountSourceFilter{{UserID: ou.ID}, {SubscriberAccountID: otherAcc}} {
			if list, _, err := subscriberuser.ListAccountSources(ctx, s, f, store.Page{Limit: 10}); err != nil || len(list) != 0 {
				t.Fatalf("list %+v: %+v, %v", f, list, err)
			}
		}
		if list, _, _ := subscriberuser.ListAccountSources(other, s, subscriberuser.AccountSourceFilter{}, store.Page{Limit: 10}); len(list) != 0 {
			t.Fatalf("other tenant lists %+v", list)
		}

		if err := subscriberuser.DeleteAccountSource(ctx, s, a.ID, t0); err != nil {
			t.Fatal(err)
		}
		if err := subscriberuser.DeleteAccountSource(ctx, s, a.ID, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}
		// Deleting a user deletes its sources.
		if err := subscriberuser.DeleteSubscriberUser(ctx, s, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := subscriberuser.AccountSourceByID(ctx, s, b.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("source of a deleted user: %v", err)
		}
	})
}

func errOf[T any](_ T, err error) error { return err }

func TestIdPAccounts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, other := newTenant(t, s, "a"), newTenant(t, s, "b")
		u, _ := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "kari@example.no"}, t0, t0)
		v, _ := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "ola@example.no"}, t0, t0)
		ou, _ := subscriberuser.CreateSubscriberUser(other, s, subscriberuser.SubscriberUser{Email: "per@example.no"}, t0, t0)

		a, err := subscriberuser.CreateIdPAccount(ctx, s, subscriberuser.IdPAccount{Kind: subscriberuser.IdPA, Identifier: "Kari.N", UserID: u.ID}, t0)
		if err != nil {
			t.Fatal(err)
		}
		// idp-a identifiers ignore case; idp-b subjects do not.
		if got, err := subscriberuser.IdPAccountByIdentifier(ctx, s, subscriberuser.IdPA, "kari.n"); err != nil || got != a {
			t.Fatalf("idp-a by identifier: %+v %v, want %+v", got, err, a)
		}
		if _, err := subscriberuser.CreateIdPAccount(ctx, s, subscriberuser.IdPAccount{Kind: subscriberuser.IdPA, Identifier: "KARI.N", UserID: v.ID}, t0); !errors.Is(err, subscriberuser.ErrIdentifierTaken) {
			t.Fatalf("idp-a identifier twice: %v", err)
		}
		b, err := subscriberuser.CreateIdPAccount(ctx, s, subscriberuser.IdPAccount{Kind: subscriberuser.IdPB, Identifier: "Sub-1", Issuer: "https://login.example", UserID: u.ID}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := subscriberuser.CreateIdPAccount(ctx, s, subscriberuser.IdPAccount{Kind: subscriberuser.IdPB, Identifier: "sub-1", Issuer: "https://login.example", UserID: v.ID}, t0); err != nil {
			t.Fatalf("idp-b subject differing in case: %v", err)
		}
		if _, err := subscriberuser.IdPAccountByIdentifier(ctx, s, subscriberuser.IdPB, "SUB-1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("idp-b subject is matched ignoring case: %v", err)
		}
		// The same identifier in the other kind and in another tenant.
		if _, err := subscriberuser.CreateIdPAccount(ctx, s, subscriberuser.IdPAccount{Kind: subscriberuser.IdPB, Identifier: "Kari.N", Issuer: "https://login.example", UserID: u.ID}, t0); err != nil {
			t.Fatalf("same identifier, other kind: %v", err)
		}
		if _, err := subscriberuser.CreateIdPAccount(other, s, subscriberuser.IdPAccount{Kind: subscriberuser.IdPA, Identifier: "kari.n", UserID: ou.ID}, t0); err != nil {
			t.Fatalf("same identifier, other tenant: %v", err)
		}
		if _, err := subscriberuser.CreateIdPAccount(ctx, s, subscriberuser.IdPAccount{Kind: subscriberuser.IdPA, Identifier: "x", UserID: ou.ID}, t0); !errors.Is(err, subscriberuser.ErrNoSuchUser) {
			t.Fatalf("other tenant's user: %v", err)
		}

		// External subjects resolve to users only with their issuer.
		if id, err := subscriberuser.ExternalUser(ctx, s, "https://login.example", "Sub-1"); err != nil || id != u.ID {
			t.Fatalf("external user: %q %v", id, err)
		}
		if _, err := subscriberuser.ExternalUser(ctx, s, "https://evil.example", "Sub-1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other issuer: %v", err)
		}
		if _, err := subscriberuser.ExternalUser(other, s, "https://login.example", "Sub-1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant: %v", err)
		}

		// A login name is the e-mail or an idp-a identifier; the e-mail wins.
		if got, err := subscriberuser.SubscriberUserByLogin(ctx, s, "KARI.n"); err != nil || got.ID != u.ID {
			t.Fatalf("login by idp-a identifier: %+v %v", got, err)
		}
		if _, err := subscriberuser.CreateIdPAccount(ctx, s, subscriberuser.IdPAccount{Kind: subscriberuser.IdPA, Identifier: "ola@example.no", UserID: u.ID}, t0); err != nil {
			t.Fatal(err)
		}
		if got, err := subscriberuser.SubscriberUserByLogin(ctx, s, "ola@example.no"); err != nil || got.ID != v.ID {
			t.Fatalf("e-mail and identifier alike: %+v %v, want the e-mail's user", got, err)
		}
		if _, err := subscriberuser.SubscriberUserByLogin(ctx, s, "nobody"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown login: %v", err)
		}

		later := t0.Add(time.Hour)
		upd, err := subscriberuser.UpdateIdPAccount(ctx, s, subscriberuser.IdPB, "Sub-1", v.ID, "https://login2.example", later)
		if err != nil || upd.UserID != v.ID || upd.Issuer != "https://login2.example" || !upd.UpdatedAt.Equal(later) || upd.ID != b.ID {
			t.Fatalf("update: %+v %v", upd, err)
		}
		if _, err := subscriberuser.UpdateIdPAccount(other, s, subscriberuser.IdPB, "Sub-1", ou.ID, "", later); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant updates: %v", err)
		}
		if _, err := subscriberuser.UpdateIdPAccount(ctx, s, subscriberuser.IdPB, "Sub-1", ou.ID, "", later); !errors.Is(err, subscriberuser.ErrNoSuchUser) {
			t.Fatalf("update to other tenant's user: %v", err)
		}
		list, _, err := subscriberuser.ListIdPAccounts(ctx, s, subscriberuser.IdPA, store.Page{Limit: 10})
		if err != nil || len(list) != 2 || list[0].ID != a.ID {
			t.Fatalf("list idp-a: %+v %v", list, err)
		}
		if err := subscriberuser.DeleteIdPAccount(other, s, subscriberuser.IdPA, "kari.n"); err != nil {
			t.Fatalf("other tenant deletes its own: %v", err)
		}
		if _, err := subscriberuser.IdPAccountByIdentifier(ctx, s, subscriberuser.IdPA, "kari.n"); err != nil {
			t.Fatalf("other tenant's delete reached this one: %v", err)
		}
		if err := subscriberuser.DeleteIdPAccount(ctx, s, subscriberuser.IdPA, "Kari.N"); err != nil {
			t.Fatal(err)
		}
		if err := subscriberuser.DeleteIdPAccount(ctx, s, subscriberuser.IdPA, "Kari.N"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}
		if err := subscriberuser.DeleteSubscriberUser(ctx, s, v.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := subscriberuser.IdPAccountByIdentifier(ctx, s, subscriberuser.IdPB, "Sub-1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("account of a deleted user: %v", err)
		}
	})
}
