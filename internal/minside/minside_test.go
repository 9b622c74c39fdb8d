package minside_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/demo"
	"github.com/kadens/kadens/internal/minside"
	"github.com/kadens/kadens/internal/privacy"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

const otherPassword = "another long password for tests"

// env is a whole server (apitest) whose base URL is its real listener, so
// the identity provider's redirects reach it, with the demo tenant (Kari
// logs in) and a second tenant with a subscriber user of its own.
type env struct {
	*apitest.Env
	base  string
	creds demo.Credentials
	demo  store.Tenant
	// kari is the demo subscriber with the login, ola another subscriber
	// of the same tenant; other the second tenant's subscriber.
	kari, ola, other store.Subscriber
	otherTenant      store.Tenant
}

func start(t *testing.T, eng store.Engine) *env {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e := &env{base: "http://" + addr}
	e.Env = apitest.Start(t, eng, map[string]string{"KADENS_LISTEN": addr, "KADENS_BASE_URL": e.base})
	ctx := context.Background()
	if e.creds, _, err = demo.Ensure(ctx, e.Store, e.Server.Engine, t.TempDir(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if e.demo, err = e.Store.TenantByName(ctx, demo.TenantName); err != nil {
		t.Fatal(err)
	}
	dctx := tenancy.With(ctx, e.demo.ID)
	for _, s := range []struct {
		email string
		to    *store.Subscriber
	}{{demo.MyEmail, &e.kari}, {"ola@example.no", &e.ola}} {
		subs, _, err := e.Store.ListSubscribers(dctx, store.SubscriberFilter{Email: s.email}, store.Page{Limit: 1})
		if err != nil || len(subs) != 1 {
			t.Fatalf("demo subscriber %s: %v", s.email, err)
		}
		*s.to = subs[0]
	}
	if e.otherTenant, err = e.Store.TenantByID(ctx, e.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	octx := tenancy.With(ctx, e.otherTenant.ID)
	if e.other, err = e.Store.CreateSubscriber(octx, store.Subscriber{Name: "Per Annen", Email: "per@annen.example", Country: "NO",
		Contacts: []store.Contact{}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := (&subscriberuser.Directory{Store: e.Store}).Create(octx, "per@annen.example", otherPassword, e.other.ID); err != nil {
		t.Fatal(err)
	}
	return e
}

// browser is a client with cookies that follows redirects, as a browser.
type browser struct {
	t    *testing.T
	e    *env
	c    *http.Client
	last *http.Response
}

func (e *env) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, e: e, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

// do sends a request and returns the status and body of the answer the
// redirects end at.
func (b *browser) do(method, path string, form url.Values) (int, string) {
	b.t.Helper()
	u := path
	if !strings.HasPrefix(u, "http") {
		u = b.e.base + path
	}
	body := strings.NewReader("")
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept-Language", "nb")
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(resp.Body)
	b.last = resp
	if resp.StatusCode >= 500 {
		b.t.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw.String())
	}
	return resp.StatusCode, raw.String()
}

// login goes through the real login page of the identity provider: Min
// side's redirect, the HTML form posted with the e-mail and password, the
// callback, and back to Min side's overview.
func (b *browser) login(tenant, email, password string) string {
	b.t.Helper()
	status, page := b.do("GET", "/my/login?tenant="+url.QueryEscape(tenant), nil)
	if status != http.StatusOK || !strings.Contains(b.last.Request.URL.Path, "/idp/login") {
		b.t.Fatalf("login: landed at %s with %d, not the identity provider's login page", b.last.Request.URL, status)
	}
	id, csrf := apitest.FormValue(page, "id"), apitest.FormValue(page, "csrf")
	if id == "" || csrf == "" {
		b.t.Fatalf("login page without its form: %s", page)
	}
	action := b.last.Request.URL.ResolveReference(&url.URL{Path: "login"})
	status, page = b.do("POST", action.String(), url.Values{"id": {id}, "csrf": {csrf}, "email": {email}, "password": {password}})
	if status != http.StatusOK || b.last.Request.URL.Path != "/my/" {
		b.t.Fatalf("after login: %d at %s: %s", status, b.last.Request.URL, page)
	}
	return page
}

// csrf is the form token of the last page.
func (b *browser) csrf(page string) string {
	b.t.Helper()
	token := apitest.FormValue(page, "csrf")
	if token == "" {
		b.t.Fatal("no form token on the page")
	}
	return token
}

func TestMinSide(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			t.Parallel()
			e := start(t, eng)
			ctx := context.Background()
			dctx := tenancy.With(ctx, e.demo.ID)
			kariInvs, _, err := e.Store.ListInvoiceItems(dctx, store.DocumentFilter{SubscriberID: e.kari.ID}, store.Page{Limit: 10}, store.InvoiceParts{})
			if err != nil || len(kariInvs) == 0 {
				t.Fatalf("Kari's invoices: %v", err)
			}
			olaInvs, _, err := e.Store.ListInvoiceItems(dctx, store.DocumentFilter{SubscriberID: e.ola.ID}, store.Page{Limit: 10}, store.InvoiceParts{})
			if err != nil || len(olaInvs) == 0 {
				t.Fatalf("Ola's invoices: %v", err)
			}
			subOf := func(sub store.Subscriber) string {
				l, _, err := e.Store.ListSubscriptionItems(dctx, store.SubscriptionFilter{SubscriberID: sub.ID}, store.Page{Limit: 10}, false)
				if err != nil || len(l) == 0 {
					t.Fatalf("subscriptions of %s: %v", sub.Name, err)
				}
				return l[0].ID
			}
			kariSub, olaSub := subOf(e.kari), subOf(e.ola)

			t.Run("Pages", func(t *testing.T) {
				b := e.browser(t)
				page := b.login(demo.TenantName, e.creds.MyEmail, e.creds.MyPassword)
				h := b.last.Header
				if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || h.Get("X-Frame-Options") != "DENY" || h.Get("Cache-Control") != "no-store" {
					t.Errorf("headers: %v", h)
				}
				for _, want := range []string{"Mine abonnementer", "Neste faktura", "Å betale", "Si opp abonnementet", e.kari.Name} {
					if !strings.Contains(page, want) {
						t.Errorf("the overview lacks %q", want)
					}
				}
				if strings.Contains(page, e.ola.Name) {
					t.Error("the overview shows another subscriber")
				}
				_, page = b.do("GET", "/my/invoices", nil)
				if !strings.Contains(page, kariInvs[0].KID) || !strings.Contains(page, "86011117947") {
					t.Errorf("the invoices page lacks the KID or the account number")
				}
				status, doc := b.do("GET", "/my/invoice/"+kariInvs[0].ID+"?format=pdf", nil)
				if status != http.StatusOK || b.last.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(doc, "%PDF-") {
					t.Errorf("the invoice PDF: %d %s", status, b.last.Header.Get("Content-Type"))
				}
				if status, doc = b.do("GET", "/my/invoice/"+kariInvs[0].ID, nil); status != http.StatusOK || !strings.Contains(doc, kariInvs[0].KID) {
					t.Errorf("the invoice page: %d", status)
				}

				// Contact details and invoice address.
				_, page = b.do("GET", "/my/profile", nil)
				form := url.Values{"csrf": {b.csrf(page)}, "name": {"Kari Nordmann"}, "email": {"kari.ny@example.no"}, "phone": {"+4791234567"},
					"line1": {"Nygata 2"}, "postalCode": {"5004"}, "city": {"Bergen"}, "country": {"NO"}}
				if status, page = b.do("POST", "/my/profile", form); status != http.StatusOK || !strings.Contains(page, "Endringene er lagret") {
					t.Errorf("saving the address: %d", status)
				}
				if got, _ := e.Store.Subscriber(dctx, e.kari.ID); got.Address.Line1 != "Nygata 2" || got.Email != "kari.ny@example.no" {
					t.Errorf("after saving: %+v", got)
				}
				for field, bad := range map[string]string{"city": "Ber\x01gen", "name": strings.Repeat("x", 300), "email": "not an address"} {
					f := url.Values{}
					for k, v := range form {
						f[k] = v
					}
					f.Set(field, bad)
					if status, page := b.do("POST", "/my/profile", f); status != http.StatusBadRequest || !strings.Contains(page, `aria-invalid="true"`) {
						t.Errorf("%s=%q: %d, want 400 with the field marked", field, bad, status)
					}
				}

				// The GDPR export: the subscriber's own data, nobody else's.
				status, doc = b.do("GET", "/my/export", nil)
				var exp struct {
					Subscriber    store.Subscriber     `json:"subscriber"`
					Subscriptions []store.Subscription `json:"subscriptions"`
					Invoices      []store.Invoice      `json:"invoices"`
					Payments      []store.Payment      `json:"payments"`
				}
				if status != http.StatusOK || !strings.HasPrefix(b.last.Header.Get("Content-Disposition"), "attachment") ||
					json.Unmarshal([]byte(doc), &exp) != nil || exp.Subscriber.ID != e.kari.ID || len(exp.Subscriptions) == 0 || len(exp.Invoices) != len(kariInvs) {
					t.Errorf("the export: %d %s", status, doc)
				}
				for _, inv := range exp.Invoices {
					if inv.SubscriberID != e.kari.ID || len(inv.Lines) == 0 {
						t.Errorf("the export has invoice %s of %s with %d lines", inv.ID, inv.SubscriberID, len(inv.Lines))
					}
				}

				// Cancel at the end of the period, recorded as the subscriber's.
				status, page = b.do("POST", "/my/subscription/"+kariSub+"/cancel", url.Values{"csrf": {b.csrf(page)}})
				if status != http.StatusOK || !strings.Contains(page, "Abonnementet er sagt opp") {
					t.Errorf("cancel: %d", status)
				}
				got, err := e.Store.Subscription(dctx, kariSub)
				if err != nil || got.CancelledAt == nil {
					t.Errorf("the subscription is not cancelled: %v", err)
				}
				evs, _, err := e.Store.ListEvents(dctx, store.EventFilter{ActorKind: actor.Subscriber}, store.Page{Limit: 50})
				if err != nil || len(evs) == 0 {
					t.Errorf("no event names the subscriber as its actor: %v", err)
				}
				for _, ev := range evs {
					if ev.Actor.Label != "kari@example.no" {
						t.Errorf("event %s by %+v", ev.EventType, ev.Actor)
					}
				}
				if status, _ := b.do("POST", "/my/subscription/"+kariSub+"/cancel", url.Values{"csrf": {b.csrf(page)}}); status != http.StatusConflict {
					t.Errorf("cancelling again: %d, want 409", status)
				}

				// Undo it: the overview offers it, the series renews again; a
				// second undo finds nothing waiting (409).
				if !strings.Contains(page, "/my/subscription/"+kariSub+"/undo") {
					t.Errorf("the overview of a cancelled subscription offers no undo")
				}
				status, page = b.do("POST", "/my/subscription/"+kariSub+"/undo", url.Values{"csrf": {b.csrf(page)}})
				if status != http.StatusOK || !strings.Contains(page, "Oppsigelsen er angret") {
					t.Errorf("undo: %d", status)
				}
				if got, err := e.Store.Subscription(dctx, kariSub); err != nil || got.CancelledAt != nil || got.RenewAt == nil {
					t.Errorf("the subscription is still cancelled after the undo: %v", err)
				}
				if status, _ := b.do("POST", "/my/subscription/"+kariSub+"/undo", url.Values{"csrf": {b.csrf(page)}}); status != http.StatusConflict {
					t.Errorf("undoing again: %d, want 409", status)
				}

				// A deletion request: a task for the merchant, shown on the
				// profile page with the date of the answer; asking again while
				// it is open changes nothing; a bad message is a 400 page.
				_, page = b.do("GET", "/my/profile", nil)
				if status, _ := b.do("POST", "/my/deletion", url.Values{"csrf": {b.csrf(page)}, "message": {"a\x01b"}}); status != http.StatusBadRequest {
					t.Errorf("a deletion request with a control character: %d, want 400", status)
				}
				status, page = b.do("POST", "/my/deletion", url.Values{"csrf": {b.csrf(page)}, "message": {"Slett meg, takk."}})
				if status != http.StatusOK || !strings.Contains(page, "Forespørselen om sletting er sendt") || !strings.Contains(page, "Vi svarer senest") || strings.Contains(page, `action="/my/deletion"`) {
					t.Errorf("deletion request: %d", status)
				}
				var reqs []privacy.Request
				err = e.Store.InTx(dctx, func(tx *store.Tx) error {
					var err error
					reqs, _, err = privacy.List(dctx, tx, privacy.Filter{SubscriberID: e.kari.ID}, store.Page{Limit: 10})
					return err
				})
				if err != nil || len(reqs) != 1 || reqs[0].Message != "Slett meg, takk." || reqs[0].UserEmail != "kari@example.no" || reqs[0].Status != privacy.StatusOpen {
					t.Errorf("the deletion requests: %+v %v", reqs, err)
				}

				// Bad input is a 400 page, a form without the token a 403.
				for _, path := range []string{"/my/invoice/not-an-id", "/my/invoice/" + kariInvs[0].ID + "?format=docx", "/my/login?tenant=a%01b"} {
					if status, _ := b.do("GET", path, nil); status != http.StatusBadRequest {
						t.Errorf("%s: %d, want 400", path, status)
					}
				}
				if status, _ := b.do("POST", "/my/profile", url.Values{"name": {"x"}}); status != http.StatusForbidden {
					t.Errorf("a form without the token: %d, want 403", status)
				}
				if status, _ := b.do("GET", "/my/login?tenant=nobody-here", nil); status != http.StatusNotFound {
					t.Errorf("an unknown tenant: %d, want 404", status)
				}

				// Logout ends Min side's session and the identity provider's:
				// the next login shows the form again.
				_, page = b.do("GET", "/my/", nil)
				status, _ = b.do("POST", "/my/logout", url.Values{"csrf": {b.csrf(page)}})
				if status != http.StatusOK || b.last.Request.URL.Path != "/my/login" {
					t.Errorf("logout: %d at %s", status, b.last.Request.URL)
				}
				if _, _ = b.do("GET", "/my/", nil); b.last.Request.URL.Path != "/my/login" {
					t.Errorf("after logout /my/ is at %s", b.last.Request.URL)
				}
				b.do("GET", "/my/login?tenant=demo", nil)
				if !strings.Contains(b.last.Request.URL.Path, "/idp/login") {
					t.Errorf("after logout the identity provider still has a session: at %s", b.last.Request.URL)
				}
			})

			t.Run("RoutesBySession", func(t *testing.T) {
				anon := e.browser(t)
				anon.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
				kari := e.browser(t)
				page := kari.login(demo.TenantName, e.creds.MyEmail, e.creds.MyPassword)
				token := kari.csrf(page)
				kari.c.CheckRedirect = anon.c.CheckRedirect
				fill := strings.NewReplacer("{id}", kariInvs[0].ID, "{file}", "minside.css", "{$}", "")
				for _, rt := range minside.Routes() {
					method, path, _ := strings.Cut(rt.Pattern, " ")
					if strings.Contains(path, "/subscription/") {
						path = strings.ReplaceAll(path, "{id}", kariSub)
					}
					path = fill.Replace(path)
					var form url.Values
					if method == "POST" {
						form = url.Values{"csrf": {token}, "name": {e.kari.Name}, "email": {e.kari.Email}, "country": {"NO"}}
					}
					status, _ := anon.do(method, path, form)
					switch {
					case rt.Public:
						if status >= 400 && path != "/my/callback" {
							t.Errorf("%s without a session: %d, want it served", rt.Pattern, status)
						}
					case method == "GET":
						if loc := anon.last.Header.Get("Location"); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/my/login?next=") {
							t.Errorf("%s without a session: %d to %q, want 303 to the login", rt.Pattern, status, loc)
						}
					default:
						if status != http.StatusUnauthorized {
							t.Errorf("%s without a session: %d, want 401", rt.Pattern, status)
						}
					}
					if rt.Public || path == "/my/logout" {
						continue
					}
					// (The subscription was cancelled by Pages: cancelling again is a 409.)
					if status, _ := kari.do(method, path, form); status != http.StatusOK && status != http.StatusSeeOther && status != http.StatusConflict {
						t.Errorf("%s with a session: %d", rt.Pattern, status)
					}
				}
				if status, _ := anon.do("GET", "/my/callback", nil); status != http.StatusBadRequest {
					t.Errorf("a callback without a login under way: %d, want 400", status)
				}
			})

			t.Run("Isolation", func(t *testing.T) {
				kari := e.browser(t)
				page := kari.login(demo.TenantName, e.creds.MyEmail, e.creds.MyPassword)
				per := e.browser(t)
				perPage := per.login(e.otherTenant.Name, "per@annen.example", otherPassword)
				if strings.Contains(perPage, e.kari.Name) {
					t.Error("another tenant's subscriber sees Kari")
				}
				walk := func(b *browser, token, inv, sub string) {
					for _, path := range []string{"/my/invoice/" + inv, "/my/invoice/" + inv + "?format=pdf"} {
						if status, _ := b.do("GET", path, nil); status != http.StatusNotFound {
							t.Errorf("%s: %d, want 404", path, status)
						}
					}
					if status, _ := b.do("POST", "/my/subscription/"+sub+"/cancel", url.Values{"csrf": {token}}); status != http.StatusNotFound {
						t.Errorf("cancel %s: %d, want 404", sub, status)
					}
				}
				walk(kari, kari.csrf(page), olaInvs[0].ID, olaSub)
				walk(per, per.csrf(perPage), kariInvs[0].ID, kariSub)
				if got, _ := e.Store.Subscription(dctx, olaSub); got.CancelledAt != nil {
					t.Error("Ola's subscription was cancelled by another subscriber")
				}
				// Another session's token is refused.
				if status, _ := kari.do("POST", "/my/profile", url.Values{"csrf": {per.csrf(perPage)}, "name": {"x"}}); status != http.StatusForbidden {
					t.Errorf("another session's token: %d, want 403", status)
				}
			})
		})
	}
}

func TestTextsComplete(t *testing.T) {
	missing := minside.MissingTexts()
	for _, m := range missing {
		t.Error(m)
	}
}
