package idp

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/smtpmail"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/throttle"
)

// The fuzz targets drive the identity provider on a real listener, on
// every engine of the run (PostgreSQL too when KADENS_TEST_POSTGRES_URL
// is set), and fail on any 5xx. Their seed corpus runs with the ordinary
// `go test`; `go test -run '^$' -fuzz FuzzIdP ./internal/idp` (or FuzzLoginForm)
// searches further.

// fuzzTarget is one engine's identity provider for the fuzz targets, with
// a browser that has a login form open.
type fuzzTarget struct {
	*loginFixture
	browser  *http.Client
	id, csrf string // the open form's
}

func fuzzTargets(f *testing.F) []*fuzzTarget {
	var out []*fuzzTarget
	for _, e := range storetest.Engines() {
		lf := newLoginFixture(f, storetest.Open(f, e))
		// No limit stops an input before the checks it is meant to reach.
		for _, b := range []**throttle.Failures{&lf.byClientAddress, &lf.byAddress, &lf.byAccount, &lf.byLoginAddress} {
			*b = throttle.New(time.Nanosecond, 1<<30, 1000)
		}
		// Password reset on, mailing a local sink.
		sink, _ := smtpSink(f)
		m, err := smtpmail.Parse("smtp://"+sink+"?from=idp@example.com", egress.Policy{Private: true})
		if err != nil {
			f.Fatal(err)
		}
		lf.Server.mail = m
		ft := &fuzzTarget{loginFixture: lf, browser: browser(f)}
		ft.id, ft.csrf = lf.loginForm(f, ft.browser)
		out = append(out, ft)
	}
	return out
}

// fuzzEndpoints are the routes FuzzIdP picks from, each with the
// parameters of a well-formed request that the input then changes.
var fuzzEndpoints = []struct {
	method, path string
	base         func(ft *fuzzTarget) url.Values
}{
	{"GET", "/authorize", func(ft *fuzzTarget) url.Values { u, _ := url.Parse(ft.authorizeURL(nil)); return u.Query() }},
	{"POST", "/authorize", func(ft *fuzzTarget) url.Values { u, _ := url.Parse(ft.authorizeURL(nil)); return u.Query() }},
	{"POST", "/oauth/token", func(ft *fuzzTarget) url.Values {
		v, _ := pkce()
		return url.Values{"grant_type": {"authorization_code"}, "client_id": {ft.client}, "client_secret": {ft.secret},
			"code": {"c"}, "redirect_uri": {testRedirect}, "code_verifier": {v}}
	}},
	{"POST", "/oauth/token", func(ft *fuzzTarget) url.Values {
		return url.Values{"grant_type": {"refresh_token"}, "client_id": {ft.client}, "client_secret": {ft.secret}, "refresh_token": {"r"}}
	}},
	{"POST", "/oauth/token", func(ft *fuzzTarget) url.Values {
		return url.Values{"grant_type": {"client_credentials"}, "client_id": {ft.idpServer.id}, "client_secret": {ft.idpServer.secret}}
	}},
	{"POST", "/revoke", func(ft *fuzzTarget) url.Values {
		return url.Values{"token": {"t"}, "client_id": {ft.client}, "client_secret": {ft.secret}}
	}},
	{"GET", "/end_session", func(ft *fuzzTarget) url.Values {
		return url.Values{"client_id": {ft.client}, "post_logout_redirect_uri": {testLogout}, "state": {"s"}}
	}},
	{"GET", "/login", func(ft *fuzzTarget) url.Values { return url.Values{"id": {ft.id}} }},
	{"POST", "/login", func(ft *fuzzTarget) url.Values {
		return url.Values{"id": {ft.id}, "csrf": {ft.csrf}, "email": {ft.email}, "password": {"wrong"}}
	}},
	{"GET", "/authorize/callback", func(ft *fuzzTarget) url.Values { return url.Values{"id": {ft.id}} }},
	{"GET", "/userinfo", func(*fuzzTarget) url.Values { return url.Values{} }},
	{"POST", "/userinfo", func(*fuzzTarget) url.Values { return url.Values{"access_token": {"a"}} }},
	{"GET", "/reset", func(ft *fuzzTarget) url.Values { return url.Values{"id": {ft.id}} }},
	{"POST", "/reset", func(ft *fuzzTarget) url.Values {
		return url.Values{"id": {ft.id}, "csrf": {ft.csrf}, "email": {ft.email}}
	}},
	{"GET", "/reset", func(*fuzzTarget) url.Values { return url.Values{"token": {"t"}, "language": {"nb"}} }},
	{"POST", "/reset", func(*fuzzTarget) url.Values {
		return url.Values{"token": {"t"}, "language": {"nb"}, "password": {"a new password"}}
	}},
	{"GET", "/.well-known/openid-configuration", func(*fuzzTarget) url.Values { return url.Values{} }},
	{"GET", "/.well-known/jwks.json", func(*fuzzTarget) url.Values { return url.Values{} }},
}

// FuzzIdP sends the endpoint's well-formed request with the input's
// parameters set on top ("k=v&k2=v2", each byte as it is, form-encoded on
// the way), or, when the endpoint's high bit is set, the input as the raw
// query or body; user and pass, when either is set, go in HTTP Basic.
func FuzzIdP(f *testing.F) {
	for _, seed := range []struct {
		endpoint         uint8
		params           string
		user, pass       string
		rawQueryOrBodies bool
	}{
		{0, "state=a\x00b", "", "", false},
		{0, "client_id=a\x00b", "", "", false},
		{0, "code_challenge=" + strings.Repeat("c", 129), "", "", false},
		{0, "state=" + strings.Repeat("s", 5000), "", "", false},
		{0, "orgname=a" + strings.Repeat("é", 150), "", "", false},
		{0, "prompt=none", "", "", false},
		{0, "max_age=99999999999999999999", "", "", false},
		{0, "id_token_hint=x.y.z", "", "", false},
		{0, "request=eyJ", "", "", false},
		{1, "nonce=\xff", "", "", false},
		{2, "client_id=k\xe9c", "", "", false},
		{2, "", "k\xe9c", "x", false},
		{2, "code_verifier=" + strings.Repeat("v", 42), "", "", false},
		{3, "client_id=a\x00", "", "", false},
		{4, "", "kc_\x00", "s", false},
		{4, "scope=api\x00", "", "", false},
		{5, "token=t\x00", "", "", false},
		{5, "token_type_hint=access_token", "", "", false},
		{6, "client_id=", "", "", false},
		{6, "client_id=&post_logout_redirect_uri=x", "", "", false},
		{6, "client_id=kl_nope", "", "", false},
		{6, "id_token_hint=a.b.c", "", "", false},
		{7, "id=%00", "", "", true},
		{8, "email=reader\x00@example.com", "", "", false},
		{8, "password=\x00", "", "", false},
		{8, "csrf=\xff", "", "", false},
		{9, "id=\x00", "", "", false},
		{10, "", "", "", false},
		{11, "access_token=\x00", "", "", false},
		{12, "token=\xff", "", "", false},
		{13, "email=\x00", "", "", false},
		{13, "email=READER@example.com", "", "", false},
		{14, "token=\x00", "", "", false},
		{15, "password=\x00", "", "", false},
		{15, "password=short", "", "", false},
		{6, "a=1;b=2", "", "", true},
		{2, "grant_type=authorization_code&grant_type=refresh_token", "", "", true},
		{2, "%zz", "", "", true},
	} {
		ep := seed.endpoint
		if seed.rawQueryOrBodies {
			ep |= 0x80
		}
		f.Add(ep, seed.params, seed.user, seed.pass)
	}
	targets := fuzzTargets(f)
	f.Fuzz(func(t *testing.T, endpoint uint8, params, user, pass string) {
		e := fuzzEndpoints[int(endpoint&0x7f)%len(fuzzEndpoints)]
		raw := endpoint&0x80 != 0
		for _, ft := range targets {
			v := e.base(ft)
			if !raw {
				for _, kv := range strings.Split(params, "&") {
					if kv == "" {
						continue
					}
					k, val, _ := strings.Cut(kv, "=")
					v.Set(k, val)
				}
			}
			encoded := v.Encode()
			if raw {
				encoded = params
			}
			target, body := ft.url+e.path, io.Reader(nil)
			if e.method == "GET" {
				target += "?" + encoded
			} else {
				body = strings.NewReader(encoded)
			}
			req, err := http.NewRequest(e.method, target, body)
			if err != nil {
				return // not a request an HTTP client can send
			}
			if body != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if user != "" || pass != "" {
				req.SetBasicAuth(user, pass)
			}
			resp, err := ft.browser.Do(req)
			if err != nil {
				if strings.Contains(err.Error(), "net/http: can't write") {
					return // refused by the client, never sent
				}
				t.Fatalf("%s %s: %v", e.method, e.path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 500 {
				t.Fatalf("%s: %s %s %.300q (Basic %q:%q): %d %.500s", ft.store.Engine(), e.method, e.path, encoded, user, pass, resp.StatusCode, b)
			}
		}
	})
}

// FuzzLoginForm posts the login form of a fresh login request with the
// input's e-mail and password (and, when given, another id or CSRF
// token) on every engine: never a 5xx, and a login only with the right
// password for the fixture's user.
func FuzzLoginForm(f *testing.F) {
	for _, seed := range [][4]string{
		{"reader@example.com", testPassword, "", ""},
		{" Reader@Example.COM ", testPassword, "", ""},
		{"reader@example.com", "wrong", "", ""},
		{"reader\x00@example.com", "x", "", ""},
		{"reader@example.com", "pass\x00word", "", ""},
		{"r\xe9ader@example.com", "x", "", ""},
		{"reader@example.com", "\xff\xfe", "", ""},
		{strings.Repeat("e", 300), "x", "", ""},
		{"reader@example.com", strings.Repeat("p", 5000), "", ""},
		{"reader@example.com", testPassword, "nosuch", ""},
		{"reader@example.com", testPassword, "a\x00", ""},
		{"reader@example.com", testPassword, "", "forged"},
		{"reader@example.com", testPassword, "", "\xff"},
		{"", "", "", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	targets := fuzzTargets(f)
	f.Fuzz(func(t *testing.T, email, password, id, csrf string) {
		for _, ft := range targets {
			c := browser(t)
			formID, formCSRF := ft.loginForm(t, c)
			if id != "" {
				formID = id
			}
			if csrf != "" {
				formCSRF = csrf
			}
			p := fetch(t, c, "POST", ft.url+"/login", url.Values{"id": {formID}, "csrf": {formCSRF}, "email": {email}, "password": {password}})
			if p.status >= 500 {
				t.Fatalf("%s: login form %q / %q (id %q, csrf %q): %d %.500s", ft.store.Engine(), email, password, id, csrf, p.status, p.body)
			}
			if p.status == http.StatusSeeOther && (password != testPassword || strings.ToLower(strings.TrimSpace(email)) != ft.email) {
				t.Fatalf("%s: logged in with %q / %q", ft.store.Engine(), email, password)
			}
		}
	})
}
