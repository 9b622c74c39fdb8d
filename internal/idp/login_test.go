package idp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/kadens/kadens/internal/nodetest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

const (
	testRedirect = "http://127.0.0.1:9/cb"
	testLogout   = "http://127.0.0.1:9/bye"
	testPassword = "correct horse battery staple"
)

var cheapPasswords = subscriberuser.Params{Memory: 64, Time: 1, Threads: 1}

// loginFixture is an IdP with a login client and a user (linked to a
// subscriber) of its tenant.
type loginFixture struct {
	*idpServer
	tenantName     string
	client, secret string
	email, userID  string
	subscriberID   string
}

func newLoginFixture(t testing.TB, s *store.Store) *loginFixture {
	t.Helper()
	is := newIdP(t, s)
	ctx := tenancy.With(context.Background(), is.tenant)
	ten, err := s.TenantByID(ctx, is.tenant)
	if err != nil {
		t.Fatal(err)
	}
	f := &loginFixture{idpServer: is, tenantName: ten.Name, email: "reader@example.com"}
	c, secret, err := NewLoginClient(ctx, s, is.tenant, LoginClientSpec{Name: "web", RedirectURIs: []string{testRedirect},
		PostLogoutRedirectURIs: []string{testLogout}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.client, f.secret = c.ID, secret
	sub := seed.NewStore(t, s, ctx, time.Now()).Subscriber(seed.Subscriber{Name: "Reader", Email: "reader@example.com", Country: "NO"})
	f.subscriberID = sub.ID
	u, err := (&subscriberuser.Directory{Store: s, Params: cheapPasswords}).Create(ctx, f.email, testPassword, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.userID = u.ID
	return f
}

// browser is an HTTP client that does not follow redirects and keeps
// cookies, as a browser would for the IdP.
func browser(t testing.TB) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type page struct {
	status   int
	location string
	body     string
	header   http.Header
}

func fetch(t testing.TB, c *http.Client, method, u string, form url.Values) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(b), header: resp.Header}
}

func pkce() (verifier, challenge string) {
	verifier = "v-" + strings.Repeat("0123456789", 5)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func (f *loginFixture) authorizeURL(extra url.Values) string {
	_, challenge := pkce()
	q := url.Values{"response_type": {"code"}, "client_id": {f.client}, "connection": {f.tenantName},
		"scope": {"openid offline_access"}, "redirect_uri": {testRedirect}, "state": {"st-1"}, "nonce": {"n-1"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "orgname": {"Avisa"}, "language": {"nb"}}
	for k, v := range extra {
		q[k] = v
	}
	return f.url + "/authorize?" + q.Encode()
}

var (
	csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	idRE   = regexp.MustCompile(`name="id" value="([^"]+)"`)
)

// login runs authorize and the login form with password and returns the
// last answer (the redirect to the client on success).
func (f *loginFixture) login(t testing.TB, c *http.Client, authorize, email, password string) page {
	t.Helper()
	p := fetch(t, c, "GET", authorize, nil)
	if p.status != http.StatusFound || !strings.Contains(p.location, "/login?id=") {
		t.Fatalf("authorize: %d %s %s", p.status, p.location, p.body)
	}
	lp := fetch(t, c, "GET", p.location, nil)
	if lp.status != http.StatusOK {
		t.Fatalf("login page: %d %s", lp.status, lp.body)
	}
	csrf, id := csrfRE.FindStringSubmatch(lp.body), idRE.FindStringSubmatch(lp.body)
	if csrf == nil || id == nil {
		t.Fatalf("login page without its form: %s", lp.body)
	}
	p = fetch(t, c, "POST", f.url+"/login", url.Values{"id": {html.UnescapeString(id[1])}, "csrf": {html.UnescapeString(csrf[1])},
		"email": {email}, "password": {password}})
	if p.status != http.StatusSeeOther {
		return p
	}
	return fetch(t, c, "GET", p.location, nil) // the library's callback: 302 to the client
}

func (f *loginFixture) code(t *testing.T) string {
	t.Helper()
	p := f.login(t, browser(t), f.authorizeURL(nil), f.email, testPassword)
	u, err := url.Parse(p.location)
	if p.status != http.StatusFound || err != nil || !strings.HasPrefix(p.location, testRedirect+"?") {
		t.Fatalf("login: %d %q %s", p.status, p.location, p.body)
	}
	if u.Query().Get("state") != "st-1" || u.Query().Get("code") == "" {
		t.Fatalf("redirect without code and state: %s", p.location)
	}
	return u.Query().Get("code")
}

func (f *loginFixture) exchange(t testing.TB, code, verifier string) reply {
	t.Helper()
	return f.post(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {f.client}, "client_secret": {f.secret},
		"code": {code}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}}, nil, "")
}

// claimsOf verifies tok against the JWKS and returns its claims.
func claimsOf(t *testing.T, is *idpServer, tok string) map[string]any {
	t.Helper()
	jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	set := jwks(t, is)
	keys := set.Key(jws.Signatures[0].Header.KeyID)
	if len(keys) != 1 {
		t.Fatalf("token key %q not in the JWKS", jws.Signatures[0].Header.KeyID)
	}
	payload, err := jws.Verify(keys[0])
	if err != nil {
		t.Fatalf("signature: %v", err)
	}
	var c map[string]any
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// The whole code flow: authorize with PKCE and nonce, the login page, the
// redirect with code and state, the exchange (form fields of the
// contract), the claims of both tokens, userinfo, a rotating refresh and
// the logout to the registered address.
func TestCodeFlow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		verifier, _ := pkce()
		r := f.exchange(t, f.code(t), verifier)
		if r.status != http.StatusOK || r.body["token_type"] != "Bearer" || r.body["expires_in"] == nil ||
			r.body["id_token"] == nil || r.body["access_token"] == nil || r.body["refresh_token"] == nil {
			t.Fatalf("exchange: %d %v", r.status, r.body)
		}
		at := claimsOf(t, f.idpServer, r.body["access_token"].(string))
		idt := claimsOf(t, f.idpServer, r.body["id_token"].(string))
		for name, c := range map[string]map[string]any{"access": at, "id": idt} {
			if c["iss"] != f.url || c["sub"] != f.userID || c["azp"] != f.client || c[testNS+"/tenantId"] != f.tenant ||
				c[testNS+"/subscriberId"] != f.subscriberID || c[testNS+"/kind"] != KindSubscriber || c["iat"] == nil || c["exp"] == nil ||
				!strings.Contains(c["scope"].(string), "openid") || strings.Contains(c["scope"].(string), ScopeAPI) {
				t.Fatalf("%s token claims: %v", name, c)
			}
		}
		if aud, _ := at["aud"].([]any); len(aud) != 1 || aud[0] != testAudience {
			t.Fatalf("access token aud %v, want only %s", at["aud"], testAudience)
		}
		if idt["nonce"] != "n-1" {
			t.Fatalf("id token nonce %v", idt["nonce"])
		}

		req, _ := http.NewRequest("GET", f.url+"/userinfo", nil)
		req.Header.Set("Authorization", "Bearer "+r.body["access_token"].(string))
		ui := do(t, req)
		if ui.status != http.StatusOK || ui.body["sub"] != f.userID || ui.body[testNS+"/subscriberId"] != f.subscriberID {
			t.Fatalf("userinfo: %d %v", ui.status, ui.body)
		}

		refresh := func(tok string) reply {
			return f.post(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok}}, []string{f.client, f.secret}, "")
		}
		first := r.body["refresh_token"].(string)
		r2 := refresh(first)
		if r2.status != http.StatusOK || r2.body["refresh_token"] == first || r2.body["access_token"] == nil {
			t.Fatalf("refresh: %d %v", r2.status, r2.body)
		}
		if again := refresh(first); again.status != http.StatusBadRequest || again.body["error"] != "invalid_grant" {
			t.Fatalf("a used refresh token: %d %v", again.status, again.body)
		}

		q := url.Values{"id_token_hint": {r.body["id_token"].(string)}, "post_logout_redirect_uri": {testLogout},
			"client_id": {f.client}, "state": {"bye"}}
		out := fetch(t, browser(t), "GET", f.url+"/end_session?"+q.Encode(), nil)
		if out.status != http.StatusFound || !strings.HasPrefix(out.location, testLogout) {
			t.Fatalf("logout: %d %s %s", out.status, out.location, out.body)
		}
		if after := refresh(r2.body["refresh_token"].(string)); after.status != http.StatusBadRequest {
			t.Fatalf("refresh after logout: %d %v", after.status, after.body)
		}
		q.Set("post_logout_redirect_uri", "https://evil.example/")
		if bad := fetch(t, browser(t), "GET", f.url+"/end_session?"+q.Encode(), nil); bad.status == http.StatusFound && strings.HasPrefix(bad.location, "https://evil") {
			t.Fatalf("logout redirected to an unregistered address: %s", bad.location)
		}
	})
}

// Bad authorization requests get an error page (400), never a redirect to
// an address that is not the client's.
func TestAuthorizeErrors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		other := seed.Tenant(t, s, "other", time.Now())
		otherTenant, _ := tenancy.From(other)
		ot, _ := s.TenantByID(other, otherTenant)
		for _, c := range []struct {
			name  string
			extra url.Values
			code  string
		}{
			{"unknown client", url.Values{"client_id": {"kl_nope"}}, "invalid_client"},
			{"unregistered redirect_uri", url.Values{"redirect_uri": {"https://evil.example/cb"}}, "invalid_request"},
			{"redirect_uri with extra query", url.Values{"redirect_uri": {testRedirect + "?x=1"}}, "invalid_request"},
			{"another tenant's connection", url.Values{"connection": {ot.Name}}, "invalid_request"},
			{"unknown connection", url.Values{"connection": {"nosuch"}}, "invalid_request"},
			{"plain PKCE", url.Values{"code_challenge_method": {"plain"}}, "invalid_request"},
		} {
			p := fetch(t, browser(t), "GET", f.authorizeURL(c.extra), nil)
			if p.status != http.StatusBadRequest || p.location != "" || !strings.Contains(p.body, `data-error="`+c.code+`"`) ||
				!strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
				t.Errorf("%s: %d %q %s", c.name, p.status, p.location, p.body)
			}
		}
		// Without openid: back to the client with invalid_scope.
		if p := fetch(t, browser(t), "GET", f.authorizeURL(url.Values{"scope": {"profile"}}), nil); p.status != http.StatusFound ||
			!strings.HasPrefix(p.location, testRedirect+"?") || !strings.Contains(p.location, "error=invalid_scope") || !strings.Contains(p.location, "state=st-1") {
			t.Errorf("without openid: %d %s", p.status, p.location)
		}
		// Without connection the client's tenant is the default.
		q := url.Values{"connection": {""}}
		if p := fetch(t, browser(t), "GET", f.authorizeURL(q), nil); p.status != http.StatusFound {
			t.Errorf("without connection: %d %s", p.status, p.body)
		}
	})
}

// Every failed code exchange is the error RFC 6749 (and 7636 for PKCE)
// names, never a 500; and a code is spent by its first exchange.
func TestCodeExchangeErrors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		verifier, _ := pkce()
		want := func(name string, r reply, status int, code string) {
			t.Helper()
			if r.status != status || r.body["error"] != code {
				t.Errorf("%s: %d %v, want %d %s", name, r.status, r.body, status, code)
			}
		}
		code := f.code(t)
		want("wrong verifier", f.exchange(t, code, verifier+"x"), 400, "invalid_grant")
		want("the code after a failed try", f.exchange(t, code, verifier), 400, "invalid_grant")

		code = f.code(t)
		if r := f.exchange(t, code, verifier); r.status != 200 {
			t.Fatalf("exchange: %d %v", r.status, r.body)
		}
		want("reused code", f.exchange(t, code, verifier), 400, "invalid_grant")
		want("made-up code", f.exchange(t, "nonsense", verifier), 400, "invalid_grant")
		want("no code", f.post(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {f.client}, "client_secret": {f.secret}}, nil, ""), 400, "invalid_request")

		code = f.code(t)
		r := f.post(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {f.client}, "client_secret": {f.secret},
			"code": {code}, "redirect_uri": {"http://127.0.0.1:9/other"}, "code_verifier": {verifier}}, nil, "")
		want("another redirect_uri", r, 400, "invalid_grant")

		code = f.code(t)
		r = f.post(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {f.client}, "client_secret": {"wrong"},
			"code": {code}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}}, nil, "")
		if r.body["error"] != "invalid_client" && r.body["error"] != "unauthorized_client" || r.status >= 500 {
			t.Errorf("wrong secret: %d %v", r.status, r.body)
		}
		// An unknown client is invalid_client (RFC 6749 §5.2), by form or
		// Basic, and spends no code: the client is checked first.
		code = f.code(t)
		r = f.post(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {"kl_nope"}, "client_secret": {f.secret},
			"code": {code}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}}, nil, "")
		want("unknown client", r, 401, "invalid_client")
		r = f.post(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect},
			"code_verifier": {verifier}}, []string{"kl_nope", f.secret}, "")
		want("unknown client (basic)", r, 401, "invalid_client")
		r = f.post(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {f.client},
			"code": {code}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}}, nil, "")
		want("no client secret", r, 401, "invalid_client")
		r = f.post(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {"kl_nope"}, "client_secret": {f.secret},
			"refresh_token": {"whatever"}}, nil, "")
		want("unknown client, refresh", r, 401, "invalid_client")
		if r := f.exchange(t, code, verifier); r.status != 200 {
			t.Errorf("the code after refused clients: %d %v", r.status, r.body)
		}

		// HTTP Basic works as well as the form fields.
		code = f.code(t)
		r = f.post(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect},
			"code_verifier": {verifier}}, []string{f.client, f.secret}, "")
		if r.status != 200 {
			t.Errorf("basic: %d %v", r.status, r.body)
		}

		// An expired code.
		code = f.code(t)
		f.Server.now = func() time.Time { return time.Now().Add(CodeTTL + time.Second) }
		want("expired code", f.exchange(t, code, verifier), 400, "invalid_grant")
		f.Server.now = time.Now
	})
}

// The login form: generic answer for a wrong password, an unknown e-mail
// or a disabled user; CSRF token required; failures limited per account
// (429 with Retry-After); a user of another tenant cannot log in through
// this tenant's client.
func TestLoginForm(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		wrong := texts["nb"].Wrong
		for _, c := range [][2]string{{f.email, "nope"}, {"nobody@example.com", testPassword}} {
			p := f.login(t, browser(t), f.authorizeURL(nil), c[0], c[1])
			if p.status != http.StatusUnauthorized || !strings.Contains(html.UnescapeString(p.body), wrong) {
				t.Errorf("%s/%s: %d %s", c[0], c[1], p.status, p.body)
			}
		}

		// The page: language, title, labels.
		c := browser(t)
		p := fetch(t, c, "GET", f.authorizeURL(nil), nil)
		lp := fetch(t, c, "GET", p.location, nil)
		for _, want := range []string{`<html lang="nb">`, "<title>Avisa – Logg inn</title>", `<label for="email">E-postadresse</label>`,
			`<label for="password">Passord</label>`, `name="viewport"`} {
			if !strings.Contains(lp.body, want) {
				t.Errorf("login page lacks %q: %s", want, lp.body)
			}
		}
		// A post without the cookie (from another site) or with another token.
		id := html.UnescapeString(idRE.FindStringSubmatch(lp.body)[1])
		csrf := html.UnescapeString(csrfRE.FindStringSubmatch(lp.body)[1])
		form := url.Values{"id": {id}, "csrf": {csrf}, "email": {f.email}, "password": {testPassword}}
		if p := fetch(t, browser(t), "POST", f.url+"/login", form); p.status != http.StatusForbidden {
			t.Errorf("post without the cookie: %d", p.status)
		}
		form.Set("csrf", "forged")
		if p := fetch(t, c, "POST", f.url+"/login", form); p.status != http.StatusForbidden {
			t.Errorf("post with a forged token: %d", p.status)
		}

		// A disabled user gets the same words as a wrong password.
		ctx := tenancy.With(context.Background(), f.tenant)
		if _, err := subscriberuser.SetSubscriberUserDisabled(ctx, s, f.userID, true, time.Now()); err != nil {
			t.Fatal(err)
		}
		if p := f.login(t, browser(t), f.authorizeURL(nil), f.email, testPassword); p.status != http.StatusUnauthorized ||
			!strings.Contains(html.UnescapeString(p.body), wrong) {
			t.Errorf("disabled user: %d %s", p.status, p.body)
		}
		if _, err := subscriberuser.SetSubscriberUserDisabled(ctx, s, f.userID, false, time.Now()); err != nil {
			t.Fatal(err)
		}

		// Cross-tenant: tenant B's user, through tenant A's client.
		b := seed.Tenant(t, s, "tenant-b", time.Now())
		if _, err := (&subscriberuser.Directory{Store: s, Params: cheapPasswords}).Create(b, "b@example.com", testPassword, ""); err != nil {
			t.Fatal(err)
		}
		if p := f.login(t, browser(t), f.authorizeURL(nil), "b@example.com", testPassword); p.status != http.StatusUnauthorized {
			t.Errorf("tenant B's user through tenant A: %d %s", p.status, p.location)
		}

		// The account limit: DefaultLoginLimits allows 5 failures (two
		// were made above for f.email: "nope" and the disabled try).
		var last page
		for range 6 {
			last = f.login(t, browser(t), f.authorizeURL(nil), f.email, "nope")
		}
		if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" {
			t.Fatalf("after many failures: %d %v", last.status, last.header)
		}
		// Even the right password waits: the limit is checked first.
		if p := f.login(t, browser(t), f.authorizeURL(nil), f.email, testPassword); p.status != http.StatusTooManyRequests {
			t.Errorf("right password while limited: %d", p.status)
		}
	})
}

// The certified relying-party library openid-client (npm) runs the whole
// login against the IdP on a real listener, and jose verifies the tokens
// against the JWKS (testdata/rp/rp.mjs). CI installs node and the
// packages (.ci/run) and sets KADENS_TEST_REQUIRE_NODE, so there it never
// skips.
func TestOpenIDClientInterop(t *testing.T) {
	t.Parallel()
	node, dir := nodetest.Find(t, filepath.Join("testdata", "rp"), "openid-client")
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		in, _ := json.Marshal(map[string]string{"issuer": f.url, "clientId": f.client, "clientSecret": f.secret,
			"redirectUri": testRedirect, "logoutUri": testLogout, "email": f.email, "password": testPassword,
			"connection": f.tenantName, "audience": testAudience})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "rp.mjs"), string(in))
		cmd.Dir = dir
		outb, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("openid-client: %v\n%s\n%s", err, outb, stderr)
		}
		var out struct {
			Issuer, TokenType, IDVerified, OldRefresh string
			ExpiresIn                                 float64
			IDClaims, AccessClaims, Userinfo          map[string]any
			Refreshed                                 bool
			Logout                                    struct {
				Status   int
				Location string
			}
		}
		if err := json.Unmarshal(outb, &out); err != nil {
			t.Fatalf("%v: %s", err, outb)
		}
		if out.Issuer != f.url || !strings.EqualFold(out.TokenType, "bearer") || out.ExpiresIn <= 0 || out.IDVerified != f.userID {
			t.Errorf("exchange: %s", outb)
		}
		for _, c := range []map[string]any{out.IDClaims, out.AccessClaims} {
			if c[testNS+"/tenantId"] != f.tenant || c[testNS+"/subscriberId"] != f.subscriberID || c["sub"] != f.userID {
				t.Errorf("claims: %v", c)
			}
		}
		if out.Userinfo["sub"] != f.userID || out.Userinfo["email"] != f.email {
			t.Errorf("userinfo: %v", out.Userinfo)
		}
		if !out.Refreshed || out.OldRefresh != "invalid_grant" {
			t.Errorf("refresh: rotated %v, old token answered %q", out.Refreshed, out.OldRefresh)
		}
		if out.Logout.Status != http.StatusFound || !strings.HasPrefix(out.Logout.Location, testLogout) {
			t.Errorf("logout: %+v", out.Logout)
		}
	})
}
