package subscriberuser

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/password"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestAuthenticateCostsOneHash: every login attempt runs argon2id exactly
// once, whether the login is known, unknown, without a password or of a
// disabled user, so the time an attempt takes does not tell which (the
// dummy hash of unknown logins has the directory's parameters).
func TestAuthenticateCostsOneHash(t *testing.T) {
	s := storetest.Open(t, store.SQLite)
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	ctx := seed.Tenant(t, s, "a", t0)
	tenant, _ := tenancy.From(ctx)
	p := Params{Memory: 64, Time: 1, Threads: 1}
	dir := &Directory{Store: s, Params: p}
	if _, err := dir.Create(ctx, "kari@example.no", "correct horse", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := dir.Create(ctx, "nopw@example.no", "", ""); err != nil {
		t.Fatal(err)
	}
	off, err := dir.Create(ctx, "off@example.no", "correct horse", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetSubscriberUserDisabled(ctx, s, off.ID, true, t0); err != nil {
		t.Fatal(err)
	}
	if dp, _ := password.ParamsOf(dir.dummyHash()); dp != p {
		t.Fatalf("dummy hash parameters %+v, want the directory's %+v", dp, p)
	}
	for _, c := range []struct{ tenant, login, password string }{
		{tenant, "kari@example.no", "correct horse"},
		{tenant, "kari@example.no", "wrong"},
		{tenant, "nobody@example.no", "wrong"},
		{tenant, "nopw@example.no", ""},
		{tenant, "off@example.no", "correct horse"},
		{"not-a-tenant", "kari@example.no", "correct horse"},
	} {
		before := password.Hashes()
		_, _ = dir.Authenticate(t.Context(), c.tenant, c.login, c.password)
		if n := password.Hashes() - before; n != 1 {
			t.Errorf("%+v ran argon2id %d times, want 1", c, n)
		}
	}
}
