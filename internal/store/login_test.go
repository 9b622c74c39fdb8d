package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestLoginSessions: a session is found by its hash until it expires or
// ends (alone, or with every session of its user); creating one forgets
// the expired ones; a request a session completed is stored with its code
// in one write and that code is spent once.
func TestLoginSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "sessions")
		tenant, _ := tenancy.From(ctx)
		u, err := s.CreateSubscriberUser(ctx, store.SubscriberUser{Email: "u@example.no"}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		sess := func(hash string, at time.Time) store.LoginSession {
			return store.LoginSession{Hash: hash, TenantID: tenant, UserID: u.ID, AuthTime: at, ExpiresAt: at.Add(time.Hour)}
		}
		for _, x := range []store.LoginSession{sess("old", t0), sess("a", t0.Add(30*time.Minute)), sess("b", t0.Add(80*time.Minute))} {
			if err := s.CreateLoginSession(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		live := func(hash string, now time.Time) bool {
			t.Helper()
			_, err := s.LiveLoginSession(ctx, hash, now)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			return err == nil
		}
		// "old" expired at t0+1h and was forgotten when "b" was created;
		// "a" lives until t0+90m.
		for _, c := range []struct {
			hash string
			at   time.Duration
			want bool
		}{{"old", time.Minute, false}, {"a", time.Hour, true}, {"a", 91 * time.Minute, false}, {"b", 130 * time.Minute, true}} {
			if got := live(c.hash, t0.Add(c.at)); got != c.want {
				t.Errorf("session %s at t0+%v: live %v, want %v", c.hash, c.at, got, c.want)
			}
		}
		if got, err := s.LiveLoginSession(ctx, "a", t0); err != nil || got.UserID != u.ID || got.TenantID != tenant ||
			!got.AuthTime.Equal(t0.Add(30*time.Minute)) || !got.ExpiresAt.Equal(t0.Add(90*time.Minute)) {
			t.Fatalf("session a: %+v %v", got, err)
		}
		if err := s.EndLoginSession(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if live("b", t0.Add(130*time.Minute)) || !live("a", t0.Add(time.Hour)) {
			t.Fatal("ending one session")
		}
		if err := s.EndUserLoginSessions(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if live("a", t0.Add(time.Hour)) {
			t.Fatal("the user's sessions did not end")
		}

		// A completed request with its code, in one write.
		c := store.LoginClient{ID: "kl_sessions", TenantID: tenant, Name: "web", SecretHash: "x", CreatedAt: t0}
		if err := s.CreateLoginClient(ctx, c); err != nil {
			t.Fatal(err)
		}
		auth := t0
		r := store.LoginRequest{ID: "req-1", TenantID: tenant, ClientID: c.ID, RedirectURI: "https://x/cb", Scopes: []string{"openid"},
			UserID: u.ID, AuthTime: &auth, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		if err := s.CreateLoginRequestWithCode(ctx, store.LoginRequest{ID: "no-user", TenantID: tenant, ClientID: c.ID}, "h0", t0); err == nil {
			t.Fatal("a code for a request without a user was stored")
		}
		if err := s.CreateLoginRequestWithCode(ctx, r, "code-hash", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UseLoginCode(ctx, "code-hash", t0.Add(2*time.Minute)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an expired code: %v", err)
		}
		got, err := s.UseLoginCode(ctx, "code-hash", t0.Add(30*time.Second))
		if err != nil || got.UserID != u.ID || got.AuthTime == nil || !got.AuthTime.Equal(t0) || got.ClientID != c.ID {
			t.Fatalf("use code: %+v %v", got, err)
		}
		if _, err := s.UseLoginCode(ctx, "code-hash", t0.Add(30*time.Second)); !errors.Is(err, store.ErrCodeUsed) {
			t.Fatalf("a spent code: %v", err)
		}
		if err := s.DeleteExpiredLoginRequests(ctx, t0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UseLoginCode(ctx, "code-hash", t0.Add(30*time.Second)); !errors.Is(err, store.ErrNotFound) {
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
		ctx := newTenant(t, s, "sweep")
		tenant, _ := tenancy.From(ctx)
		u, err := s.CreateSubscriberUser(ctx, store.SubscriberUser{Email: "u@example.no"}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		c := store.LoginClient{ID: "kl_sweep", TenantID: tenant, Name: "web", SecretHash: "x", CreatedAt: t0}
		if err := s.CreateLoginClient(ctx, c); err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct {
			id      string
			expires time.Duration
		}{{"abandoned", 15 * time.Minute}, {"at-the-edge", time.Hour}, {"live", 2 * time.Hour}} {
			if err := s.CreateLoginRequest(ctx, store.LoginRequest{ID: r.id, TenantID: tenant, ClientID: c.ID, RedirectURI: "https://x/cb",
				Scopes: []string{"openid"}, CSRF: "c", CreatedAt: t0, ExpiresAt: t0.Add(r.expires)}); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []struct {
			hash    string
			expires time.Duration
		}{{"old", time.Minute}, {"live", 2 * time.Hour}} {
			if err := s.CreatePasswordReset(ctx, r.hash, tenant, u.ID, t0, t0.Add(r.expires)); err != nil {
				t.Fatal(err)
			}
		}
		now := t0.Add(time.Hour)
		if err := s.DeleteExpiredLoginRequests(ctx, now); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteExpiredPasswordResets(ctx, now); err != nil {
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
		if s.LivePasswordReset(ctx, "old", t0) || !s.LivePasswordReset(ctx, "live", now) {
			t.Error("password resets: the expired one was kept or the live one forgotten")
		}
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM password_resets`).Scan(&n); err != nil || n != 1 {
			t.Errorf("password resets left: %d %v, want 1", n, err)
		}
	})
}
