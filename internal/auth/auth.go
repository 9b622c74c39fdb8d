// Package auth verifies the bearer tokens presented to the main API: tokens
// issued by Kadens' own identity provider and, when configured, tokens of
// trusted external OpenID Connect issuers.
//
// Verification never touches the database: Kadens' public keys are held in
// memory by idp.Keys, external issuers' keys are cached here (keyset.go)
// and fetched again at most once per interval, and a token that verified
// once is remembered until it expires.
package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/idp"
)

// ErrInvalidToken means the token is missing, malformed, expired, for
// another audience, from an untrusted issuer or wrongly signed (401).
var ErrInvalidToken = errors.New("auth: invalid token")

// Principal is who a verified token speaks for.
type Principal struct {
	Issuer   string
	Subject  string
	TenantID string
	Scopes   []string
	// SubscriberID is set on subscriber tokens of users linked to a
	// subscriber.
	SubscriberID string
	// UserID is the subscriber user a subscriber token speaks for (its
	// sub); "" on administrative and machine tokens, and on external
	// subscriber tokens (ExternalSubscriber), whose user an idp-b account
	// names.
	UserID string
	Expiry time.Time
	// External is set on tokens of a trusted external issuer (not Kadens'
	// own identity provider).
	External bool
	// ExternalSubscriber is set on an external issuer's end-user token
	// (TrustedIssuer.SubscriberTokens, without RequiredScope): a
	// subscriber token whose user the API finds through the idp-b account
	// of (Issuer, Subject).
	ExternalSubscriber bool
}

// HasScope reports whether the token grants scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// IsSubscriber reports whether the token is a subscriber's: Kadens' own
// token from the login page ({claims_namespace}/kind = "subscriber"), or
// an external issuer's end-user token (ExternalSubscriber). Such a
// principal never holds the api scope, so the administrative API refuses
// it (403).
func (p Principal) IsSubscriber() bool { return p.UserID != "" || p.ExternalSubscriber }

// MayActFor reports whether the principal may read what belongs to
// subscriber user userID: an administrative token (api scope) may for any
// user of its tenant, a subscriber token only for its own user. It is the
// check of endpoints that admit subscriber tokens, such as a user's
// entitlements (the caller still compares TenantID with the tenant header,
// as the API's authentication does). An external subscriber token names no
// user itself: it may act for none here, and the API looks its user up
// (the idp-b account of its issuer and subject).
func (p Principal) MayActFor(userID string) bool {
	if p.IsSubscriber() {
		return strings.EqualFold(p.UserID, userID)
	}
	return p.HasScope(idp.ScopeAPI)
}

// issuer verifies the tokens of one issuer and maps their claims.
type issuer struct {
	verifier        *oidc.IDTokenVerifier
	tenantClaim     string
	scopeClaim      string
	subscriberClaim string
	kindClaim       string
	requiredScope   string
	// subscriberTokens admits tokens without requiredScope as end-user
	// tokens (no API scope) instead of refusing them.
	subscriberTokens bool
	external         bool
}

// Verifier checks bearer tokens.
type Verifier struct {
	issuers map[string]issuer
	cache   tokenCache
	now     func() time.Time
}

// Options configure a Verifier.
type Options struct {
	// IdP is Kadens' own identity provider configuration (issuer, audience,
	// claims namespace); Keys holds its public keys.
	IdP  idp.Config
	Keys *idp.Keys
	// External lists further trusted issuers.
	External []TrustedIssuer
	// Egress is the policy of fetching external issuers' key sets; the
	// zero value allows public addresses only.
	Egress egress.Policy
	// KeySetRefetchInterval is the least time between two fetches of an
	// external issuer's key set for tokens naming a key it does not hold;
	// 0 is DefaultKeySetRefetchInterval. Tests shorten it.
	KeySetRefetchInterval time.Duration
	// Now overrides the clock (tests).
	Now func() time.Time
}

// TrustedIssuer describes an external OpenID Connect issuer whose access
// tokens the API accepts, and which claims carry the tenant and scope. It is
// the element of the --trusted-issuers setting (a JSON array), declared here
// so that token verification depends on nothing but the identity provider.
type TrustedIssuer struct {
	Issuer        string `json:"issuer"`
	JWKSURL       string `json:"jwksUrl"`
	Audience      string `json:"audience"`
	TenantClaim   string `json:"tenantClaim"`
	ScopeClaim    string `json:"scopeClaim"`
	RequiredScope string `json:"requiredScope"`
	// SubscriberTokens: the issuer's tokens that lack RequiredScope are
	// end users' (subscriber) tokens rather than invalid ones. They pass no
	// administrative route; the entitlement endpoint admits one for the
	// subscriber user an idp-b account binds its subject to
	// (docs/AUTHORIZATIONS.md).
	SubscriberTokens bool `json:"subscriberTokens"`
}

// Check reports what a trusted issuer lacks.
func (ti TrustedIssuer) Check() error {
	if ti.Issuer == "" || ti.JWKSURL == "" || ti.Audience == "" || ti.TenantClaim == "" {
		return errors.New("issuer, jwksUrl, audience and tenantClaim are required")
	}
	return nil
}

// NewVerifier builds a verifier. ctx carries the values of external
// issuers' key set fetches (their cancellation is each request's own).
func NewVerifier(ctx context.Context, o Options) *Verifier {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	v := &Verifier{issuers: map[string]issuer{}, now: now, cache: tokenCache{max: 50_000}}
	v.issuers[o.IdP.Issuer] = issuer{
		verifier: oidc.NewVerifier(o.IdP.Issuer, &ownKeySet{keys: o.Keys}, &oidc.Config{
			ClientID:             o.IdP.Audience,
			SupportedSigningAlgs: []string{string(idp.SigningAlgorithm)},
			Now:                  now,
		}),
		tenantClaim:     o.IdP.TenantClaim(),
		scopeClaim:      "scope",
		subscriberClaim: o.IdP.SubscriberClaim(),
		kindClaim:       o.IdP.KindClaim(),
	}
	// External key sets are fetched with the egress policy's client, at
	// most once per interval for unknown key ids (remoteKeySet): go-oidc's
	// RemoteKeySet would fetch again for every forged token.
	client := o.Egress.Client(30 * time.Second)
	for _, ti := range o.External {
		scopeClaim := ti.ScopeClaim
		if scopeClaim == "" {
			scopeClaim = "scope"
		}
		v.issuers[ti.Issuer] = issuer{
			verifier: oidc.NewVerifier(ti.Issuer, newRemoteKeySet(ctx, ti.JWKSURL, client, now, o.KeySetRefetchInterval), &oidc.Config{
				ClientID: ti.Audience,
				Now:      now,
			}),
			tenantClaim:      ti.TenantClaim,
			scopeClaim:       scopeClaim,
			requiredScope:    ti.RequiredScope,
			subscriberTokens: ti.SubscriberTokens,
			external:         true,
		}
	}
	return v
}

// Verify checks raw and returns its principal, or an error wrapping
// ErrInvalidToken.
func (v *Verifier) Verify(ctx context.Context, raw string) (Principal, error) {
	now := v.now()
	if p, ok := v.cache.get(raw, now); ok {
		return p, nil
	}
	// The issuer picks the verifier; it is read unverified here and then
	// checked by that verifier together with the signature.
	tok, err := jwt.ParseSigned(raw, allAlgorithms)
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	iss, ok := v.issuers[unverified.Issuer]
	if !ok {
		return Principal{}, fmt.Errorf("%w: untrusted issuer %q", ErrInvalidToken, unverified.Issuer)
	}
	idt, err := iss.verifier.Verify(ctx, raw)
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	p := Principal{Issuer: idt.Issuer, Subject: idt.Subject, Expiry: idt.Expiry, External: iss.external}
	p.TenantID, _ = claims[iss.tenantClaim].(string)
	if p.TenantID == "" {
		return Principal{}, fmt.Errorf("%w: no %s claim", ErrInvalidToken, iss.tenantClaim)
	}
	if iss.subscriberClaim != "" {
		p.SubscriberID, _ = claims[iss.subscriberClaim].(string)
	}
	p.Scopes = scopes(claims[iss.scopeClaim])
	if iss.kindClaim != "" && claims[iss.kindClaim] == idp.KindSubscriber {
		// A subscriber token: its user, and never the api scope, whatever
		// its scope claim says.
		p.UserID = idt.Subject
		p.Scopes = slices.DeleteFunc(p.Scopes, func(s string) bool { return s == idp.ScopeAPI })
		if p.UserID == "" {
			return Principal{}, fmt.Errorf("%w: subscriber token without sub", ErrInvalidToken)
		}
	}
	switch {
	case iss.requiredScope != "" && p.HasScope(iss.requiredScope):
		// An external token with the configured scope is an API token.
		p.Scopes = append(p.Scopes, idp.ScopeAPI)
	case iss.subscriberTokens:
		// An end user's token: never an API token, whatever its own scope
		// claim says.
		p.Scopes = slices.DeleteFunc(p.Scopes, func(s string) bool { return s == idp.ScopeAPI })
		p.ExternalSubscriber = p.Subject != ""
	case iss.requiredScope != "":
		return Principal{}, fmt.Errorf("%w: scope %q missing", ErrInvalidToken, iss.requiredScope)
	}
	v.cache.put(raw, p)
	return p, nil
}

// TrustsExternal reports whether issuer is a configured external issuer
// whose subscriber tokens are admitted (TrustedIssuer.SubscriberTokens):
// the issuers an idp-b account may name.
func (v *Verifier) TrustsExternal(issuer string) bool {
	iss, ok := v.issuers[issuer]
	return ok && iss.external && iss.subscriberTokens
}

// scopes reads a scope claim given as a space-separated string or an array.
func scopes(v any) []string {
	switch s := v.(type) {
	case string:
		return strings.Fields(s)
	case []any:
		out := make([]string, 0, len(s))
		for _, e := range s {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

var allAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512, jose.EdDSA,
}

// ownKeySet verifies signatures with Kadens' own keys (go-oidc's KeySet).
type ownKeySet struct{ keys *idp.Keys }

func (s *ownKeySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{idp.SigningAlgorithm})
	if err != nil {
		return nil, err
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("want exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	key, ok := s.keys.PublicKey(kid)
	if !ok {
		// Perhaps another process rotated the key a moment ago.
		s.keys.Refresh(ctx, 10*time.Second)
		if key, ok = s.keys.PublicKey(kid); !ok {
			return nil, fmt.Errorf("unknown signing key %q", kid)
		}
	}
	return jws.Verify(key)
}

// tokenCache remembers verified tokens until they expire, so the signature
// of a token is checked once rather than on every request.
type tokenCache struct {
	mu  sync.RWMutex
	m   map[string]Principal
	max int
}

func (c *tokenCache) get(raw string, now time.Time) (Principal, bool) {
	c.mu.RLock()
	p, ok := c.m[raw]
	c.mu.RUnlock()
	if !ok || !now.Before(p.Expiry) {
		return Principal{}, false
	}
	return p, true
}

func (c *tokenCache) put(raw string, p Principal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		// Dropping everything is crude but bounded and rare: it costs one
		// signature check per live token.
		c.m = make(map[string]Principal, 1024)
	}
	c.m[raw] = p
}
