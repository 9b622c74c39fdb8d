package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Version string `json:"version"`
	} `json:"info"`
	Paths map[string]map[string]struct {
		OperationID string                      `json:"operationId"`
		Description string                      `json:"description"`
		Tags        []string                    `json:"tags"`
		Parameters  []struct{ Name, In string } `json:"parameters"`
		Security    []map[string][]string       `json:"security"`
		Responses   map[string]any              `json:"responses"`
	} `json:"paths"`
}

// TestOpenAPIMatchesServedRoutes proves the document and the server agree:
// every documented operation is served, and every served operation is
// documented.
func TestOpenAPIMatchesServedRoutes(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, store.SQLite, nil)
	r := e.Raw("GET", "/openapi.json", nil)
	if r.Status != 200 {
		t.Fatalf("/openapi.json: %d", r.Status)
	}
	var doc openAPIDoc
	r.JSON(t, &doc)
	if !strings.HasPrefix(doc.OpenAPI, "3.1") || doc.Info.Version != "2018-01-01" {
		t.Fatalf("openapi %q, info.version %q", doc.OpenAPI, doc.Info.Version)
	}
	if alt := e.Raw("GET", "/swagger/v1/swagger.json", nil); string(alt.Body) != string(r.Body) {
		t.Fatal("/swagger/v1/swagger.json differs from /openapi.json")
	}
	var documented []string
	param := regexp.MustCompile(`\{[^}]+\}`)
	for path, ops := range doc.Paths {
		for method, op := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
			}
			// Every way to authenticate includes the tenant header, which is
			// an API-key scheme (entered once in Swagger UI), not a parameter.
			if len(op.Security) == 0 {
				t.Errorf("%s %s has no security requirement", method, path)
			}
			for _, req := range op.Security {
				if _, ok := req["tenant"]; !ok {
					t.Errorf("%s %s: security requirement %v lacks the tenant header", method, path, req)
				}
			}
			if slices.ContainsFunc(op.Parameters, func(p struct{ Name, In string }) bool { return p.Name == "S4-TenantId" }) {
				t.Errorf("%s %s documents S4-TenantId as a parameter as well as a security scheme", method, path)
			}
			// Served: an unauthenticated call reaches the route (401), where
			// an unserved one would be 404 or 405.
			concrete := param.ReplaceAllString(path, store.NewID())
			if st := e.Raw(strings.ToUpper(method), concrete, nil).Status; st != http.StatusUnauthorized {
				t.Errorf("documented %s %s answers %d, want 401 from the served route", method, path, st)
			}
		}
	}
	sort.Strings(documented)
	served := e.Server.API.Routes()
	if !slices.Equal(documented, served) {
		t.Fatalf("document and server disagree\ndocumented: %v\nserved:     %v", documented, served)
	}
	if len(served) < 5 {
		t.Fatalf("only %d routes served", len(served))
	}
}

func TestSwaggerUI(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, store.SQLite, nil)
	r := e.Raw("GET", "/swagger/", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), "swagger-ui") || !strings.Contains(string(r.Body), "/swagger/v1/swagger.json") {
		t.Fatalf("/swagger/: %d %.200s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "cdn") || strings.Contains(string(r.Body), "unpkg") {
		t.Fatal("Swagger UI loads assets from a CDN")
	}
	if r := e.Raw("GET", "/swagger/swagger-ui-bundle.js", nil); r.Status != 200 || len(r.Body) < 100_000 {
		t.Fatalf("swagger-ui-bundle.js: %d, %d bytes", r.Status, len(r.Body))
	}
	var doc map[string]json.RawMessage
	e.Raw("GET", "/openapi.json", nil).JSON(t, &doc)
	if _, ok := doc["components"]; !ok {
		t.Fatal("document has no components")
	}
}
