package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/kadens/kadens/internal/auth"
	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/idp"
)

// A trusted issuer's key set (jwksUrl) is fetched through the egress
// policy: at an address resolving to 127.0.0.1 (localhost) it is refused
// at dial time, the key set server gets nothing and the token does not
// verify; allowed by the operator, the same token verifies. (Start-up
// refuses a jwksUrl that is a refused address or localhost:
// TestOperatorDestinationsFollowEgressPolicy in internal/config.)
func TestTrustedIssuerKeySetEgress(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var fetches atomic.Int64
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	}))
	t.Cleanup(jwks.Close)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"iss": "https://login.example", "sub": "svc", "aud": "kadens-api",
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(), "tid": "t1", "scope": "billing"})
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := jws.CompactSerialize()
	verifier := func(p egress.Policy) *auth.Verifier {
		return auth.NewVerifier(context.Background(), auth.Options{
			IdP: idp.Config{Issuer: "https://kadens.test/idp", Audience: "https://kadens.test", ClaimsNamespace: "https://kadens.test/c"},
			External: []auth.TrustedIssuer{{Issuer: "https://login.example", JWKSURL: strings.Replace(jwks.URL, "127.0.0.1", "localhost", 1) + "/jwks",
				Audience: "kadens-api", TenantClaim: "tid", RequiredScope: "billing"}},
			Egress: p})
	}
	_, err = verifier(egress.Policy{}).Verify(context.Background(), token)
	if !errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), "--egress-allow-private") {
		t.Fatalf("verify with the key set on loopback: %v, want an invalid token naming --egress-allow-private", err)
	}
	if n := fetches.Load(); n != 0 {
		t.Fatalf("the key set on loopback was fetched %d times", n)
	}
	p, err := verifier(egress.Policy{Private: true}).Verify(context.Background(), token)
	if err != nil || p.TenantID != "t1" || fetches.Load() == 0 {
		t.Fatalf("with private addresses allowed: %+v %v (%d fetches)", p, err, fetches.Load())
	}
}
