// Package api is the main HTTP API of Kadens ({base_url}). Every operation
// is declared once, as a route that carries both its handler and its
// OpenAPI description, so the served API and the published document cannot
// drift apart. The conventions of every handler (errors, idempotency,
// authentication) live in this package, and the handler kit (decoding,
// paging, answers) in internal/apikit, which the payment-provider wings
// use for their own API files (autogiro/api.go, avtalegiro/api.go).
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/auth"
	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/bookkeeping"
	"github.com/kadens/kadens/internal/delivery"
	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/rowcache"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/vipps"
	"github.com/kadens/kadens/internal/webhook"
)

// Server is the main API.
type Server struct {
	store    *store.Store
	verifier *auth.Verifier
	engine   *engine.Engine
	// app is the application layer every handler calls.
	app      *app.App
	log      *slog.Logger
	metrics  *Metrics
	baseURL  string
	idpURL   string
	limit    int64
	now      func() time.Time
	webhooks *webhook.Dispatcher
	egress   egress.Policy
	// providers check payment agreements by provider type.
	providers *provider.Registry
	peppol    *peppol.Lookup
	// users hashes subscriber users' passwords.
	users *subscriberuser.Directory

	// kit is what the handler kit's answers and the wings' handlers use
	// of the server (kit.go).
	kit apikit.Env

	mux *http.ServeMux
	// notFound answers a path that is not canonical (CanonicalPath): 404,
	// no body, observed like any unmatched request.
	notFound http.Handler
	routes   []route
	doc      []byte
	// echo maps a path to the type of the resource its GET answers with,
	// whose properties a PUT to the path accepts and ignores (apikit.DecodeJSON).
	echo map[string]reflect.Type
	// renderedSubs and renderedInvoices hold list rows' JSON by version
	// (listing.go).
	renderedSubs     *rowcache.Cache[renderedSubscription]
	renderedInvoices *rowcache.Cache[renderedInvoice]
}

// Options configure the API server.
type Options struct {
	Store     *store.Store
	Verifier  *auth.Verifier
	Engine    *engine.Engine
	Log       *slog.Logger
	Metrics   *Metrics
	BaseURL   string
	IdPURL    string // the identity provider's public address; the document names its token endpoint
	BodyLimit int64
	Now       func() time.Time
	// Webhooks sends validation handshakes.
	Webhooks *webhook.Dispatcher
	// Egress is the policy every URL Kadens will call is checked against
	// when it is registered (webhooks, AvtaleGiro banks); the zero value
	// allows public addresses only.
	Egress egress.Policy
	// Providers are the registered payment-agreement provider types
	// (internal/server/providers.go).
	Providers *provider.Registry
	// Peppol looks up invoice-network recipients (nil: lookups answer 503).
	Peppol *peppol.Lookup
	// App is the application layer the handlers call; when nil the API
	// builds its own from Store, Engine, Providers and Now.
	App *app.App
	// Vipps is the Vipps wing (the one the provider registration uses, so
	// its access tokens are shared); nil builds one without a master key,
	// whose merchant cannot be set (tests of other surfaces).
	Vipps *vipps.Wing
}

// New builds the API with all its routes and its OpenAPI document.
func New(o Options) (*Server, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{
		store: o.Store, verifier: o.Verifier, engine: o.Engine, log: o.Log, metrics: o.Metrics,
		baseURL: strings.TrimRight(o.BaseURL, "/"), idpURL: strings.TrimRight(o.IdPURL, "/"), limit: o.BodyLimit, now: func() time.Time { return now().UTC() },
		mux:          http.NewServeMux(),
		renderedSubs: rowcache.New[renderedSubscription](), renderedInvoices: rowcache.New[renderedInvoice](),
	}
	s.webhooks, s.egress = o.Webhooks, o.Egress
	if s.providers = o.Providers; s.providers == nil {
		return nil, errors.New("api: no payment providers registered")
	}
	s.peppol = o.Peppol
	// Built once: every list and create answer goes through it.
	s.kit = apikit.Env{Store: s.store, Now: s.now, TenantNow: s.tenantNow, BaseURL: s.baseURL, Egress: s.egress, BodyLimit: s.limit}
	if s.app = o.App; s.app == nil {
		s.app = app.New(app.Options{Store: o.Store, Engine: o.Engine, Providers: o.Providers, Now: now})
	}
	s.users = &subscriberuser.Directory{Store: o.Store, Now: s.now}
	s.organizationRoutes()
	s.catalogRoutes()
	s.subscriberRoutes()
	s.orderRoutes()
	s.subscriptionRoutes()
	s.priceChangeRoutes()
	s.subscriptionChainRoutes()
	s.timelineRoutes()
	s.upcomingRoutes()
	s.cancelPreviewRoutes()
	s.deletionRequestRoutes()
	s.testClockRoutes()
	s.eventRoutes()
	s.webhookRoutes()
	s.loginClientRoutes()
	s.invoiceRoutes()
	s.peppolRoutes()
	s.paymentDemandRoutes()
	s.subscriberAccountRoutes()
	s.dunningRoutes()
	s.creditNoteRoutes()
	s.paymentAgreementRoutes()
	s.paymentRoutes()
	s.addKit(autogiro.Routes(s.kit))
	s.addKit(avtalegiro.Routes(s.kit))
	vw := o.Vipps
	if vw == nil {
		vw = vipps.New(o.Store, nil, o.Egress)
	}
	s.addKit(vw.Routes(s.kit))
	s.addKit(delivery.Routes(s.kit))
	s.addKit(delivery.DistributionRoutes(s.kit))
	s.addKit(bookkeeping.Routes(s.kit))
	s.authorizationRoutes()
	doc, err := s.openAPI()
	if err != nil {
		return nil, err
	}
	s.doc = doc
	s.docRoutes()
	s.echo = echoTypes(s.routes)
	s.mux.Handle("/", Observe("api", "unmatched", s.metrics, s.log, http.HandlerFunc(s.unmatched)))
	s.notFound = Observe("api", "unmatched", s.metrics, s.log, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	}))
	return s, nil
}

// Handler returns the API's root handler. Unknown paths are 404 and known
// paths with another method 405, both without a body. Paths match
// case-insensitively and with a trailing slash (normalizePath); a path that
// is not canonical is 404 (CanonicalPath).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.route) }

// CanonicalPath reports whether p is a path as Kadens' routes spell them:
// no empty segment ("//"), no "." or ".." segment (a trailing slash is
// allowed). Go's ServeMux answers any other path with a redirect to its
// cleaned form (/subscription//cancel to /subscription/cancel), which
// would turn a client's mistake into a request for another resource; the
// API answers 404 instead (product decisions §2). A ServeMux in front of
// the API must send such paths here rather than handle them itself.
func CanonicalPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	return c == p || (c != "/" && c+"/" == p)
}

// route dispatches r, after normalizing a path spelled another way than the
// route table's (POST /Order/ for POST /order).
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if !CanonicalPath(r.URL.Path) {
		s.notFound.ServeHTTP(w, r)
		return
	}
	if p, ok := s.normalizePath(r); ok {
		r.URL.Path, r.URL.RawPath = p, ""
	}
	s.mux.ServeHTTP(w, r)
}

// normalizePath returns the path r is meant for when r's own path matches
// no route but its lower-case form without a trailing slash matches one
// (with any method, so that the 405 rule still applies). Route paths are
// lower case and their parameters are uuids, which the handlers read
// case-insensitively. Paths the mux matches as written (the Swagger UI's
// assets, whose names have case) are left alone; a well-formed request
// costs one scan of its path.
func (s *Server) normalizePath(r *http.Request) (string, bool) {
	p := r.URL.Path
	if len(p) <= 1 || (!strings.HasSuffix(p, "/") && !strings.ContainsFunc(p, func(c rune) bool { return 'A' <= c && c <= 'Z' })) {
		return "", false
	}
	if _, pattern := s.mux.Handler(r); pattern != "" && pattern != "/" {
		return "", false
	}
	norm := strings.ToLower(p)
	if len(norm) > 1 {
		norm = strings.TrimRight(norm, "/")
	}
	if norm == p || norm == "" {
		return "", false
	}
	probe := r.Clone(r.Context())
	probe.URL.Path, probe.URL.RawPath = norm, ""
	if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
		return norm, true
	}
	if len(s.allowed(probe)) > 0 {
		return norm, true
	}
	return "", false
}

// unmatched answers requests no route takes. It is registered as the
// catch-all "/" pattern, so a matched request is routed once, not twice.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	if allow := s.allowed(r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	w.WriteHeader(http.StatusNotFound)
}

func (s *Server) allowed(r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "" && p != "/" {
			allow = append(allow, m)
		}
	}
	return allow
}

// Routes lists every served operation as "METHOD /path/{param}".
func (s *Server) Routes() []string {
	out := make([]string, 0, len(s.routes))
	for _, rt := range s.routes {
		out = append(out, rt.method+" "+rt.path)
	}
	slices.Sort(out)
	return out
}

// AdministrativeRoutes lists the operations that admit administrative and
// machine tokens only ("METHOD /path/{param}"): every route that is neither
// public nor open to subscriber tokens.
func (s *Server) AdministrativeRoutes() []string {
	var out []string
	for _, rt := range s.routes {
		if !rt.public && !rt.subscriber {
			out = append(out, rt.method+" "+rt.path)
		}
	}
	slices.Sort(out)
	return out
}

// route is one API operation: how it is served and how it is documented.
type route struct {
	method  string
	path    string // OpenAPI form: /organization/{id}
	id      string // operationId
	tag     string
	summary string
	desc    string
	// public routes need no token and no tenant (documentation, health).
	public bool
	// subscriber routes also admit subscriber tokens (of the tenant in the
	// header); the handler must then check which user the token is for
	// with auth.Principal.MayActFor (PrincipalFrom). All other routes are
	// administrative and answer 403 to a subscriber token.
	subscriber bool
	// request documents path, query and header parameters (struct tags
	// path:"", query:"", header:"") and the JSON body (json tags).
	request any
	// params documents the path parameters of a request whose body is not
	// an object (request is then the body alone, e.g. an array).
	params any
	// responses by status; a nil body means no body.
	responses []response
	handle    apikit.HandlerFunc
	// rawBody is the media type of a request body that is not JSON
	// (documented as a binary string); maxBody overrides the body limit.
	rawBody string
	maxBody int64
	// query is the set of query parameters request declares; a GET with
	// any other is a 400 (filled by add).
	query map[string]string
	// bare400 answers this route's 400s (a missing tenant header too)
	// without a body: the contract says so for some operations.
	bare400 bool
}

type response struct {
	status  int
	body    any
	desc    string
	headers map[string]string // name → description
	// contentType overrides application/json.
	contentType string
}

// add registers rt on the mux behind the shared middleware.
func (s *Server) add(rt route) {
	s.routes = append(s.routes, rt)
	pattern := rt.method + " " + rt.path
	rt.query = queryNames(rt.request)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.serve(w, r, rt); err != nil {
			writeError(w, r, err)
		}
	})
	s.mux.Handle(pattern, Observe("api", pattern, s.metrics, s.log, h))
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, rt route) error {
	limit := s.limit
	if rt.maxBody > 0 {
		limit = rt.maxBody
	}
	if r.Body != nil && limit > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	if rt.public {
		if err := checkQuery(r.URL.RawQuery); err != nil {
			return err
		}
		return rt.handle(w, r)
	}
	if t := s.echo[rt.path]; t != nil && rt.method == http.MethodPut {
		r = r.WithContext(apikit.WithEcho(r.Context(), t))
	}
	r, err := s.authenticate(r, rt.subscriber)
	if err == nil {
		err = s.serveAuthenticated(w, r, rt)
	}
	if rt.bare400 {
		return bareBadRequest(err)
	}
	return err
}

// serveAuthenticated is serve after authentication.
func (s *Server) serveAuthenticated(w http.ResponseWriter, r *http.Request, rt route) error {
	if err := checkQuery(r.URL.RawQuery); err != nil {
		return err
	}
	if rt.method == http.MethodGet {
		if err := canonicalQuery(r, rt.query); err != nil {
			return err
		}
	}
	return s.idempotent(w, r, rt.handle)
}

// echoTypes maps each path that answers GET with a JSON body to the type
// of that body.
func echoTypes(routes []route) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, rt := range routes {
		if rt.method != http.MethodGet {
			continue
		}
		for _, resp := range rt.responses {
			if resp.status == http.StatusOK && resp.body != nil && resp.contentType == "" {
				out[rt.path] = reflect.TypeOf(resp.body)
			}
		}
	}
	return out
}

func fieldErr(field, msg string) error { return validation.Field(field, "%s", msg) }

// Ready reports whether the API can serve: the database answers.
func (s *Server) Ready(ctx context.Context) error { return s.store.Ping(ctx) }
