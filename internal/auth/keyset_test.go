package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/kadens/kadens/internal/auth"
	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/idp"
)

// Tokens naming a trusted issuer cost that issuer at most one key set
// fetch per interval, whatever their number: 1,000 forged tokens (unknown
// key ids, and the issuer's key id with another key's signature), sent
// concurrently before any real token, make one fetch that they share; a
// real token is then verified from the cache; a rotated-in key id is
// refused until the interval has passed and verifies after it; a known key
// id with a bad signature never fetches, even after the interval. The key
// set server is on loopback and counts its requests; the clock is the
// verifier's (Options.Now), so no test waits for the interval.
func TestTrustedIssuerKeySetRefetchBounded(t *testing.T) {
	t.Parallel()
	const interval = 5 * time.Minute
	k1, k2, forger := rsaKey(t), rsaKey(t), rsaKey(t)

	var published atomic.Pointer[jose.JSONWebKeySet]
	published.Store(&jose.JSONWebKeySet{Keys: []jose.JSONWebKey{publicJWK(k1, "k1")}})
	var fetches atomic.Int64
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		_ = json.NewEncoder(w).Encode(published.Load())
	}))
	t.Cleanup(jwks.Close)

	start := time.Now()
	var elapsed atomic.Int64
	now := func() time.Time { return start.Add(time.Duration(elapsed.Load())) }
	v := auth.NewVerifier(context.Background(), auth.Options{
		IdP: idp.Config{Issuer: "https://kadens.test/idp", Audience: "https://kadens.test", ClaimsNamespace: "https://kadens.test/c"},
		External: []auth.TrustedIssuer{{Issuer: "https://login.example", JWKSURL: jwks.URL + "/jwks",
			Audience: "kadens-api", TenantClaim: "tid", RequiredScope: "billing"}},
		Egress:                egress.Policy{Private: true},
		KeySetRefetchInterval: interval,
		Now:                   now,
	})
	token := func(key *rsa.PrivateKey, kid, jti string) string {
		t.Helper()
		return signedToken(t, key, kid, map[string]any{"iss": "https://login.example", "sub": "svc", "aud": "kadens-api",
			"exp": start.Add(time.Hour).Unix(), "iat": start.Unix(), "tid": "t1", "scope": "billing", "jti": jti})
	}
	// Forged tokens are made as an attacker makes them, without signing
	// each: a header naming the key id, claims, and a signature that
	// another key made over something else.
	signature := strings.Split(token(forger, "k1", "forger"), ".")[2]
	forged := func(round string, n int, unknownKids bool) {
		t.Helper()
		tokens := make([]string, n)
		for i := range tokens {
			kid := "k1"
			if unknownKids && i%2 == 0 {
				kid = fmt.Sprintf("forged-%s-%d", round, i)
			}
			header, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": kid})
			claims, _ := json.Marshal(map[string]any{"iss": "https://login.example", "sub": "svc", "aud": "kadens-api",
				"exp": start.Add(time.Hour).Unix(), "tid": "t1", "scope": "billing", "jti": fmt.Sprintf("%s-%d", round, i)})
			tokens[i] = base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims) + "." + signature
		}
		var wg sync.WaitGroup
		var accepted atomic.Int64
		work := make(chan string)
		for range 16 {
			wg.Go(func() {
				for raw := range work {
					if _, err := v.Verify(context.Background(), raw); !errors.Is(err, auth.ErrInvalidToken) {
						accepted.Add(1)
					}
				}
			})
		}
		for _, raw := range tokens {
			work <- raw
		}
		close(work)
		wg.Wait()
		if n := accepted.Load(); n != 0 {
			t.Fatalf("round %s: %d forged tokens were not refused as invalid", round, n)
		}
	}
	wantFetches := func(step string, want int64) {
		t.Helper()
		if got := fetches.Load(); got != want {
			t.Fatalf("%s: the key set was fetched %d times, want %d", step, got, want)
		}
	}

	forged("first", 1000, true)
	wantFetches("1,000 forged tokens first", 1)

	if p, err := v.Verify(context.Background(), token(k1, "k1", "real-1")); err != nil || p.TenantID != "t1" {
		t.Fatalf("a real token after the forged ones: %+v %v", p, err)
	}
	wantFetches("a real token with a cached key", 1)

	// The issuer rotates: k2 is published, and a token signed with it
	// arrives before the interval has passed since the last fetch.
	published.Store(&jose.JSONWebKeySet{Keys: []jose.JSONWebKey{publicJWK(k1, "k1"), publicJWK(k2, "k2")}})
	rotated := token(k2, "k2", "real-2")
	if _, err := v.Verify(context.Background(), rotated); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("a new key id within the interval: %v, want refused", err)
	}
	wantFetches("a new key id within the interval", 1)
	elapsed.Add(int64(interval))
	if p, err := v.Verify(context.Background(), rotated); err != nil || p.TenantID != "t1" {
		t.Fatalf("the rotated key's token after the interval: %+v %v", p, err)
	}
	wantFetches("the rotated key after the interval", 2)

	forged("second", 1000, true)
	wantFetches("1,000 more forged tokens", 2)

	// After another interval, bad signatures under held key ids still
	// fetch nothing.
	elapsed.Add(int64(interval))
	forged("third", 200, false)
	wantFetches("bad signatures with a known key id after the interval", 2)
	if p, err := v.Verify(context.Background(), token(k1, "k1", "real-3")); err != nil || p.TenantID != "t1" {
		t.Fatalf("a real token at the end: %+v %v", p, err)
	}
}

// A key the issuer no longer publishes is no longer trusted once the set
// has been fetched again; and a failing key set endpoint is not called
// more often than a working one.
func TestTrustedIssuerKeySetReplacedAndFailuresBounded(t *testing.T) {
	t.Parallel()
	const interval = time.Minute
	k1, k2 := rsaKey(t), rsaKey(t)
	var published atomic.Pointer[jose.JSONWebKeySet]
	published.Store(&jose.JSONWebKeySet{Keys: []jose.JSONWebKey{publicJWK(k1, "k1")}})
	var fetches atomic.Int64
	var failing atomic.Bool
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if failing.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(published.Load())
	}))
	t.Cleanup(jwks.Close)
	start := time.Now()
	var elapsed atomic.Int64
	v := auth.NewVerifier(context.Background(), auth.Options{
		IdP: idp.Config{Issuer: "https://kadens.test/idp", Audience: "https://kadens.test", ClaimsNamespace: "https://kadens.test/c"},
		External: []auth.TrustedIssuer{{Issuer: "https://login.example", JWKSURL: jwks.URL,
			Audience: "kadens-api", TenantClaim: "tid", RequiredScope: "billing"}},
		Egress:                egress.Policy{Private: true},
		KeySetRefetchInterval: interval,
		Now:                   func() time.Time { return start.Add(time.Duration(elapsed.Load())) },
	})
	token := func(key *rsa.PrivateKey, kid, jti string) string {
		return signedToken(t, key, kid, map[string]any{"iss": "https://login.example", "sub": "svc", "aud": "kadens-api",
			"exp": start.Add(time.Hour).Unix(), "iat": start.Unix(), "tid": "t1", "scope": "billing", "jti": jti})
	}
	if _, err := v.Verify(context.Background(), token(k1, "k1", "a")); err != nil {
		t.Fatal(err)
	}
	// k1 is withdrawn, k2 published; a k2 token after the interval fetches
	// the new set, and from then on k1's tokens are refused.
	published.Store(&jose.JSONWebKeySet{Keys: []jose.JSONWebKey{publicJWK(k2, "k2")}})
	elapsed.Add(int64(interval))
	if _, err := v.Verify(context.Background(), token(k2, "k2", "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), token(k1, "k1", "c")); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("a withdrawn key's token: %v, want refused", err)
	}
	if n := fetches.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
	failing.Store(true)
	elapsed.Add(int64(interval))
	for i := range 50 {
		if _, err := v.Verify(context.Background(), token(k1, fmt.Sprintf("x%d", i), "d")); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("unknown key id with the key set down: %v", err)
		}
	}
	if n := fetches.Load(); n != 3 {
		t.Fatalf("%d fetches with the key set endpoint failing, want 3", n)
	}
	// The held keys survive a failed fetch.
	if _, err := v.Verify(context.Background(), token(k2, "k2", "e")); err != nil {
		t.Fatalf("a held key after a failed fetch: %v", err)
	}
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func publicJWK(key *rsa.PrivateKey, kid string) jose.JSONWebKey {
	return jose.JSONWebKey{Key: &key.PublicKey, KeyID: kid, Algorithm: "RS256", Use: "sig"}
}

func signedToken(t *testing.T, key *rsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
