package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
)

// subscriberClaims are the claims Kadens' login page puts in a subscriber's
// access token (internal/idp, provider.go); "api" is added to the scope to
// show that the kind claim wins over what the scope says.
func subscriberClaims(tenant string) map[string]any {
	c := claims(tenant)
	c["sub"] = "01900000-0000-7000-8000-0000000000aa"
	c["scope"] = "openid offline_access api"
	c["azp"] = "kl_web"
	c[ns+"/kind"] = "subscriber"
	c[ns+"/subscriberId"] = "01900000-0000-7000-8000-0000000000bb"
	return c
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// A subscriber token is refused (403) by every administrative operation:
// the test walks the whole route table, so a route added later is covered
// too. The same requests with the tenant's API token are not 403.
func TestSubscriberTokenRefusedByAdministrativeRoutes(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tok := sign(t, e, subscriberClaims(e.Tenant.ID))
		routes := e.Server.API.AdministrativeRoutes()
		if len(routes) < 50 {
			t.Fatalf("only %d administrative routes: %v", len(routes), routes)
		}
		for _, rt := range routes {
			method, path, _ := strings.Cut(rt, " ")
			path = pathParam.ReplaceAllString(path, "01900000-0000-7000-8000-000000000001")
			var body any
			if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
				body = "{}"
			}
			r := e.Raw(method, path, body, "Authorization", "Bearer "+tok, "S4-TenantId", e.Tenant.ID)
			if r.Status != http.StatusForbidden {
				t.Errorf("%s with a subscriber token: %d %.200s", rt, r.Status, r.Body)
			}
		}
	})
}
