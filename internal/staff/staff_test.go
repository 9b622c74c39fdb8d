package staff_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/password"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// cheap keeps the tests fast; internal/password measures the real cost.
var cheap = password.Params{Memory: 64, Time: 1, Threads: 1}

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

const pw = "correct horse battery"

// clock is a settable clock for the directory.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a directory over s with a fresh clock, and a tenant.
type fixture struct {
	dir    *staff.Directory
	clock  *clock
	tenant string
	s      *store.Store
}

func newFixture(t *testing.T, s *store.Store, tenantName string) *fixture {
	t.Helper()
	c := &clock{t: t0}
	return &fixture{dir: staff.New(s, staff.Options{Now: c.Now, Params: cheap}), clock: c, tenant: tenantOf(t, s, tenantName), s: s}
}

func tenantOf(t *testing.T, s *store.Store, name string) string {
	t.Helper()
	id, err := tenancy.From(seed.Tenant(t, s, name, t0))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (f *fixture) create(t *testing.T, email string, role staff.Role, password string) staff.User {
	t.Helper()
	u, err := f.dir.CreateUser(t.Context(), f.tenant, staff.NewUser{Email: email, Name: "N " + email, Role: role, Password: password})
	if err != nil {
		t.Fatalf("create %s: %v", email, err)
	}
	return u
}

// fields are the fields a validation error names ("" when err is none).
func fields(err error) string {
	var ve validation.Errors
	if !errors.As(err, &ve) {
		return ""
	}
	var out []string
	for _, fe := range ve {
		out = append(out, fe.Field)
	}
	return strings.Join(out, ",")
}

func TestParseRole(t *testing.T) {
	for _, r := range []staff.Role{staff.RoleAdmin, staff.RoleSupport, staff.RoleFinance} {
		if got, err := staff.ParseRole(string(r)); err != nil || got != r {
			t.Errorf("ParseRole(%q) = %q %v", r, got, err)
		}
	}
	for _, bad := range []string{"", "Admin", "root"} {
		if _, err := staff.ParseRole(bad); fields(err) != "role" {
			t.Errorf("ParseRole(%q): %v, want a validation error on role", bad, err)
		}
	}
}

func TestCreateUser(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s, "a")
		ctx := t.Context()
		u := f.create(t, "Kari@Example.no", staff.RoleAdmin, pw)
		if u.ID == "" || u.TenantID != f.tenant || u.Email != "Kari@Example.no" || u.Role != staff.RoleAdmin || !u.HasPassword ||
			u.TOTPEnabled || u.Disabled || !u.CreatedAt.Equal(t0) {
			t.Fatalf("created %+v", u)
		}
		got, err := f.dir.User(ctx, f.tenant, u.ID)
		if err != nil || got != u {
			t.Fatalf("User = %+v %v, want %+v", got, err, u)
		}
		_, err = f.dir.CreateUser(ctx, f.tenant, staff.NewUser{Email: "kari@example.NO", Role: staff.RoleSupport})
		if !errors.Is(err, staff.ErrEmailTaken) || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("the same address in other case: %v, want ErrEmailTaken (a conflict)", err)
		}
		nopw := f.create(t, "ola@example.no", staff.RoleFinance, "")
		if nopw.HasPassword {
			t.Fatal("a user created without a password has one")
		}
		for _, c := range []struct {
			in   staff.NewUser
			want string
		}{
			{staff.NewUser{Email: "not an address", Role: staff.RoleAdmin}, "email"},
			{staff.NewUser{Email: "Kari <k@example.no>", Role: staff.RoleAdmin}, "email"},
			{staff.NewUser{Email: "k@example.no", Role: "root"}, "role"},
			{staff.NewUser{Email: "k@example.no", Role: staff.RoleAdmin, Password: "elevenchars"}, "password"},
			{staff.NewUser{Email: "k@example.no", Role: staff.RoleAdmin, Password: strings.Repeat("x", 1025)}, "password"},
			{staff.NewUser{Email: "k@example.no", Role: staff.RoleAdmin, Name: "a\nb"}, "name"},
			{staff.NewUser{Email: "", Role: ""}, "email,role"},
		} {
			if _, err := f.dir.CreateUser(ctx, f.tenant, c.in); fields(err) != c.want {
				t.Errorf("CreateUser(%+v): %v, want a validation error on %s", c.in, err, c.want)
			}
		}
		if _, err := f.dir.CreateUser(ctx, f.tenant, staff.NewUser{Email: "k@example.no", Role: staff.RoleAdmin,
			Password: strings.Repeat("x", 1024)}); err != nil {
			t.Fatalf("a 1024-byte password: %v", err)
		}
		list, err := f.dir.Users(ctx, f.tenant)
		if err != nil || len(list) != 3 || list[0].Email != "k@example.no" || list[1].ID != u.ID || list[2].ID != nopw.ID {
			t.Fatalf("Users = %+v %v, want ordered by e-mail", list, err)
		}
		if _, err := f.dir.User(ctx, f.tenant, store.NewID()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an unknown id: %v", err)
		}
	})
}

// TestAuthenticateCostsOneHash: every attempt answers as it should and
// runs argon2id exactly once, whichever way it fails. Not parallel, and
// the engines one after the other: the hash counter is the process's.
func TestAuthenticateCostsOneHash(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			f := newFixture(t, storetest.Open(t, e), "a")
			ctx := t.Context()
			kari := f.create(t, "kari@example.no", staff.RoleAdmin, pw)
			f.create(t, "nopw@example.no", staff.RoleSupport, "")
			off := f.create(t, "off@example.no", staff.RoleSupport, pw)
			if _, err := f.dir.UpdateUser(ctx, f.tenant, off.ID, staff.RoleSupport, true); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name, tenant, email, password string
				ok                            bool
			}{
				{"right", f.tenant, "KARI@example.no", pw, true},
				{"wrong password", f.tenant, "kari@example.no", pw + "!", false},
				{"unknown", f.tenant, "nobody@example.no", pw, false},
				{"disabled", f.tenant, "off@example.no", pw, false},
				{"no password", f.tenant, "nopw@example.no", "", false},
				{"no password, guessed", f.tenant, "nopw@example.no", pw, false},
				{"not a tenant", "not-a-tenant", "kari@example.no", pw, false},
			} {
				before := password.Hashes()
				u, err := f.dir.Authenticate(ctx, c.tenant, c.email, c.password)
				if n := password.Hashes() - before; n != 1 {
					t.Errorf("%s: ran argon2id %d times, want 1", c.name, n)
				}
				if c.ok && (err != nil || u.ID != kari.ID) {
					t.Errorf("%s: %+v %v", c.name, u, err)
				}
				if !c.ok && !errors.Is(err, staff.ErrBadCredentials) {
					t.Errorf("%s: %v, want ErrBadCredentials", c.name, err)
				}
			}
			// Under new parameters a login rehashes the password, and the
			// next login checks the new hash.
			stronger := staff.New(f.s, staff.Options{Now: f.clock.Now, Params: password.Params{Memory: 128, Time: 1, Threads: 1}})
			before := password.Hashes()
			if _, err := stronger.Authenticate(ctx, f.tenant, "kari@example.no", pw); err != nil {
				t.Fatal(err)
			}
			if n := password.Hashes() - before; n != 2 {
				t.Fatalf("a login under new parameters ran argon2id %d times, want 2 (check and rehash)", n)
			}
			before = password.Hashes()
			if _, err := stronger.Authenticate(ctx, f.tenant, "kari@example.no", pw); err != nil {
				t.Fatal(err)
			}
			if n := password.Hashes() - before; n != 1 {
				t.Fatalf("the login after the rehash ran argon2id %d times, want 1", n)
			}
		})
	}
}

func TestSessionTimeouts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s, "a")
		ctx := t.Context()
		u := f.create(t, "kari@example.no", staff.RoleAdmin, pw)

		// Idle: each use within 30 minutes keeps it; 30 minutes and a
		// second without one ends it.
		tok, sess, err := f.dir.StartSession(ctx, u)
		if err != nil || tok == "" || sess.SecondFactorPending || sess.UserID != u.ID || sess.TenantID != f.tenant || sess.CSRF == "" {
			t.Fatalf("StartSession = %q %+v %v", tok, sess, err)
		}
		f.clock.Add(30 * time.Second)
		if got, _, err := f.dir.Session(ctx, tok); err != nil || !got.LastSeenAt.Equal(t0) {
			t.Fatalf("after 30 s: %+v %v (last seen moves at most once a minute)", got, err)
		}
		f.clock.Add(29 * time.Minute)
		got, gu, err := f.dir.Session(ctx, tok)
		if err != nil || gu.ID != u.ID || got.CSRF != sess.CSRF || !got.LastSeenAt.Equal(f.clock.Now()) {
			t.Fatalf("after 29.5 min: %+v %+v %v", got, gu, err)
		}
		f.clock.Add(29 * time.Minute)
		if _, _, err := f.dir.Session(ctx, tok); err != nil {
			t.Fatalf("29 min after the last use: %v", err)
		}
		f.clock.Add(30*time.Minute + time.Second)
		if _, _, err := f.dir.Session(ctx, tok); !errors.Is(err, staff.ErrNoSession) {
			t.Fatalf("idle 30 min 1 s: %v, want ErrNoSession", err)
		}

		// Absolute: used every 20 minutes, it still ends 12 hours after
		// login.
		start := f.clock.Now()
		tok, _, err = f.dir.StartSession(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		for f.clock.Now().Sub(start) < 12*time.Hour-20*time.Minute {
			f.clock.Add(20 * time.Minute)
			if _, _, err := f.dir.Session(ctx, tok); err != nil {
				t.Fatalf("%v after login: %v", f.clock.Now().Sub(start), err)
			}
		}
		f.clock.Add(12*time.Hour + time.Second - f.clock.Now().Sub(start))
		if _, _, err := f.dir.Session(ctx, tok); !errors.Is(err, staff.ErrNoSession) {
			t.Fatalf("12 h 1 s after login: %v, want ErrNoSession", err)
		}
		if _, _, err := f.dir.Session(ctx, "not a token"); !errors.Is(err, staff.ErrNoSession) {
			t.Fatalf("an unknown token: %v", err)
		}
	})
}

// TestSessionRotation: every StartSession makes a new token and CSRF
// token; the user's other sessions stay (one per browser) until ended.
func TestSessionRotation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s, "a")
		ctx := t.Context()
		admin := f.create(t, "admin@example.no", staff.RoleAdmin, pw)
		u := f.create(t, "kari@example.no", staff.RoleSupport, pw)
		tok1, s1, err := f.dir.StartSession(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		tok2, s2, err := f.dir.StartSession(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if tok1 == tok2 || s1.ID == s2.ID || s1.CSRF == s2.CSRF || s1.CSRF == "" {
			t.Fatalf("two logins share a token, id or CSRF: %q %q %+v %+v", tok1, tok2, s1, s2)
		}
		for _, tok := range []string{tok1, tok2} {
			if _, _, err := f.dir.Session(ctx, tok); err != nil {
				t.Fatalf("session %q: %v", tok, err)
			}
		}
		if err := f.dir.EndSession(ctx, tok1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.dir.Session(ctx, tok1); !errors.Is(err, staff.ErrNoSession) {
			t.Fatalf("after EndSession: %v", err)
		}
		if _, _, err := f.dir.Session(ctx, tok2); err != nil {
			t.Fatalf("the other session after EndSession: %v", err)
		}
		if err := f.dir.EndSession(ctx, tok1); err != nil {
			t.Fatalf("ending twice: %v", err)
		}

		// EndSessions ends all of one user's, no one else's.
		adminTok, _, err := f.dir.StartSession(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		tok3, _, _ := f.dir.StartSession(ctx, u)
		if err := f.dir.EndSessions(ctx, f.tenant, u.ID); err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{tok2, tok3} {
			if _, _, err := f.dir.Session(ctx, tok); !errors.Is(err, staff.ErrNoSession) {
				t.Fatalf("after EndSessions: %v", err)
			}
		}
		if _, _, err := f.dir.Session(ctx, adminTok); err != nil {
			t.Fatalf("another user's session after EndSessions: %v", err)
		}

		// Disabling a user ends its sessions, and a disabled user gets
		// none; enabling again does not bring them back.
		tok4, _, _ := f.dir.StartSession(ctx, u)
		if _, err := f.dir.UpdateUser(ctx, f.tenant, u.ID, staff.RoleSupport, true); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.dir.Session(ctx, tok4); !errors.Is(err, staff.ErrNoSession) {
			t.Fatalf("a disabled user's session: %v", err)
		}
		if _, _, err := f.dir.StartSession(ctx, u); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("a session for a disabled user: %v", err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, u.ID, staff.RoleSupport, false); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.dir.Session(ctx, tok4); !errors.Is(err, staff.ErrNoSession) {
			t.Fatalf("a session of before the disabling, after enabling: %v", err)
		}

		// The sweep removes what timed out and keeps the rest.
		f.clock.Add(31 * time.Minute)
		if _, _, err := f.dir.Session(ctx, adminTok); !errors.Is(err, staff.ErrNoSession) {
			t.Fatal(err)
		}
		fresh, _, _ := f.dir.StartSession(ctx, admin)
		if _, _, err := f.dir.SetPasswordLink(ctx, f.tenant, u.ID); err != nil {
			t.Fatal(err)
		}
		f.clock.Add(73 * time.Hour)
		if _, _, err := f.dir.StartSession(ctx, admin); err != nil {
			t.Fatal(err)
		}
		n, err := f.dir.Sweep(ctx)
		if err != nil || n != 2 { // fresh (idle) and the expired link
			t.Fatalf("Sweep = %d %v, want 2", n, err)
		}
		if _, _, err := f.dir.Session(ctx, fresh); !errors.Is(err, staff.ErrNoSession) {
			t.Fatal(err)
		}
		if n, err := f.dir.Sweep(ctx); err != nil || n != 0 {
			t.Fatalf("the second Sweep = %d %v", n, err)
		}
	})
}

func TestPasswordLink(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s, "a")
		ctx := t.Context()
		u := f.create(t, "kari@example.no", staff.RoleAdmin, "")
		if _, err := f.dir.Authenticate(ctx, f.tenant, "kari@example.no", ""); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("no password yet: %v", err)
		}
		tok, expires, err := f.dir.SetPasswordLink(ctx, f.tenant, u.ID)
		if err != nil || len(tok) != 43 || !expires.Equal(t0.Add(72*time.Hour)) {
			t.Fatalf("SetPasswordLink = %q %v %v", tok, expires, err)
		}
		if _, err := f.dir.UsePasswordLink(ctx, tok, "short"); fields(err) != "password" {
			t.Fatalf("a short password: %v, want a validation error on password", err)
		}
		// Its sessions end when the link is used.
		sessTok, _, err := f.dir.StartSession(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.dir.UsePasswordLink(ctx, tok, pw)
		if err != nil || got.ID != u.ID || !got.HasPassword {
			t.Fatalf("UsePasswordLink = %+v %v", got, err)
		}
		if _, _, err := f.dir.Session(ctx, sessTok); !errors.Is(err, staff.ErrNoSession) {
			t.Fatalf("a session after the password was set: %v", err)
		}
		if _, err := f.dir.Authenticate(ctx, f.tenant, "kari@example.no", pw); err != nil {
			t.Fatalf("the new password: %v", err)
		}
		if _, err := f.dir.UsePasswordLink(ctx, tok, pw+"2"); !errors.Is(err, staff.ErrBadLink) {
			t.Fatalf("a second use: %v, want ErrBadLink", err)
		}
		if _, err := f.dir.UsePasswordLink(ctx, "unknown", pw); !errors.Is(err, staff.ErrBadLink) {
			t.Fatalf("an unknown token: %v", err)
		}

		// A newer link replaces the unused older one.
		old, _, _ := f.dir.SetPasswordLink(ctx, f.tenant, u.ID)
		newer, _, err := f.dir.SetPasswordLink(ctx, f.tenant, u.ID)
		if err != nil || old == newer {
			t.Fatalf("two links: %q %q %v", old, newer, err)
		}
		if _, err := f.dir.UsePasswordLink(ctx, old, pw+"3"); !errors.Is(err, staff.ErrBadLink) {
			t.Fatalf("a superseded link: %v, want ErrBadLink", err)
		}
		if _, err := f.dir.UsePasswordLink(ctx, newer, pw+"3"); err != nil {
			t.Fatalf("the newest link: %v", err)
		}

		// Expiry: 72 hours.
		late, _, _ := f.dir.SetPasswordLink(ctx, f.tenant, u.ID)
		f.clock.Add(72 * time.Hour)
		if _, err := f.dir.UsePasswordLink(ctx, late, pw+"4"); !errors.Is(err, staff.ErrBadLink) {
			t.Fatalf("an expired link: %v, want ErrBadLink", err)
		}
		if _, err := f.dir.Authenticate(ctx, f.tenant, "kari@example.no", pw+"3"); err != nil {
			t.Fatalf("the password after the refused links: %v", err)
		}
		if _, _, err := f.dir.SetPasswordLink(ctx, f.tenant, store.NewID()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a link for no user: %v", err)
		}
	})
}

// TestUsePasswordLinkOnce fires one link from several goroutines at once
// on PostgreSQL, where the transactions really overlap: exactly one may
// set the password.
func TestUsePasswordLinkOnce(t *testing.T) {
	t.Parallel()
	pg := false
	for _, e := range storetest.Engines() {
		pg = pg || e == store.Postgres
	}
	if !pg {
		t.Skip("needs PostgreSQL (" + storetest.PostgresEnv + ")")
	}
	f := newFixture(t, storetest.Open(t, store.Postgres), "a")
	u := f.create(t, "kari@example.no", staff.RoleAdmin, "")
	tok, _, err := f.dir.SetPasswordLink(t.Context(), f.tenant, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			_, errs[i] = f.dir.UsePasswordLink(context.Background(), tok, pw+string(rune('a'+i)))
		})
	}
	start.Done()
	done.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("uses %d and %d both succeeded", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, staff.ErrBadLink):
			t.Fatalf("use %d: %v, want ErrBadLink", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no use succeeded")
	}
	if _, err := f.dir.Authenticate(t.Context(), f.tenant, "kari@example.no", pw+string(rune('a'+won))); err != nil {
		t.Fatalf("the winner's password: %v", err)
	}
}

func TestLastAdmin(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s, "a")
		ctx := t.Context()
		a := f.create(t, "a@example.no", staff.RoleAdmin, pw)
		sup := f.create(t, "s@example.no", staff.RoleSupport, pw)
		if _, err := f.dir.UpdateUser(ctx, f.tenant, a.ID, staff.RoleSupport, false); !errors.Is(err, staff.ErrLastAdmin) {
			t.Fatalf("demoting the only admin: %v", err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, a.ID, staff.RoleAdmin, true); !errors.Is(err, staff.ErrLastAdmin) {
			t.Fatalf("disabling the only admin: %v", err)
		}
		if got, _ := f.dir.User(ctx, f.tenant, a.ID); got.Role != staff.RoleAdmin || got.Disabled {
			t.Fatalf("a refused change was stored: %+v", got)
		}
		// Others may change freely; a disabled admin is no admin.
		if _, err := f.dir.UpdateUser(ctx, f.tenant, sup.ID, staff.RoleFinance, false); err != nil {
			t.Fatal(err)
		}
		b := f.create(t, "b@example.no", staff.RoleAdmin, pw)
		if _, err := f.dir.UpdateUser(ctx, f.tenant, b.ID, staff.RoleAdmin, true); err != nil {
			t.Fatalf("disabling one of two admins: %v", err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, a.ID, staff.RoleSupport, false); !errors.Is(err, staff.ErrLastAdmin) {
			t.Fatalf("demoting the only enabled admin: %v", err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, b.ID, staff.RoleAdmin, false); err != nil {
			t.Fatal(err)
		}
		got, err := f.dir.UpdateUser(ctx, f.tenant, a.ID, staff.RoleFinance, false)
		if err != nil || got.Role != staff.RoleFinance || !got.UpdatedAt.Equal(t0) {
			t.Fatalf("demoting one of two enabled admins: %+v %v", got, err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, b.ID, staff.RoleAdmin, true); !errors.Is(err, staff.ErrLastAdmin) {
			t.Fatalf("disabling the one left: %v", err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, b.ID, "root", false); fields(err) != "role" {
			t.Fatalf("a bad role: %v", err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, store.NewID(), staff.RoleAdmin, false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("no such user: %v", err)
		}
	})
}

func TestTOTP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s, "a")
		ctx := t.Context()
		u := f.create(t, "kari@example.no", staff.RoleAdmin, pw)
		secret, url, err := f.dir.BeginTOTP(ctx, f.tenant, u.ID, "Kadens Avisa")
		if err != nil || secret == "" || !strings.HasPrefix(url, "otpauth://totp/") || !strings.Contains(url, "secret="+secret) ||
			!strings.Contains(url, "issuer=Kadens") {
			t.Fatalf("BeginTOTP = %q %q %v", secret, url, err)
		}
		if got, _ := f.dir.User(ctx, f.tenant, u.ID); got.TOTPEnabled {
			t.Fatal("TOTP enabled before it was confirmed")
		}
		code, err := totp.GenerateCode(secret, f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		wrong := "000000"
		if wrong == code {
			wrong = "111111"
		}
		if err := f.dir.ConfirmTOTP(ctx, f.tenant, u.ID, wrong); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("confirming with a wrong code: %v", err)
		}
		if err := f.dir.ConfirmTOTP(ctx, f.tenant, u.ID, code); err != nil {
			t.Fatalf("confirming: %v", err)
		}
		if err := f.dir.ConfirmTOTP(ctx, f.tenant, u.ID, code); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("confirming with nothing pending: %v", err)
		}
		u, err = f.dir.Authenticate(ctx, f.tenant, "kari@example.no", pw)
		if err != nil || !u.TOTPEnabled {
			t.Fatalf("after enrolment: %+v %v", u, err)
		}

		// A login now waits for a code.
		tok, sess, err := f.dir.StartSession(ctx, u)
		if err != nil || !sess.SecondFactorPending {
			t.Fatalf("StartSession = %+v %v, want a pending second factor", sess, err)
		}
		if got, _, err := f.dir.Session(ctx, tok); err != nil || !got.SecondFactorPending {
			t.Fatalf("Session = %+v %v", got, err)
		}
		if _, _, err := f.dir.CompleteSecondFactor(ctx, tok, code); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("the code that confirmed the enrolment, again: %v, want ErrBadCredentials (a code is good once)", err)
		}
		f.clock.Add(5 * time.Minute)
		if _, _, err := f.dir.CompleteSecondFactor(ctx, tok, code); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("a code five minutes old: %v, want ErrBadCredentials", err)
		}
		code, _ = totp.GenerateCode(secret, f.clock.Now())
		newTok, done, err := f.dir.CompleteSecondFactor(ctx, tok, code)
		if err != nil || newTok == tok || done.SecondFactorPending || done.CSRF == sess.CSRF || done.ID != sess.ID {
			t.Fatalf("CompleteSecondFactor = %q %+v %v", newTok, done, err)
		}
		if _, _, err := f.dir.Session(ctx, tok); !errors.Is(err, staff.ErrNoSession) {
			t.Fatalf("the token before the second factor: %v, want ErrNoSession", err)
		}
		got, _, err := f.dir.Session(ctx, newTok)
		if err != nil || got.SecondFactorPending || got.CSRF != done.CSRF {
			t.Fatalf("the rotated session: %+v %v", got, err)
		}
		if _, _, err := f.dir.CompleteSecondFactor(ctx, newTok, code); !errors.Is(err, staff.ErrNoSession) {
			t.Fatalf("completing twice: %v, want ErrNoSession", err)
		}
		// The same code cannot complete another login (a replay); the
		// next step's code can.
		other, _, err := f.dir.StartSession(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.dir.CompleteSecondFactor(ctx, other, code); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("a used code for another session: %v, want ErrBadCredentials", err)
		}
		f.clock.Add(30 * time.Second)
		code, _ = totp.GenerateCode(secret, f.clock.Now())
		if _, _, err := f.dir.CompleteSecondFactor(ctx, other, code); err != nil {
			t.Fatalf("the next step's code: %v", err)
		}

		// An admin turns it off: logins ask for the password only.
		if err := f.dir.DisableTOTP(ctx, f.tenant, u.ID); err != nil {
			t.Fatal(err)
		}
		u, _ = f.dir.User(ctx, f.tenant, u.ID)
		if _, sess, err := f.dir.StartSession(ctx, u); err != nil || u.TOTPEnabled || sess.SecondFactorPending {
			t.Fatalf("after DisableTOTP: %+v %+v %v", u, sess, err)
		}
		if err := f.dir.DisableTOTP(ctx, f.tenant, store.NewID()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DisableTOTP of no user: %v", err)
		}
		if _, _, err := f.dir.BeginTOTP(ctx, f.tenant, u.ID, ""); fields(err) != "issuer" {
			t.Fatalf("no issuer: %v", err)
		}
	})
}

// TestTenantIsolation: nothing of tenant A's staff is visible, usable or
// changeable from tenant B.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newFixture(t, s, "a")
		b := tenantOf(t, s, "b")
		ctx := t.Context()
		u := a.create(t, "kari@example.no", staff.RoleAdmin, pw)
		if _, err := a.dir.User(ctx, b, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("User from B: %v", err)
		}
		if list, err := a.dir.Users(ctx, b); err != nil || len(list) != 0 {
			t.Fatalf("Users of B: %+v %v", list, err)
		}
		if _, err := a.dir.Authenticate(ctx, b, "kari@example.no", pw); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("Authenticate at B: %v", err)
		}
		if _, err := a.dir.UpdateUser(ctx, b, u.ID, staff.RoleSupport, true); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("UpdateUser from B: %v", err)
		}
		if _, _, err := a.dir.SetPasswordLink(ctx, b, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("SetPasswordLink from B: %v", err)
		}
		if _, _, err := a.dir.BeginTOTP(ctx, b, u.ID, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("BeginTOTP from B: %v", err)
		}
		if err := a.dir.DisableTOTP(ctx, b, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DisableTOTP from B: %v", err)
		}
		forged := u
		forged.TenantID = b
		if _, _, err := a.dir.StartSession(ctx, forged); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("a session for A's user in B: %v", err)
		}
		tok, _, err := a.dir.StartSession(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.dir.EndSessions(ctx, b, u.ID); err != nil {
			t.Fatal(err)
		}
		if got, _, err := a.dir.Session(ctx, tok); err != nil || got.TenantID != a.tenant {
			t.Fatalf("A's session after B ended its user's: %+v %v", got, err)
		}
		// The same address is a different user in B.
		bu, err := a.dir.CreateUser(ctx, b, staff.NewUser{Email: "KARI@example.no", Role: staff.RoleSupport, Password: pw + "b"})
		if err != nil || bu.ID == u.ID {
			t.Fatalf("the same address in B: %+v %v", bu, err)
		}
		if got, err := a.dir.Authenticate(ctx, b, "kari@example.no", pw+"b"); err != nil || got.ID != bu.ID {
			t.Fatalf("B's user: %+v %v", got, err)
		}
		if _, err := a.dir.Authenticate(ctx, a.tenant, "kari@example.no", pw+"b"); !errors.Is(err, staff.ErrBadCredentials) {
			t.Fatalf("B's password at A: %v", err)
		}
	})
}

// TestLastAdminConcurrent: two admins demote each other at the same moment
// on PostgreSQL, each update held after its last-admin check for the other
// to reach the same point; the lock on the tenant's admins keeps the
// second one from reading until the first commits, so exactly one
// succeeds and the tenant keeps an admin. Not parallel: the hook is the
// package's.
func TestLastAdminConcurrent(t *testing.T) {
	if !slices.Contains(storetest.Engines(), store.Postgres) {
		t.Skip("needs PostgreSQL (" + storetest.PostgresEnv + ")")
	}
	f := newFixture(t, storetest.Open(t, store.Postgres), "a")
	a := f.create(t, "a@example.no", staff.RoleAdmin, pw)
	b := f.create(t, "b@example.no", staff.RoleAdmin, pw)
	// Each update that passed the check waits (at most a second) for the
	// other to pass it too. Without the lock both would, and both succeed.
	var arrived sync.WaitGroup
	arrived.Add(2)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	defer staff.SetAdminChecked(func() {
		arrived.Done()
		select {
		case <-all:
		case <-time.After(time.Second):
		}
	})()
	var done sync.WaitGroup
	errs := make([]error, 2)
	for i, id := range []string{a.ID, b.ID} {
		done.Go(func() {
			_, errs[i] = f.dir.UpdateUser(context.Background(), f.tenant, id, staff.RoleSupport, i == 1)
		})
	}
	done.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, staff.ErrLastAdmin):
			t.Fatal(err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of the two demotions succeeded (%v), want 1", ok, errs)
	}
	if list, _ := f.dir.Users(t.Context(), f.tenant); (list[0].Role == staff.RoleAdmin && !list[0].Disabled) ==
		(list[1].Role == staff.RoleAdmin && !list[1].Disabled) {
		t.Fatalf("not exactly one enabled admin left: %+v", list)
	}
}

// TestAuditEvents: every change to who may do what is an event about the
// user, with the actor of the context, and no secret in it; a change
// that changes nothing records nothing.
func TestAuditEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s, "a")
		ctx := actor.With(t.Context(), actor.Actor{Kind: actor.Staff, ID: store.NewID(), Label: "admin@example.no"})
		f.create(t, "first@example.no", staff.RoleAdmin, pw)
		u, err := f.dir.CreateUser(ctx, f.tenant, staff.NewUser{Email: "kari@example.no", Role: staff.RoleSupport})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, u.ID, staff.RoleFinance, false); err != nil {
			t.Fatal(err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, u.ID, staff.RoleFinance, false); err != nil { // no change
			t.Fatal(err)
		}
		token, _, err := f.dir.SetPasswordLink(ctx, f.tenant, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.dir.UsePasswordLink(t.Context(), token, pw); err != nil {
			t.Fatal(err)
		}
		secret, _, err := f.dir.BeginTOTP(ctx, f.tenant, u.ID, "Kadens")
		if err != nil {
			t.Fatal(err)
		}
		code, _ := totp.GenerateCode(secret, f.clock.Now())
		if err := f.dir.ConfirmTOTP(ctx, f.tenant, u.ID, code); err != nil {
			t.Fatal(err)
		}
		if err := f.dir.DisableTOTP(ctx, f.tenant, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.dir.UpdateUser(ctx, f.tenant, u.ID, staff.RoleFinance, true); err != nil {
			t.Fatal(err)
		}
		evs, _, err := s.ListEvents(tenancy.With(t.Context(), f.tenant), store.EventFilter{Subject: "/staffuser/" + u.ID}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, e.EventType)
			if e.EventType != staff.EventPasswordSet && e.Actor.Label != "admin@example.no" {
				t.Errorf("%s by %+v, want the admin", e.EventType, e.Actor)
			}
			if d := string(e.Data); strings.Contains(d, secret) || strings.Contains(d, token) || strings.Contains(d, "argon2") {
				t.Errorf("%s carries a secret: %s", e.EventType, d)
			}
		}
		want := []string{staff.EventUserCreated, staff.EventUserChanged, staff.EventPasswordLinkIssued, staff.EventPasswordSet,
			staff.EventTOTPEnabled, staff.EventTOTPDisabled, staff.EventUserChanged}
		if !slices.Equal(kinds, want) {
			t.Fatalf("events %v, want %v", kinds, want)
		}
		if d := string(evs[1].Data); !strings.Contains(d, `"before":{"role":"support"`) || !strings.Contains(d, `"role":"finance"`) {
			t.Errorf("the role change says %s", d)
		}
	})
}
