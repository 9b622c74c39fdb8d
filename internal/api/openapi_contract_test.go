package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/store"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi.json from the served document")

// goldenPath is the reviewed copy of the document.
var goldenPath = filepath.Join("testdata", "openapi.json")

// regenerate is the one command that updates the golden copy.
const regenerate = "go test ./internal/api -run TestOpenAPIGolden -update"

// TestOpenAPIGolden fails when the served document differs from the checked
// in copy, so that every change to the contract (a renamed field, a type
// that became nullable) shows up in review as a diff of testdata/openapi.json.
func TestOpenAPIGolden(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, store.SQLite, nil)
	var served bytes.Buffer
	if err := json.Indent(&served, e.Server.API.OpenAPI(), "", "  "); err != nil {
		t.Fatal(err)
	}
	served.WriteByte('\n')
	if *update {
		if err := os.WriteFile(goldenPath, served.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	golden, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v; create it with: %s", err, regenerate)
	}
	if bytes.Equal(golden, served.Bytes()) {
		return
	}
	got, want := strings.Split(served.String(), "\n"), strings.Split(string(golden), "\n")
	line := 0
	for line < len(got) && line < len(want) && got[line] == want[line] {
		line++
	}
	at := func(lines []string) string {
		if line < len(lines) {
			return strings.TrimSpace(lines[line])
		}
		return "(end of document)"
	}
	t.Fatalf("the served /openapi.json differs from %s from line %d:\n  served: %s\n  golden: %s\n"+
		"If the change is intended, regenerate the golden copy and the Go client, and commit both:\n  %s && go generate ./client",
		goldenPath, line+1, at(got), at(want), regenerate)
}

// TestOpenAPIDescribesWhatIsSent checks the rules that make the document
// usable by generators, over the whole document: apitest's contract check
// proves the same against live responses.
func TestOpenAPIDescribesWhatIsSent(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, store.SQLite, nil)
	var doc map[string]any
	if err := json.Unmarshal(e.Server.API.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)

	t.Run("tags and descriptions", func(t *testing.T) {
		declared := map[string]string{}
		for _, tg := range doc["tags"].([]any) {
			tg := tg.(map[string]any)
			d, _ := tg["description"].(string)
			declared[tg["name"].(string)] = d
		}
		eachOperation(doc, func(id string, op map[string]any) {
			if d, _ := op["description"].(string); strings.TrimSpace(d) == "" {
				t.Errorf("%s has no description", id)
			}
			for _, tg := range op["tags"].([]any) {
				if declared[tg.(string)] == "" {
					t.Errorf("%s: tag %q is not declared with a description (api.tagDescriptions)", id, tg)
				}
			}
		})
		info := doc["info"].(map[string]any)["description"].(string)
		if strings.Contains(info, "{idp_url}") || !strings.Contains(info, e.Config.IdPURL+"/oauth/token") {
			t.Errorf("info.description does not name the real token endpoint: %s", info)
		}
	})

	t.Run("schema names", func(t *testing.T) {
		// Two Go types of one name get a contract name each
		// (api.qualifiedSchemaNames), not a generated suffix.
		numbered := regexp.MustCompile(`Type\d+$`)
		for name := range schemas {
			if numbered.MatchString(name) {
				t.Errorf("schema %s is named by the reflector's collision rule", name)
			}
		}
	})

	t.Run("nullable schemas", func(t *testing.T) {
		// "null or X" says X's type only in X's alternative: a type beside
		// the anyOf applies to null too under JSON Schema 2020-12, so
		// null would never validate (nullableAlternatives).
		n := 0
		walk(doc, "", func(path string, m map[string]any) {
			for _, key := range []string{"anyOf", "oneOf"} {
				alts, _ := m[key].([]any)
				if !slices.ContainsFunc(alts, func(v any) bool { a, _ := v.(map[string]any); return hasType(a, "null") }) {
					continue
				}
				n++
				if _, typed := m["type"]; typed {
					t.Errorf("%s: type %v beside a nullable %s", path, m["type"], key)
				}
			}
		})
		if n < 20 {
			t.Fatalf("only %d nullable anyOf schemas found", n)
		}
	})

	t.Run("numbers are exact decimals", func(t *testing.T) {
		walk(doc, "", func(path string, m map[string]any) {
			if hasType(m, "number") && m["format"] != "decimal" {
				t.Errorf("%s: number with format %v, want decimal", path, m["format"])
			}
		})
	})

	t.Run("responses", func(t *testing.T) {
		// Schemas reachable from responses: every object among them lists
		// its required properties, and no list in them is nullable.
		reached := map[string]bool{}
		var reach func(v any)
		reach = func(v any) {
			walk(v, "", func(_ string, m map[string]any) {
				if ref, ok := m["$ref"].(string); ok {
					name := strings.TrimPrefix(ref, "#/components/schemas/")
					if !reached[name] {
						reached[name] = true
						reach(schemas[name])
					}
				}
			})
		}
		eachOperation(doc, func(id string, op map[string]any) {
			for status, r := range op["responses"].(map[string]any) {
				content, _ := r.(map[string]any)["content"].(map[string]any)
				for ct, mt := range content {
					sc := mt.(map[string]any)["schema"].(map[string]any)
					if hasType(sc, "array") && hasType(sc, "null") {
						t.Errorf("%s %s %s: a list answered as array or null", id, status, ct)
					}
					reach(sc)
				}
			}
		})
		if len(reached) < 30 {
			t.Fatalf("only %d schemas reached from responses", len(reached))
		}
		// An order echoes its choices in the shape they were sent, where a
		// left-out list (null) and an empty one mean different things; the
		// schema is the request's.
		delete(reached, "TemplatePackageChoices")
		for name := range reached {
			walk(schemas[name], name, func(path string, m map[string]any) {
				if hasType(m, "array") && hasType(m, "null") {
					t.Errorf("%s: list is array or null", path)
				}
				if props, ok := m["properties"].(map[string]any); ok && len(props) > 0 {
					if req, _ := m["required"].([]any); len(req) == 0 {
						t.Errorf("%s: response object without required properties", path)
					}
				}
			})
		}
		// Pointer-to-struct fields the server sends as null are nullable.
		for _, c := range []struct{ schema, prop string }{
			{"Order", "invoiceContact"},
			{"SubscriptionPackage", "contract"},
		} {
			p := schemas[c.schema].(map[string]any)["properties"].(map[string]any)[c.prop].(map[string]any)
			alts, _ := p["anyOf"].([]any)
			if !slices.ContainsFunc(alts, func(v any) bool { return hasType(v.(map[string]any), "null") }) {
				t.Errorf("%s.%s may be null but is documented as %v", c.schema, c.prop, p)
			}
		}
	})

	t.Run("security schemes", func(t *testing.T) {
		sec := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)
		oauth, _ := sec["oauth2"].(map[string]any)
		flows, _ := oauth["flows"].(map[string]any)
		cc, _ := flows["clientCredentials"].(map[string]any)
		if cc["tokenUrl"] != e.Config.IdPURL+"/oauth/token" {
			t.Errorf("clientCredentials tokenUrl %v, want %s/oauth/token", cc["tokenUrl"], e.Config.IdPURL)
		}
		tenant, _ := sec["tenant"].(map[string]any)
		if tenant["type"] != "apiKey" || tenant["in"] != "header" || tenant["name"] != "S4-TenantId" {
			t.Errorf("tenant scheme %v, want an apiKey header S4-TenantId", tenant)
		}
	})
}

// TestSwaggerUIAuthorizeFlow does what Swagger UI's "Authorize" does with the
// document's schemes: client credentials with scope api at the token URL,
// then a call with the token and the tenant API key.
func TestSwaggerUIAuthorizeFlow(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, store.SQLite, nil)
	var doc struct {
		Components struct {
			SecuritySchemes struct {
				OAuth2 struct {
					Flows struct {
						ClientCredentials struct {
							TokenURL string            `json:"tokenUrl"`
							Scopes   map[string]string `json:"scopes"`
						} `json:"clientCredentials"`
					} `json:"flows"`
				} `json:"oauth2"`
				Tenant struct{ Name string } `json:"tenant"`
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	e.Raw("GET", "/openapi.json", nil).JSON(t, &doc)
	cc := doc.Components.SecuritySchemes.OAuth2.Flows.ClientCredentials
	// The document names the public address; the test server listens on a
	// loopback port, so the path is what is followed.
	u, err := url.Parse(cc.TokenURL)
	if err != nil || !strings.HasPrefix(cc.TokenURL, apitest.BaseURL) {
		t.Fatalf("tokenUrl %q", cc.TokenURL)
	}
	ctx := t.Context()
	ten, err := e.Store.CreateTenant(ctx, "swagger", true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	id, secret, err := idp.NewClientCredentials(ctx, e.Store, ten.ID, "swagger ui", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	scopes := slices.Sorted(maps.Keys(cc.Scopes))
	req, _ := http.NewRequestWithContext(ctx, "POST", e.URL+u.Path, strings.NewReader(url.Values{
		"grant_type": {"client_credentials"}, "scope": {strings.Join(scopes, " ")},
	}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret) // Swagger UI's default client authentication
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != 200 || tok.AccessToken == "" {
		t.Fatalf("token endpoint: %d %v", resp.StatusCode, err)
	}
	r := e.Raw("GET", "/organization", nil, "Authorization", "Bearer "+tok.AccessToken,
		doc.Components.SecuritySchemes.Tenant.Name, ten.ID)
	if r.Status != 200 || strings.TrimSpace(string(r.Body)) != "[]" {
		t.Fatalf("GET /organization with the fetched token: %d %s", r.Status, r.Body)
	}
}

func eachOperation(doc map[string]any, fn func(id string, op map[string]any)) {
	for path, ops := range doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			fn(strings.ToUpper(method)+" "+path, op.(map[string]any))
		}
	}
}

// walk calls fn on every JSON object in v, with a path for messages.
func walk(v any, path string, fn func(path string, m map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(path, v)
		for k, c := range v {
			walk(c, path+"/"+k, fn)
		}
	case []any:
		for _, c := range v {
			walk(c, path+"[]", fn)
		}
	}
}

func hasType(m map[string]any, t string) bool {
	switch ty := m["type"].(type) {
	case string:
		return ty == t
	case []any:
		return slices.Contains(ty, any(t))
	}
	return false
}
