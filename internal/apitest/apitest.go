// Package apitest starts a real Kadens server on a loopback listener, on
// each engine under test, and gives tests an authenticated HTTP client for
// it. Tests in every API-facing package use it, so they exercise the same
// path a client does: TCP, middleware, token verification, the store.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/kadens/kadens/client"
	"github.com/kadens/kadens/internal/config"
	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/password"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/server"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// BaseURL is the configured public address of test servers; requests go
// to the real listener, but Location headers and token audiences use this.
const BaseURL = "http://kadens.test"

// Env is a running server with one tenant and an API token for it.
type Env struct {
	t      testing.TB
	Server *server.Server
	Store  *store.Store
	Config *config.Config
	// URL is where the main API really listens.
	URL string
	// Tenant is the default tenant; requests made with Do act for it.
	Tenant Tenant
	client *http.Client
	// errs holds what the server logged at level ERROR (ServerErrors).
	errs *errorSink
	// contract validates every response Raw receives against the served
	// /openapi.json.
	contract *contract
}

// Tenant is a tenant and a valid API token for it.
type Tenant struct {
	ID    string
	Token string
	env   *Env
}

func init() {
	// Test clients need no brute-force resistance; a cheap hash keeps the
	// many tenants tests create from dominating their run time.
	idp.SecretHashCost = bcrypt.MinCost
	// Nor do test subscribers' passwords: argon2id at the production cost
	// (16 MiB) takes about 2 s a hash under the race detector, and the
	// servers tests start hash at the default cost. The cost itself is
	// internal/password's to test.
	password.DefaultParams = password.Params{Memory: 64, Time: 1, Threads: 1}
}

// Each runs fn once per engine with a fresh server. The engines' subtests
// run in parallel: each has its own server and database.
func Each(t *testing.T, fn func(t *testing.T, e *Env)) {
	t.Helper()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			t.Parallel()
			fn(t, Start(t, eng, nil))
		})
	}
}

// EachWith is Each with settings (KADENS_* variables, as for Start) for
// every server, e.g. KADENS_EGRESS_ALLOW_PRIVATE for a test whose fake
// bank or receiver listens on loopback.
func EachWith(t *testing.T, env map[string]string, fn func(t *testing.T, e *Env)) {
	t.Helper()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			t.Parallel()
			fn(t, Start(t, eng, env))
		})
	}
}

// Start runs a server on engine eng. env adds settings as KADENS_*
// variables (e.g. "KADENS_BODY_LIMIT").
func Start(t testing.TB, eng store.Engine, env map[string]string) *Env {
	t.Helper()
	opts := storetest.Options(t, eng)
	vars := map[string]string{
		"KADENS_LISTEN":       "127.0.0.1:0",
		"KADENS_BASE_URL":     BaseURL,
		"KADENS_DATA_DIR":     opts.DataDir,
		"KADENS_DATABASE_URL": opts.DatabaseURL,
		"KADENS_LOG_LEVEL":    "error",
	}
	for k, v := range env {
		vars[k] = v
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg := config.Register(fs, func(k string) string { return vars[k] })
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Finish(); err != nil {
		t.Fatalf("apitest: config: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		var w io.Writer = testWriter{t}
		if _, fuzz := t.(*testing.F); fuzz {
			// A fuzz target's server outlives f.Fuzz's start, after which
			// f.Log panics: its log goes to the standard error.
			w = os.Stderr
		}
		log = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	errs := &errorSink{}
	log = slog.New(&errorLog{Handler: log.Handler(), sink: errs})
	ctx := context.Background()
	// The database is a copy of a migrated template (storetest.Options), so
	// the migration server.New runs finds nothing to do.
	srv, err := server.New(ctx, cfg, log)
	if err != nil {
		t.Fatalf("apitest: server: %v", err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatalf("apitest: start: %v", err)
	}
	e := &Env{t: t, Server: srv, Store: srv.Store, Config: cfg, URL: "http://" + srv.Addrs["main"], errs: errs,
		client: &http.Client{Timeout: 30 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	t.Cleanup(func() {
		// Idle keep-alive connections would make Shutdown wait for them.
		e.client.CloseIdleConnections()
		_ = srv.Shutdown()
	})
	if e.contract, err = loadContract(srv.API.OpenAPI()); err != nil {
		t.Fatal(err)
	}
	e.Tenant = e.NewTenant("tenant-a", true)
	return e
}

// For returns the server as seen from test t (a subtest of the one that
// started it, e.g. one running in parallel): failures of requests made
// through it and its tenants stop t.
func (e *Env) For(t testing.TB) *Env {
	c := *e
	c.t = t
	c.Tenant.env = &c
	return &c
}

// ServerErrors returns what the server logged at level ERROR since the
// last call, and forgets it: a request that was answered well may still
// have failed work it started (an event's fan-out, a delivery's outcome),
// which only the log tells.
func (e *Env) ServerErrors() []string {
	e.errs.mu.Lock()
	defer e.errs.mu.Unlock()
	out := e.errs.msgs
	e.errs.msgs = nil
	return out
}

// errorSink keeps a server's ERROR records, at most 100 between reads.
type errorSink struct {
	mu   sync.Mutex
	msgs []string
}

// errorLog passes every record on to the test's handler and writes the
// ERROR ones to its sink too.
type errorLog struct {
	slog.Handler
	sink  *errorSink
	attrs []slog.Attr
}

func (h *errorLog) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.Handler.Enabled(ctx, l)
}

func (h *errorLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		var b strings.Builder
		b.WriteString(r.Message)
		for _, a := range h.attrs {
			b.WriteString(" " + a.String())
		}
		r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
		h.sink.mu.Lock()
		if len(h.sink.msgs) < 100 {
			h.sink.msgs = append(h.sink.msgs, b.String())
		}
		h.sink.mu.Unlock()
	}
	if h.Handler.Enabled(ctx, r.Level) {
		return h.Handler.Handle(ctx, r)
	}
	return nil
}

func (h *errorLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &errorLog{Handler: h.Handler.WithAttrs(as), sink: h.sink, attrs: append(slices.Clip(h.attrs), as...)}
}

func (h *errorLog) WithGroup(name string) slog.Handler {
	return &errorLog{Handler: h.Handler.WithGroup(name), sink: h.sink, attrs: h.attrs}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// NewTenant creates a tenant with a machine client and fetches a token.
func (e *Env) NewTenant(name string, test bool) Tenant {
	e.t.Helper()
	ctx := context.Background()
	ten, err := e.Store.CreateTenant(ctx, name, test, time.Now())
	if err != nil {
		e.t.Fatalf("apitest: create tenant: %v", err)
	}
	id, secret, err := idp.NewClientCredentials(ctx, e.Store, ten.ID, "test client", time.Now())
	if err != nil {
		e.t.Fatalf("apitest: create client: %v", err)
	}
	return Tenant{ID: ten.ID, Token: e.FetchToken(id, secret), env: e}
}

// Client returns the typed API client (package client) acting as this
// tenant. Its responses are checked against /openapi.json like Raw's.
func (tn Tenant) Client() *client.Client {
	tn.env.t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: checkedTransport{env: tn.env, token: tn.Token}}
	c, err := client.New(tn.env.URL, tn.ID, client.WithHTTPClient(hc))
	if err != nil {
		tn.env.t.Fatalf("apitest: client: %v", err)
	}
	return c
}

// FetchToken obtains an access token with the client_credentials grant.
func (e *Env) FetchToken(clientID, secret string) string {
	e.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}}
	resp, err := e.client.PostForm(e.URL+"/idp/oauth/token", form)
	if err != nil {
		e.t.Fatalf("apitest: token: %v", err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&tok) != nil || tok.AccessToken == "" {
		e.t.Fatalf("apitest: token endpoint answered %d", resp.StatusCode)
	}
	return tok.AccessToken
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test if it cannot.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("apitest: response %d is not the expected JSON (%v): %s", r.Status, err, r.Body)
	}
}

// ID decodes a 201 body (the new id as a JSON string), failing otherwise.
func (r *Response) ID(t testing.TB) string {
	t.Helper()
	if r.Status != http.StatusCreated {
		t.Fatalf("apitest: want 201, got %d: %s", r.Status, r.Body)
	}
	var id string
	r.JSON(t, &id)
	return id
}

// Do sends a request as the default tenant. body may be nil, a string or
// []byte (sent as is), or a value to encode as JSON. headers are pairs.
func (e *Env) Do(method, path string, body any, headers ...string) *Response {
	e.t.Helper()
	return e.Tenant.Do(method, path, body, headers...)
}

// Do sends a request with this tenant's token and tenant header.
func (tn Tenant) Do(method, path string, body any, headers ...string) *Response {
	tn.env.t.Helper()
	h := []string{"Authorization", "Bearer " + tn.Token, "S4-TenantId", tn.ID}
	return tn.env.Raw(method, path, body, append(h, headers...)...)
}

// Raw sends a request with only the given headers (pairs; an empty value
// removes a header given earlier).
func (e *Env) Raw(method, path string, body any, headers ...string) *Response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("apitest: encode body: %v", err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.t.Fatalf("apitest: request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	r, err := e.Send(req)
	if err != nil {
		e.t.Fatalf("apitest: %s %s: %v", method, path, err)
	}
	return r
}

// Send sends req as it is (no token or tenant header added) and reads the
// whole answer, which is checked against /openapi.json like Raw's (a
// mismatch fails the test). An error is the transport's or the body's:
// the exchange did not complete, which callers that build arbitrary
// requests (the fuzz targets) tell apart from a failure.
func (e *Env) Send(req *http.Request) (*Response, error) {
	e.t.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if err := e.contract.check(req, resp.StatusCode, resp.Header, b); err != nil {
		e.t.Errorf("apitest: %s %s answered what /openapi.json does not describe: %v\nbody: %.500s", req.Method, req.URL.Path, err, b)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// Validation is a decoded ValidationResultModel.
type Validation struct {
	Message string `json:"message"`
	Errors  []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

// Fields returns the field names a 400 response names, failing the test if
// the response is not a 400 ValidationResultModel.
func (r *Response) Fields(t testing.TB) []string {
	t.Helper()
	if r.Status != http.StatusBadRequest {
		t.Fatalf("apitest: want 400, got %d: %s", r.Status, r.Body)
	}
	var v Validation
	r.JSON(t, &v)
	if v.Message != "Validation Failed" || len(v.Errors) == 0 {
		t.Fatalf("apitest: not a ValidationResultModel: %s", r.Body)
	}
	out := make([]string, len(v.Errors))
	for i, fe := range v.Errors {
		out[i] = fe.Field
	}
	return out
}

// Seed returns a writer of test data (package seed) acting as this tenant
// through the API; a create that does not answer 201 fails t.
func (tn Tenant) Seed(t testing.TB) *seed.API {
	return seed.NewAPI(t, func(path string, body any) string {
		t.Helper()
		r := tn.Do("POST", path, body)
		if r.Status != http.StatusCreated {
			t.Fatalf("apitest: POST %s: %d %s", path, r.Status, r.Body)
		}
		return r.ID(t)
	})
}

// FormValue is the value of the hidden field name in an HTML page (a
// login form's id and csrf, a page's form token), unescaped; "" when the
// page has none.
func FormValue(page, name string) string {
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}
