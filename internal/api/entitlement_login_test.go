package api_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
)

// subscriberLogin logs email in at the server's identity provider with
// the authorization code flow (PKCE), as a relying party and a browser
// would, and returns the access token.
func subscriberLogin(t *testing.T, e *apitest.Env, tenantName, client, secret, redirect, email, password string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(method, u string, form url.Values) (int, string, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, u, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		loc := resp.Header.Get("Location")
		if loc != "" && strings.HasPrefix(loc, "/") {
			loc = e.URL + loc
		}
		return resp.StatusCode, loc, string(b)
	}
	// Public addresses name kadens.test; requests go to the listener.
	local := func(u string) string { return strings.Replace(u, apitest.BaseURL, e.URL, 1) }
	verifier := "v-" + strings.Repeat("0123456789", 5)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "connection": {tenantName}, "scope": {"openid"},
		"redirect_uri": {redirect}, "state": {"st"}, "nonce": {"n"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	st, loc, body := get("GET", e.URL+"/idp/authorize?"+q.Encode(), nil)
	if st != http.StatusFound {
		t.Fatalf("authorize: %d %s %s", st, loc, body)
	}
	st, _, body = get("GET", local(loc), nil)
	csrf, id := apitest.FormValue(body, "csrf"), apitest.FormValue(body, "id")
	if st != http.StatusOK || csrf == "" || id == "" {
		t.Fatalf("login page: %d %s", st, body)
	}
	st, loc, body = get("POST", e.URL+"/idp/login", url.Values{"id": {id},
		"csrf": {csrf}, "email": {email}, "password": {password}})
	if st != http.StatusSeeOther {
		t.Fatalf("login form: %d %s", st, body)
	}
	st, loc, body = get("GET", local(loc), nil)
	back, err := url.Parse(loc)
	if st != http.StatusFound || err != nil || back.Query().Get("code") == "" {
		t.Fatalf("callback: %d %s %s", st, loc, body)
	}
	resp, err := http.PostForm(e.URL+"/idp/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {client},
		"client_secret": {secret}, "code": {back.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {verifier}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("token exchange: %d %v", resp.StatusCode, err)
	}
	return tok.AccessToken
}

// TestEntitlementsWithLoginToken: a subscriber logs in through the login
// page (authorization code flow) and reads its own entitlements with the
// access token it got: 200 for its own user, 403 for another user and on
// an administrative route; and logs in by an idp-a login name.
func TestEntitlementsWithLoginToken(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newAccessFixture(t, tn)
		f.pkg = f.oneProduct
		f.order(nil)
		const redirect = "http://localhost:9999/callback"
		var lc struct {
			ID     string `json:"id"`
			Secret string `json:"secret"`
		}
		r := tn.Do("POST", "/loginclient", map[string]any{"name": "web", "redirectUris": []string{redirect}})
		wantStatus(t, r, http.StatusCreated, "login client")
		r.JSON(t, &lc)
		me := create(t, tn, "/authorizations/user", map[string]any{"email": "ola@example.no", "password": "correct horse", "subscriberId": f.subscriber})
		you := create(t, tn, "/authorizations/user", map[string]any{"email": "kari@example.no", "subscriberId": f.subscriber})
		ten, err := e.Store.TenantByID(t.Context(), tn.ID)
		if err != nil {
			t.Fatal(err)
		}
		tok := subscriberLogin(t, e, ten.Name, lc.ID, lc.Secret, redirect, "OLA@example.no", "correct horse")
		as := func(path string) *apitest.Response {
			return e.Raw("GET", path, nil, "Authorization", "Bearer "+tok, "S4-TenantId", tn.ID)
		}
		r = as("/authorizations/user/" + me + "/access")
		wantStatus(t, r, http.StatusOK, "own access with the login token")
		var a access
		r.JSON(t, &a)
		if len(a.Products) != 1 || a.Products[0].ProductID != f.digital {
			t.Fatalf("own access: %s", r.Body)
		}
		wantStatus(t, as("/authorizations/user/"+you+"/access"), http.StatusForbidden, "another user's access with the login token")
		wantStatus(t, as("/authorizations/user/"+me), http.StatusForbidden, "an administrative route with the login token")

		// An idp-a account is a further login name of its user: logging in
		// with it gives that user's token.
		create(t, tn, "/authorizations/identityprovider/account/idp-a/ola.n", map[string]any{"userId": me})
		tok = subscriberLogin(t, e, ten.Name, lc.ID, lc.Secret, redirect, "Ola.N", "correct horse")
		wantStatus(t, as("/authorizations/user/"+me+"/access"), http.StatusOK, "own access after a login by the idp-a name")
	})
}
