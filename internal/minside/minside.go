// Package minside is Min side, the subscribers' own pages (issue 30):
// served by `kadens serve` at /my/, where a newspaper's reader logs in
// with the tenant's subscriber login (Kadens' own OpenID provider at
// /idp, the authorization code flow with PKCE) and sees their
// subscriptions, the next invoice, invoices, credit notes and payments,
// cancels, and keeps their contact details and invoice address. It is a
// surface like internal/api and internal/console: its handlers decode a
// form, call the application layer (internal/app) and render a page; it
// opens no transaction of its own. Every request of a logged-in
// subscriber runs in a context with the tenant and the subscriber user as
// the actor (internal/actor), so each change is recorded as theirs.
// docs/MINSIDE.md describes the login, the session and the pages.
package minside

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gorilla/securecookie"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/webui"
)

// Prefix is where Min side is served.
const Prefix = "/my"

// Client is the tenant's Min side login client at the identity provider.
type Client struct{ ID, Secret string }

// Options configure Min side.
type Options struct {
	App *app.App
	// Store resolves the tenant a login names (by name); nothing else is
	// read from it here.
	Store *store.Store
	Log   *slog.Logger
	// BaseURL is Min side's public origin: the login's redirect address is
	// BaseURL/my/callback, the logout's BaseURL/my/login.
	BaseURL string
	// Issuer is the identity provider's URL (config: idp URL) and
	// ClaimsNamespace the prefix of its tenant and subscriber claims.
	Issuer          string
	ClaimsNamespace string
	// Client returns the tenant's Min side login client, registering it
	// on first use (internal/server does, through internal/idp).
	Client func(ctx context.Context, tenantID string) (Client, error)
	// User reports the subscriber a subscriber user acts for now, and
	// false when the user is gone or disabled: a session ends with it.
	User func(ctx context.Context, tenantID, userID string) (subscriberID string, ok bool, err error)
	// SealKeys seal the session cookie (a 32-byte key to authenticate, a
	// 32-byte key to encrypt; internal/server derives them from the
	// master key).
	HashKey, BlockKey []byte
	// HTTP is the client for the identity provider's endpoints (discovery,
	// key set, token); nil is a client with a 10 s timeout.
	HTTP *http.Client
	// TimeZone is how times are shown (default Europe/Oslo).
	TimeZone *time.Location
}

// SessionTTL is how long a Min side session lasts after the login, as
// the identity provider's own login session (idp.SessionTTL).
const SessionTTL = 12 * time.Hour

// loginTTL bounds the time from the redirect to the login page to the
// callback (the identity provider's login request lives 15 minutes).
const loginTTL = 15 * time.Minute

// MinSide serves the pages.
type MinSide struct {
	o       Options
	log     *slog.Logger
	secure  bool
	base    string
	zone    *time.Location
	http    *http.Client
	seal    *securecookie.SecureCookie
	flow    *securecookie.SecureCookie
	pages   map[string]*template.Template
	handler http.Handler

	mu       sync.Mutex
	provider *oidc.Provider
}

//go:embed templates/*.html
var assets embed.FS

// New returns Min side over o.
func New(o Options) (*MinSide, error) {
	m := &MinSide{o: o, log: o.Log, base: strings.TrimSuffix(o.BaseURL, "/"), zone: o.TimeZone, http: o.HTTP}
	m.secure = strings.HasPrefix(m.base, "https://")
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.http == nil {
		m.http = &http.Client{Timeout: 10 * time.Second}
	}
	if m.zone == nil {
		z, err := time.LoadLocation("Europe/Oslo")
		if err != nil {
			return nil, fmt.Errorf("minside: time zone: %w", err)
		}
		m.zone = z
	}
	if len(o.HashKey) < 32 || len(o.BlockKey) != 32 {
		return nil, fmt.Errorf("minside: the cookie keys must have 32 bytes each, not %d and %d", len(o.HashKey), len(o.BlockKey))
	}
	// gorilla/securecookie seals with AES-CTR and authenticates with
	// HMAC-SHA256 over the name, the time and the value, and refuses a
	// value older than its MaxAge: a session cannot be read, changed or
	// kept beyond its time by the browser.
	m.seal = securecookie.New(o.HashKey, o.BlockKey).MaxAge(int(SessionTTL / time.Second))
	m.flow = securecookie.New(o.HashKey, o.BlockKey).MaxAge(int(loginTTL / time.Second))
	pages, err := webui.ParsePages(assets, m.funcs())
	if err != nil {
		return nil, fmt.Errorf("minside: %w", err)
	}
	m.pages = pages
	m.handler = m.routes()
	return m, nil
}

// Handler serves Min side under Prefix (mounted without stripping it).
func (m *MinSide) Handler() http.Handler { return m.handler }

// RedirectURI and LogoutURI are what the login client registers.
func RedirectURI(base string) string { return strings.TrimSuffix(base, "/") + Prefix + "/callback" }

// LogoutURI is where the identity provider sends the browser after a
// logout.
func LogoutURI(base string) string { return strings.TrimSuffix(base, "/") + Prefix + "/login" }

// handler serves one route; s is nil on the public ones.
type handler func(m *MinSide, w http.ResponseWriter, r *http.Request, s *session)

// publicRoutes need no session: the style sheet and the login's two
// steps. Every other route (sessionRoutes) needs a logged-in subscriber;
// TestMinSide's route × session walk goes through both.
var publicRoutes = map[string]handler{
	"GET /my/static/{file}": (*MinSide).static,
	"GET /my/login":         (*MinSide).login,
	"GET /my/callback":      (*MinSide).callback,
}

var sessionRoutes = map[string]handler{
	"POST /my/logout":                   (*MinSide).logout,
	"GET /my/{$}":                       (*MinSide).overview,
	"GET /my/invoices":                  (*MinSide).invoices,
	"GET /my/invoice/{id}":              (*MinSide).invoice,
	"POST /my/subscription/{id}/cancel": (*MinSide).cancel,
	"POST /my/subscription/{id}/undo":   (*MinSide).undoCancel,
	"GET /my/profile":                   (*MinSide).profile,
	"POST /my/profile":                  (*MinSide).saveProfile,
	"GET /my/export":                    (*MinSide).export,
	"POST /my/deletion":                 (*MinSide).requestDeletion,
}

// session is the logged-in subscriber user: what the sealed cookie holds.
type session struct {
	TenantID     string
	TenantName   string
	UserID       string
	Email        string
	SubscriberID string
	// IDToken is the login's ID token, the hint the identity provider's
	// logout needs to end its own session too.
	IDToken string
	// CSRF is this session's form token.
	CSRF string
}

// maxForm bounds a form body: Min side's forms are a few fields.
const maxForm = 64 << 10

func (m *MinSide) routes() http.Handler {
	mux := http.NewServeMux()
	for pattern, h := range publicRoutes {
		mux.Handle(pattern, m.guard(h, true))
	}
	for pattern, h := range sessionRoutes {
		mux.Handle(pattern, m.guard(h, false))
	}
	return webui.Surface(mux, Prefix, func(w http.ResponseWriter, r *http.Request, status int, key string) {
		m.fail(w, r, nil, status, key)
	})
}

// guard admits a request to rt: without a session a page leads to the
// login and a form is a 401 page; a session's form must carry its token.
// The request's context gets the tenant and the subscriber user as the
// actor.
func (m *MinSide) guard(h handler, public bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		failed := func(status int, key string) { m.fail(w, r, nil, status, key) }
		if public {
			if webui.ReadForm(w, r, maxForm) {
				h(m, w, r, nil)
			} else {
				failed(http.StatusBadRequest, "badForm")
			}
			return
		}
		s, ok := webui.Admit(w, r, m.log, maxForm, m.session, failed)
		if !ok {
			return
		}
		if s == nil {
			webui.ToLogin(w, r, Prefix+"/login", failed)
			return
		}
		if r.Method == http.MethodPost && !webui.TokenMatches(r.PostFormValue("csrf"), s.CSRF) {
			m.fail(w, r, s, http.StatusForbidden, "badToken")
			return
		}
		ctx := tenancy.With(r.Context(), s.TenantID)
		ctx = actor.With(ctx, actor.Actor{Kind: actor.Subscriber, ID: s.UserID, Label: s.Email})
		h(m, w, r.WithContext(ctx), s)
	})
}

// cookieName is the session cookie; behind https with the __Host- prefix
// (only from a secure origin, for the whole host).
func (m *MinSide) cookieName() string { return webui.CookieName("kadens-my", m.secure) }

// flowCookie carries a login under way (flow).
func (m *MinSide) flowCookie() string { return webui.CookieName("kadens-my-login", m.secure) }

// session opens the request's session cookie; nil when there is none,
// it is not ours, it is older than SessionTTL, or its user is disabled,
// deleted or now acts for another subscriber.
func (m *MinSide) session(r *http.Request) (*session, error) {
	var s session
	if v := webui.CookieValue(r, m.cookieName()); v == "" || m.seal.Decode(m.cookieName(), v, &s) != nil {
		return nil, nil
	}
	sub, ok, err := m.o.User(r.Context(), s.TenantID, s.UserID)
	if err != nil {
		return nil, err
	}
	if !ok || sub != s.SubscriberID {
		return nil, nil
	}
	if _, ok, err := m.o.App.Tenant(r.Context(), s.TenantID); err != nil || !ok {
		return nil, err
	}
	return &s, nil
}

// setCookie sets a sealed cookie: HttpOnly, SameSite=Lax (a cross-site
// form post does not carry it), Secure behind https, no Max-Age (it ends
// with the browser; the seal's time ends it in any case).
func (m *MinSide) setCookie(w http.ResponseWriter, sc *securecookie.SecureCookie, name string, v any) error {
	enc, err := sc.Encode(name, v)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: enc, Path: "/", HttpOnly: true, Secure: m.secure, SameSite: http.SameSiteLaxMode})
	return nil
}

func (m *MinSide) clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: m.secure, SameSite: http.SameSiteLaxMode})
}

// static serves the shared style sheet (internal/webui).
func (m *MinSide) static(w http.ResponseWriter, r *http.Request, _ *session) {
	if r.PathValue("file") != "minside.css" {
		m.fail(w, r, nil, http.StatusNotFound, "notFound")
		return
	}
	webui.ServeCSS(w)
}
