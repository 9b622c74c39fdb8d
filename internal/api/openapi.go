package api

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/swaggest/jsonschema-go"
	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi31"
	"github.com/swaggest/swgui/v5emb"
)

// APIVersion is the version label of the contract.
const APIVersion = "2018-01-01"

// tenantParam documents the tenant header of every authenticated operation.
type tenantParam struct {
	TenantID string `header:"S4-TenantId" required:"true" format:"uuid" description:"The tenant the request acts for; must be the tenant of the access token."`
}

// idempotencyParam documents the optional Idempotency-Key of POSTs.
type idempotencyParam struct {
	Key string `header:"Idempotency-Key" maxLength:"255" description:"Makes a POST safe to retry: the same key with the same body within 24 h replays the first response; with another body it is 422."`
}

// schemaNames renames Go types whose contract name differs.
var schemaNames = map[string]string{
	"ValidationResult": "ValidationResultModel",
}

// openAPI renders the OpenAPI 3.1 document from the route table. The
// document is produced from the same declarations that register handlers,
// so it cannot list an operation that is not served, nor miss one that is.
func (s *Server) openAPI() ([]byte, error) {
	ref := openapi31.NewReflector()
	ref.Spec.Info.
		WithTitle("Kadens").
		WithVersion(APIVersion).
		WithDescription("Subscription management and billing. Every operation needs `Authorization: Bearer <token>` " +
			"(OAuth 2.0 client_credentials at {idp_url}/oauth/token) and the `S4-TenantId` header. " +
			"Errors: 400 with a ValidationResultModel; 401, 403 and 404 without a body; 500 with a request id.")
	ref.Spec.WithServers(openapi31.Server{URL: s.baseURL})
	// Schemas are named after their Go type without the package prefix
	// (Organization, not StoreOrganization), with the contract's names where
	// it gives one.
	jsr := ref.JSONSchemaReflector()
	jsr.DefaultOptions = append(jsr.DefaultOptions, jsonschema.InterceptDefName(func(t reflect.Type, def string) string {
		if name, ok := schemaNames[t.Name()]; ok {
			return name
		}
		if t.Name() == "" {
			return def
		}
		return strings.ToUpper(t.Name()[:1]) + t.Name()[1:]
	}))
	ref.Spec.SetHTTPBearerTokenSecurity("bearer", "JWT", "Access token from the identity provider's token endpoint.")
	for _, rt := range s.routes {
		oc, err := ref.NewOperationContext(rt.method, rt.path)
		if err != nil {
			return nil, fmt.Errorf("api: openapi %s %s: %w", rt.method, rt.path, err)
		}
		oc.SetID(rt.id)
		oc.SetTags(rt.tag)
		oc.SetSummary(rt.summary)
		oc.SetDescription(rt.desc)
		if rt.request != nil {
			oc.AddReqStructure(rt.request)
		}
		if !rt.public {
			oc.AddReqStructure(new(tenantParam))
			oc.AddSecurity("bearer")
			if rt.method == http.MethodPost {
				oc.AddReqStructure(new(idempotencyParam))
			}
		}
		for _, resp := range rt.responses {
			opts := []openapi.ContentOption{openapi.WithHTTPStatus(resp.status)}
			if resp.contentType != "" {
				opts = append(opts, openapi.WithContentType(resp.contentType))
			}
			desc, headers := resp.desc, resp.headers
			if desc != "" || len(headers) > 0 {
				opts = append(opts, openapi.WithCustomize(func(cor openapi.ContentOrReference) {
					r, ok := cor.(*openapi31.ResponseOrReference)
					if !ok || r.Response == nil {
						return
					}
					if desc != "" {
						r.Response.Description = desc
					}
					for name, hdesc := range headers {
						h := openapi31.Header{}
						h.WithDescription(hdesc)
						h.WithSchema(map[string]any{"type": "string"})
						r.Response.WithHeadersItem(name, openapi31.HeaderOrReference{Header: &h})
					}
				}))
			}
			oc.AddRespStructure(resp.body, opts...)
		}
		if err := ref.AddOperation(oc); err != nil {
			return nil, fmt.Errorf("api: openapi %s %s: %w", rt.method, rt.path, err)
		}
	}
	return ref.Spec.MarshalJSON()
}

// docRoutes serves the document and a Swagger UI. They are meta routes:
// public, and not part of the document they serve.
func (s *Server) docRoutes() {
	serveDoc := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.doc)
	}
	for _, p := range []string{"GET /openapi.json", "GET /swagger/v1/swagger.json"} {
		s.mux.Handle(p, Observe("api", p, s.metrics, s.log, http.HandlerFunc(serveDoc)))
	}
	ui := v5emb.New("Kadens API", "/swagger/v1/swagger.json", "/swagger/")
	s.mux.Handle("GET /swagger/", Observe("api", "GET /swagger/", s.metrics, s.log, ui))
}

// OpenAPI returns the rendered document.
func (s *Server) OpenAPI() []byte { return s.doc }
