package api_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
)

// refusal sends body to method path and returns the message of the 400's
// one error, which must name field.
func refusal(t *testing.T, tn apitest.Tenant, method, path string, body any, field string) string {
	t.Helper()
	r := tn.Do(method, path, body)
	if f := r.Fields(t); len(f) != 1 || f[0] != field {
		t.Fatalf("%s %s: fields %v, want [%s]: %s", method, path, f, field, r.Body)
	}
	var v apitest.Validation
	r.JSON(t, &v)
	return v.Errors[0].Message
}

// egressField is a URL field Kadens will call, registered through the API.
type egressField struct {
	name, method, path, field string
	body                      func(url string) any
}

func egressFields(t *testing.T, tn apitest.Tenant) []egressField {
	t.Helper()
	account := create(t, tn, "/avtalegiro/account", agAccountBody("1234.56.78903", "https://bank.example/nets"))
	webhook := func(u string) any { return map[string]any{"url": u, "eventTypes": []string{"InvoiceIssued"}} }
	bank := func(u string) any { return agAccountBody("86011117947", u) }
	return []egressField{
		{"webhook", "POST", "/webhook", "url", webhook},
		{"new AvtaleGiro account", "POST", "/avtalegiro/account", "baseComboApiEndpointUrl", bank},
		{"changed AvtaleGiro account", "PUT", "/avtalegiro/account/" + account, "baseComboApiEndpointUrl", bank},
	}
}

// Every URL field Kadens calls is checked against the egress policy when
// it is registered: on a server that allows nothing but public addresses,
// a loopback or private address, a name resolving to 127.0.0.1 and a
// link-local or cloud metadata address are each a 400 naming the field
// and the setting that would allow the address. (At dial time:
// TestDialRefusesPrivateAddresses in internal/webhook, TestBankAddressEgress
// in internal/avtalegiro.)
func TestEgressAtRegistration(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		for _, f := range egressFields(t, e.Tenant) {
			for _, u := range []string{"http://10.1.2.3/x", "http://127.0.0.1:8080/x", "http://localhost/x", "https://api.localhost/x",
				"http://[::1]/x", "http://[::ffff:192.168.1.1]/x"} {
				m := refusal(t, e.Tenant, f.method, f.path, f.body(u), f.field)
				if !strings.Contains(m, "--egress-allow-private") || !strings.Contains(m, "KADENS_EGRESS_ALLOW_PRIVATE") {
					t.Errorf("%s at %s: %q, want the setting named", f.name, u, m)
				}
			}
			for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/x", "http://100.100.100.200/x",
				"http://[fd00:ec2::254]/x"} {
				if m := refusal(t, e.Tenant, f.method, f.path, f.body(u), f.field); !strings.Contains(m, "--egress-allow-link-local") {
					t.Errorf("%s at %s: %q, want --egress-allow-link-local named", f.name, u, m)
				}
			}
			for _, u := range []string{"ftp://93.184.215.14/x", "https://user:pw@93.184.215.14/x", "javascript:alert(1)"} {
				refusal(t, e.Tenant, f.method, f.path, f.body(u), f.field)
			}
		}
		// The account the PUTs were refused for still has its address.
		var accounts []struct {
			URL string `json:"baseComboApiEndpointUrl"`
		}
		e.Do("GET", "/avtalegiro/account", nil).JSON(t, &accounts)
		if len(accounts) != 1 || accounts[0].URL != "https://bank.example/nets" {
			t.Fatalf("accounts after the refused changes: %+v", accounts)
		}
	})
}

// With private addresses allowed (here by the old setting's variable,
// KADENS_WEBHOOK_ALLOW_PRIVATE, an alias that now opens them for every
// outbound call), loopback is accepted in every field, while link-local
// and cloud metadata addresses stay refused, naming their own setting.
func TestEgressAtRegistrationPrivateAllowed(t *testing.T) {
	t.Parallel()
	apitest.EachWith(t, map[string]string{"KADENS_WEBHOOK_ALLOW_PRIVATE": "true"}, func(t *testing.T, e *apitest.Env) {
		for _, f := range egressFields(t, e.Tenant) {
			for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/x"} {
				if m := refusal(t, e.Tenant, f.method, f.path, f.body(u), f.field); !strings.Contains(m, "--egress-allow-link-local") ||
					!strings.Contains(m, "KADENS_EGRESS_ALLOW_LINK_LOCAL") {
					t.Errorf("%s at %s with private addresses allowed: %q", f.name, u, m)
				}
			}
		}
		// A bank on loopback is accepted (a webhook there would be too, but
		// its handshake needs a receiver: TestWebhookLifecycle).
		create(t, e.Tenant, "/avtalegiro/account", agAccountBody("86011117947", "http://127.0.0.1:9/nets"))
		create(t, e.Tenant, "/avtalegiro/account", agAccountBody("15032712344", "http://localhost:9/nets"))
	})
}

// Login-client addresses (redirectUris, postLogoutRedirectUris) are
// https, or http on a loopback host (RFC 8252 §7.3), without user
// information or fragment; javascript:, data: and every other scheme are a
// 400 naming the field. At the authorization and logout endpoints they
// are compared exactly: any other spelling gets no redirect.
func TestLoginClientRedirectURIs(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		const good = "https://news.example/cb"
		for _, u := range []string{"javascript:alert(1)", "JavaScript://news.example/%0aalert(1)", "data:text/html,<script>alert(1)</script>",
			"vbscript:msgbox(1)", "file:///etc/passwd", "ftp://news.example/cb", "com.example.app:/cb", "http://news.example/cb",
			"http://10.0.0.1/cb", "/cb", "//news.example/cb", "https://news.example/cb#x", "https://news.example/cb#",
			"https://user:pw@news.example/cb", "https:news.example", " https://news.example/cb", "https://news.example/c b"} {
			m := refusal(t, e.Tenant, "POST", "/loginclient", map[string]any{"name": "x", "redirectUris": []string{good, u}}, "redirectUris[1]")
			if !strings.Contains(m, "https") {
				t.Errorf("redirect %q: %q does not say what is allowed", u, m)
			}
			refusal(t, e.Tenant, "POST", "/loginclient", map[string]any{"name": "x", "redirectUris": []string{good},
				"postLogoutRedirectUris": []string{u}}, "postLogoutRedirectUris[0]")
		}
		if m := refusal(t, e.Tenant, "POST", "/loginclient", map[string]any{"name": "x", "redirectUris": []string{"data:text/html,x"}},
			"redirectUris[0]"); !strings.Contains(m, "not data:") {
			t.Errorf("data: refusal %q does not name the scheme", m)
		}
		var c struct {
			ID                     string
			RedirectURIs           []string `json:"redirectUris"`
			PostLogoutRedirectURIs []string `json:"postLogoutRedirectUris"`
		}
		uris := []string{good, "http://localhost:3000/cb", "http://127.0.0.1:8080/cb", "http://[::1]/cb"}
		r := e.Do("POST", "/loginclient", map[string]any{"name": "Web", "redirectUris": uris, "postLogoutRedirectUris": []string{"https://news.example/"}})
		if r.JSON(t, &c); r.Status != http.StatusCreated || !slices.Equal(c.RedirectURIs, uris) {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}

		// Use: only the registered spelling is redirected to.
		browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(path string, q url.Values) *http.Response {
			t.Helper()
			resp, err := browser.Get(e.URL + "/idp" + path + "?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		authorize := func(redirect string) *http.Response {
			return get("/authorize", url.Values{"client_id": {c.ID}, "response_type": {"code"}, "scope": {"openid"},
				"redirect_uri": {redirect}, "state": {"s"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"},
				"code_challenge_method": {"S256"}})
		}
		if resp := authorize(good); resp.StatusCode != http.StatusFound || strings.HasPrefix(resp.Header.Get("Location"), good) {
			t.Fatalf("authorize with the registered address: %d %s, want a redirect to the login page", resp.StatusCode, resp.Header.Get("Location"))
		}
		for _, u := range []string{good + "/", "https://NEWS.example/cb", good + "?x=1", "https://news.example/cb/../evil",
			"https://news.example:443/cb", "http://localhost:3001/cb", "http://localhost/cb", "https://evil.example/cb", "javascript:alert(1)"} {
			if resp := authorize(u); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
				t.Errorf("authorize with %q: %d %s, want 400 without a redirect", u, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
		for _, u := range []string{"https://news.example", "https://news.example/?x=1", "javascript:alert(1)", "https://evil.example/"} {
			resp := get("/end_session", url.Values{"client_id": {c.ID}, "post_logout_redirect_uri": {u}})
			if loc := resp.Header.Get("Location"); loc != "" && strings.HasPrefix(loc, u) {
				t.Errorf("logout with %q redirected to %s", u, loc)
			}
		}
	})
}
