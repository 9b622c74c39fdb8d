// Package idp is Kadens' identity provider: it issues signed access tokens
// (OAuth 2.0 client_credentials for machines and administrators now;
// subscriber login with the authorization code flow later) and publishes
// OpenID Connect discovery and the JWKS so that anyone can verify them.
// It owns its records and their SQL on the store's query kit: signing keys
// (sql_keys.go), API clients (sql_clients.go) and subscriber login's
// clients, requests, codes, tokens and sessions (sql_login.go).
package idp

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/crypto/bcrypt"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/smtpmail"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/throttle"
)

// ScopeAPI is the scope that admits a token to the main API's
// administrative endpoints. Machine clients get it by default.
const ScopeAPI = "api"

// Config is what the identity provider needs to know about its deployment.
type Config struct {
	// Issuer is the public address of the IdP ({idp_url}); the "iss" claim.
	Issuer string
	// Audience is the main API's public address ({base_url}); the "aud" claim.
	Audience string
	// ClaimsNamespace prefixes Kadens' own claims, e.g. <ns>/tenantId.
	ClaimsNamespace string
	TokenTTL        time.Duration
	// Limits bound failed client authentications; zero means DefaultLimits.
	Limits Limits
	// AuthorizeRate bounds the authorization requests per address; zero
	// means DefaultAuthorizeRate.
	AuthorizeRate Rate
	// LoginLimits bound failed subscriber logins per account (Client*)
	// and per address (Address*); zero means DefaultLoginLimits.
	LoginLimits Limits
	// Passwords is the argon2id cost of new subscriber password hashes;
	// zero means password.DefaultParams.
	Passwords subscriberuser.Params
	// SMTPURL, when set, enables password reset by e-mail
	// (smtp://user:pass@host:port?from=addr).
	SMTPURL string
	// Egress is the policy of connections to the SMTP server; the zero
	// value allows public addresses only.
	Egress egress.Policy
}

// Server serves the IdP endpoints.
type Server struct {
	cfg   Config
	store *store.Store
	keys  *Keys
	log   *slog.Logger
	now   func() time.Time

	// dummyHash is compared against when the client id is unknown or
	// revoked, so that those answers take as long as a wrong secret and
	// the timing does not tell which client ids exist.
	dummyHash func() []byte
	compare   func(hash, secret []byte) error
	// Failed client authentications per client id and address, and per
	// address (limit.go).
	byClientAddress *throttle.Failures
	byAddress       *throttle.Failures
	// Authorization requests per address.
	byAuthorizeAddress *throttle.Failures
	// Secrets that passed bcrypt before, machine and login clients'.
	known knownSecrets

	// The subscriber login (provider.go, login.go).
	provider       *op.Provider
	opStorage      *opStorage
	users          *subscriberuser.Directory
	byAccount      *throttle.Failures
	byLoginAddress *throttle.Failures
	mail           *smtpmail.Mailer // nil: password reset is off
	origin         string           // the issuer's origin, which form posts must come from (origin.go)
}

// New returns an IdP server.
func New(cfg Config, s *store.Store, keys *Keys, log *slog.Logger) *Server {
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	if cfg.AuthorizeRate == (Rate{}) {
		cfg.AuthorizeRate = DefaultAuthorizeRate
	}
	cost := SecretHashCost
	srv := &Server{cfg: cfg, store: s, keys: keys, log: log, now: time.Now,
		dummyHash: sync.OnceValue(func() []byte {
			secret := make([]byte, 32)
			_, _ = rand.Read(secret)
			h, err := bcrypt.GenerateFromPassword(secret, cost)
			if err != nil {
				panic("idp: dummy hash: " + err.Error()) // only for a cost out of range, a programming error
			}
			return h
		}),
		compare:         bcrypt.CompareHashAndPassword,
		byClientAddress: throttle.New(cfg.Limits.ClientEvery, cfg.Limits.ClientBurst, cfg.Limits.MaxKeysByKind),
		byAddress:       throttle.New(cfg.Limits.AddressEvery, cfg.Limits.AddressBurst, cfg.Limits.MaxKeysByKind),
	}
	maxKeys := cfg.Limits.MaxKeysByKind
	if maxKeys == 0 {
		maxKeys = DefaultLimits.MaxKeysByKind
	}
	srv.byAuthorizeAddress = throttle.New(cfg.AuthorizeRate.Every, cfg.AuthorizeRate.Burst, maxKeys)
	go srv.dummyHash() // ready before the first unknown client id, whose answer would be slower otherwise
	ll := cfg.LoginLimits
	if ll == (Limits{}) {
		ll = DefaultLoginLimits
	}
	srv.byAccount = throttle.New(ll.ClientEvery, ll.ClientBurst, ll.MaxKeysByKind)
	srv.byLoginAddress = throttle.New(ll.AddressEvery, ll.AddressBurst, ll.MaxKeysByKind)
	srv.users = &subscriberuser.Directory{Store: s, Params: cfg.Passwords}
	srv.origin = origin(cfg.Issuer)
	if cfg.SMTPURL != "" {
		m, err := smtpmail.Parse(cfg.SMTPURL, cfg.Egress)
		if err != nil {
			panic("idp: " + err.Error()) // config checks the URL first
		}
		srv.mail = m
	}
	srv.opStorage = &opStorage{srv: srv}
	var cryptoKey [32]byte // encrypts nothing that outlives the process: codes are looked up by hash
	_, _ = rand.Read(cryptoKey[:])
	p, err := op.NewProvider(&op.Config{
		CryptoKey: cryptoKey, CodeMethodS256: true, AuthMethodPost: true, GrantTypeRefreshToken: true,
		SupportedUILocales: nil, SupportedScopes: []string{oidc.ScopeOpenID, oidc.ScopeEmail, oidc.ScopeOfflineAccess},
	}, srv.opStorage, op.StaticIssuer(cfg.Issuer),
		op.WithAllowInsecure(), op.WithCustomKeysEndpoint(op.NewEndpoint(".well-known/jwks.json")))
	if err != nil {
		panic("idp: OpenID provider: " + err.Error()) // only for a malformed issuer, which config rejects first
	}
	srv.provider = p
	return srv
}

// Handler returns the IdP's routes, relative to its base path.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", s.token)
	mux.HandleFunc("GET /.well-known/openid-configuration", s.discovery)
	mux.HandleFunc("GET /.well-known/jwks.json", s.jwks)
	mux.HandleFunc("/oauth/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "POST")
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "the token endpoint takes POST")
	})
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.loginPost)
	mux.HandleFunc("GET /reset", s.resetPage)
	mux.HandleFunc("POST /reset", s.resetPost)
	// Not offered: access tokens are self-contained JWTs (no
	// introspection), and there is no device flow.
	for _, p := range []string{"/oauth/introspect", "/device_authorization", "/keys"} {
		mux.Handle(p, http.NotFoundHandler())
	}
	mux.HandleFunc("/end_session", s.endSession)
	mux.HandleFunc("POST /revoke", s.revoke)
	// The library serves the rest: /authorize/callback, /userinfo.
	mux.Handle("/", s.provider)
	return s.edge(mux)
}

// TenantClaim is the name of the claim that carries the tenant id.
func (c Config) TenantClaim() string { return c.ClaimsNamespace + "/tenantId" }

// SubscriberClaim is the name of the claim that carries the subscriber id.
func (c Config) SubscriberClaim() string { return c.ClaimsNamespace + "/subscriberId" }

// discovery is the library's document plus the machine clients' grant
// and scope, which Kadens serves itself.
func (s *Server) discovery(w http.ResponseWriter, r *http.Request) {
	ctx := op.ContextWithIssuer(r.Context(), s.cfg.Issuer)
	d := op.CreateDiscoveryConfig(ctx, s.provider, s.provider.Storage())
	d.GrantTypesSupported = append(d.GrantTypesSupported, oidc.GrantTypeClientCredentials)
	d.ScopesSupported = append(d.ScopesSupported, ScopeAPI)
	d.TokenEndpointAuthMethodsSupported = []oidc.AuthMethod{oidc.AuthMethodBasic, oidc.AuthMethodPost}
	d.ClaimsSupported = []string{"iss", "sub", "aud", "iat", "exp", "azp", "scope", "nonce", "auth_time", "email",
		s.cfg.TenantClaim(), s.cfg.SubscriberClaim(), s.cfg.KindClaim()}
	d.UILocalesSupported = nil
	d.IntrospectionEndpoint, d.DeviceAuthorizationEndpoint, d.CheckSessionIframe = "", "", ""
	d.IntrospectionEndpointAuthMethodsSupported, d.IntrospectionEndpointAuthSigningAlgValuesSupported = nil, nil
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, s.keys.JWKS())
}

// token implements the token endpoint (RFC 6749 §4.4 for client_credentials).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	switch gt := r.PostForm.Get("grant_type"); gt {
	case "client_credentials":
		s.clientCredentials(w, r)
	case "authorization_code", "refresh_token":
		// Subscriber login: the OpenID provider library (provider.go),
		// once the client is known good.
		s.loginToken(w, r)
	case "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("grant_type %q is not supported", gt))
	}
}

// loginToken authenticates the login client of a code or refresh token
// request before the library sees it: an unknown client or a wrong secret
// is 401 invalid_client (RFC 6749 §5.2) and spends no code, and the
// library reuses the client from the context instead of reading and
// checking it again.
func (s *Server) loginToken(w http.ResponseWriter, r *http.Request) {
	if ctx, ok := s.authenticateLoginClient(w, r); ok {
		s.provider.ServeHTTP(w, r.WithContext(context.WithValue(ctx, userMemoKey{}, &userMemo{})))
	}
}

// revoke is the library's token revocation (RFC 7009) with the client
// authenticated first, as at the token endpoint, so that its failures are
// limited per client and address alike.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if ctx, ok := s.authenticateLoginClient(w, r); ok {
		s.provider.ServeHTTP(w, r.WithContext(ctx))
	}
}

// authenticateLoginClient checks the login client credentials of r and
// returns r's context with the client in it; when they fail it has
// answered (401, or 429 while r's failure buckets are empty).
func (s *Server) authenticateLoginClient(w http.ResponseWriter, r *http.Request) (context.Context, bool) {
	id, secret, basic := clientAuth(r)
	if id == "" || secret == "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication is required (HTTP Basic or client_id and client_secret)")
		return nil, false
	}
	addr := throttle.AddressKey(r.RemoteAddr)
	c, err := s.opStorage.loginClientAuth(r.Context(), id, secret, addr)
	switch {
	case errors.Is(err, errLoginClientLimited):
		s.tooManyFailures(w, "login:"+id, addr)
		return nil, false
	case errors.Is(err, errBadLoginClient):
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="kadens"`)
		}
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return nil, false
	case err != nil:
		s.log.ErrorContext(r.Context(), "login client authentication", "err", err)
		oauthError(w, http.StatusInternalServerError, "server_error", "")
		return nil, false
	}
	return context.WithValue(r.Context(), authenticatedClient{}, c), true
}

// failureWait is how long client (an id, "login:"-prefixed for login
// clients) must wait before its next try from addr; 0 means now.
func (s *Server) failureWait(client, addr string, now time.Time) time.Duration {
	return max(s.byClientAddress.Wait(clientAddressKey(client, addr), now), s.byAddress.Wait(addr, now))
}

// failed counts a failed authentication of client from addr.
func (s *Server) failed(client, addr string, now time.Time) {
	s.byClientAddress.Fail(clientAddressKey(client, addr), now)
	s.byAddress.Fail(addr, now)
}

// tooManyFailures answers 429 for client from addr.
func (s *Server) tooManyFailures(w http.ResponseWriter, client, addr string) {
	secs := int((s.failureWait(client, addr, s.now()) + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	oauthError(w, http.StatusTooManyRequests, "temporarily_unavailable",
		fmt.Sprintf("too many failed client authentications from this address; retry in %d s", max(secs, 1)))
}

func (s *Server) clientCredentials(w http.ResponseWriter, r *http.Request) {
	id, secret, basic := clientAuth(r)
	if id == "" || secret == "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication is required (HTTP Basic or client_id and client_secret)")
		return
	}
	// Failed authentications are limited per client id and address and
	// per address before any bcrypt work, for every client id alike (known
	// or not, so the limit tells nothing either). Failures from one address
	// never refuse the right secret from another (limit.go).
	addr := throttle.AddressKey(r.RemoteAddr)
	now := s.now()
	known := s.known.matches(id, secret)
	if !known && s.failureWait(id, addr, now) > 0 {
		s.tooManyFailures(w, id, addr)
		return
	}
	client, err := s.authenticate(r.Context(), id, secret, known)
	if err != nil {
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="kadens"`)
		}
		if !errors.Is(err, errBadClient) {
			s.log.ErrorContext(r.Context(), "client authentication", "err", err)
			oauthError(w, http.StatusInternalServerError, "server_error", "")
			return
		}
		s.failed(id, addr, now)
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	scopes := client.Scopes
	if req := strings.Fields(r.PostForm.Get("scope")); len(req) > 0 {
		for _, sc := range req {
			if !slices.Contains(client.Scopes, sc) {
				oauthError(w, http.StatusBadRequest, "invalid_scope", fmt.Sprintf("scope %q is not granted to this client", sc))
				return
			}
		}
		scopes = req
	}
	now = now.UTC()
	claims := map[string]any{
		"iss":               s.cfg.Issuer,
		"sub":               client.ID,
		"aud":               []string{s.cfg.Audience},
		"azp":               client.ID,
		"iat":               now.Unix(),
		"exp":               now.Add(s.cfg.TokenTTL).Unix(),
		"jti":               store.NewID(),
		"scope":             strings.Join(scopes, " "),
		s.cfg.TenantClaim(): client.TenantID,
	}
	tok, err := s.keys.Sign(claims)
	if err != nil {
		s.log.ErrorContext(r.Context(), "sign token", "err", err)
		oauthError(w, http.StatusInternalServerError, "server_error", "")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok,
		"token_type":   "Bearer",
		"expires_in":   int(s.cfg.TokenTTL.Seconds()),
		// expires_on (Unix seconds, the token's exp) is what clients
		// written for INFO-Subscription's token endpoint read.
		"expires_on": now.Add(s.cfg.TokenTTL).Unix(),
		"scope":      strings.Join(scopes, " "),
	})
}

var errBadClient = errors.New("idp: bad client credentials")

// authenticate checks a machine client's secret with bcrypt, or, when
// known (knownSecrets matched it), only that the client still exists and
// is not revoked.
func (s *Server) authenticate(ctx context.Context, id, secret string, known bool) (APIClient, error) {
	c, err := apiClientByID(ctx, s.store, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && c.RevokedAt != nil {
		// The same work as for a wrong secret: no client-id timing oracle.
		_ = s.compare(s.dummyHash(), []byte(secret))
		return APIClient{}, errBadClient
	}
	if err != nil {
		return APIClient{}, err
	}
	if known {
		return c, nil
	}
	if s.compare([]byte(c.SecretHash), []byte(secret)) != nil {
		return APIClient{}, errBadClient
	}
	s.known.remember(id, secret)
	return c, nil
}

// clientAuth reads client credentials from HTTP Basic (whose parts are
// form-encoded, RFC 6749 §2.3.1) or from the form body.
func clientAuth(r *http.Request) (id, secret string, basic bool) {
	if u, p, ok := r.BasicAuth(); ok {
		uid, err1 := url.QueryUnescape(u)
		pw, err2 := url.QueryUnescape(p)
		if err1 == nil && err2 == nil {
			return uid, pw, true
		}
		return u, p, true
	}
	return r.PostForm.Get("client_id"), r.PostForm.Get("client_secret"), false
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	body := map[string]string{"error": code}
	if desc != "" {
		body["error_description"] = desc
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// SecretHashCost is the bcrypt cost of client secret hashes. Secrets are
// 256-bit random values, so the cost guards against a leaked table rather
// than weak secrets; tests lower it to keep suites fast.
var SecretHashCost = bcrypt.DefaultCost

// NewClientCredentials creates a machine client of tenantID and returns its
// id and secret. Only a bcrypt hash of the secret is stored, so the secret
// cannot be shown again.
func NewClientCredentials(ctx context.Context, s *store.Store, tenantID, name string, now time.Time) (id, secret string, err error) {
	idBytes := make([]byte, 10)
	secretBytes := make([]byte, 32)
	if _, err := rand.Read(idBytes); err != nil {
		return "", "", fmt.Errorf("idp: client id: %w", err)
	}
	if _, err := rand.Read(secretBytes); err != nil {
		return "", "", fmt.Errorf("idp: client secret: %w", err)
	}
	id = "kc_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(idBytes))
	secret = base64.RawURLEncoding.EncodeToString(secretBytes)
	hash, err := bcrypt.GenerateFromPassword([]byte(secret), SecretHashCost)
	if err != nil {
		return "", "", fmt.Errorf("idp: hash client secret: %w", err)
	}
	err = createAPIClient(ctx, s, APIClient{
		ID: id, TenantID: tenantID, Name: name, SecretHash: string(hash),
		Scopes: []string{ScopeAPI}, CreatedAt: now.UTC(),
	})
	if err != nil {
		return "", "", err
	}
	return id, secret, nil
}
