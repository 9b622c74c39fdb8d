package idp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// The subscriber login (authorization code flow) is served by zitadel/oidc's
// OpenID provider (package op); opStorage is what that library asks of
// Kadens: login clients, login requests and codes, refresh tokens, users'
// claims and the signing keys, all in the store and idp.Keys.

// KindClaim names the claim that marks a subscriber token
// ({claims_namespace}/kind = "subscriber"). Such a token never carries the
// api scope, and auth refuses it the administrative API whatever it says.
func (c Config) KindClaim() string { return c.ClaimsNamespace + "/kind" }

// KindSubscriber is the value of the kind claim on subscriber tokens.
const KindSubscriber = "subscriber"

// Lifetimes of the login state (docs/LOGIN.md).
const (
	// LoginTTL bounds the time from /authorize to a successful login.
	LoginTTL = 15 * time.Minute
	// CodeTTL bounds the time from the redirect to the code's exchange.
	CodeTTL = time.Minute
	// RefreshTTL is how long a refresh token can be used (once).
	RefreshTTL = 30 * 24 * time.Hour
	// SessionTTL is how long a browser's login session lets a later
	// /authorize of the same tenant skip the form (single sign-on),
	// counted from the password check.
	SessionTTL = 12 * time.Hour
)

// authorizeParams are the Kadens parameters of an authorization request,
// checked before the library sees it and handed to CreateAuthRequest
// through the context.
type authorizeParams struct {
	tenantID, orgName, language string
	sso                         *ssoState
}

// ssoState is shared by one /authorize (Server.authorize) and its
// CreateAuthRequest, which completes the request from the browser's login
// session when it may (done); the browser then gets the code at once
// instead of the form.
type ssoState struct {
	// session is the browser's live login session at the client's tenant
	// for an active user, or nil.
	session *LoginSession
	done    bool
	// pending is the completed request, not stored yet: SaveAuthCode,
	// which the library calls right after, stores it with its code in one
	// write instead of two.
	pending *LoginRequest
}

type authorizeKey struct{}

type opStorage struct {
	srv *Server

	// purged is when (Unix seconds) expired login requests and reset links
	// were last deleted (sweep).
	purged atomic.Int64
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// loginClient is a LoginClient as the library sees it.
type loginClient struct {
	LoginClient
	loginURL string
	ttl      time.Duration
}

func (c *loginClient) GetID() string                       { return c.ID }
func (c *loginClient) RedirectURIs() []string              { return c.LoginClient.RedirectURIs }
func (c *loginClient) PostLogoutRedirectURIs() []string    { return c.LoginClient.PostLogoutRedirectURIs }
func (c *loginClient) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *loginClient) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *loginClient) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *loginClient) LoginURL(id string) string            { return c.loginURL + "?id=" + url.QueryEscape(id) }
func (c *loginClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *loginClient) IDTokenLifetime() time.Duration       { return c.ttl }
func (c *loginClient) DevMode() bool                        { return false }
func (c *loginClient) IsScopeAllowed(scope string) bool     { return slices.Contains(c.Scopes, scope) }
func (c *loginClient) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *loginClient) ClockSkew() time.Duration             { return 0 }
func (c *loginClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}
func (c *loginClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *loginClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// authRequest is a LoginRequest as the library sees it.
type authRequest struct {
	LoginRequest
	audience string
}

func (a *authRequest) GetID() string         { return a.ID }
func (a *authRequest) GetACR() string        { return "" }
func (a *authRequest) GetAMR() []string      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string { return []string{a.audience} }
func (a *authRequest) GetAuthTime() time.Time {
	if a.AuthTime == nil {
		return time.Time{}
	}
	return *a.AuthTime
}
func (a *authRequest) GetClientID() string { return a.ClientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.CodeChallenge, Method: oidc.CodeChallengeMethod(a.ChallengeMethod)}
}
func (a *authRequest) GetNonce() string                   { return a.Nonce }
func (a *authRequest) GetRedirectURI() string             { return a.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return oidc.ResponseTypeCode }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return oidc.ResponseMode(a.ResponseMode) }
func (a *authRequest) GetScopes() []string                { return a.Scopes }
func (a *authRequest) GetState() string                   { return a.State }
func (a *authRequest) GetSubject() string                 { return a.UserID }
func (a *authRequest) Done() bool                         { return a.UserID != "" }

// refreshRequest is a stored refresh token as the library sees it.
type refreshRequest struct {
	RefreshToken
	audience string
}

func (r *refreshRequest) GetAMR() []string            { return []string{"pwd"} }
func (r *refreshRequest) GetAudience() []string       { return []string{r.audience} }
func (r *refreshRequest) GetAuthTime() time.Time      { return r.AuthTime }
func (r *refreshRequest) GetClientID() string         { return r.ClientID }
func (r *refreshRequest) GetScopes() []string         { return r.Scopes }
func (r *refreshRequest) GetSubject() string          { return r.UserID }
func (r *refreshRequest) SetCurrentScopes(s []string) { r.Scopes = s }

// tenantOf is the tenant a token request speaks for.
func tenantOf(req any) string {
	switch r := req.(type) {
	case *authRequest:
		return r.TenantID
	case *refreshRequest:
		return r.TenantID
	}
	return ""
}

type signingKey struct{ jwk jose.JSONWebKey }

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return SigningAlgorithm }
func (k signingKey) Key() any                                    { return k.jwk }
func (k signingKey) ID() string                                  { return k.jwk.KeyID }

type publicKey struct{ jwk jose.JSONWebKey }

func (k publicKey) ID() string                         { return k.jwk.KeyID }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return SigningAlgorithm }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return k.jwk.Key }

var errNotSupported = errors.New("idp: not supported")

// CreateAuthRequest stores a new login request. hinted is the user an
// id_token_hint names, if any: a login session of another user does not
// complete the request then (OpenID Connect Core §3.1.2.1).
func (o *opStorage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, hinted string) (op.AuthRequest, error) {
	p, ok := ctx.Value(authorizeKey{}).(authorizeParams)
	if !ok {
		return nil, errors.New("idp: authorization request without its checked parameters")
	}
	now := o.srv.now().UTC()
	o.sweep(ctx, now)
	var sess *LoginSession
	if p.sso != nil && p.sso.session != nil && (hinted == "" || hinted == p.sso.session.UserID) {
		sess = p.sso.session
	}
	prompts := req.Prompt
	lr := LoginRequest{
		ID: randomToken(), TenantID: p.tenantID, ClientID: req.ClientID, RedirectURI: req.RedirectURI, State: req.State,
		Nonce: req.Nonce, Scopes: req.Scopes, ResponseMode: string(req.ResponseMode), CodeChallenge: req.CodeChallenge,
		ChallengeMethod: string(req.CodeChallengeMethod), OrgName: p.orgName, Language: p.language, CSRF: randomToken(),
		CreatedAt: now, ExpiresAt: now.Add(LoginTTL),
	}
	switch {
	case sess != nil && !slices.Contains(prompts, oidc.PromptLogin) && !tooOld(sess.AuthTime, req.MaxAge, now):
		// Single sign-on: the user logged in in this browser before; the
		// request is done with that login's user and time.
		lr.UserID, lr.AuthTime = sess.UserID, &sess.AuthTime
		p.sso.done, p.sso.pending = true, &lr
		return &authRequest{LoginRequest: lr, audience: o.srv.cfg.Audience}, nil
	case slices.Contains(prompts, oidc.PromptNone):
		// The client asked not to show any page (OpenID Connect Core
		// §3.1.2.1); the library redirects this error to it.
		return nil, oidc.ErrLoginRequired().WithDescription("the user has no login session here")
	}
	if err := CreateLoginRequest(ctx, o.srv.store, lr); err != nil {
		return nil, err
	}
	return &authRequest{LoginRequest: lr, audience: o.srv.cfg.Audience}, nil
}

func (o *opStorage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	lr, err := LiveLoginRequest(ctx, o.srv.store, id, o.srv.now())
	if err != nil {
		return nil, oidc.ErrInvalidRequest().WithDescription("the login has expired; start again").WithParent(err)
	}
	return &authRequest{LoginRequest: lr, audience: o.srv.cfg.Audience}, nil
}

// AuthRequestByCode spends the code: it is single-use even when the
// exchange then fails (wrong verifier or secret), as RFC 6749 §4.1.2 asks.
func (o *opStorage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	lr, err := UseLoginCode(ctx, o.srv.store, sha(code), o.srv.now())
	if err != nil {
		return nil, err
	}
	return &authRequest{LoginRequest: lr, audience: o.srv.cfg.Audience}, nil
}

func (o *opStorage) SaveAuthCode(ctx context.Context, id, code string) error {
	if p, ok := ctx.Value(authorizeKey{}).(authorizeParams); ok && p.sso != nil && p.sso.pending != nil && p.sso.pending.ID == id {
		lr := *p.sso.pending
		p.sso.pending = nil
		return CreateLoginRequestWithCode(ctx, o.srv.store, lr, sha(code), o.srv.now().Add(CodeTTL))
	}
	return SetLoginCode(ctx, o.srv.store, id, sha(code), o.srv.now().Add(CodeTTL))
}

// DeleteAuthRequest is called once the code was exchanged. The request's
// row stays until it expires (CodeTTL after the redirect): its code is
// spent (code_used) and it cannot get another, so deleting it now would
// only cost a write per login. The sweep deletes it later.
func (o *opStorage) DeleteAuthRequest(ctx context.Context, _ string) error {
	o.sweep(ctx, o.srv.now())
	return nil
}

// sweep deletes the login requests (pending ones abandoned at the form
// included) and the password reset links that have expired, at most once
// a minute per process: before each new login request is stored and after
// each code exchange. The tables then hold at most LoginTTL's worth of
// requests (and ResetTTL's of links), which the per-address rates bound.
// A failure costs nothing but the rows' room until the next sweep.
func (o *opStorage) sweep(ctx context.Context, now time.Time) {
	last := o.purged.Load()
	if now.Unix()-last < 60 || !o.purged.CompareAndSwap(last, now.Unix()) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := DeleteExpiredLoginRequests(ctx, o.srv.store, now); err != nil {
		o.srv.log.ErrorContext(ctx, "sweep expired login requests", "err", err)
	}
	if err := DeleteExpiredPasswordResets(ctx, o.srv.store, now); err != nil {
		o.srv.log.ErrorContext(ctx, "sweep expired password reset links", "err", err)
	}
}

// userMemo keeps, for one token request, the user it is for: the library
// asks for the user's claims up to three times per request (the token, the
// access token's claims, the ID token's), and one read is enough.
type userMemo struct {
	tenantID string
	user     subscriberuser.SubscriberUser
}

type userMemoKey struct{}

// activeUser returns the user a token request is for, refusing one who
// was disabled or deleted since.
func (o *opStorage) activeUser(ctx context.Context, tenantID, userID string) (subscriberuser.SubscriberUser, error) {
	memo, _ := ctx.Value(userMemoKey{}).(*userMemo)
	if memo != nil && memo.tenantID == tenantID && memo.user.ID == userID && userID != "" {
		return memo.user, nil
	}
	u, err := subscriberuser.UserByID(tenancy.With(ctx, tenantID), o.srv.store, userID)
	if errors.Is(err, store.ErrNotFound) || err == nil && u.Disabled {
		return subscriberuser.SubscriberUser{}, oidc.ErrInvalidGrant().WithDescription("the user is disabled or gone")
	}
	if err == nil && memo != nil {
		memo.tenantID, memo.user = tenantID, u
	}
	return u, err
}

func (o *opStorage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	if _, err := o.activeUser(ctx, tenantOf(req), req.GetSubject()); err != nil {
		return "", time.Time{}, err
	}
	return store.NewID(), o.srv.now().Add(o.srv.cfg.TokenTTL), nil
}

func (o *opStorage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	tenant := tenantOf(req)
	if _, err := o.activeUser(ctx, tenant, req.GetSubject()); err != nil {
		return "", "", time.Time{}, err
	}
	now := o.srv.now().UTC()
	t := RefreshToken{TenantID: tenant, UserID: req.GetSubject(), Scopes: req.GetScopes(), CreatedAt: now,
		ExpiresAt: now.Add(RefreshTTL), AuthTime: now}
	switch r := req.(type) {
	case *authRequest:
		t.ClientID, t.AuthTime = r.ClientID, r.GetAuthTime()
	case *refreshRequest:
		t.ClientID, t.AuthTime = r.ClientID, r.AuthTime
	}
	token := randomToken()
	t.Hash = sha(token)
	prev := ""
	if current != "" {
		prev = sha(current)
	}
	if err := CreateRefreshToken(ctx, o.srv.store, t, prev); err != nil {
		if errors.Is(err, ErrCodeUsed) {
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("the refresh token was used already")
		}
		return "", "", time.Time{}, err
	}
	return store.NewID(), token, now.Add(o.srv.cfg.TokenTTL), nil
}

func (o *opStorage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	t, err := LiveRefreshToken(ctx, o.srv.store, sha(token), o.srv.now())
	if err != nil {
		return nil, err
	}
	if _, err := o.activeUser(ctx, t.TenantID, t.UserID); err != nil {
		return nil, err
	}
	return &refreshRequest{RefreshToken: t, audience: o.srv.cfg.Audience}, nil
}

// tooOld reports whether a login at auth is older than the request's
// max_age allows (prompt=login sets max_age 0).
func tooOld(auth time.Time, maxAge *uint, now time.Time) bool {
	return maxAge != nil && now.Sub(auth) >= time.Duration(*maxAge)*time.Second
}

// endBrowserSession, in the context of an /end_session request, ends the
// login session of the browser that sent it (Server.endSession).
type endBrowserSession struct{}

// TerminateSession is a validated logout: the user's refresh tokens at the
// client are revoked and the browser's login session ends, so the next
// /authorize shows the form again.
//
// Without an id_token_hint the library knows no user (userID ""): then
// only the browser's login session ends; whose refresh tokens to revoke
// is not known.
func (o *opStorage) TerminateSession(ctx context.Context, userID, clientID string) error {
	if end, ok := ctx.Value(endBrowserSession{}).(func() error); ok {
		if err := end(); err != nil {
			return err
		}
	}
	if userID == "" || clientID == "" {
		return nil
	}
	return EndLoginSessions(ctx, o.srv.store, userID, clientID)
}

// RevokeToken revokes refresh tokens. Access tokens are self-contained JWTs
// that every verifier accepts until their exp (TokenTTL); nothing here
// could make them stop, so a valid access token is answered
// unsupported_token_type (RFC 7009 §2.2.1) rather than a 200 that would
// tell the client it was revoked. Revoking the refresh token ends the
// session: no new access token after the current one (docs/LOGIN.md).
func (o *opStorage) RevokeToken(ctx context.Context, token, userID, clientID string) *oidc.Error {
	// For a live refresh token the library passes the hash that
	// GetRefreshTokenInfo returned.
	t, err := LiveRefreshToken(ctx, o.srv.store, token, o.srv.now())
	switch {
	case err == nil:
		if t.ClientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("the token belongs to another client")
		}
		if err := RevokeRefreshToken(ctx, o.srv.store, t.Hash); err != nil {
			return oidc.ErrServerError().WithParent(err)
		}
		return nil
	case !errors.Is(err, store.ErrNotFound):
		return oidc.ErrServerError().WithParent(err)
	case userID != "":
		// The library verified token as one of our access tokens.
		return &oidc.Error{ErrorType: "unsupported_token_type",
			Description: "access tokens are self-contained and valid until they expire; revoke the refresh token"}
	}
	return nil // unknown or spent tokens: nothing to do (RFC 7009 §2.2)
}

func (o *opStorage) GetRefreshTokenInfo(ctx context.Context, clientID, token string) (string, string, error) {
	t, err := LiveRefreshToken(ctx, o.srv.store, sha(token), o.srv.now())
	if err != nil {
		return "", "", op.ErrInvalidRefreshToken
	}
	return t.UserID, t.Hash, nil
}

func (o *opStorage) SigningKey(context.Context) (op.SigningKey, error) {
	return signingKey{o.srv.keys.active()}, nil
}

func (o *opStorage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{SigningAlgorithm}, nil
}

func (o *opStorage) KeySet(context.Context) ([]op.Key, error) {
	var out []op.Key
	for _, k := range o.srv.keys.JWKS().Keys {
		out = append(out, publicKey{k})
	}
	return out, nil
}

// authenticatedClient carries, through a token request's context, the
// login client the token endpoint authenticated before handing the request
// to the library, so that the library's own lookups and secret check do
// not read and check it again.
type authenticatedClient struct{}

func clientFromContext(ctx context.Context, id string) (LoginClient, bool) {
	c, ok := ctx.Value(authenticatedClient{}).(LoginClient)
	return c, ok && c.ID == id
}

func (o *opStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, ok := clientFromContext(ctx, id)
	if !ok {
		var err error
		c, err = LoginClientByID(ctx, o.srv.store, id)
		if errors.Is(err, store.ErrNotFound) {
			// The library answers this error as it is (400 at
			// /end_session); a plain error would be its 500.
			return nil, oidc.ErrInvalidRequest().WithDescription("unknown client_id")
		}
		if err != nil {
			return nil, oidc.ErrServerError().WithParent(err)
		}
	}
	return o.opClient(c), nil
}

// opClient is c as the library sees it.
func (o *opStorage) opClient(c LoginClient) *loginClient {
	return &loginClient{LoginClient: c, loginURL: o.srv.cfg.Issuer + "/login", ttl: o.srv.cfg.TokenTTL}
}

// AuthorizeClientIDSecret is the library's client check; the token
// endpoint has done it already (Server.loginClientAuth) for the client in
// the context.
func (o *opStorage) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	if _, ok := clientFromContext(ctx, id); ok {
		return nil
	}
	// Every route that authenticates clients does it before the library
	// (Server.authenticateLoginClient); this is only a fallback, limited
	// as one address.
	_, err := o.loginClientAuth(ctx, id, secret, "")
	return err
}

var (
	errLoginClientLimited = errors.New("too many failed client authentications from this address; retry later")
	errBadLoginClient     = errors.New("unknown client or wrong secret")
)

// loginClientAuth checks a login client's secret, sent from address addr
// (addressKey), with bcrypt (or the remembered hash of one that passed
// before, knownSecrets), limited like the machine clients' failures. An
// unknown client costs a bcrypt check too.
func (o *opStorage) loginClientAuth(ctx context.Context, id, secret, addr string) (LoginClient, error) {
	now := o.srv.now()
	key := "login:" + id
	known := o.srv.known.matches(key, secret)
	if !known && o.srv.failureWait(key, addr, now) > 0 {
		return LoginClient{}, errLoginClientLimited
	}
	c, err := LoginClientByID(ctx, o.srv.store, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return LoginClient{}, oidc.ErrServerError().WithParent(err)
	}
	if err == nil && known {
		return c, nil
	}
	hash := c.SecretHash
	if err != nil {
		hash = string(o.srv.dummyHash())
	}
	if o.srv.compare([]byte(hash), []byte(secret)) != nil || err != nil {
		o.srv.failed(key, addr, now)
		return LoginClient{}, errBadLoginClient
	}
	o.srv.known.remember(key, secret)
	return c, nil
}

func (o *opStorage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// claims are Kadens' claims of a subscriber token (both kinds).
func (o *opStorage) claims(ctx context.Context, tenantID, userID string) (map[string]any, subscriberuser.SubscriberUser, error) {
	u, err := o.activeUser(ctx, tenantID, userID)
	if err != nil {
		return nil, u, err
	}
	c := map[string]any{o.srv.cfg.TenantClaim(): tenantID, o.srv.cfg.KindClaim(): KindSubscriber}
	if u.SubscriberID != "" {
		c[o.srv.cfg.SubscriberClaim()] = u.SubscriberID
	}
	return c, u, nil
}

func (o *opStorage) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	c, u, err := o.claims(ctx, tenantOf(req), req.GetSubject())
	if err != nil {
		return err
	}
	info.Subject = req.GetSubject() // the ID token takes sub from the userinfo
	for k, v := range c {
		info.AppendClaims(k, v)
	}
	info.AppendClaims("scope", strings.Join(req.GetScopes(), " "))
	if slices.Contains(scopes, oidc.ScopeEmail) {
		info.Email = u.Email
	}
	return nil
}

func (o *opStorage) GetPrivateClaimsFromRequest(ctx context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	c, _, err := o.claims(ctx, tenantOf(req), req.GetSubject())
	if err != nil {
		return nil, err
	}
	client := ""
	switch r := req.(type) {
	case *authRequest:
		client = r.ClientID
	case *refreshRequest:
		client = r.ClientID
	}
	c["azp"] = client
	c["scope"] = strings.Join(req.GetScopes(), " ")
	return c, nil
}

func (o *opStorage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, errNotSupported
}

func (o *opStorage) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, _, subject, _ string) error {
	tenant, err := subscriberuser.SubscriberUserTenant(ctx, o.srv.store, subject)
	if err != nil {
		return oidc.ErrAccessDenied().WithDescription("no such user")
	}
	c, u, err := o.claims(ctx, tenant, subject)
	if err != nil {
		return oidc.ErrAccessDenied().WithDescription("the user is disabled or gone")
	}
	info.Subject = subject
	info.Email = u.Email
	for k, v := range c {
		info.AppendClaims(k, v)
	}
	return nil
}

func (o *opStorage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errNotSupported
}

func (o *opStorage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotSupported
}

func (o *opStorage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errNotSupported
}

func (o *opStorage) Health(context.Context) error { return nil }
