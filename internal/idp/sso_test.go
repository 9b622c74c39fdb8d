package idp

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// authorizeAgain runs /authorize in browser c, which logged in before: the
// answer is the redirect to the client with a code when the login session
// let the form be skipped, or the redirect to the form.
func (f *loginFixture) authorizeAgain(t testing.TB, c *http.Client, authorize string) page {
	t.Helper()
	return fetch(t, c, "GET", authorize, nil)
}

// codeOf returns the code of a redirect to the client, failing otherwise.
func codeOf(t testing.TB, p page) string {
	t.Helper()
	u, err := url.Parse(p.location)
	if p.status != http.StatusFound || err != nil || !strings.HasPrefix(p.location, testRedirect+"?") ||
		u.Query().Get("code") == "" || u.Query().Get("state") != "st-1" {
		t.Fatalf("want a redirect to the client with a code, got %d %q %s", p.status, p.location, p.body)
	}
	return u.Query().Get("code")
}

func isForm(p page) bool {
	return p.status == http.StatusFound && strings.Contains(p.location, "/login?id=")
}

// Single sign-on: a browser that logged in gets a code from a second
// /authorize without the form, with the first login's auth_time; except
// with prompt=login, past max_age, for another tenant's client, for a
// disabled user, after logout and after the user's sessions ended.
// prompt=none without a session is login_required at the client.
func TestSingleSignOn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		verifier, _ := pkce()
		c := browser(t)
		first := f.login(t, c, f.authorizeURL(nil), f.email, testPassword)
		r1 := f.exchange(t, codeOf(t, first), verifier)
		if r1.status != http.StatusOK {
			t.Fatalf("first exchange: %d %v", r1.status, r1.body)
		}
		authTime := claimsOf(t, f.idpServer, r1.body["id_token"].(string))["auth_time"]

		// The second login: no form, a code, tokens for the same user with
		// the first login's auth_time and the new request's nonce.
		// The code comes with the answer to /authorize itself.
		p := fetch(t, c, "GET", f.authorizeURL(url.Values{"nonce": {"n-2"}}), nil)
		r2 := f.exchange(t, codeOf(t, p), verifier)
		if r2.status != http.StatusOK {
			t.Fatalf("exchange after single sign-on: %d %v", r2.status, r2.body)
		}
		idt := claimsOf(t, f.idpServer, r2.body["id_token"].(string))
		if idt["sub"] != f.userID || idt["auth_time"] != authTime || idt["nonce"] != "n-2" || authTime == nil {
			t.Fatalf("id token after single sign-on: %v (first auth_time %v)", idt, authTime)
		}
		// prompt=none with the session: a code as well.
		codeOf(t, f.authorizeAgain(t, c, f.authorizeURL(url.Values{"prompt": {"none"}})))

		// An id_token_hint of this user keeps the session; of another
		// user it does not (prompt=none: login_required).
		codeOf(t, f.authorizeAgain(t, c, f.authorizeURL(url.Values{"id_token_hint": {r2.body["id_token"].(string)}})))
		ctx := tenancy.With(context.Background(), f.tenant)
		other, err := (&subscriberuser.Directory{Store: s, Params: cheapPasswords}).Create(ctx, "other@example.com", testPassword, "")
		if err != nil {
			t.Fatal(err)
		}
		oc := browser(t)
		otherTokens := f.exchange(t, codeOf(t, f.login(t, oc, f.authorizeURL(nil), other.Email, testPassword)), verifier)
		hint := url.Values{"id_token_hint": {otherTokens.body["id_token"].(string)}}
		if p := f.authorizeAgain(t, c, f.authorizeURL(hint)); !isForm(p) {
			t.Errorf("another user's id_token_hint: %d %q", p.status, p.location)
		}
		hint.Set("prompt", "none")
		if p := f.authorizeAgain(t, c, f.authorizeURL(hint)); !strings.Contains(p.location, "error=login_required") {
			t.Errorf("another user's id_token_hint with prompt=none: %d %q", p.status, p.location)
		}

		// prompt=login and an exceeded max_age show the form.
		if p := f.authorizeAgain(t, c, f.authorizeURL(url.Values{"prompt": {"login"}})); !isForm(p) {
			t.Errorf("prompt=login: %d %q", p.status, p.location)
		}
		f.Server.now = func() time.Time { return time.Now().Add(time.Minute) }
		if p := f.authorizeAgain(t, c, f.authorizeURL(url.Values{"max_age": {"30"}})); !isForm(p) {
			t.Errorf("max_age exceeded: %d %q", p.status, p.location)
		}
		codeOf(t, f.authorizeAgain(t, c, f.authorizeURL(url.Values{"max_age": {"3600"}})))
		f.Server.now = func() time.Time { return time.Now().Add(SessionTTL + time.Minute) }
		if p := f.authorizeAgain(t, c, f.authorizeURL(nil)); !isForm(p) {
			t.Errorf("expired session: %d %q", p.status, p.location)
		}
		f.Server.now = time.Now

		// prompt=none without a session: login_required at the client.
		p = fetch(t, browser(t), "GET", f.authorizeURL(url.Values{"prompt": {"none"}}), nil)
		if u, err := url.Parse(p.location); p.status != http.StatusFound || err != nil || !strings.HasPrefix(p.location, testRedirect+"?") ||
			u.Query().Get("error") != "login_required" || u.Query().Get("state") != "st-1" {
			t.Errorf("prompt=none without a session: %d %q %s", p.status, p.location, p.body)
		}

		// Another tenant's client does not accept this tenant's login.
		b := seed.Tenant(t, s, "sso-b", time.Now())
		bID, _ := tenancy.From(b)
		bt, _ := s.TenantByID(b, bID)
		bc, _, err := NewLoginClient(b, s, bID, LoginClientSpec{Name: "b", RedirectURIs: []string{testRedirect}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if p := f.authorizeAgain(t, c, f.authorizeURL(url.Values{"client_id": {bc.ID}, "connection": {bt.Name}})); !isForm(p) {
			t.Errorf("another tenant's client: %d %q", p.status, p.location)
		}

		// A disabled user's session no longer logs in.
		if _, err := subscriberuser.SetSubscriberUserDisabled(ctx, s, f.userID, true, time.Now()); err != nil {
			t.Fatal(err)
		}
		if p := f.authorizeAgain(t, c, f.authorizeURL(nil)); !isForm(p) {
			t.Errorf("disabled user: %d %q", p.status, p.location)
		}
		if _, err := subscriberuser.SetSubscriberUserDisabled(ctx, s, f.userID, false, time.Now()); err != nil {
			t.Fatal(err)
		}
		codeOf(t, f.authorizeAgain(t, c, f.authorizeURL(nil)))

		// Logout ends the session on the server, not only the cookie.
		idpURL, _ := url.Parse(f.url + "/authorize")
		var token string
		for _, ck := range c.Jar.Cookies(idpURL) {
			if ck.Name == ssoCookie {
				token = ck.Value
			}
		}
		if token == "" {
			t.Fatal("no login session cookie after the login")
		}
		q := url.Values{"id_token_hint": {r2.body["id_token"].(string)}, "post_logout_redirect_uri": {testLogout}, "state": {"bye"}}
		if out := fetch(t, c, "GET", f.url+"/end_session?"+q.Encode(), nil); out.status != http.StatusFound || !strings.HasPrefix(out.location, testLogout) {
			t.Fatalf("logout: %d %q %s", out.status, out.location, out.body)
		}
		if p := f.authorizeAgain(t, c, f.authorizeURL(nil)); !isForm(p) {
			t.Errorf("after logout: %d %q", p.status, p.location)
		}
		replay := browser(t)
		replay.Jar.SetCookies(idpURL, []*http.Cookie{{Name: ssoCookie, Value: token, Path: "/"}})
		if p := f.authorizeAgain(t, replay, f.authorizeURL(nil)); !isForm(p) {
			t.Errorf("the logged-out session's cookie replayed: %d %q", p.status, p.location)
		}

		// A new login makes a new session; ending the user's sessions (as
		// a password reset does) ends it.
		codeOf(t, f.login(t, c, f.authorizeURL(nil), f.email, testPassword))
		codeOf(t, f.authorizeAgain(t, c, f.authorizeURL(nil)))
		if err := EndUserLoginSessions(ctx, s, f.userID); err != nil {
			t.Fatal(err)
		}
		if p := f.authorizeAgain(t, c, f.authorizeURL(nil)); !isForm(p) {
			t.Errorf("after the user's sessions ended: %d %q", p.status, p.location)
		}
	})
}

// Revocation (RFC 7009): a refresh token is revoked (200, then refused);
// an unknown token is 200; a valid access token, which is a
// self-contained JWT no one can stop before its exp, is
// unsupported_token_type, not a 200 that would claim it was revoked; a
// wrong client secret is invalid_client.
func TestRevocation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		verifier, _ := pkce()
		r := f.exchange(t, f.code(t), verifier)
		if r.status != http.StatusOK {
			t.Fatalf("exchange: %d %v", r.status, r.body)
		}
		access, refresh := r.body["access_token"].(string), r.body["refresh_token"].(string)
		revoke := func(token, hint string, secret string) reply {
			t.Helper()
			form := url.Values{"token": {token}}
			if hint != "" {
				form.Set("token_type_hint", hint)
			}
			req, _ := http.NewRequest("POST", f.url+"/revoke", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth(f.client, secret)
			return do(t, req)
		}
		for _, hint := range []string{"access_token", ""} {
			if got := revoke(access, hint, f.secret); got.status != http.StatusBadRequest || got.body["error"] != "unsupported_token_type" {
				t.Errorf("revoke the access token (hint %q): %d %v", hint, got.status, got.body)
			}
		}
		if got := revoke(refresh, "", "wrong"); got.status != http.StatusUnauthorized || got.body["error"] != "invalid_client" {
			t.Errorf("revoke with a wrong secret: %d %v", got.status, got.body)
		}
		if got := revoke("no-such-token", "refresh_token", f.secret); got.status != http.StatusOK {
			t.Errorf("revoke an unknown token: %d %v", got.status, got.body)
		}
		if got := revoke(refresh, "refresh_token", f.secret); got.status != http.StatusOK {
			t.Fatalf("revoke the refresh token: %d %v", got.status, got.body)
		}
		if got := f.post(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, []string{f.client, f.secret}, ""); got.status != http.StatusBadRequest || got.body["error"] != "invalid_grant" {
			t.Errorf("refresh with a revoked token: %d %v", got.status, got.body)
		}
		// The access token lives on until its exp, as documented.
		req, _ := http.NewRequest("GET", f.url+"/userinfo", nil)
		req.Header.Set("Authorization", "Bearer "+access)
		if ui := do(t, req); ui.status != http.StatusOK {
			t.Errorf("userinfo with the access token: %d %v", ui.status, ui.body)
		}
	})
}

// The login page shows the logo of the tenant's organization that orgname
// names (ignoring case), when it is served over https, both on the page
// and on a form shown again after a wrong password.
func TestLoginLogo(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		ctx := tenancy.With(context.Background(), f.tenant)
		for _, o := range []store.Organization{{Name: "Avisa", LogoURL: "https://cdn.example/avisa.png"}, {Name: "Plain", LogoURL: "http://cdn.example/plain.png"}} {
			o.OrganizationNumber, o.Country, o.Currency, o.TimeZone = "123", "NO", "NOK", "Europe/Oslo"
			if _, err := s.CreateOrganization(ctx, o, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		page := func(org string) string {
			c := browser(t)
			p := fetch(t, c, "GET", f.authorizeURL(url.Values{"orgname": {org}}), nil)
			return fetch(t, c, "GET", p.location, nil).body
		}
		if b := page("avisa"); !strings.Contains(b, `src="https://cdn.example/avisa.png"`) {
			t.Errorf("avisa: no logo in %s", b)
		}
		if b := page("Plain"); strings.Contains(b, "<img") || !strings.Contains(b, `class="org">Plain<`) {
			t.Errorf("an http logo was shown, or the name was not: %s", b)
		}
		if p := f.login(t, browser(t), f.authorizeURL(nil), f.email, "wrong"); p.status != http.StatusUnauthorized ||
			!strings.Contains(p.body, `src="https://cdn.example/avisa.png"`) {
			t.Errorf("the form again after a wrong password: %d %s", p.status, p.body)
		}
	})
}

// EnsureLoginClient registers Min side's client once per tenant, finds it
// again with the same secret and addresses, and registers another when
// the addresses (a new base URL) or the secret (a new master key) differ.
func TestEnsureLoginClient(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := seed.Tenant(t, s, "ensure", time.Now())
		tenant, _ := tenancy.From(ctx)
		spec := LoginClientSpec{Name: "Min side", RedirectURIs: []string{"https://avisa.example/my/callback"},
			PostLogoutRedirectURIs: []string{"https://avisa.example/my/login"}}
		first, err := EnsureLoginClient(ctx, s, tenant, spec, "derived-secret", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		again, err := EnsureLoginClient(ctx, s, tenant, spec, "derived-secret", time.Now())
		if err != nil || again.ID != first.ID {
			t.Errorf("the second call registered another client: %s, %s, %v", first.ID, again.ID, err)
		}
		moved := spec
		moved.RedirectURIs = []string{"https://ny.avisa.example/my/callback"}
		for name, c := range map[string]struct {
			spec   LoginClientSpec
			secret string
		}{"another base URL": {moved, "derived-secret"}, "another secret": {spec, "other-secret"}} {
			if other, err := EnsureLoginClient(ctx, s, tenant, c.spec, c.secret, time.Now()); err != nil || other.ID == first.ID {
				t.Errorf("%s: %s, %v; want a new client", name, other.ID, err)
			}
		}
		bad := spec
		bad.RedirectURIs = []string{"http://avisa.example/my/callback"}
		if _, err := EnsureLoginClient(ctx, s, tenant, bad, "derived-secret", time.Now()); err == nil {
			t.Error("a plain http redirect address off loopback was registered")
		}
	})
}
