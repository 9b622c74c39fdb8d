package subscriberuser_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/password"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// cheap keeps the tests fast; the default cost is measured by
// internal/password's BenchmarkHash.
var cheap = password.Params{Memory: 64, Time: 1, Threads: 1}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		ctx, other := seed.Tenant(t, s, "a", t0), seed.Tenant(t, s, "b", t0)
		tenant, _ := tenancy.From(ctx)
		otherTenant, _ := tenancy.From(other)
		dir := &subscriberuser.Directory{Store: s, Params: cheap, Now: func() time.Time { return t0 }}
		u, err := dir.Create(ctx, "Kari@Example.no", "correct horse", "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := dir.Authenticate(t.Context(), tenant, "kari@example.NO", "correct horse")
		if err != nil || got.ID != u.ID {
			t.Fatalf("right password: %+v %v", got, err)
		}
		for _, c := range []struct{ tenant, email, pw string }{
			{tenant, "kari@example.no", "wrong"},
			{tenant, "nobody@example.no", "correct horse"},
			{otherTenant, "kari@example.no", "correct horse"}, // a user of tenant a cannot log in at b
			{"not-a-uuid", "kari@example.no", "correct horse"},
		} {
			if _, err := dir.Authenticate(t.Context(), c.tenant, c.email, c.pw); !errors.Is(err, subscriberuser.ErrInvalidCredentials) {
				t.Errorf("%+v: %v, want ErrInvalidCredentials", c, err)
			}
		}
		// A user without a password cannot log in with one, not even "".
		nopw, err := dir.Create(ctx, "idp@example.no", "", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dir.Authenticate(t.Context(), tenant, nopw.Email, ""); !errors.Is(err, subscriberuser.ErrInvalidCredentials) {
			t.Fatalf("passwordless user: %v", err)
		}
		// Disabled: refused, but only once the password was right.
		if _, err := subscriberuser.SetSubscriberUserDisabled(ctx, s, u.ID, true, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := dir.Authenticate(t.Context(), tenant, "kari@example.no", "correct horse"); !errors.Is(err, subscriberuser.ErrDisabled) {
			t.Fatalf("disabled user: %v", err)
		}
		if _, err := dir.Authenticate(t.Context(), tenant, "kari@example.no", "wrong"); !errors.Is(err, subscriberuser.ErrInvalidCredentials) {
			t.Fatalf("disabled user, wrong password: %v", err)
		}
		if _, err := subscriberuser.SetSubscriberUserDisabled(ctx, s, u.ID, false, t0); err != nil {
			t.Fatal(err)
		}
		// A login under new parameters rehashes the stored password.
		stronger := &subscriberuser.Directory{Store: s, Params: password.Params{Memory: 128, Time: 1, Threads: 1}}
		if _, err := stronger.Authenticate(t.Context(), tenant, "kari@example.no", "correct horse"); err != nil {
			t.Fatal(err)
		}
		after, _ := subscriberuser.UserByID(ctx, s, u.ID)
		if !strings.Contains(after.PasswordHash, "m=128,") {
			t.Fatalf("not rehashed: %s", after.PasswordHash)
		}
		if _, err := dir.Authenticate(t.Context(), tenant, "kari@example.no", "correct horse"); err != nil {
			t.Fatalf("after the rehash: %v", err)
		}
	})
}
