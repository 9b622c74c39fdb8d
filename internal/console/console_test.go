package console

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/demo"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/privacy"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/invoice"
	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// password is every test user's.
const password = "correct horse battery staple"

// fixture is a console on a real listener over a store with the demo
// tenant (a catalog, four subscribers with subscriptions and invoices)
// and one staff user per role, plus a second tenant with a subscriber of
// its own for the isolation checks.
type fixture struct {
	st      *store.Store
	app     *app.App
	staff   *staff.Directory
	console *Console
	srv     *httptest.Server
	tenant  store.Tenant
	other   store.Tenant
	// otherSubscriber is the second tenant's.
	otherSubscriber store.Subscriber
	users           map[staff.Role]staff.User
	now             time.Time
	mu              sync.Mutex
}

func newFixture(t *testing.T, st *store.Store) *fixture {
	t.Helper()
	ctx := context.Background()
	eng := engine.New(st, slog.New(slog.DiscardHandler), "test")
	eng.Hooks.PeriodsCreated = invoicing.IssuePeriods
	eng.Hooks.Cancelled = invoicing.SettleCancellation
	eng.Hooks.Dun = invoicing.DunCounts
	eng.Hooks.NextDun = invoicing.NextDunningAt
	f := &fixture{st: st, app: app.New(app.Options{Store: st, Engine: eng, Providers: provider.NewRegistry(invoice.Provider)}),
		users: map[staff.Role]staff.User{}, now: time.Now().UTC()}
	if _, _, err := demo.Ensure(ctx, st, eng, t.TempDir(), f.now); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.tenant, err = st.TenantByName(ctx, demo.TenantName); err != nil {
		t.Fatal(err)
	}
	if f.other, err = st.CreateTenant(ctx, "other", false, f.now); err != nil {
		t.Fatal(err)
	}
	if f.otherSubscriber, err = st.CreateSubscriber(tenancy.With(ctx, f.other.ID), store.Subscriber{Name: "Ola Annen", Email: "ola@annen.no",
		Country: "NO", Contacts: []store.Contact{}}, f.now); err != nil {
		t.Fatal(err)
	}
	f.staff = staff.New(st, staff.Options{Now: f.clock})
	for _, r := range []staff.Role{staff.RoleAdmin, staff.RoleSupport, staff.RoleFinance} {
		u, err := f.staff.CreateUser(ctx, f.tenant.ID, staff.NewUser{Email: string(r) + "@nordavis.no", Name: "Test " + string(r), Role: r, Password: password})
		if err != nil {
			t.Fatal(err)
		}
		f.users[r] = u
	}
	f.console, err = New(Options{App: f.app, Staff: f.staff, Store: st, Log: slog.New(slog.DiscardHandler), Now: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(f.console.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// browser is a client with a cookie jar that does not follow redirects,
// so a test sees each answer.
type browser struct {
	t    *testing.T
	f    *fixture
	http *http.Client
}

func (f *fixture) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, f: f, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type answer struct {
	status   int
	body     string
	location string
	header   http.Header
}

func (b *browser) do(method, path string, form url.Values, hdr ...string) answer {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.f.srv.URL+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(raw), location: resp.Header.Get("Location"), header: resp.Header}
}

func (b *browser) get(path string) answer { b.t.Helper(); return b.do("GET", path, nil) }

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the form token of the page at path.
func (b *browser) csrf(path string) string {
	b.t.Helper()
	a := b.get(path)
	m := csrfField.FindStringSubmatch(a.body)
	if m == nil {
		b.t.Fatalf("no form token on %s (%d): %.300s", path, a.status, a.body)
	}
	return m[1]
}

// post sends a form with the session's token.
func (b *browser) post(path string, form url.Values) answer {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("csrf") == "" {
		form.Set("csrf", b.csrf("/console/account"))
	}
	return b.do("POST", path, form)
}

func (b *browser) login(tenant, email, pw string) answer {
	b.t.Helper()
	return b.do("POST", "/console/login", url.Values{"tenant": {tenant}, "email": {email}, "password": {pw}})
}

// as is a browser logged in as the fixture's user of role r.
func (f *fixture) as(t *testing.T, r staff.Role) *browser {
	t.Helper()
	b := f.browser(t)
	if a := b.login(f.tenant.Name, f.users[r].Email, password); a.status != http.StatusSeeOther || a.location != "/console/" {
		t.Fatalf("login as %s: %d %s %.300s", r, a.status, a.location, a.body)
	}
	return b
}

// A subscriber and a subscription of the demo tenant.
func (f *fixture) demoSubscription(t *testing.T) store.Subscription {
	t.Helper()
	ctx := tenancy.With(context.Background(), f.tenant.ID)
	subs, _, err := f.app.Subscriptions(ctx, store.SubscriptionFilter{}, store.Page{Limit: 1}, false)
	if err != nil || len(subs) == 0 {
		t.Fatalf("demo subscriptions: %v %v", subs, err)
	}
	sub, err := f.app.Subscription(ctx, subs[0].ID)
	if err != nil || sub.Package.Name == "" {
		t.Fatalf("demo subscription %s: %+v %v", subs[0].ID, sub.Package, err)
	}
	return sub
}

// TestRoutesByRole walks every route of the console with every role and
// without a session: public routes answer everyone, the others send a
// browser without a session to the login page (GET) or refuse it (POST),
// and a role a route does not allow gets the 403 page. A route added to
// the table without a case here fails the test.
func TestRoutesByRole(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		sub := f.demoSubscription(t)
		invs, _, err := f.app.Invoices(tenancy.With(context.Background(), f.tenant.ID), store.DocumentFilter{SubscriptionID: sub.ID},
			store.Page{Limit: 1}, store.InvoiceParts{})
		if err != nil || len(invs) == 0 {
			t.Fatalf("the demo subscription's invoice: %v %v", invs, err)
		}
		ids := map[string]string{"{id}": "", "{file}": "console.css", "{change}": store.NewID(), "{delivery}": store.NewID()}
		// Which id each route's {id} takes: a real one, so that an
		// allowed role reaches the handler's own answer.
		idFor := map[string]string{
			"/console/subscriber/{id}":                               sub.SubscriberID,
			"/console/subscription/{id}":                             sub.ID,
			"/console/subscription/{id}/cancel":                      sub.ID,
			"/console/subscription/{id}/cancel/preview":              sub.ID,
			"/console/subscription/{id}/cancel/undo":                 sub.ID,
			"/console/deletions/{id}/resolve":                        store.NewID(),
			"/console/subscription/{id}/change":                      sub.ID,
			"/console/webhooks/{id}/deliveries/{delivery}/redeliver": store.NewID(),
			"/console/subscription/{id}/change/{change}/revoke":      sub.ID,
			"/console/invoice/{id}":                                  invs[0].ID,
			"/console/invoice/{id}/pdf":                              invs[0].ID,
			"/console/invoice/{id}/payment":                          invs[0].ID,
			"/console/invoice/{id}/credit":                           invs[0].ID,
			"/console/users/{id}":                                    f.users[staff.RoleFinance].ID,
			"/console/users/{id}/link":                               f.users[staff.RoleFinance].ID,
		}
		browsers := map[string]*browser{"none": f.browser(t)}
		for _, r := range []staff.Role{staff.RoleAdmin, staff.RoleSupport, staff.RoleFinance} {
			browsers[string(r)] = f.as(t, r)
		}
		// Logging out ends the browser's session: that route goes last.
		ordered := slices.Clone(routes)
		slices.SortStableFunc(ordered, func(a, b route) int {
			last := func(r route) int { return strings.Count(r.pattern, "/logout") }
			return cmp.Compare(last(a), last(b))
		})
		for _, rt := range ordered {
			method, path, _ := strings.Cut(rt.pattern, " ")
			path = strings.TrimSuffix(path, "{$}")
			if strings.Contains(path, "{id}") {
				id, ok := idFor[path]
				if !ok {
					t.Fatalf("route %s: no id for the test; add one to idFor", rt.pattern)
				}
				ids["{id}"] = id
			}
			for k, v := range ids {
				path = strings.ReplaceAll(path, k, v)
			}
			for who, b := range browsers {
				var a answer
				if method == "GET" {
					a = b.get(path)
				} else {
					form := url.Values{"mode": {"EndOfPeriod"}, "role": {"finance"}}
					if who != "none" {
						form.Set("csrf", b.csrf("/console/account"))
					}
					a = b.do(method, path, form)
				}
				allowed := rt.access&public != 0
				if who != "none" {
					allowed = allowed || rt.access&roleAccess(staff.Role(who)) != 0
				}
				switch {
				case allowed && (a.status == http.StatusForbidden || a.status == http.StatusUnauthorized):
					t.Errorf("%s as %s: %d, want it allowed", rt.pattern, who, a.status)
				case allowed && a.status >= 500:
					t.Errorf("%s as %s: %d %.300s", rt.pattern, who, a.status, a.body)
				case !allowed && who == "none" && method == "GET" &&
					(a.status != http.StatusSeeOther || !strings.HasPrefix(a.location, "/console/login?next=")):
					t.Errorf("%s without a session: %d %q, want a redirect to the login page", rt.pattern, a.status, a.location)
				case !allowed && who == "none" && method == "POST" && a.status != http.StatusUnauthorized:
					t.Errorf("%s without a session: %d, want 401", rt.pattern, a.status)
				case !allowed && who != "none" && a.status != http.StatusForbidden:
					t.Errorf("%s as %s: %d, want 403", rt.pattern, who, a.status)
				}
			}
		}
	})
}

// TestLogin covers the login and session rules: a wrong password, an
// unknown user and an unknown tenant answer alike; a login rotates the
// session; logout ends it on the server; the idle and absolute timeouts
// end it; a set-password link works once and lets the user log in.
func TestLogin(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		admin := f.users[staff.RoleAdmin]
		b := f.browser(t)
		if a := b.get("/console/login"); a.status != http.StatusOK || !strings.Contains(a.body, `name="password"`) {
			t.Fatalf("login page: %d", a.status)
		}
		wrong := []struct{ tenant, email, pw string }{
			{f.tenant.Name, admin.Email, "wrong password!"},
			{f.tenant.Name, "nobody@nordavis.no", password},
			{"no-such-tenant", admin.Email, password},
			{f.other.Name, admin.Email, password}, // another tenant's user list
		}
		var bodies []string
		for _, w := range wrong {
			a := b.login(w.tenant, w.email, w.pw)
			if a.status != http.StatusUnauthorized || a.header.Get("Set-Cookie") != "" {
				t.Errorf("login %+v: %d, cookie %q; want 401 and no session", w, a.status, a.header.Get("Set-Cookie"))
			}
			bodies = append(bodies, strings.ReplaceAll(strings.ReplaceAll(a.body, w.tenant, ""), w.email, ""))
		}
		for _, body := range bodies[1:] {
			if body != bodies[0] {
				t.Error("the failed logins' pages differ: they tell which part was wrong")
			}
		}
		if a := b.login("", "", ""); a.status != http.StatusBadRequest {
			t.Errorf("empty login form: %d, want 400", a.status)
		}
		// The cookie's attributes.
		a := b.login(f.tenant.Name, strings.ToUpper(admin.Email), password)
		if a.status != http.StatusSeeOther {
			t.Fatalf("login: %d %s", a.status, a.body)
		}
		ck := a.header.Get("Set-Cookie")
		for _, attr := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
			if !strings.Contains(ck, attr) {
				t.Errorf("session cookie %q lacks %s", ck, attr)
			}
		}
		first := cookieValue(ck)
		if a := b.get("/console/"); a.status != http.StatusOK || !strings.Contains(a.body, admin.Email) {
			t.Fatalf("home after login: %d", a.status)
		}
		// Logging in again rotates: a new token, and the old one ends.
		a = b.login(f.tenant.Name, admin.Email, password)
		second := cookieValue(a.header.Get("Set-Cookie"))
		if second == "" || second == first {
			t.Fatalf("the second login kept the token")
		}
		if _, _, err := f.staff.Session(context.Background(), first); err == nil {
			t.Error("the session before the new login still works")
		}
		// Idle timeout: 31 minutes without a request.
		f.advance(31 * time.Minute)
		if a := b.get("/console/"); a.status != http.StatusSeeOther {
			t.Errorf("after 31 idle minutes: %d, want the login page", a.status)
		}
		// Absolute timeout: active every 20 minutes for 12 hours.
		b.login(f.tenant.Name, admin.Email, password)
		for range 12*3 + 1 {
			f.advance(20 * time.Minute)
			if a := b.get("/console/"); a.status != http.StatusOK {
				break
			}
		}
		if a := b.get("/console/"); a.status != http.StatusSeeOther {
			t.Errorf("after 12 hours in use: %d, want the login page", a.status)
		}
		// Logout ends the session on the server too.
		a = b.login(f.tenant.Name, admin.Email, password)
		token := cookieValue(a.header.Get("Set-Cookie"))
		if a := b.post("/console/logout", nil); a.status != http.StatusSeeOther || !strings.HasPrefix(a.location, "/console/login") {
			t.Fatalf("logout: %d %s", a.status, a.location)
		}
		if _, _, err := f.staff.Session(context.Background(), token); err == nil {
			t.Error("the session works after logout")
		}
		// A set-password link: once, then login with the new password.
		nu, err := f.staff.CreateUser(context.Background(), f.tenant.ID, staff.NewUser{Email: "ny@nordavis.no", Role: staff.RoleSupport})
		if err != nil {
			t.Fatal(err)
		}
		link, _, err := f.staff.SetPasswordLink(context.Background(), f.tenant.ID, nu.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a := b.get("/console/setpassword?token=" + url.QueryEscape(link)); a.status != http.StatusOK || a.header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("set-password page: %d, Referrer-Policy %q", a.status, a.header.Get("Referrer-Policy"))
		}
		set := func(pw, confirm string) answer {
			return b.do("POST", "/console/setpassword", url.Values{"token": {link}, "password": {pw}, "confirm": {confirm}})
		}
		if a := set("short", "short"); a.status != http.StatusBadRequest {
			t.Errorf("a short password: %d, want 400", a.status)
		}
		if a := set("a long enough password", "another one entirely"); a.status != http.StatusBadRequest {
			t.Errorf("passwords that differ: %d, want 400", a.status)
		}
		if a := set("a long enough password", "a long enough password"); a.status != http.StatusSeeOther {
			t.Fatalf("set password: %d %s", a.status, a.body)
		}
		if a := set("a long enough password", "a long enough password"); a.status != http.StatusBadRequest {
			t.Errorf("the link's second use: %d, want 400", a.status)
		}
		if a := b.login(f.tenant.Name, nu.Email, "a long enough password"); a.status != http.StatusSeeOther {
			t.Errorf("login with the password set: %d", a.status)
		}
		// next= never leaves the console.
		for _, next := range []string{"https://evil.example/", "//evil.example/", "/console/search?q=x"} {
			b2 := f.browser(t)
			a := b2.do("POST", "/console/login", url.Values{"tenant": {f.tenant.Name}, "email": {admin.Email}, "password": {password}, "next": {next}})
			want := "/console/"
			if strings.HasPrefix(next, "/console/") {
				want = next
			}
			if a.location != want {
				t.Errorf("next=%q: to %q, want %q", next, a.location, want)
			}
		}
	})
}

func cookieValue(setCookie string) string {
	v, _, _ := strings.Cut(setCookie, ";")
	_, v, _ = strings.Cut(v, "=")
	return v
}

// TestLoginRateLimited: an account's sixth wrong password in a row is
// answered 429 with Retry-After, without checking it, also when it is the
// right one; the limit lifts with time.
func TestLoginRateLimited(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		admin := f.users[staff.RoleAdmin]
		b := f.browser(t)
		for i := range DefaultLimits.AccountBurst {
			if a := b.login(f.tenant.Name, admin.Email, "wrong"); a.status != http.StatusUnauthorized {
				t.Fatalf("try %d: %d", i+1, a.status)
			}
		}
		a := b.login(f.tenant.Name, admin.Email, password)
		if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" {
			t.Fatalf("after %d failures: %d, Retry-After %q; want 429", DefaultLimits.AccountBurst, a.status, a.header.Get("Retry-After"))
		}
		// Another account from the same address is not held back.
		if a := b.login(f.tenant.Name, f.users[staff.RoleSupport].Email, password); a.status != http.StatusSeeOther {
			t.Errorf("another account: %d", a.status)
		}
		f.advance(DefaultLimits.AccountEvery)
		if a := b.login(f.tenant.Name, admin.Email, password); a.status != http.StatusSeeOther {
			t.Errorf("after waiting: %d", a.status)
		}
	})
}

// TestCSRF: a form without the session's token, with another session's
// token, or sent from another site is refused and changes nothing.
func TestCSRF(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		sub := f.demoSubscription(t)
		b := f.as(t, staff.RoleSupport)
		other := f.as(t, staff.RoleAdmin)
		cancel := "/console/subscription/" + sub.ID + "/cancel"
		form := url.Values{"mode": {"EndOfPeriod"}}
		if a := b.do("POST", cancel, form); a.status != http.StatusForbidden {
			t.Errorf("no token: %d, want 403", a.status)
		}
		form.Set("csrf", other.csrf("/console/account"))
		if a := b.do("POST", cancel, form); a.status != http.StatusForbidden {
			t.Errorf("another session's token: %d, want 403", a.status)
		}
		form.Set("csrf", b.csrf("/console/account"))
		if a := b.do("POST", cancel, form, "Sec-Fetch-Site", "cross-site"); a.status != http.StatusForbidden {
			t.Errorf("a cross-site post: %d, want 403", a.status)
		}
		if a := b.do("POST", cancel, form, "Origin", "https://evil.example"); a.status != http.StatusForbidden {
			t.Errorf("a post from another origin: %d, want 403", a.status)
		}
		got, err := f.app.Subscription(tenancy.With(context.Background(), f.tenant.ID), sub.ID)
		if err != nil || got.CancelledAt != nil {
			t.Fatalf("the refused forms cancelled it: %+v %v", got.CancelledAt, err)
		}
	})
}

// TestSearchAndPages: search finds the demo subscribers by name, e-mail,
// number and invoice number, as HTML and JSON; the subscriber and
// subscription pages show them; another tenant's records are a 404; bad
// input is a 400.
func TestSearchAndPages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := tenancy.With(context.Background(), f.tenant.ID)
		sub := f.demoSubscription(t)
		owner, err := f.app.Subscriber(ctx, sub.SubscriberID)
		if err != nil {
			t.Fatal(err)
		}
		invs, _, err := f.app.Invoices(ctx, store.DocumentFilter{SubscriberID: owner.ID}, store.Page{Limit: 1}, store.InvoiceParts{})
		if err != nil || len(invs) == 0 {
			t.Fatalf("the demo subscriber's invoices: %v %v", invs, err)
		}
		owner.ExternalID = "CRM-4711"
		if owner, err = f.app.UpdateSubscriber(ctx, owner); err != nil {
			t.Fatal(err)
		}
		b := f.as(t, staff.RoleSupport)
		search := func(q string) searchResult {
			t.Helper()
			a := b.do("GET", "/console/search?q="+url.QueryEscape(q), nil, "Accept", "application/json")
			var res searchResult
			if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &res) != nil {
				t.Fatalf("search %q: %d %s", q, a.status, a.body)
			}
			return res
		}
		first := strings.Fields(owner.Name)[0]
		for q, by := range map[string]string{
			strings.ToLower(first):       "name",
			strings.ToUpper(owner.Email): "email",
			itoa(owner.SubscriberNumber): "subscriberNumber",
			itoa(invs[0].InvoiceNumber):  "invoiceNumber",
			invs[0].KID:                  "kid",
			owner.ID:                     "id",
			"CRM-4711":                   "externalId",
			sub.ID:                       "subscription",
			invs[0].ID:                   "invoice",
		} {
			res := search(q)
			found := false
			for _, h := range res.Hits {
				if h.ID == owner.ID {
					found = true
					if h.MatchedBy != by && !(by == "invoiceNumber" && h.MatchedBy == "subscriberNumber") && !(by == "kid" && h.MatchedBy != "") {
						t.Errorf("search %q matched by %q, want %q", q, h.MatchedBy, by)
					}
				}
			}
			if !found {
				t.Errorf("search %q: %+v lacks %s", q, res.Hits, owner.Name)
			}
		}
		// Another tenant's subscriber is found by nothing, not even its id.
		for _, q := range []string{f.otherSubscriber.ID, f.otherSubscriber.Email, "Annen"} {
			if res := search(q); len(res.Hits) != 0 {
				t.Errorf("search %q finds another tenant's subscriber: %+v", q, res.Hits)
			}
		}
		if a := b.get("/console/search?q=" + url.QueryEscape(first)); a.status != http.StatusOK || !strings.Contains(a.body, owner.Name) {
			t.Errorf("search page: %d", a.status)
		}
		if a := b.get("/console/search?q=" + strings.Repeat("x", 201)); a.status != http.StatusBadRequest {
			t.Errorf("a 201-character query: %d, want 400", a.status)
		}
		if a := b.get("/console/search?q=%00"); a.status != http.StatusBadRequest {
			t.Errorf("a query with NUL: %d, want 400", a.status)
		}
		a := b.get("/console/subscriber/" + owner.ID)
		if a.status != http.StatusOK || !strings.Contains(a.body, owner.Name) || !strings.Contains(a.body, sub.Package.Name) ||
			!strings.Contains(a.body, invs[0].KID) {
			t.Errorf("subscriber page: %d, want the name, the package and the invoice's KID", a.status)
		}
		if a := b.get("/console/subscription/" + sub.ID); a.status != http.StatusOK || !strings.Contains(a.body, `class="timeline"`) {
			t.Errorf("subscription page: %d", a.status)
		}
		for _, path := range []string{"/console/subscriber/" + f.otherSubscriber.ID, "/console/subscription/" + store.NewID()} {
			if a := b.get(path); a.status != http.StatusNotFound {
				t.Errorf("%s: %d, want 404", path, a.status)
			}
		}
		if a := b.get("/console/subscriber/not-an-id"); a.status != http.StatusBadRequest {
			t.Errorf("a bad id: %d, want 400", a.status)
		}
		if a := b.get("/console/nothing-here"); a.status != http.StatusNotFound {
			t.Errorf("an unknown page: %d, want 404", a.status)
		}
		// The pages speak Norwegian when asked.
		if a := b.get("/console/subscriber/" + owner.ID + "?lang=nb"); !strings.Contains(a.body, "Abonnementer") || !strings.Contains(a.body, `lang="nb"`) {
			t.Errorf("the Norwegian page lacks its headings")
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestCancelIsAudited: a support user cancels a subscription from its
// page; the cancellation's events name the staff user as their actor, and
// the audit page finds them by the user and by the subscriber.
func TestCancelIsAudited(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := tenancy.With(context.Background(), f.tenant.ID)
		sub := f.demoSubscription(t)
		support := f.users[staff.RoleSupport]
		b := f.as(t, staff.RoleSupport)
		if a := b.post("/console/subscription/"+sub.ID+"/cancel", url.Values{"mode": {"Sideways"}}); a.status != http.StatusBadRequest {
			t.Errorf("an unknown mode: %d, want 400", a.status)
		}
		a := b.post("/console/subscription/"+sub.ID+"/cancel", url.Values{"mode": {"EndOfPeriod"}, "reason": {"moving abroad"}})
		if a.status != http.StatusSeeOther {
			t.Fatalf("cancel: %d %.500s", a.status, a.body)
		}
		got, err := f.app.Subscription(ctx, sub.ID)
		if err != nil || got.CancelledAt == nil || got.CancelReason != "moving abroad" {
			t.Fatalf("after the cancel: %+v %v", got, err)
		}
		if a := b.post("/console/subscription/"+sub.ID+"/cancel", url.Values{"mode": {"EndOfPeriod"}}); a.status != http.StatusBadRequest {
			t.Errorf("cancelling again: %d, want 400", a.status)
		}
		// The page offers the undo; it renews again, recorded as the
		// staff user's; a second undo finds nothing waiting.
		if a := b.get("/console/subscription/" + sub.ID); !strings.Contains(a.body, `id="undo-cancel"`) {
			t.Errorf("the page of a cancelled subscription offers no undo")
		}
		if a := b.post("/console/subscription/"+sub.ID+"/cancel/undo", nil); a.status != http.StatusSeeOther {
			t.Fatalf("undo: %d %.500s", a.status, a.body)
		}
		if got, err := f.app.Subscription(ctx, sub.ID); err != nil || got.CancelledAt != nil || got.RenewAt == nil {
			t.Fatalf("after the undo: %+v %v", got, err)
		}
		if a := b.post("/console/subscription/"+sub.ID+"/cancel/undo", nil); a.status != http.StatusBadRequest || !strings.Contains(a.body, "cannot be undone") {
			t.Errorf("undoing again: %d, want 400 saying why", a.status)
		}
		evs, _, err := f.app.Events(ctx, store.EventFilter{Subject: "/subscription/" + sub.ID}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		byStaff := 0
		for _, e := range evs {
			if e.Actor.Kind == "staff" {
				byStaff++
				if e.Actor.ID != support.ID || e.Actor.Label != support.Email {
					t.Errorf("event %s: actor %+v, want %s", e.EventType, e.Actor, support.Email)
				}
			}
		}
		if byStaff == 0 {
			t.Fatalf("no event of the cancellation names the staff user: %+v", evs)
		}
		fin := f.as(t, staff.RoleFinance)
		for _, q := range []string{"actorKind=staff&actorId=" + support.ID, "subscriber=" + sub.SubscriberID, "actorKind=staff&subscriber=" + sub.SubscriberID} {
			a := fin.get("/console/audit?" + q)
			if a.status != http.StatusOK || !strings.Contains(a.body, support.Email) || !strings.Contains(a.body, "/subscription/"+sub.ID) {
				t.Errorf("audit %s: %d, want the cancellation by %s", q, a.status, support.Email)
			}
		}
		if a := fin.get("/console/audit?subscriber=" + f.otherSubscriber.ID); a.status != http.StatusNotFound {
			t.Errorf("audit of another tenant's subscriber: %d, want 404", a.status)
		}
		for _, q := range []string{"actorKind=robot", "from=yesterday", "subscriber=x", "after=x", "actorId=%00"} {
			if a := fin.get("/console/audit?" + q); a.status != http.StatusBadRequest {
				t.Errorf("audit %s: %d, want 400", q, a.status)
			}
		}
	})
}

// TestDeletionRequestsPage: a subscriber's deletion request shows on the
// support page with its answer-by date; a rejection without why is
// refused (400) and changes nothing; closing it records the staff user and
// moves it to the answered list; another tenant's request is a 404.
func TestDeletionRequestsPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := tenancy.With(context.Background(), f.tenant.ID)
		sub := f.demoSubscription(t)
		req, created, err := f.app.RequestDeletion(ctx, sub.SubscriberID, "Slett meg")
		if err != nil || !created {
			t.Fatal(err)
		}
		octx := tenancy.With(context.Background(), f.other.ID)
		theirs, _, err := f.app.RequestDeletion(octx, f.otherSubscriber.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		b := f.as(t, staff.RoleSupport)
		a := b.get("/console/deletions")
		if a.status != http.StatusOK || !strings.Contains(a.body, "Slett meg") || !strings.Contains(a.body, "/console/deletions/"+req.ID+"/resolve") || strings.Contains(a.body, theirs.ID) {
			t.Fatalf("the page: %d %.500s", a.status, a.body)
		}
		if a := b.post("/console/deletions/"+req.ID+"/resolve", url.Values{"status": {"Rejected"}}); a.status != http.StatusBadRequest {
			t.Errorf("a rejection without why: %d, want 400", a.status)
		}
		if a := b.post("/console/deletions/"+theirs.ID+"/resolve", url.Values{"status": {"Completed"}}); a.status != http.StatusNotFound {
			t.Errorf("another tenant's request: %d, want 404", a.status)
		}
		if a := b.post("/console/deletions/"+req.ID+"/resolve", url.Values{"status": {"Completed"}, "resolution": {"Innlogging og kontaktdata slettet"}}); a.status != http.StatusSeeOther {
			t.Fatalf("resolve: %d %.500s", a.status, a.body)
		}
		got, err := f.app.DeletionRequest(ctx, req.ID)
		if err != nil || got.Status != privacy.StatusCompleted || got.ResolvedBy != f.users[staff.RoleSupport].Email {
			t.Fatalf("after closing: %+v %v", got, err)
		}
		if a := b.get("/console/deletions"); !strings.Contains(a.body, "Innlogging og kontaktdata slettet") || strings.Contains(a.body, "/console/deletions/"+req.ID+"/resolve") {
			t.Errorf("the answered request is not listed as answered: %.500s", a.body)
		}
		if a := b.post("/console/deletions/"+req.ID+"/resolve", url.Values{"status": {"Completed"}}); a.status != http.StatusBadRequest {
			t.Errorf("closing twice: %d, want 400", a.status)
		}
	})
}

// TestUserAdmin: an admin adds a user, gets a set-password link, changes
// a role, and cannot demote the last admin; a disabled user's session
// ends.
func TestUserAdmin(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		admin := f.as(t, staff.RoleAdmin)
		a := admin.post("/console/users", url.Values{"email": {"ny@nordavis.no"}, "name": {"Nina Ny"}, "role": {"support"}})
		if a.status != http.StatusOK || !strings.Contains(a.body, "/console/setpassword?token=") {
			t.Fatalf("add user: %d %.300s", a.status, a.body)
		}
		if a := admin.post("/console/users", url.Values{"email": {"NY@nordavis.no"}, "role": {"support"}}); a.status != http.StatusConflict {
			t.Errorf("the same e-mail again: %d, want 409", a.status)
		}
		if a := admin.post("/console/users", url.Values{"email": {"not an address"}, "role": {"support"}}); a.status != http.StatusBadRequest {
			t.Errorf("a bad e-mail: %d, want 400", a.status)
		}
		if a := admin.post("/console/users", url.Values{"email": {"x@nordavis.no"}, "role": {"owner"}}); a.status != http.StatusBadRequest {
			t.Errorf("a bad role: %d, want 400", a.status)
		}
		// The demo's own administrator is disabled first: ours is then the
		// last enabled one.
		users, err := f.staff.Users(context.Background(), f.tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range users {
			if u.Email == demo.ConsoleEmail {
				if a := admin.post("/console/users/"+u.ID, url.Values{"role": {"admin"}, "disabled": {"on"}}); a.status != http.StatusOK {
					t.Fatalf("disable the demo's administrator: %d", a.status)
				}
			}
		}
		adminID := f.users[staff.RoleAdmin].ID
		if a := admin.post("/console/users/"+adminID, url.Values{"role": {"support"}}); a.status != http.StatusConflict {
			t.Errorf("demoting the last admin: %d, want 409", a.status)
		}
		fin := f.as(t, staff.RoleFinance)
		if a := admin.post("/console/users/"+f.users[staff.RoleFinance].ID, url.Values{"role": {"finance"}, "disabled": {"on"}}); a.status != http.StatusOK {
			t.Fatalf("disable: %d", a.status)
		}
		if a := fin.get("/console/"); a.status != http.StatusSeeOther {
			t.Errorf("a disabled user's session: %d, want the login page", a.status)
		}
		if a := admin.post("/console/users/"+store.NewID(), url.Values{"role": {"finance"}}); a.status != http.StatusNotFound {
			t.Errorf("an unknown user: %d, want 404", a.status)
		}
		// Another tenant's admin does not see these users.
		ob := f.otherAdmin(t)
		if a := ob.get("/console/users"); strings.Contains(a.body, "ny@nordavis.no") {
			t.Error("another tenant's admin sees this tenant's users")
		}
		if a := ob.post("/console/users/"+f.users[staff.RoleSupport].ID, url.Values{"role": {"admin"}}); a.status != http.StatusNotFound {
			t.Errorf("another tenant's admin changes this tenant's user: %d, want 404", a.status)
		}
		if a := ob.get("/console/subscription/" + f.demoSubscription(t).ID); a.status != http.StatusNotFound {
			t.Errorf("another tenant's admin opens this tenant's subscription: %d, want 404", a.status)
		}
	})
}

// TestTOTP: a user sets up a second factor; the next login asks for a
// code before anything else, a wrong code is refused, the right one
// rotates the session into a full one.
func TestTOTP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		u := f.users[staff.RoleFinance]
		b := f.as(t, staff.RoleFinance)
		a := b.post("/console/account/totp", nil)
		m := regexp.MustCompile(`<code>([A-Z2-7]+)</code>`).FindStringSubmatch(a.body)
		if a.status != http.StatusOK || m == nil || !strings.Contains(a.body, "data:image/png;base64,") {
			t.Fatalf("start TOTP: %d %.400s", a.status, a.body)
		}
		secret := m[1]
		if a := b.post("/console/account/totp/confirm", url.Values{"code": {"000000"}}); a.status != http.StatusBadRequest {
			t.Errorf("a wrong code: %d, want 400", a.status)
		}
		if a := b.post("/console/account/totp/confirm", url.Values{"code": {totpCode(t, secret, f.clock())}}); a.status != http.StatusOK {
			t.Fatalf("confirm: %d", a.status)
		}
		// A code works once: the next login comes a time step later.
		f.advance(30 * time.Second)
		b2 := f.browser(t)
		a = b2.login(f.tenant.Name, u.Email, password)
		if a.status != http.StatusSeeOther || !strings.HasPrefix(a.location, "/console/login/code") {
			t.Fatalf("login with TOTP: %d %s, want the code page", a.status, a.location)
		}
		pendingToken := cookieValue(a.header.Get("Set-Cookie"))
		if a := b2.get("/console/search?q=x"); a.status != http.StatusSeeOther || a.location != "/console/login/code" {
			t.Errorf("a page before the code: %d %s, want the code page", a.status, a.location)
		}
		token := b2.csrf("/console/login/code")
		if a := b2.do("POST", "/console/login/code", url.Values{"csrf": {token}, "code": {"123456"}}); a.status != http.StatusUnauthorized {
			t.Errorf("a wrong code at login: %d, want 401", a.status)
		}
		a = b2.do("POST", "/console/login/code", url.Values{"csrf": {token}, "code": {totpCode(t, secret, f.clock())}})
		if a.status != http.StatusSeeOther {
			t.Fatalf("the right code: %d %s", a.status, a.body)
		}
		if full := cookieValue(a.header.Get("Set-Cookie")); full == "" || full == pendingToken {
			t.Error("the second factor did not rotate the session")
		}
		if a := b2.get("/console/"); a.status != http.StatusOK {
			t.Errorf("home after the code: %d", a.status)
		}
		// Turning it off asks for the password.
		if a := b2.post("/console/account/totp/disable", url.Values{"password": {"wrong"}}); a.status != http.StatusBadRequest {
			t.Errorf("disable with a wrong password: %d, want 400", a.status)
		}
		if a := b2.post("/console/account/totp/disable", url.Values{"password": {password}}); a.status != http.StatusOK {
			t.Errorf("disable: %d", a.status)
		}
		if got, _ := f.staff.User(context.Background(), f.tenant.ID, u.ID); got.TOTPEnabled {
			t.Error("TOTP still on")
		}
	})
}

// TestTextsComplete: every text key the templates and handlers use
// exists in every language, and the languages have the same keys.
func TestTextsComplete(t *testing.T) {
	t.Parallel()
	for l, m := range texts {
		for k := range texts["en"] {
			if _, ok := m[k]; !ok {
				t.Errorf("%s lacks %q", l, k)
			}
		}
		for k := range m {
			if _, ok := texts["en"][k]; !ok {
				t.Errorf("%s has %q, which en lacks", l, k)
			}
		}
	}
	keys := regexp.MustCompile(`\.T "([A-Za-z.]+)"`)
	names, _ := fs.Glob(assets, "templates/*.html")
	for _, n := range names {
		b, _ := assets.ReadFile(n)
		for _, m := range keys.FindAllStringSubmatch(string(b), -1) {
			if _, ok := texts["en"][m[1]]; !ok {
				t.Errorf("%s uses %q, which has no text", n, m[1])
			}
		}
	}
}

// totpCode is the authenticator app's code for secret at t.
func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// TestFinanceActions: a finance user opens an invoice, downloads its PDF,
// records a payment and credits another invoice. The same payment form
// sent from eight browsers at once records one payment, and eight
// credits at once issue one credit note (on PostgreSQL, where they really
// run at once); the events name the finance user.
func TestFinanceActions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := tenancy.With(context.Background(), f.tenant.ID)
		invs, _, err := f.app.Invoices(ctx, store.DocumentFilter{}, store.Page{Limit: 10}, store.InvoiceParts{})
		if err != nil || len(invs) < 2 {
			t.Fatalf("the demo's invoices: %d %v", len(invs), err)
		}
		pay, credit := invs[0], invs[1]
		fin := f.as(t, staff.RoleFinance)
		finUser := f.users[staff.RoleFinance]
		a := fin.get("/console/invoice/" + pay.ID)
		if a.status != http.StatusOK || !strings.Contains(a.body, pay.KID) || !strings.Contains(a.body, `action="/console/invoice/`+pay.ID+`/payment"`) {
			t.Fatalf("invoice page: %d", a.status)
		}
		if a := f.as(t, staff.RoleSupport).get("/console/invoice/" + pay.ID); strings.Contains(a.body, "/payment\"") {
			t.Error("a support user is shown the payment form")
		}
		if a := fin.get("/console/invoice/" + pay.ID + "/pdf"); a.status != http.StatusOK || a.header.Get("Content-Type") != "application/pdf" ||
			!strings.HasPrefix(a.body, "%PDF-") {
			t.Errorf("invoice PDF: %d %q", a.status, a.header.Get("Content-Type"))
		}
		for form, want := range map[string]int{
			"amount=abc&reference=r1":                         http.StatusBadRequest,
			"amount=-5&reference=r1":                          http.StatusBadRequest,
			"amount=10&reference=":                            http.StatusBadRequest,
			"amount=10&reference=r1&paidOn=2026-13-01":        http.StatusBadRequest,
			"amount=10&reference=" + strings.Repeat("x", 201): http.StatusBadRequest,
		} {
			v, _ := url.ParseQuery(form)
			if a := fin.post("/console/invoice/"+pay.ID+"/payment", v); a.status != want {
				t.Errorf("payment %s: %d, want %d", form, a.status, want)
			}
		}
		amount := formatMoney(pay.Gross, "")
		token := fin.csrf("/console/account")
		var wg sync.WaitGroup
		codes := make([]int, 8)
		for i := range codes {
			wg.Go(func() {
				codes[i] = fin.do("POST", "/console/invoice/"+pay.ID+"/payment", url.Values{"csrf": {token}, "amount": {amount},
					"reference": {"bank-ref-1"}, "paidOn": {f.now.Format("2006-01-02")}}).status
			})
		}
		wg.Wait()
		for _, c := range codes {
			if c != http.StatusSeeOther {
				t.Errorf("concurrent payment forms: %v, want every one answered as recorded", codes)
				break
			}
		}
		payments, _, err := f.app.Payments(ctx, store.PaymentFilter{InvoiceID: pay.ID}, store.Page{Limit: 10})
		if err != nil || len(payments) != 1 || payments[0].Amount.Minor != pay.Gross.Minor || payments[0].Provider != "Manual" {
			t.Fatalf("payments after eight forms: %+v %v, want one of %d", payments, err, pay.Gross.Minor)
		}
		if got, _ := f.app.Invoice(ctx, pay.ID); got.Status != "Paid" {
			t.Errorf("the invoice after the payment: %s, want Paid", got.Status)
		}
		if a := fin.post("/console/invoice/"+credit.ID+"/credit", url.Values{"reason": {""}}); a.status != http.StatusBadRequest {
			t.Errorf("a credit without a reason: %d, want 400", a.status)
		}
		for i := range codes {
			wg.Go(func() {
				codes[i] = fin.do("POST", "/console/invoice/"+credit.ID+"/credit", url.Values{"csrf": {token}, "reason": {"goodwill"}}).status
			})
		}
		wg.Wait()
		notes, _, err := f.app.CreditNotes(ctx, store.CreditNoteFilter{InvoiceID: credit.ID}, store.Page{Limit: 10})
		if err != nil || len(notes) != 1 || notes[0].Gross.Minor != credit.Gross.Minor {
			t.Fatalf("credit notes after eight credits: %+v %v (answers %v), want one of %d", notes, err, codes, credit.Gross.Minor)
		}
		for _, subject := range []string{"/payment/" + payments[0].ID, "/creditnote/" + notes[0].ID} {
			evs, _, err := f.app.Events(ctx, store.EventFilter{Subject: subject, ActorKind: "staff", ActorID: finUser.ID}, store.Page{Limit: 10})
			if err != nil || len(evs) == 0 {
				t.Errorf("%s: no event by %s: %v", subject, finUser.Email, err)
			}
		}
		// The audit log by subscriber shows the payment and the credit.
		adm := f.as(t, staff.RoleAdmin)
		if a := adm.get("/console/audit?actorKind=staff&subscriber=" + pay.SubscriberID); !strings.Contains(a.body, "/payment/"+payments[0].ID) {
			t.Errorf("the audit log of the payer lacks the payment")
		}
		if a := adm.get("/console/audit?actorKind=staff&subscriber=" + credit.SubscriberID); !strings.Contains(a.body, "/creditnote/"+notes[0].ID) {
			t.Errorf("the audit log of the credited subscriber lacks the credit note")
		}
		// Another tenant's admin reaches none of it.
		ob := f.otherAdmin(t)
		for _, path := range []string{"/console/invoice/" + pay.ID, "/console/invoice/" + pay.ID + "/pdf"} {
			if a := ob.get(path); a.status != http.StatusNotFound {
				t.Errorf("another tenant's admin, %s: %d, want 404", path, a.status)
			}
		}
		if a := ob.post("/console/invoice/"+credit.ID+"/credit", url.Values{"reason": {"x"}}); a.status != http.StatusNotFound {
			t.Errorf("another tenant's admin credits: %d, want 404", a.status)
		}
	})
}

// TestPlanChange: a support user registers a plan change for the next
// renewal from the subscription page, sees it waiting, and revokes it; a
// change to no package is a 400.
func TestPlanChange(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := tenancy.With(context.Background(), f.tenant.ID)
		sub := f.demoSubscription(t)
		b := f.as(t, staff.RoleSupport)
		page := b.get("/console/subscription/" + sub.ID)
		m := regexp.MustCompile(`<option value="([0-9a-f-]{36})">([^<(]+) \(`).FindAllStringSubmatch(page.body, -1)
		var target, name string
		for _, o := range m {
			if strings.TrimSpace(o[2]) != sub.Package.Name {
				target, name = o[1], strings.TrimSpace(o[2])
			}
		}
		if target == "" {
			t.Fatalf("no other package offered on the subscription page: %v", m)
		}
		if a := b.post("/console/subscription/"+sub.ID+"/change", url.Values{"package": {"x"}, "when": {"OnRenewal"}}); a.status != http.StatusBadRequest {
			t.Errorf("a change to no package: %d, want 400", a.status)
		}
		if a := b.post("/console/subscription/"+sub.ID+"/change", url.Values{"package": {target}, "when": {"Sometime"}}); a.status != http.StatusBadRequest {
			t.Errorf("a change at no time: %d, want 400", a.status)
		}
		if a := b.post("/console/subscription/"+sub.ID+"/change", url.Values{"package": {target}, "when": {"OnRenewal"}}); a.status != http.StatusSeeOther {
			t.Fatalf("register the change: %d %.400s", a.status, a.body)
		}
		changes, err := f.app.ChangesOfSeries(ctx, sub.ID)
		if err != nil || len(changes) != 1 || changes[0].Status != store.ChangeRegistered || changes[0].TemplatePackageID != target {
			t.Fatalf("changes: %+v %v", changes, err)
		}
		if a := b.get("/console/subscription/" + sub.ID); !strings.Contains(a.body, name) || !strings.Contains(a.body, "/revoke") {
			t.Errorf("the page does not show the waiting change to %s", name)
		}
		if a := b.post("/console/subscription/"+sub.ID+"/change/"+changes[0].ID+"/revoke", nil); a.status != http.StatusSeeOther {
			t.Fatalf("revoke: %d", a.status)
		}
		if a := b.post("/console/subscription/"+sub.ID+"/change/"+changes[0].ID+"/revoke", nil); a.status != http.StatusBadRequest {
			t.Errorf("revoke again: %d, want 400", a.status)
		}
		if got, _ := f.app.Change(ctx, sub.ID, changes[0].ID); got.Status != store.ChangeRevoked {
			t.Errorf("after revoking: %s", got.Status)
		}
	})
}
