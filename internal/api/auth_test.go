package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

const ns = "https://kadens.dev/claims"

// claims returns valid claims of a Kadens API token for tenant.
func claims(tenant string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": apitest.BaseURL + "/idp", "sub": "kc_test", "aud": []string{apitest.BaseURL},
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scope": "api", ns + "/tenantId": tenant,
	}
}

func sign(t *testing.T, e *apitest.Env, c map[string]any) string {
	t.Helper()
	tok, err := e.Server.Keys.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tenant := e.Tenant.ID
		other := e.NewTenant("tenant-b", false)
		stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		forged := func() string {
			signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: stranger, KeyID: e.Server.Keys.ActiveKID()}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			payload, _ := json.Marshal(claims(tenant))
			jws, _ := signer.Sign(payload)
			s, _ := jws.CompactSerialize()
			return s
		}
		with := func(mod func(c map[string]any)) string {
			c := claims(tenant)
			mod(c)
			return sign(t, e, c)
		}
		cases := []struct {
			name, auth, tenantHdr string
			status                int
			field                 string // a 400 must name this field
		}{
			{"no token", "", tenant, http.StatusUnauthorized, ""},
			{"not bearer", "Basic abc", tenant, http.StatusUnauthorized, ""},
			{"garbage token", "Bearer not.a.jwt", tenant, http.StatusUnauthorized, ""},
			{"expired", "Bearer " + with(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() }), tenant, http.StatusUnauthorized, ""},
			{"wrong audience", "Bearer " + with(func(c map[string]any) { c["aud"] = []string{"https://elsewhere.example"} }), tenant, http.StatusUnauthorized, ""},
			{"wrong issuer", "Bearer " + with(func(c map[string]any) { c["iss"] = "https://evil.example" }), tenant, http.StatusUnauthorized, ""},
			{"wrongly signed", "Bearer " + forged(), tenant, http.StatusUnauthorized, ""},
			{"no tenant claim", "Bearer " + with(func(c map[string]any) { delete(c, ns+"/tenantId") }), tenant, http.StatusUnauthorized, ""},
			{"other tenant's header", "Bearer " + e.Tenant.Token, other.ID, http.StatusForbidden, ""},
			{"unknown tenant", "Bearer " + with(func(c map[string]any) { c[ns+"/tenantId"] = "01900000-0000-7000-8000-000000000000" }), "01900000-0000-7000-8000-000000000000", http.StatusForbidden, ""},
			{"no api scope", "Bearer " + with(func(c map[string]any) { c["scope"] = "openid" }), tenant, http.StatusForbidden, ""},
			{"missing tenant header", "Bearer " + e.Tenant.Token, "", http.StatusBadRequest, "S4-TenantId"},
			{"malformed tenant header", "Bearer " + e.Tenant.Token, "tenant-a", http.StatusBadRequest, "S4-TenantId"},
			{"valid", "Bearer " + e.Tenant.Token, tenant, http.StatusOK, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Raw("GET", "/organization", nil, "Authorization", tc.auth, "S4-TenantId", tc.tenantHdr)
				if r.Status != tc.status {
					t.Fatalf("status %d, want %d (body %s)", r.Status, tc.status, r.Body)
				}
				switch tc.status {
				case http.StatusUnauthorized, http.StatusForbidden:
					if len(r.Body) != 0 {
						t.Fatalf("%d must have no body, got %q", tc.status, r.Body)
					}
				case http.StatusBadRequest:
					if f := r.Fields(t); len(f) != 1 || f[0] != tc.field {
						t.Fatalf("400 names %v, want [%s]", f, tc.field)
					}
				}
			})
		}
	})
}

func TestTokenEndpoint(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, store.SQLite, nil)
	id, secret := newClient(t, e)
	post := func(form url.Values, basicUser, basicPass string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", e.URL+"/idp/oauth/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basicUser != "" {
			req.SetBasicAuth(basicUser, basicPass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	cc := url.Values{"grant_type": {"client_credentials"}}
	if st, b := post(cc, id, secret); st != 200 || b["token_type"] != "Bearer" || b["expires_in"] != float64(3600) || b["access_token"] == "" {
		t.Fatalf("basic auth: %d %v", st, b)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
	if st, b := post(form, "", ""); st != 200 || b["access_token"] == "" {
		t.Fatalf("form auth: %d %v", st, b)
	}
	if st, b := post(cc, id, "wrong"); st != 401 || b["error"] != "invalid_client" {
		t.Fatalf("wrong secret: %d %v", st, b)
	}
	if st, b := post(url.Values{"grant_type": {"password"}}, id, secret); st != 400 || b["error"] != "unsupported_grant_type" {
		t.Fatalf("other grant: %d %v", st, b)
	}
	if st, b := post(url.Values{"grant_type": {"client_credentials"}, "scope": {"admin"}}, id, secret); st != 400 || b["error"] != "invalid_scope" {
		t.Fatalf("ungranted scope: %d %v", st, b)
	}
	// Discovery and JWKS describe the issuer.
	r := e.Raw("GET", "/idp/.well-known/openid-configuration", nil)
	var disc map[string]any
	r.JSON(t, &disc)
	if disc["issuer"] != apitest.BaseURL+"/idp" || disc["jwks_uri"] != apitest.BaseURL+"/idp/.well-known/jwks.json" {
		t.Fatalf("discovery: %v", disc)
	}
	var jwks jose.JSONWebKeySet
	e.Raw("GET", "/idp/.well-known/jwks.json", nil).JSON(t, &jwks)
	if len(jwks.Keys) != 1 || !jwks.Keys[0].IsPublic() || jwks.Keys[0].KeyID != e.Server.Keys.ActiveKID() {
		t.Fatalf("jwks: %+v", jwks)
	}
}

func newClient(t *testing.T, e *apitest.Env) (string, string) {
	t.Helper()
	id, secret, err := idpNewClient(e)
	if err != nil {
		t.Fatal(err)
	}
	return id, secret
}

func TestKeyRotationKeepsLiveTokens(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		oldKID := e.Server.Keys.ActiveKID()
		newKID, err := e.Server.Keys.Rotate(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if newKID == oldKID {
			t.Fatal("rotation kept the same key")
		}
		if r := e.Do("GET", "/organization", nil); r.Status != 200 {
			t.Fatalf("token signed before rotation: %d", r.Status)
		}
		fresh := e.NewTenant("after-rotation", false)
		if r := fresh.Do("GET", "/organization", nil); r.Status != 200 {
			t.Fatalf("token signed after rotation: %d", r.Status)
		}
		var jwks jose.JSONWebKeySet
		e.Raw("GET", "/idp/.well-known/jwks.json", nil).JSON(t, &jwks)
		if len(jwks.Keys) != 2 {
			t.Fatalf("jwks after rotation has %d keys, want old and new", len(jwks.Keys))
		}
	})
}

func TestTrustedExternalIssuer(t *testing.T) {
	t.Parallel()
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "ext1", Algorithm: "RS256", Use: "sig"}}})
	}))
	defer jwks.Close()
	issuers := `[{"issuer":"https://login.example","jwksUrl":"` + jwks.URL + `","audience":"kadens-api","tenantClaim":"tid","requiredScope":"billing"}]`
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e := apitest.Start(t, eng, map[string]string{"KADENS_TRUSTED_ISSUERS": issuers,
				"KADENS_EGRESS_ALLOW_PRIVATE": "true"}) // the key set is on loopback
			signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: "ext1"}}, nil)
			tok := func(aud, scope string) string {
				payload, _ := json.Marshal(map[string]any{"iss": "https://login.example", "sub": "svc", "aud": aud,
					"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(), "tid": e.Tenant.ID, "scope": scope})
				jws, _ := signer.Sign(payload)
				s, _ := jws.CompactSerialize()
				return s
			}
			call := func(token string) int {
				return e.Raw("GET", "/organization", nil, "Authorization", "Bearer "+token, "S4-TenantId", e.Tenant.ID).Status
			}
			if st := call(tok("kadens-api", "billing read")); st != 200 {
				t.Fatalf("external token: %d", st)
			}
			if st := call(tok("other-api", "billing")); st != 401 {
				t.Fatalf("external token, wrong audience: %d", st)
			}
			if st := call(tok("kadens-api", "read")); st != 401 {
				t.Fatalf("external token without required scope: %d", st)
			}
		})
	}
}
