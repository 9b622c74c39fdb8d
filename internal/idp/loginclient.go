package idp

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// LoginClientSpec is what an operator registers for a login client.
type LoginClientSpec struct {
	Name                   string
	RedirectURIs           []string
	PostLogoutRedirectURIs []string
	// Scopes are further scopes the client may ask for besides openid,
	// email and offline_access; never "api".
	Scopes []string
}

// checkURI accepts an absolute https address without user information or
// fragment, or such an http address on a loopback host (localhost,
// 127.0.0.1, ::1: a native app's or a developer's local server, RFC 8252
// §7.3; its port is compared exactly like the rest). Every other scheme
// (javascript:, data:, vbscript:, file:, an app's own scheme) is refused:
// the address is compared exactly at the authorization and logout
// endpoints, and the browser is sent to it.
func checkURI(errs *validation.Errors, field, raw string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || strings.ContainsAny(raw, " \t\r\n"):
		errs.Add(field, "%q is not an absolute https address", raw)
	case u.Scheme != "https" && u.Scheme != "http":
		errs.Add(field, "%q: only https addresses (http for localhost) are allowed, not %s:", raw, u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		errs.Add(field, "%q is not an absolute https address", raw)
	case u.User != nil:
		errs.Add(field, "%q must not carry user information", raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		errs.Add(field, "%q must not have a fragment", raw)
	case u.Scheme == "https":
	case u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1":
	default:
		errs.Add(field, "%q must be https (http only for localhost)", raw)
	}
}

// NewLoginClient registers a login client of tenantID and returns it with
// its secret, which is shown this once: only a bcrypt hash is stored, as
// for machine clients.
func NewLoginClient(ctx context.Context, s *store.Store, tenantID string, spec LoginClientSpec, now time.Time) (LoginClient, string, error) {
	secret := randomToken()
	c, err := registerLoginClient(ctx, s, tenantID, spec, secret, now)
	return c, secret, err
}

// EnsureLoginClient returns tenantID's login client named spec.Name with
// exactly spec's redirect addresses whose secret is secret, registering
// one when there is none: for a relying party of Kadens' own (Min side)
// that derives its secret from the master key and so needs no place to
// keep it. An older client of that name with other addresses (the base
// URL changed) is left alone.
func EnsureLoginClient(ctx context.Context, s *store.Store, tenantID string, spec LoginClientSpec, secret string, now time.Time) (LoginClient, error) {
	cs, err := LoginClients(ctx, s, tenantID)
	if err != nil {
		return LoginClient{}, err
	}
	for _, c := range cs {
		if c.Name == spec.Name && slices.Equal(c.RedirectURIs, spec.RedirectURIs) && slices.Equal(c.PostLogoutRedirectURIs, spec.PostLogoutRedirectURIs) &&
			bcrypt.CompareHashAndPassword([]byte(c.SecretHash), []byte(secret)) == nil {
			return c, nil
		}
	}
	return registerLoginClient(ctx, s, tenantID, spec, secret, now)
}

func registerLoginClient(ctx context.Context, s *store.Store, tenantID string, spec LoginClientSpec, secret string, now time.Time) (LoginClient, error) {
	var errs validation.Errors
	spec.Name = strings.TrimSpace(spec.Name)
	if spec.Name == "" || len(spec.Name) > 200 {
		errs.Add("name", "is required (at most 200 characters)")
	}
	if len(spec.RedirectURIs) == 0 {
		errs.Add("redirectUris", "at least one redirect address is required")
	}
	for i, u := range spec.RedirectURIs {
		checkURI(&errs, fmt.Sprintf("redirectUris[%d]", i), u)
	}
	for i, u := range spec.PostLogoutRedirectURIs {
		checkURI(&errs, fmt.Sprintf("postLogoutRedirectUris[%d]", i), u)
	}
	for _, sc := range spec.Scopes {
		if sc == ScopeAPI || sc == "" || strings.ContainsAny(sc, " \t\n\"\\") {
			errs.Add("scopes", "%q cannot be granted to subscribers", sc)
		}
	}
	if err := errs.Err(); err != nil {
		return LoginClient{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(secret), SecretHashCost)
	if err != nil {
		return LoginClient{}, fmt.Errorf("idp: hash client secret: %w", err)
	}
	c := LoginClient{
		ID:       store.NewID(),
		TenantID: tenantID, Name: spec.Name, SecretHash: string(hash),
		RedirectURIs: slices.Compact(spec.RedirectURIs), PostLogoutRedirectURIs: slices.Compact(spec.PostLogoutRedirectURIs),
		Scopes: spec.Scopes, CreatedAt: now.UTC().Truncate(time.Microsecond),
	}
	if c.PostLogoutRedirectURIs == nil {
		c.PostLogoutRedirectURIs = []string{}
	}
	if c.Scopes == nil {
		c.Scopes = []string{}
	}
	if err := CreateLoginClient(ctx, s, c); err != nil {
		return LoginClient{}, err
	}
	return c, nil
}
