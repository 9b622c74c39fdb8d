package idp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestLoginSessions: a session is found by its hash until it expires or
// ends (alone, or with every session of its user); creating one forgets
// the expired ones; a request a session completed is stored with its code
// in one write and that code is spent once.
func TestLoginSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := recordsTenant(t, s, "sessions")
		tenant, _ := tenancy.From(ctx)
		u, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "u@example.no"}, rt0, rt0)
		if err != nil {
			t.Fatal(err)
		}
		sess := func(hash string, at time.Time) idp.LoginSession {
			return idp.LoginSession{Hash: hash, TenantID: tenant, UserID: u.ID, AuthTime: at, ExpiresAt: at.Add(time.Hour)}
		}
		for _, x := range []idp.LoginSession{sess("old", rt0), sess("a", rt0.Add(30*time.Minute)), sess("b", rt0.Add(80*time.Minute))} {
			if err := idp.CreateLoginSession(ctx, s, x); err != nil {
				t.Fatal(err)
			}
		}
		live := func(hash string, now time.Time) bool {
			t.Helper()
			_, err := idp.LiveLoginSession(ctx, s, hash, now)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			return err == nil
		}
		// "old" expired at rt0+1h and was forgotten when "b" was created;
		// "a" lives until rt0+90m.
		for _, c := range []struct {
			hash string
			at   time.Duration
			want bool
		}{{"old", time.Minute, false}, {"a", time.Hour, true}, {"a", 91 * time.Minute, false}, {"b", 130 * time.Minute, true}} {
			if got := live(c.hash, rt0.Add(c.at)); got != c.want {
				t.Errorf("session %s at rt0+%v: live %v, want %v", c.hash, c.at, got, c.want)
			}
		}
		if got, err := idp.LiveLoginSession(ctx, s, "a", rt0); err != nil || got.UserID != u.ID || got.TenantID != tenant ||
			!got.AuthTime.Equal(rt0.Add(30*time.Minute)) || !got.ExpiresAt.Equal(rt0.Add(90*time.Minute)) {
			t.Fatalf("session a: %+v %v", got, err)
		}
		if err := idp.EndLoginSession(ctx, s, "b"); err != nil {
			t.Fatal(err)
		}
		if live("b", rt0.Add(130*time.Minute)) || !live("a", rt0.Add(time.Hour)) {
			t.Fatal("ending one session")
		}
		if err := idp.EndUserLoginSessions(ctx, s, u.ID); err != nil {
			t.Fatal(err)
		}
		if live("a", rt0.Add(time.Hour)) {
			t.Fatal("the user's sessions did not end")
		}

		// A completed request with its code, in one write.
		c := idp.LoginClient{ID: "kl_sessions", TenantID: tenant, Name: "web", SecretHash: "x", CreatedAt: rt0}
		if err := idp.CreateLoginClient(ctx, s, c); err != nil {
			t.Fatal(err)
		}
		auth := rt0
		r := idp.LoginRequest{ID: "req-1", TenantID: tenant, ClientID: c.ID, RedirectURI: "https://x/cb", Scopes: []string{"openid"},
			UserID: u.ID, AuthTime: &auth, CreatedAt: rt0, ExpiresAt: rt0.Add(time.Hour)}
		if err := idp.CreateLoginRequestWithCode(ctx, s, idp.LoginRequest{ID: "no-user", TenantID: tenant, ClientID: c.ID}, "h0", rt0); err == nil {
			t.Fatal("a code for a request without a user was stored")
		}
		if err := idp.CreateLoginRequestWithCode(ctx, s, r, "code-hash", rt0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := idp.UseLoginCode(ctx, s, "code-hash", rt0.Add(2*time.Minute)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an expired code: %v", err)
		}
		got, err := idp.UseLoginCode(ctx, s, "code-hash", rt0.Add(30*time.Second))
		if err != nil || got.UserID != u.ID || got.AuthTime == nil || !got.AuthTime.Equal(rt0) || got.ClientID != c.ID {
			t.Fatalf("use code: %+v %v", got, err)
		}
		if _, err := idp.UseLoginCode(ctx, s, "code-hash", rt0.Add(30*time.Second)); !errors.Is(err, idp.ErrCodeUsed) {
			t.Fatalf("a spent code: %v", err)
		}
		if err := idp.DeleteExpiredLoginRequests(ctx, s, rt0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := idp.UseLoginCode(ctx, s, "code-hash", rt0.Add(30*time.Second)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a forgotten request's code: %v", err)
		}
		ten, err := s.TenantByID(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		if id, err := s.TenantIDByName(ctx, ten.Name); err != nil || id != tenant {
			t.Fatalf("tenant by name: %q %v", id, err)
		}
		if _, err := s.TenantIDByName(ctx, "nosuch"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown tenant name: %v", err)
		}
	})
}

// TestLoginSweep: the sweep's deletes forget the login requests and the
// password reset links that have expired, whatever their state, and keep
// the live ones.
func TestLoginSweep(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := recordsTenant(t, s, "sweep")
		tenant, _ := tenancy.From(ctx)
		u, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "u@example.no"}, rt0, rt0)
		if err != nil {
			t.Fatal(err)
		}
		c := idp.LoginClient{ID: "kl_sweep", TenantID: tenant, Name: "web", SecretHash: "x", CreatedAt: rt0}
		if err := idp.CreateLoginClient(ctx, s, c); err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct {
			id      string
			expires time.Duration
		}{{"abandoned", 15 * time.Minute}, {"at-the-edge", time.Hour}, {"live", 2 * time.Hour}} {
			if err := idp.CreateLoginRequest(ctx, s, idp.LoginRequest{ID: r.id, TenantID: tenant, ClientID: c.ID, RedirectURI: "https://x/cb",
				Scopes: []string{"openid"}, CSRF: "c", CreatedAt: rt0, ExpiresAt: rt0.Add(r.expires)}); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []struct {
			hash    string
			expires time.Duration
		}{{"old", time.Minute}, {"live", 2 * time.Hour}} {
			if err := idp.CreatePasswordReset(ctx, s, r.hash, tenant, u.ID, rt0, rt0.Add(r.expires)); err != nil {
				t.Fatal(err)
			}
		}
		now := rt0.Add(time.Hour)
		if err := idp.DeleteExpiredLoginRequests(ctx, s, now); err != nil {
			t.Fatal(err)
		}
		if err := idp.DeleteExpiredPasswordResets(ctx, s, now); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]bool{"abandoned": false, "at-the-edge": false, "live": true} {
			var n int
			if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM login_requests WHERE id = $1`, id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if (n == 1) != want {
				t.Errorf("login request %s: %d rows, want kept %v", id, n, want)
			}
		}
		if idp.LivePasswordReset(ctx, s, "old", rt0) || !idp.LivePasswordReset(ctx, s, "live", now) {
			t.Error("password resets: the expired one was kept or the live one forgotten")
		}
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM password_resets`).Scan(&n); err != nil || n != 1 {
			t.Errorf("password resets left: %d %v, want 1", n, err)
		}
	})
}

// rt0 is the records tests' time (the store's tests used the same).
var rt0 = time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)

func recordsTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, rt0)
}
