// Package console is the merchant console: the web pages the people who
// run a tenant's subscriptions every day use (customer service, finance,
// administrators), served by `kadens serve` at /console/. It is a surface
// like internal/api: its handlers decode a form, call the application
// layer (internal/app) and render a page; it opens no transaction of its
// own. Staff users, sessions and second factors are the staff wing's
// (internal/staff). Every change made here runs in a context that names
// the staff user as the actor (internal/actor), so the events it causes
// are the audit log's. docs/CONSOLE.md describes the pages, the roles and
// the security model.
//
// The pages are server-rendered html/template with one embedded style
// sheet and no script: every action is an ordinary form, so a page works
// with a keyboard alone, on a phone and without JavaScript, and there is
// no build step (docs/ARCHITECTURE.md says why).
package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/throttle"
	"github.com/kadens/kadens/internal/webui"
)

// Options configure a Console.
type Options struct {
	App   *app.App
	Staff *staff.Directory
	// Store resolves the tenant a staff user names at login (by name) and
	// the tenant's name for the pages; nothing else is read from it here.
	Store *store.Store
	Log   *slog.Logger
	// BaseURL is the public address of the main listener, for the
	// set-password links the user page shows ("" = the request's host).
	BaseURL string
	// SecureCookies sets the Secure attribute on the session cookie: on
	// whenever the console is served over https (config: base URL).
	SecureCookies bool
	// TimeZone is how times are shown (default Europe/Oslo).
	TimeZone *time.Location
	// Limits bound failed logins like the subscriber login's
	// (idp.DefaultLoginLimits): per account and per address.
	Limits Limits
	// Now is the wall clock (tests move it).
	Now func() time.Time
}

// Limits bound failed staff logins: an account (tenant and e-mail) and an
// address each have a bucket of failures that refills at one per Every.
type Limits struct {
	AccountBurst int
	AccountEvery time.Duration
	AddressBurst int
	AddressEvery time.Duration
}

// DefaultLimits are the subscriber login's (idp.DefaultLoginLimits): an
// account 5 failures, then one per 30 s; an address 50, then one per 2 s
// (an office shares one address).
var DefaultLimits = Limits{AccountBurst: 5, AccountEvery: 30 * time.Second, AddressBurst: 50, AddressEvery: 2 * time.Second}

// Console serves the console's pages.
type Console struct {
	app       *app.App
	staff     *staff.Directory
	store     *store.Store
	log       *slog.Logger
	secure    bool
	base      string
	zone      *time.Location
	now       func() time.Time
	byAccount *throttle.Failures
	byAddress *throttle.Failures
	pages     map[string]*template.Template
	handler   http.Handler
}

// Prefix is where the console is served on the main listener.
const Prefix = "/console"

//go:embed templates/*.html
var assets embed.FS

// New returns a console over o.
func New(o Options) (*Console, error) {
	c := &Console{app: o.App, staff: o.Staff, store: o.Store, log: o.Log, secure: o.SecureCookies, base: strings.TrimSuffix(o.BaseURL, "/"), zone: o.TimeZone, now: o.Now}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.zone == nil {
		z, err := time.LoadLocation("Europe/Oslo")
		if err != nil {
			return nil, fmt.Errorf("console: time zone: %w", err)
		}
		c.zone = z
	}
	if c.now == nil {
		c.now = time.Now
	}
	l := o.Limits
	if l == (Limits{}) {
		l = DefaultLimits
	}
	c.byAccount = throttle.New(l.AccountEvery, l.AccountBurst, 100_000)
	c.byAddress = throttle.New(l.AddressEvery, l.AddressBurst, 100_000)
	pages, err := webui.ParsePages(assets, c.funcs())
	if err != nil {
		return nil, err
	}
	c.pages = pages
	c.handler = c.routes()
	return c, nil
}

// Handler serves the console under Prefix (the caller mounts it there
// without stripping the prefix, so the pages' links are absolute).
func (c *Console) Handler() http.Handler { return c.handler }

// access is who may use a route.
type access uint8

const (
	// public routes need no session: the login, second-factor and
	// set-password pages, the style sheet.
	public access = 1 << iota
	// pending is a session whose second factor is still to be given: it
	// may only give it (or log out).
	pending
	roleSupport
	roleFinance
	roleAdmin
)

// The role sets of the routes (docs/CONSOLE.md, "Roles"): every staff
// user may look; support changes subscriptions, finance money, admin the
// tenant's setup and its users. An admin may do everything.
const (
	anyStaff     = roleSupport | roleFinance | roleAdmin
	supportWork  = roleSupport | roleAdmin
	financeWork  = roleFinance | roleAdmin
	adminWork    = roleAdmin
	auditReaders = roleFinance | roleAdmin
)

func roleAccess(r staff.Role) access {
	switch r {
	case staff.RoleSupport:
		return roleSupport
	case staff.RoleFinance:
		return roleFinance
	case staff.RoleAdmin:
		return roleAdmin
	}
	return 0
}

// route is one page or form of the console.
type route struct {
	pattern string
	access  access
	handle  func(c *Console, w http.ResponseWriter, r *http.Request, s *session)
}

// routes is every route of the console, each with who may use it; the
// route × role test walks this table.
var routes = []route{
	{"GET /console/static/{file}", public, (*Console).static},
	{"GET /console/login", public, (*Console).loginPage},
	{"POST /console/login", public, (*Console).login},
	{"GET /console/setpassword", public, (*Console).setPasswordPage},
	{"POST /console/setpassword", public, (*Console).setPassword},
	{"GET /console/login/code", pending, (*Console).codePage},
	{"POST /console/login/code", pending, (*Console).code},
	{"POST /console/logout", pending | anyStaff, (*Console).logout},
	{"GET /console/{$}", anyStaff, (*Console).home},
	{"GET /console/search", anyStaff, (*Console).search},
	{"GET /console/subscriber/{id}", anyStaff, (*Console).subscriber},
	{"GET /console/subscription/{id}", anyStaff, (*Console).subscription},
	{"POST /console/subscription/{id}/cancel", supportWork, (*Console).cancel},
	{"POST /console/subscription/{id}/cancel/preview", supportWork, (*Console).cancelPreview},
	{"POST /console/subscription/{id}/cancel/undo", supportWork, (*Console).undoCancel},
	{"POST /console/subscription/{id}/change", supportWork, (*Console).changePlan},
	{"POST /console/subscription/{id}/change/{change}/revoke", supportWork, (*Console).revokeChange},
	{"GET /console/invoices", anyStaff, (*Console).invoices},
	{"GET /console/subscriptions", anyStaff, (*Console).subscriptionsList},
	{"GET /console/payments", anyStaff, (*Console).paymentsList},
	{"GET /console/invoice/{id}", anyStaff, (*Console).invoice},
	{"GET /console/invoice/{id}/pdf", anyStaff, (*Console).invoicePDF},
	{"POST /console/invoice/{id}/payment", financeWork, (*Console).recordPayment},
	{"POST /console/invoice/{id}/credit", financeWork, (*Console).creditInvoice},
	{"GET /console/audit", auditReaders, (*Console).audit},
	{"GET /console/deletions", supportWork, (*Console).deletions},
	{"POST /console/deletions/{id}/resolve", supportWork, (*Console).resolveDeletion},
	{"GET /console/webhooks", adminWork, (*Console).webhooks},
	{"POST /console/webhooks/{id}/deliveries/{delivery}/redeliver", adminWork, (*Console).redeliver},
	{"GET /console/clock", adminWork, (*Console).clock},
	{"POST /console/clock", adminWork, (*Console).advanceClock},
	{"GET /console/users", adminWork, (*Console).users},
	{"POST /console/users", adminWork, (*Console).createUser},
	{"POST /console/users/{id}", adminWork, (*Console).updateUser},
	{"POST /console/users/{id}/link", adminWork, (*Console).userLink},
	{"GET /console/account", anyStaff, (*Console).account},
	{"POST /console/account/totp", anyStaff, (*Console).beginTOTP},
	{"POST /console/account/totp/confirm", anyStaff, (*Console).confirmTOTP},
	{"POST /console/account/totp/disable", anyStaff, (*Console).disableTOTP},
}

// session is the logged-in staff user of a request (nil on public
// routes without one).
type session struct {
	staff.Session
	User   staff.User
	Tenant store.Tenant
}

// maxForm bounds a form body: the console's forms are a few fields.
const maxForm = 64 << 10

func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.Handle(rt.pattern, c.guard(rt))
	}
	// On a listener of its own, the root leads to the console.
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
	})
	// webui.Surface adds the 404 page, Go's cross-origin protection (a
	// state-changing request a browser marks as cross-site, or from
	// another Origin, is refused; the session's own token in every form,
	// checkToken, covers older browsers) and the security headers.
	return webui.Surface(mux, Prefix, func(w http.ResponseWriter, r *http.Request, status int, key string) {
		c.fail(w, r, nil, status, key)
	})
}

// guard admits a request to rt when its session may use it: no session on
// a route that needs one goes to the login page, a session whose second
// factor is pending goes to the code page, and a role the route does not
// allow is a 403 page. It puts the tenant and the staff user as the actor
// into the request's context, bounds the form and checks the form's token
// on every POST that has a session.
func (c *Console) guard(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		failed := func(status int, key string) { c.fail(w, r, nil, status, key) }
		s, ok := webui.Admit(w, r, c.log, maxForm, c.session, failed)
		if !ok {
			return
		}
		switch {
		case rt.access&public != 0:
		case s == nil:
			webui.ToLogin(w, r, Prefix+"/login", failed)
			return
		case s.SecondFactorPending && rt.access&pending == 0:
			http.Redirect(w, r, Prefix+"/login/code", http.StatusSeeOther)
			return
		case !s.SecondFactorPending && rt.access&roleAccess(s.User.Role) == 0:
			c.fail(w, r, s, http.StatusForbidden, "forbidden")
			return
		}
		if s != nil && rt.access&public == 0 {
			if r.Method == http.MethodPost && !s.tokenMatches(r.PostFormValue("csrf")) {
				c.fail(w, r, s, http.StatusForbidden, "badToken")
				return
			}
			ctx := tenancy.With(r.Context(), s.TenantID)
			ctx = actor.With(ctx, actor.Actor{Kind: actor.Staff, ID: s.User.ID, Label: s.User.Email})
			r = r.WithContext(ctx)
		}
		rt.handle(c, w, r, s)
	})
}

// cookieName is the session cookie. With Secure cookies it carries the
// __Host- prefix, which a browser only accepts from a secure origin for
// the whole host, so no other path or subdomain can plant or shadow it.
func (c *Console) cookieName() string { return webui.CookieName("kadens-console", c.secure) }

// session reads the request's session; nil when it has none or it ended.
func (c *Console) session(r *http.Request) (*session, error) {
	token := webui.CookieValue(r, c.cookieName())
	if token == "" {
		return nil, nil
	}
	sess, u, err := c.staff.Session(r.Context(), token)
	if errors.Is(err, staff.ErrNoSession) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t, err := c.store.TenantByID(r.Context(), sess.TenantID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &session{Session: sess, User: u, Tenant: t}, nil
}

// setSession gives the browser the session cookie: HttpOnly (no script
// reads it), SameSite=Lax (a cross-site form post does not carry it),
// Secure behind https, and no Max-Age, so it ends with the browser too;
// the server's idle and absolute timeouts end it in any case.
func (c *Console) setSession(w http.ResponseWriter, token string) {
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(), Value: token, Path: "/", HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteLaxMode})
}

func (c *Console) clearSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteLaxMode})
}

// static serves the shared style sheet (internal/webui).
func (c *Console) static(w http.ResponseWriter, r *http.Request, _ *session) {
	if r.PathValue("file") != "console.css" {
		c.fail(w, r, nil, http.StatusNotFound, "notFound")
		return
	}
	webui.ServeCSS(w)
}
