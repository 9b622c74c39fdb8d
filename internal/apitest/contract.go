package apitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/uuid"
)

// contract checks live responses against the OpenAPI document the server
// publishes, so every API test doubles as a contract test: a response whose
// status, content type, headers or body the document does not describe fails
// the test that caused it. Bodies are checked twice: by kin-openapi (status,
// headers, content type and body), and by a strict JSON Schema 2020-12
// validator (strict), which reads the document's schemas as OpenAPI 3.1
// says they are meant — kin-openapi's own validator does not (a `type`
// beside a nullable anyOf passed null there and failed everywhere else).
type contract struct {
	router routers.Router
	strict *strictSchemas
}

// contracts caches the parsed document by its content: every test server
// publishes the same document, and parsing it per test would dominate short
// tests.
var contracts sync.Map // [sha256.Size]byte → *contract or error

// loadContract parses and validates doc (as an OpenAPI 3.1 document) once
// per distinct content.
func loadContract(doc []byte) (*contract, error) {
	key := sha256.Sum256(doc)
	if v, ok := contracts.Load(key); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*contract), nil
	}
	c, err := parseContract(doc)
	if err != nil {
		contracts.Store(key, err)
		return nil, err
	}
	contracts.Store(key, c)
	return c, nil
}

// registerDecoders teaches the validator the API's non-JSON bodies (the
// printable invoice): they are documented as strings and checked as such.
var registerDecoders = sync.OnceFunc(func() {
	asText := func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	}
	for _, ct := range []string{"text/html", "application/pdf"} {
		openapi3filter.RegisterBodyDecoder(ct, asText)
	}
})

func parseContract(doc []byte) (*contract, error) {
	registerDecoders()
	ctx := context.Background()
	loader := openapi3.NewLoader()
	loader.Context = ctx
	spec, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("apitest: load /openapi.json: %w", err)
	}
	if err := spec.Validate(ctx); err != nil {
		return nil, fmt.Errorf("apitest: /openapi.json is not a valid OpenAPI document: %w", err)
	}
	// kin-openapi validates a 3.1 document's bodies by compiling a JSON
	// Schema 2020-12 validator per response, and for schemas that reference
	// components (nearly all of ours) then falls back to its own validator,
	// which reads 3.1's type lists and anyOf; using that one directly keeps
	// the check from costing a compile per response. The document itself
	// was validated as 3.1 above.
	spec.OpenAPI = "3.0.3"
	// The document names the public base URL; tests reach the server on a
	// loopback port, so operations are matched by path alone.
	spec.Servers = nil
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		return nil, fmt.Errorf("apitest: route /openapi.json: %w", err)
	}
	strict, err := newStrictSchemas(doc)
	if err != nil {
		return nil, err
	}
	return &contract{router: router, strict: strict}, nil
}

// check validates one exchange. Requests the document has no operation for
// (the identity provider, /openapi.json itself, unknown paths a test probes)
// are not its concern and pass.
func (c *contract) check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := c.router.FindRoute(req)
	if err != nil || !uuidParams(route, params) {
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: params,
			Route:      route,
		},
		Status: status,
		Header: header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	if err := openapi3filter.ValidateResponse(req.Context(), in); err != nil {
		return err
	}
	if err := c.strict.check(route.Path, req.Method, status, header.Get("Content-Type"), body); err != nil {
		return err
	}
	// The validator skips bodies of responses documented without content;
	// the contract says those have none.
	if resp := route.Operation.Responses.Status(status); resp != nil && resp.Value != nil &&
		len(resp.Value.Content) == 0 && len(body) > 0 {
		return fmt.Errorf("response %d is documented without a body but has %d bytes", status, len(body))
	}
	return nil
}

// uuidParams reports whether every path parameter documented as a uuid is
// one. A request that fails it was not meant for the operation: the server
// serves a few fixed paths beside the API (GET /webhook/validate beside GET
// /webhook/{id}) that the router, knowing only the document, would take for
// the operation. (The operation itself answers a non-uuid id with a 400.)
func uuidParams(route *routers.Route, params map[string]string) bool {
	for _, p := range route.Operation.Parameters {
		if p.Value == nil || p.Value.In != openapi3.ParameterInPath || p.Value.Schema == nil || p.Value.Schema.Value == nil {
			continue
		}
		if p.Value.Schema.Value.Format == "uuid" && uuid.Validate(params[p.Value.Name]) != nil {
			return false
		}
	}
	return true
}

// checkedTransport authenticates a tenant's requests and checks every
// response against the contract, for clients that do not go through Raw
// (the typed client).
type checkedTransport struct {
	env   *Env
	token string
}

func (ct checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+ct.token)
	resp, err := ct.env.client.Transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := ct.env.contract.check(req, resp.StatusCode, resp.Header, body); err != nil {
		ct.env.t.Errorf("apitest: %s %s answered what /openapi.json does not describe: %v\nbody: %.500s", req.Method, req.URL.Path, err, body)
	}
	return resp, nil
}
