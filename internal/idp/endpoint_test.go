package idp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

const (
	testAudience = "http://api.test"
	testNS       = "https://kadens.test/claims"
)

// idpServer is an IdP on a real loopback listener whose issuer is its own
// address, so that an independent OpenID Connect client (go-oidc) can
// discover it and verify its tokens, with one tenant and one client.
type idpServer struct {
	*Server
	store      *store.Store
	url        string // the issuer
	tenant     string
	id, secret string
}

func newIdP(t testing.TB, s *store.Store) *idpServer {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	keys := NewKeys(s, make([]byte, 32), time.Hour, log)
	if err := keys.Load(ctx); err != nil {
		t.Fatal(err)
	}
	tenant, err := tenancy.From(seed.Tenant(t, s, "idp", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	is := &idpServer{store: s, tenant: tenant}
	if is.id, is.secret, err = NewClientCredentials(ctx, s, tenant, "machine", time.Now()); err != nil {
		t.Fatal(err)
	}
	// The listener exists before the server starts, so its address can be
	// the issuer the handler is configured with.
	var h http.Handler
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	is.url = "http://" + srv.Listener.Addr().String()
	is.Server = New(Config{Issuer: is.url, Audience: testAudience, ClaimsNamespace: testNS, TokenTTL: time.Hour,
		Limits: Limits{ClientBurst: 100, ClientEvery: time.Second, AddressBurst: 100, AddressEvery: time.Second, MaxKeysByKind: 100},
		// Tests start many logins from one loopback address; the rate
		// itself is TestAuthorizeRateAndSweep's.
		AuthorizeRate: Rate{Burst: 1 << 30, Every: time.Nanosecond},
		Passwords:     cheapPasswords},
		s, keys, log)
	h = is.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return is
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
}

// post sends form to the token endpoint, with HTTP Basic credentials when
// basic holds an id and a secret; raw, when not empty, is sent instead of
// the form.
func (is *idpServer) post(t testing.TB, form url.Values, basic []string, raw string) reply {
	t.Helper()
	body := form.Encode()
	if raw != "" {
		body = raw
	}
	req, err := http.NewRequest("POST", is.url+"/oauth/token", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.SetBasicAuth(basic[0], basic[1])
	}
	return do(t, req)
}

func (is *idpServer) get(t *testing.T, path string) reply {
	t.Helper()
	req, err := http.NewRequest("GET", is.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func do(t testing.TB, req *http.Request) reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{status: resp.StatusCode, header: resp.Header}
	if len(b) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &r.body); err != nil {
			t.Fatalf("%s %s: not a JSON object: %s", req.Method, req.URL.Path, b)
		}
	}
	return r
}

func (is *idpServer) token(t *testing.T) string {
	t.Helper()
	r := is.post(t, url.Values{"grant_type": {"client_credentials"}}, []string{is.id, is.secret}, "")
	if r.status != http.StatusOK {
		t.Fatalf("token: %d %v", r.status, r.body)
	}
	return r.body["access_token"].(string)
}

// verifier checks tokens the way a relying party does: discovery, then
// the JWKS, issuer, audience, expiry and ES256 signature (go-oidc).
func (is *idpServer) verifier(t *testing.T) *oidc.IDTokenVerifier {
	t.Helper()
	p, err := oidc.NewProvider(context.Background(), is.url)
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	return p.Verifier(&oidc.Config{ClientID: testAudience, SupportedSigningAlgs: []string{string(SigningAlgorithm)}})
}

// The client_credentials grant, with the secret in HTTP Basic or in the
// form, answers a Bearer token that an independent verifier accepts, with
// the client, tenant, audience, scope and lifetime in its claims.
func TestClientCredentialsToken(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		is := newIdP(t, s)
		v := is.verifier(t)
		for name, r := range map[string]reply{
			"basic": is.post(t, url.Values{"grant_type": {"client_credentials"}}, []string{is.id, is.secret}, ""),
			"form": is.post(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {is.id}, "client_secret": {is.secret},
				"scope": {"api"}}, nil, ""),
		} {
			if r.status != http.StatusOK || r.body["token_type"] != "Bearer" || r.body["expires_in"] != float64(3600) ||
				r.body["scope"] != ScopeAPI || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%s: %d %v %v", name, r.status, r.header, r.body)
			}
			tok, err := v.Verify(context.Background(), r.body["access_token"].(string))
			if err != nil {
				t.Fatalf("%s: the token does not verify: %v", name, err)
			}
			var c map[string]any
			if err := tok.Claims(&c); err != nil {
				t.Fatal(err)
			}
			if c["sub"] != is.id || c["azp"] != is.id || c["scope"] != ScopeAPI || c[testNS+"/tenantId"] != is.tenant ||
				tok.Issuer != is.url || !slices.Equal(tok.Audience, []string{testAudience}) || c["jti"] == "" {
				t.Fatalf("%s: claims %v", name, c)
			}
			if life := tok.Expiry.Sub(tok.IssuedAt); life != time.Hour {
				t.Fatalf("%s: lifetime %s", name, life)
			}
			// expires_on, read by clients written for INFO-Subscription,
			// is the token's exp.
			if on, _ := r.body["expires_on"].(float64); int64(on) != tok.Expiry.Unix() {
				t.Fatalf("%s: expires_on %v, exp %d", name, r.body["expires_on"], tok.Expiry.Unix())
			}
		}
	})
}

// Every refusal is an RFC 6749 §5.2 error object (error, and a description
// where useful) with Cache-Control: no-store; client authentication
// failures are 401 invalid_client whatever failed, with a Basic challenge
// when the client used Basic.
func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		is := newIdP(t, s)
		hash, err := bcrypt.GenerateFromPassword([]byte("revoked-secret"), SecretHashCost)
		if err != nil {
			t.Fatal(err)
		}
		if err := createAPIClient(context.Background(), s, APIClient{ID: "kc_revoked", TenantID: is.tenant, Name: "old",
			SecretHash: string(hash), Scopes: []string{ScopeAPI}, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		// There is no revocation yet (createAPIClient leaves RevokedAt
		// out); the row is revoked as an operator would, in SQL.
		if _, err := s.DB().ExecContext(context.Background(), `UPDATE api_clients SET revoked_at = $1 WHERE id = $2`,
			dbTime(s, time.Now()), "kc_revoked"); err != nil {
			t.Fatal(err)
		}
		cc := url.Values{"grant_type": {"client_credentials"}}
		for _, c := range []struct {
			name      string
			form      url.Values
			basic     []string
			raw       string
			status    int
			code      string
			challenge bool
		}{
			{"wrong secret (basic)", cc, []string{is.id, "wrong"}, "", 401, "invalid_client", true},
			{"wrong secret (form)", url.Values{"grant_type": {"client_credentials"}, "client_id": {is.id}, "client_secret": {"wrong"}}, nil, "", 401, "invalid_client", false},
			{"unknown client", cc, []string{"kc_unknown", is.secret}, "", 401, "invalid_client", true},
			{"revoked client, right secret", cc, []string{"kc_revoked", "revoked-secret"}, "", 401, "invalid_client", true},
			{"no client authentication", cc, nil, "", 401, "invalid_client", false},
			{"no secret", url.Values{"grant_type": {"client_credentials"}, "client_id": {is.id}}, nil, "", 401, "invalid_client", false},
			{"no grant_type", url.Values{}, []string{is.id, is.secret}, "", 400, "invalid_request", false},
			{"unsupported grant_type", url.Values{"grant_type": {"password"}}, []string{is.id, is.secret}, "", 400, "unsupported_grant_type", false},
			{"scope not granted", url.Values{"grant_type": {"client_credentials"}, "scope": {"api admin"}}, []string{is.id, is.secret}, "", 400, "invalid_scope", false},
			{"malformed form", nil, []string{is.id, is.secret}, "grant_type=client_credentials&%zz", 400, "invalid_request", false},
			{"body over 64 KiB", nil, []string{is.id, is.secret}, "grant_type=client_credentials&pad=" + strings.Repeat("x", 65<<10), 400, "invalid_request", false},
		} {
			r := is.post(t, c.form, c.basic, c.raw)
			if r.status != c.status || r.body["error"] != c.code || r.header.Get("Cache-Control") != "no-store" ||
				!strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.body["access_token"] != nil {
				t.Errorf("%s: %d %v %v, want %d %s", c.name, r.status, r.header, r.body, c.status, c.code)
			}
			if got := r.header.Get("WWW-Authenticate") != ""; got != c.challenge {
				t.Errorf("%s: WWW-Authenticate %q", c.name, r.header.Get("WWW-Authenticate"))
			}
		}
		// Unknown, revoked and wrong-secret answers are the same bytes.
		a := is.post(t, cc, []string{is.id, "wrong"}, "")
		b := is.post(t, cc, []string{"kc_unknown", "wrong"}, "")
		if a.body["error_description"] != b.body["error_description"] || a.body["error_description"] == nil {
			t.Errorf("wrong secret %v and unknown client %v answer differently", a.body, b.body)
		}
		if r := is.get(t, "/oauth/token"); r.status != http.StatusMethodNotAllowed {
			t.Errorf("GET /oauth/token: %d", r.status)
		}
	})
}

// The discovery document names this issuer's endpoints, ES256 and the
// client_credentials grant, and an OpenID Connect client accepts it.
func TestDiscoveryDocument(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		is := newIdP(t, s)
		r := is.get(t, "/.well-known/openid-configuration")
		d := r.body
		has := func(key, want string) bool {
			list, _ := d[key].([]any)
			return slices.Contains(list, any(want))
		}
		if r.status != http.StatusOK || d["issuer"] != is.url || d["token_endpoint"] != is.url+"/oauth/token" ||
			d["jwks_uri"] != is.url+"/.well-known/jwks.json" || !has("id_token_signing_alg_values_supported", "ES256") ||
			!has("grant_types_supported", "client_credentials") || !has("token_endpoint_auth_methods_supported", "client_secret_basic") ||
			!has("token_endpoint_auth_methods_supported", "client_secret_post") || !has("claims_supported", testNS+"/tenantId") ||
			!has("scopes_supported", ScopeAPI) {
			t.Fatalf("discovery: %d %v", r.status, d)
		}
		is.verifier(t) // go-oidc checks the issuer matches and the document is complete
	})
}

// The JWKS publishes the public half of the signing key only, and that key
// verifies a token the endpoint minted; a changed token does not verify.
func TestJWKSVerifiesTokens(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		is := newIdP(t, s)
		set := jwks(t, is)
		if len(set.Keys) != 1 {
			t.Fatalf("%d keys published, want 1", len(set.Keys))
		}
		k := set.Keys[0]
		if k.KeyID != is.keys.ActiveKID() || k.Algorithm != "ES256" || k.Use != "sig" || !k.IsPublic() || !k.Valid() {
			t.Fatalf("published key %+v", k)
		}
		tok := is.token(t)
		jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.ES256})
		if err != nil {
			t.Fatal(err)
		}
		if jws.Signatures[0].Header.KeyID != k.KeyID {
			t.Fatalf("token kid %q, published %q", jws.Signatures[0].Header.KeyID, k.KeyID)
		}
		payload, err := jws.Verify(k)
		if err != nil {
			t.Fatalf("the published key does not verify the token: %v", err)
		}
		var c map[string]any
		if err := json.Unmarshal(payload, &c); err != nil || c["sub"] != is.id {
			t.Fatalf("payload %s", payload)
		}
		// Another claim set under the same signature is refused.
		parts := strings.Split(tok, ".")
		forged := strings.Replace(string(payload), is.tenant, store.NewID(), 1)
		parts[1] = base64.RawURLEncoding.EncodeToString([]byte(forged))
		if f, err := jose.ParseSignedCompact(strings.Join(parts, "."), []jose.SignatureAlgorithm{jose.ES256}); err == nil {
			if _, err := f.Verify(k); err == nil {
				t.Fatal("a token with another tenant verifies")
			}
		}
	})
}

// dbTime is t as a parameter for a timestamp column written in plain SQL:
// the store keeps times as fixed-width UTC text on SQLite.
func dbTime(s *store.Store, t time.Time) any {
	if s.Engine() == store.SQLite {
		return t.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return t.UTC()
}

func jwks(t *testing.T, is *idpServer) jose.JSONWebKeySet {
	t.Helper()
	resp, err := http.Get(is.url + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&set) != nil {
		t.Fatalf("jwks: %d", resp.StatusCode)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=300" {
		t.Fatalf("jwks Cache-Control %q", cc)
	}
	return set
}

// Rotation: the new key signs from then on; the old one stays published,
// so tokens it signed keep verifying, until a token lifetime (plus 5
// minutes of clock skew) after it retired; another process sharing the
// database picks the rotation up on Refresh; loading again adds no key.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		is := newIdP(t, s)
		v := is.verifier(t)
		oldKID := is.keys.ActiveKID()
		if err := is.keys.Load(ctx); err != nil || is.keys.ActiveKID() != oldKID {
			t.Fatalf("a second Load changed the key: %v", err)
		}
		other := NewKeys(s, make([]byte, 32), time.Hour, slog.New(slog.DiscardHandler)) // another process
		if err := other.Load(ctx); err != nil || other.ActiveKID() != oldKID {
			t.Fatalf("another process loads %q (%v), want %q", other.ActiveKID(), err, oldKID)
		}
		before := is.token(t)

		newKID, err := is.keys.Rotate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if newKID == oldKID || is.keys.ActiveKID() != newKID {
			t.Fatalf("after rotation the active key is %q (rotated to %q, was %q)", is.keys.ActiveKID(), newKID, oldKID)
		}
		var kids []string
		for _, k := range jwks(t, is).Keys {
			kids = append(kids, k.KeyID)
		}
		slices.Sort(kids)
		want := []string{oldKID, newKID}
		slices.Sort(want)
		if !slices.Equal(kids, want) {
			t.Fatalf("published %v, want %v", kids, want)
		}
		after := is.token(t)
		for name, tok := range map[string]string{"before": before, "after": after} {
			if _, err := v.Verify(ctx, tok); err != nil {
				t.Fatalf("token from %s the rotation: %v", name, err)
			}
		}
		if h, _ := jose.ParseSignedCompact(after, []jose.SignatureAlgorithm{jose.ES256}); h == nil || h.Signatures[0].Header.KeyID != newKID {
			t.Fatal("the token after the rotation is not signed with the new key")
		}
		other.Refresh(ctx, 0)
		if other.ActiveKID() != newKID {
			t.Fatalf("the other process signs with %q after Refresh, want %q", other.ActiveKID(), newKID)
		}

		// A token lifetime and the skew later, the old key is unpublished.
		retired := time.Now().Add(-time.Hour - 6*time.Minute)
		if _, err := s.DB().ExecContext(ctx, `UPDATE signing_keys SET retired_at = $1 WHERE id = $2`, dbTime(s, retired), oldKID); err != nil {
			t.Fatal(err)
		}
		if err := is.keys.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if set := jwks(t, is); len(set.Keys) != 1 || set.Keys[0].KeyID != newKID {
			t.Fatalf("after the old key's tokens expired: %+v", set.Keys)
		}
		if _, ok := is.keys.PublicKey(oldKID); ok {
			t.Fatal("the old key still verifies")
		}
	})
}

// Keys sealed under one master key cannot be opened with another: Load
// fails and says which setting to check, instead of signing with a new key.
func TestKeysNeedTheirMasterKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if err := NewKeys(s, make([]byte, 32), time.Hour, slog.New(slog.DiscardHandler)).Load(ctx); err != nil {
			t.Fatal(err)
		}
		other := make([]byte, 32)
		other[0] = 1
		err := NewKeys(s, other, time.Hour, slog.New(slog.DiscardHandler)).Load(ctx)
		if err == nil || !strings.Contains(err.Error(), "KADENS_MASTER_KEY") {
			t.Fatalf("load with another master key: %v", err)
		}
		keys, err := storedKeys(ctx, s)
		if err != nil || len(keys) != 1 {
			t.Fatalf("%d keys (%v), want the one", len(keys), err)
		}
	})
}

func TestMasterKey(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	b64 := base64.StdEncoding.EncodeToString(key)
	if got, err := MasterKey(" "+b64+"\n", ""); err != nil || string(got) != string(key) {
		t.Fatalf("configured key: %v", err)
	}
	for _, bad := range []string{"not base64!", base64.StdEncoding.EncodeToString(key[:16])} {
		if _, err := MasterKey(bad, ""); err == nil || !strings.Contains(err.Error(), "32 bytes") {
			t.Errorf("MasterKey(%q): %v", bad, err)
		}
	}
	dir := filepath.Join(t.TempDir(), "data")
	first, err := MasterKey("", dir)
	if err != nil || len(first) != 32 {
		t.Fatalf("created key: %d bytes, %v", len(first), err)
	}
	fi, err := os.Stat(filepath.Join(dir, "master.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("master.key: %v %v", fi, err)
	}
	if again, err := MasterKey("", dir); err != nil || string(again) != string(first) {
		t.Fatalf("the key file is not reused: %v", err)
	}
}

// Processes starting on a fresh data directory at once agree on one master
// key: the file is written whole and linked into place, so none reads it
// empty or half-written and none keeps a key of its own; no temporary file
// is left.
func TestMasterKeyFirstStartsAtOnce(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	keys := make([][]byte, 16)
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() { keys[i], errs[i] = MasterKey("", dir) })
	}
	wg.Wait()
	for i := range keys {
		if errs[i] != nil || string(keys[i]) != string(keys[0]) || len(keys[i]) != 32 {
			t.Fatalf("start %d: %d bytes, %v; want the key every start got", i, len(keys[i]), errs[i])
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("left in the data directory: %v", es)
	}
}
