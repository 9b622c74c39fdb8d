package subscriberuser_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
)

// TestAuthorizationEvents: an account source created or deleted and a
// subscriber link changed record UserAuthorizationGranted/Revoked in the
// same transaction; a refused change records nothing.
func TestAuthorizationEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, other := newTenant(t, s, "a"), newTenant(t, s, "b")
		subA, accA := account(t, s, ctx, "Kari", "NOK")
		subB, _ := account(t, s, ctx, "Ola", "NOK")
		seen := 0
		next := func(want string) []subscriberuser.UserAuthorizationData {
			t.Helper()
			evs, _, err := s.ListEvents(ctx, store.EventFilter{}, store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			var out []subscriberuser.UserAuthorizationData
			for _, e := range evs {
				if !strings.HasPrefix(e.EventType, "UserAuthorization") {
					continue
				}
				var d subscriberuser.UserAuthorizationData
				if err := json.Unmarshal(e.Data, &d); err != nil {
					t.Fatal(err)
				}
				kinds, out = append(kinds, e.EventType), append(out, d)
			}
			kinds, out = kinds[seen:], out[seen:]
			seen += len(kinds)
			if got := strings.Join(kinds, " "); got != want {
				t.Fatalf("events %q, want %q", got, want)
			}
			return out
		}
		u, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "u@example.no"}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}

		a, err := subscriberuser.CreateAccountSource(ctx, s, u.ID, accA, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		d := next("UserAuthorizationGranted")[0]
		if d.UserID != u.ID || d.SubscriberID != subA || d.SubscriberAccountID == nil || *d.SubscriberAccountID != accA ||
			d.SourceType != subscriberuser.AuthorizationSourceAccount || d.SourceID != a.ID || d.ProductIDs == nil {
			t.Fatalf("granted %+v", d)
		}
		if _, err := subscriberuser.CreateAccountSource(ctx, s, u.ID, accA, t0, t0); err == nil {
			t.Fatal("duplicate source accepted")
		}
		next("") // a refused source records nothing
		if err := subscriberuser.DeleteAccountSource(other, s, a.ID, t0); err == nil {
			t.Fatal("another tenant deleted the source")
		}
		next("")
		if err := subscriberuser.DeleteAccountSource(ctx, s, a.ID, t0); err != nil {
			t.Fatal(err)
		}
		if d := next("UserAuthorizationRevoked")[0]; d.SourceID != a.ID || d.SourceType != subscriberuser.AuthorizationSourceAccount {
			t.Fatalf("revoked %+v", d)
		}

		if _, err := subscriberuser.LinkSubscriberUser(ctx, s, u.ID, subA, t0, t0); err != nil {
			t.Fatal(err)
		}
		if d := next("UserAuthorizationGranted")[0]; d.SubscriberID != subA || d.SourceType != subscriberuser.AuthorizationSourceSubscriber ||
			d.SubscriberAccountID != nil {
			t.Fatalf("linked %+v", d)
		}
		if _, err := subscriberuser.LinkSubscriberUser(ctx, s, u.ID, subA, t0, t0); err != nil {
			t.Fatal(err)
		}
		next("") // the same link again changes nothing
		if _, err := subscriberuser.LinkSubscriberUser(ctx, s, u.ID, subB, t0, t0); err != nil {
			t.Fatal(err)
		}
		if d := next("UserAuthorizationRevoked UserAuthorizationGranted"); d[0].SubscriberID != subA || d[1].SubscriberID != subB {
			t.Fatalf("relinked %+v", d)
		}
		if _, err := subscriberuser.LinkSubscriberUser(ctx, s, u.ID, "", t0, t0); err != nil {
			t.Fatal(err)
		}
		next("UserAuthorizationRevoked")

		// A user created already linked gets the subscriber's access as a
		// later link gives it; a refused creation records nothing.
		v, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "v@example.no", SubscriberID: subB}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		if d := next("UserAuthorizationGranted")[0]; d.UserID != v.ID || d.SubscriberID != subB || d.SourceID != subB ||
			d.SourceType != subscriberuser.AuthorizationSourceSubscriber || d.SubscriberAccountID != nil || d.ProductIDs == nil {
			t.Fatalf("created linked %+v", d)
		}
		if _, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "V@example.no", SubscriberID: subA}, t0, t0); err == nil {
			t.Fatal("a taken e-mail was accepted")
		}
		if _, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "w@example.no"}, t0, t0); err != nil {
			t.Fatal(err)
		}
		next("") // neither the refused user nor an unlinked one records anything
	})
}
