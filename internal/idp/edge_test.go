package idp

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/throttle"
)

// The parameter rules themselves: the bounds the specifications set
// (PKCE's 43-128 unreserved characters, printable ASCII client ids) and
// UTF-8 without NUL or control characters for the rest.
func TestParamProblem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, value string
		ok          bool
	}{
		{"code_challenge", strings.Repeat("a", 43), true},
		{"code_challenge", strings.Repeat("a", 128), true},
		{"code_challenge", strings.Repeat("a", 42), false},
		{"code_challenge", strings.Repeat("a", 129), false},
		{"code_challenge", strings.Repeat("a", 42) + "+", false}, // standard base64, not base64url
		{"code_challenge", "", true},                             // left out: no PKCE
		{"code_verifier", "v-" + strings.Repeat("0123456789", 5) + "._~", true},
		{"code_verifier", strings.Repeat("é", 43), false},
		{"client_id", "kc_abc", true},
		{"client_id", "k\xe9c", false}, // Latin-1
		{"client_id", "kécé", false},   // UTF-8, but not printable ASCII
		{"client_id", "a\x00b", false},
		{"client_id", strings.Repeat("a", 256), false},
		{"client_secret", strings.Repeat("s", 255), true},
		{"state", strings.Repeat("s", 4096), true},
		{"state", strings.Repeat("s", 4097), false},
		{"state", "ålesund ✓", true},
		{"state", "a\x00b", false},
		{"state", "a\xffb", false},
		{"state", "two\nlines", false},
		{"nonce", strings.Repeat("n", 2049), false},
		{"scope", "openid offline_access", true},
		{"scope", `openid "x"`, false},
		{"max_age", "3600", true},
		{"max_age", "-1", false},
		{"email", "reader@example.com", true},
		{"email", "reader\x00@example.com", false},
		{"email", strings.Repeat("e", 256), false},
		{"password", "tab\there and ✓", true},
		{"password", "nul\x00", false},
		{"password", "\xff\xfe", false},
		{"password", strings.Repeat("p", 4097), false},
		{"anything", strings.Repeat("x", 2048), true},
		{"anything", strings.Repeat("x", 2049), false},
	} {
		if got := paramProblem(c.name, c.value) == ""; got != c.ok {
			t.Errorf("%s=%.40q: accepted %v, want %v (%s)", c.name, c.value, got, c.ok, paramProblem(c.name, c.value))
		}
	}
	if e := checkValues(url.Values{"state": {"a", "b"}}); e == nil || e.name != "state" {
		t.Errorf("a repeated parameter: %v", e)
	}
	many := url.Values{}
	for i := range maxParams + 1 {
		many.Set("p"+strconv.Itoa(i), "x")
	}
	if e := checkValues(many); e == nil {
		t.Errorf("%d parameters were accepted", maxParams+1)
	}
	if e := checkValues(url.Values{"a\x00": {"x"}}); e == nil || !strings.Contains(e.Error(), `"a\x00"`) {
		t.Errorf("a parameter name with NUL: %v", e)
	}
	if got := clip("a"+strings.Repeat("é", 150), 200); len(got) != 199 || !utf8.ValidString(got) {
		t.Errorf("clip cut inside a character: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

// fromAddress is a browser (no redirects followed, cookies kept) whose
// connections come from loopback address ip (127.0.0.x), so that a test
// can be several clients at once.
func fromAddress(t testing.TB, ip string) *http.Client {
	c := browser(t)
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	c.Transport = tr
	return c
}

// loginForm opens the login page of a fresh authorization request in
// browser c and returns the form's id and CSRF token (the cookie is in c).
func (f *loginFixture) loginForm(t testing.TB, c *http.Client) (id, csrf string) {
	t.Helper()
	p := fetch(t, c, "GET", f.authorizeURL(nil), nil)
	if p.status != http.StatusFound || !strings.Contains(p.location, "/login?id=") {
		t.Fatalf("authorize: %d %s %.300s", p.status, p.location, p.body)
	}
	lp := fetch(t, c, "GET", p.location, nil)
	ids, csrfs := idRE.FindStringSubmatch(lp.body), csrfRE.FindStringSubmatch(lp.body)
	if lp.status != http.StatusOK || ids == nil || csrfs == nil {
		t.Fatalf("login page: %d %.300s", lp.status, lp.body)
	}
	return html.UnescapeString(ids[1]), html.UnescapeString(csrfs[1])
}

func count(t testing.TB, s *store.Store, table string) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The inputs that answered 500 (issue 27), and their kin, answer a 4xx on
// both engines: a logout without a token, client ids in Latin-1 or with
// NUL, NUL in the login form's fields, and every parameter beyond its
// bounds. The error names the parameter.
func TestMalformedInputIsRefused(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		c := browser(t)
		id, csrf := f.loginForm(t, c)
		verifier, _ := pkce()
		type request struct {
			name        string
			method      string
			path        string // with the query
			form        url.Values
			raw         string // a body sent as it is, instead of form
			user, pass  string // HTTP Basic, when user is set
			status      int
			contains    string // in the body (JSON error description or page)
			location    string // the Location's prefix, for redirects
			notLocation string // a Location must not contain this
		}
		const latin1 = "k\xe9c" // "kéc" in ISO 8859-1: not UTF-8
		code := url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}}
		with := func(v url.Values, k, val string) url.Values {
			out := url.Values{}
			for key, vals := range v {
				out[key] = vals
			}
			out.Set(k, val)
			return out
		}
		login := url.Values{"id": {id}, "csrf": {csrf}, "email": {f.email}, "password": {"wrong password"}}
		many := url.Values{"grant_type": {"client_credentials"}}
		for i := range maxParams {
			many.Set("p"+strconv.Itoa(i), "x")
		}
		cases := []request{
			// /end_session without id_token_hint or client_id: the browser's
			// session ends and the library's default address is the target;
			// an address no client registered is never redirected to.
			{name: "logout with post_logout_redirect_uri and no token", method: "GET", path: "/end_session?post_logout_redirect_uri=x",
				status: http.StatusFound, notLocation: "x"},
			{name: "logout with client_id and no token", method: "GET",
				path:   "/end_session?" + url.Values{"client_id": {f.client}, "post_logout_redirect_uri": {testLogout}}.Encode(),
				status: http.StatusFound, location: testLogout},
			{name: "logout with an unknown client_id", method: "GET", path: "/end_session?client_id=kl_nope&post_logout_redirect_uri=x",
				status: http.StatusBadRequest, contains: "unknown client_id"},
			{name: "logout with NUL in client_id", method: "GET", path: "/end_session?client_id=a%00b", status: http.StatusBadRequest, contains: "client_id"},
			{name: "logout with a Latin-1 id_token_hint", method: "GET", path: "/end_session?id_token_hint=%E9", status: http.StatusBadRequest, contains: "id_token_hint"},
			{name: "logout with a state over 4 KB", method: "GET", path: "/end_session?state=" + strings.Repeat("s", 4097), status: http.StatusBadRequest, contains: "state is longer than 4096 bytes"},

			{name: "client_credentials, Basic with a Latin-1 client id", method: "POST", path: "/oauth/token",
				form: url.Values{"grant_type": {"client_credentials"}}, user: latin1, pass: "x", status: http.StatusBadRequest, contains: "client_id"},
			{name: "authorization_code, Basic with a Latin-1 client id", method: "POST", path: "/oauth/token",
				form: code, user: latin1, pass: f.secret, status: http.StatusBadRequest, contains: "client_id"},
			{name: "Basic with a form-encoded Latin-1 client id", method: "POST", path: "/oauth/token",
				form: code, user: "k%E9c", pass: f.secret, status: http.StatusBadRequest, contains: "client_id"},
			{name: "Basic with a Latin-1 secret", method: "POST", path: "/oauth/token",
				form: code, user: f.client, pass: latin1, status: http.StatusBadRequest, contains: "client_secret"},
			{name: "client_credentials, NUL in client_id", method: "POST", path: "/oauth/token",
				form: url.Values{"grant_type": {"client_credentials"}, "client_id": {"a\x00b"}, "client_secret": {"x"}}, status: http.StatusBadRequest, contains: "client_id"},
			{name: "refresh_token, NUL in client_id", method: "POST", path: "/oauth/token",
				form: url.Values{"grant_type": {"refresh_token"}, "client_id": {"a\x00b"}, "client_secret": {"x"}, "refresh_token": {"r"}}, status: http.StatusBadRequest, contains: "client_id"},
			{name: "a code_verifier of 42 characters", method: "POST", path: "/oauth/token",
				form: with(code, "code_verifier", strings.Repeat("v", 42)), user: f.client, pass: f.secret, status: http.StatusBadRequest, contains: "code_verifier is shorter than 43"},
			{name: "a code_verifier outside the unreserved characters", method: "POST", path: "/oauth/token",
				form: with(code, "code_verifier", strings.Repeat("v", 42)+"/"), user: f.client, pass: f.secret, status: http.StatusBadRequest, contains: "code_verifier may hold only"},
			{name: "grant_type twice", method: "POST", path: "/oauth/token", raw: "grant_type=client_credentials&grant_type=client_credentials",
				status: http.StatusBadRequest, contains: "more than once"},
			{name: "65 parameters", method: "POST", path: "/oauth/token", form: many, status: http.StatusBadRequest, contains: "at most 64"},
			{name: "a body over 64 KB", method: "POST", path: "/oauth/token", raw: "grant_type=client_credentials&x=" + strings.Repeat("x", 70<<10),
				status: http.StatusBadRequest, contains: "too large"},
			{name: "a query with a semicolon", method: "GET", path: "/end_session?a=1;b=2", status: http.StatusBadRequest, contains: "semicolon"},
			{name: "a query over 32 KB", method: "GET", path: "/userinfo?x=" + strings.Repeat("x", 33<<10), status: http.StatusBadRequest, contains: "query is longer"},

			{name: "revoke, Basic with a Latin-1 client id", method: "POST", path: "/revoke", form: url.Values{"token": {"t"}},
				user: latin1, pass: "x", status: http.StatusBadRequest, contains: "client_id"},
			{name: "revoke, NUL in client_id", method: "POST", path: "/revoke", form: url.Values{"token": {"t"}, "client_id": {"a\x00"}, "client_secret": {"y"}},
				status: http.StatusBadRequest, contains: "client_id"},
			{name: "revoke, NUL in token", method: "POST", path: "/revoke", form: url.Values{"token": {"t\x00"}},
				user: f.client, pass: f.secret, status: http.StatusBadRequest, contains: "token"},
			{name: "userinfo, NUL in access_token", method: "POST", path: "/userinfo", form: url.Values{"access_token": {"a\x00"}},
				status: http.StatusBadRequest, contains: "access_token"},

			{name: "authorize, NUL in client_id", method: "GET", path: f.authorizeURL(url.Values{"client_id": {"a\x00b"}})[len(f.url):],
				status: http.StatusBadRequest, contains: `data-error="invalid_request"`},
			{name: "authorize, Latin-1 client_id", method: "GET", path: f.authorizeURL(url.Values{"client_id": {latin1}})[len(f.url):],
				status: http.StatusBadRequest, contains: `data-error="invalid_request"`},
			{name: "authorize, NUL in redirect_uri", method: "GET", path: f.authorizeURL(url.Values{"redirect_uri": {testRedirect + "\x00"}})[len(f.url):],
				status: http.StatusBadRequest, contains: `data-error="invalid_request"`},
			{name: "authorize, NUL in connection", method: "GET", path: f.authorizeURL(url.Values{"connection": {"a\x00"}})[len(f.url):],
				status: http.StatusBadRequest, contains: `data-error="invalid_request"`},
			{name: "authorize, state twice", method: "GET", path: f.authorizeURL(url.Values{"state": {"a", "b"}})[len(f.url):],
				status: http.StatusBadRequest, contains: `data-error="invalid_request"`},
			{name: "authorize, NUL in state", method: "GET", path: f.authorizeURL(url.Values{"state": {"a\x00b"}})[len(f.url):],
				status: http.StatusBadRequest, contains: "state must not contain control characters"},
			{name: "authorize, Latin-1 state", method: "GET", path: f.authorizeURL(url.Values{"state": {"a\xffb"}})[len(f.url):],
				status: http.StatusBadRequest, contains: "state must be valid UTF-8"},
			{name: "authorize, code_challenge of 129 characters", method: "GET", path: f.authorizeURL(url.Values{"code_challenge": {strings.Repeat("c", 129)}})[len(f.url):],
				status: http.StatusBadRequest, contains: "code_challenge is longer than 128 bytes"},
			{name: "authorize, NUL in nonce", method: "GET", path: f.authorizeURL(url.Values{"nonce": {"\x00"}})[len(f.url):],
				status: http.StatusBadRequest, contains: "nonce must not"},
			{name: "authorize by POST, NUL in nonce", method: "POST", path: "/authorize",
				form:   func() url.Values { u, _ := url.Parse(f.authorizeURL(url.Values{"nonce": {"\x00"}})); return u.Query() }(),
				status: http.StatusBadRequest, contains: "nonce must not"},
			{name: "authorize by POST", method: "POST", path: "/authorize",
				form:   func() url.Values { u, _ := url.Parse(f.authorizeURL(nil)); return u.Query() }(),
				status: http.StatusFound, location: f.url + "/login?id="},
			{name: "authorize by PUT", method: "PUT", path: "/authorize", status: http.StatusMethodNotAllowed},
			{name: "authorize, orgname cut inside a character", method: "GET", path: f.authorizeURL(url.Values{"orgname": {"a" + strings.Repeat("é", 150)}})[len(f.url):],
				status: http.StatusFound, location: f.url + "/login?id="},

			{name: "login page, Latin-1 id", method: "GET", path: "/login?id=%FF", status: http.StatusBadRequest, contains: `data-error="invalid_request"`},
			{name: "login callback, NUL id", method: "GET", path: "/authorize/callback?id=%00", status: http.StatusBadRequest, contains: `data-error="invalid_request"`},
			{name: "login form, NUL in email", method: "POST", path: "/login", form: with(login, "email", f.email+"\x00"), status: http.StatusBadRequest, contains: "email"},
			{name: "login form, NUL in password", method: "POST", path: "/login", form: with(login, "password", "pw\x00"), status: http.StatusBadRequest, contains: "password"},
			{name: "login form, NUL in id", method: "POST", path: "/login", form: with(login, "id", id+"\x00"), status: http.StatusBadRequest, contains: "id"},
			{name: "login form, NUL in csrf", method: "POST", path: "/login", form: with(login, "csrf", csrf+"\x00"), status: http.StatusBadRequest, contains: "csrf"},
			{name: "login form, Latin-1 email", method: "POST", path: "/login", form: with(login, "email", "r\xe9ader@example.com"), status: http.StatusBadRequest, contains: "email"},
			{name: "login form, an e-mail of 256 bytes", method: "POST", path: "/login", form: with(login, "email", strings.Repeat("e", 244)+"@example.com"),
				status: http.StatusBadRequest, contains: "email is longer than 255 bytes"},
		}
		for _, rc := range cases {
			var body io.Reader
			switch {
			case rc.raw != "":
				body = strings.NewReader(rc.raw)
			case rc.form != nil:
				body = strings.NewReader(rc.form.Encode())
			}
			req, err := http.NewRequest(rc.method, f.url+rc.path, body)
			if err != nil {
				t.Fatalf("%s: %v", rc.name, err)
			}
			if body != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if rc.user != "" {
				req.SetBasicAuth(rc.user, rc.pass)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", rc.name, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			if resp.StatusCode != rc.status || !strings.Contains(html.UnescapeString(string(b)), rc.contains) ||
				!strings.HasPrefix(loc, rc.location) || rc.notLocation != "" && strings.Contains(loc, rc.notLocation) {
				t.Errorf("%s: %d %q %.300s; want %d with %q", rc.name, resp.StatusCode, loc, b, rc.status, rc.contains)
			}
		}
	})
}

// dbSize is the size of s's database: on SQLite its file and WAL after a
// checkpoint; on PostgreSQL the tables of the store's schema with their
// indexes and TOAST.
func dbSize(t testing.TB, s *store.Store) int64 {
	t.Helper()
	ctx := context.Background()
	if s.Engine() == store.SQLite {
		if _, err := s.DB().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, suffix := range []string{"", "-wal"} {
			fi, err := os.Stat(s.Source() + suffix)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	var n int64
	err := s.DB().QueryRowContext(ctx, `SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
		WHERE ns.nspname = current_schema() AND c.relkind IN ('r', 'm')`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// 10,000 authorization requests from one address, each with a parameter
// past its bound (or bad UTF-8, NUL, a repeated or 65th parameter, a
// 500 KB state), grow the database by at most 1 MB: nothing of them is
// stored. Every one answers a 400 page, never the login form. (The per-address rate is off here, so that every request
// reaches the checks; TestAuthorizeRateAndSweep has the rate.)
func TestOversizedAuthorizeRequestsStoreNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		before := dbSize(t, s)
		long := func(n int) string { return strings.Repeat("a", n) }
		many := url.Values{}
		for i := range maxParams {
			many.Set("x"+strconv.Itoa(i), "x")
		}
		kinds := []url.Values{
			{"state": {long(4097)}},
			{"nonce": {long(2049)}},
			{"code_challenge": {long(129)}},
			{"code_challenge": {long(42)}},
			{"code_challenge": {long(42) + "+"}},
			{"orgname": {long(1025)}},
			{"login_hint": {long(256)}},
			{"made_up": {long(2049)}},
			{"state": {long(1000) + "\x00"}},
			{"state": {strings.Repeat("\xff", 1000)}},
			{"id_token_hint": {long(4097)}},
			{"scope": {"openid " + long(1020)}},
			{"nonce": {"a", "b"}},
			many,
		}
		urls := make([]string, len(kinds))
		for i, k := range kinds {
			urls[i] = f.authorizeURL(k)
		}
		huge := f.authorizeURL(url.Values{"state": {long(500 << 10)}})
		// The requests are pipelined on a few connections (HTTP/1.1 allows
		// it; the server answers them in turn), which keeps the test's own
		// cost per request small.
		const n, conns = 10_000, 4
		host := strings.TrimPrefix(f.url, "http://")
		var wg sync.WaitGroup
		errs := make(chan error, 2*conns)
		for c := range conns {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var mine []int
			for i := c; i < n; i += conns {
				mine = append(mine, i)
			}
			target := func(i int) string {
				if i%1000 == 999 {
					return huge
				}
				return urls[i%len(urls)]
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				w := bufio.NewWriter(conn)
				for _, i := range mine {
					fmt.Fprintf(w, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", strings.TrimPrefix(target(i), f.url), host)
				}
				if err := w.Flush(); err != nil {
					errs <- err
				}
			}()
			go func() {
				defer wg.Done()
				r := bufio.NewReader(conn)
				for _, i := range mine {
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						errs <- fmt.Errorf("request %d: %w", i, err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusBadRequest {
						errs <- fmt.Errorf("request %d (%.200s): %d %q", i, target(i), resp.StatusCode, resp.Header.Get("Location"))
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		if n := count(t, s, "login_requests"); n != 0 {
			t.Errorf("%d login requests stored", n)
		}
		if grew := dbSize(t, s) - before; grew > 1<<20 {
			t.Errorf("the database grew by %d bytes", grew)
		}
		// A valid request is still served, and stored.
		if p := fetch(t, browser(t), "GET", f.authorizeURL(nil), nil); !isForm(p) {
			t.Errorf("a valid request after the flood: %d %s", p.status, p.location)
		}
		if n := count(t, s, "login_requests"); n != 1 {
			t.Errorf("%d login requests stored after one valid request", n)
		}
	})
}

// testClock is a clock a test moves, safe to read from the server's
// goroutines.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Authorization requests are limited per address (429 with Retry-After,
// other addresses unaffected), and the sweep deletes abandoned login
// requests and reset links once they have expired.
func TestAuthorizeRateAndSweep(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		clock := &testClock{t: time.Now()}
		f.Server.now = clock.now
		f.byAuthorizeAddress = throttle.New(time.Minute, 3, 100)
		t0 := clock.now()
		ctx := tenancy.With(context.Background(), f.tenant)
		if err := CreatePasswordReset(ctx, s, sha("soon"), f.tenant, f.userID, t0, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := CreatePasswordReset(ctx, s, sha("later"), f.tenant, f.userID, t0, t0.Add(ResetTTL)); err != nil {
			t.Fatal(err)
		}

		one, two := fromAddress(t, "127.0.0.1"), fromAddress(t, "127.0.0.2")
		for i := range 3 {
			if p := fetch(t, one, "GET", f.authorizeURL(nil), nil); !isForm(p) {
				t.Fatalf("request %d: %d %s", i, p.status, p.location)
			}
		}
		p := fetch(t, one, "GET", f.authorizeURL(nil), nil)
		if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") != "60" || !strings.Contains(p.body, `data-error="temporarily_unavailable"`) {
			t.Fatalf("past the burst: %d Retry-After %q %.300s", p.status, p.header.Get("Retry-After"), p.body)
		}
		// Malformed requests count too: the rate is checked first.
		if p := fetch(t, one, "GET", f.url+"/authorize?client_id=%00", nil); p.status != http.StatusTooManyRequests {
			t.Fatalf("a malformed request past the burst: %d", p.status)
		}
		if p := fetch(t, two, "GET", f.authorizeURL(nil), nil); !isForm(p) {
			t.Fatalf("another address: %d %s", p.status, p.location)
		}
		if n := count(t, s, "login_requests"); n != 4 {
			t.Fatalf("%d login requests, want 4", n)
		}
		clock.advance(time.Minute)
		if p := fetch(t, one, "GET", f.authorizeURL(nil), nil); !isForm(p) {
			t.Fatalf("after a minute: %d %s", p.status, p.location)
		}

		// Once the first requests and a reset link have expired, the next
		// request sweeps them: only it and the one of a minute later remain.
		clock.advance(LoginTTL - 30*time.Second)
		if p := fetch(t, two, "GET", f.authorizeURL(nil), nil); !isForm(p) {
			t.Fatalf("after the requests expired: %d %s", p.status, p.location)
		}
		if n := count(t, s, "login_requests"); n != 2 {
			t.Errorf("%d login requests after the sweep, want 2 (the one a minute later and the new one)", n)
		}
		if n := count(t, s, "password_resets"); n != 1 {
			t.Errorf("%d password reset links after the sweep, want 1", n)
		}
	})
}
