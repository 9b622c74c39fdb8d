package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/swaggest/jsonschema-go"
	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi31"
	"github.com/swaggest/swgui/v5emb"

	"github.com/kadens/kadens/internal/idp"
)

// APIVersion is the version label of the contract.
const APIVersion = "2018-01-01"

// idempotencyParam documents the optional Idempotency-Key of POSTs.
type idempotencyParam struct {
	Key string `header:"Idempotency-Key" maxLength:"255" description:"Makes a POST safe to retry: the same key with the same body within 24 h replays the first response; with another body it is 422."`
}

// schemaNames renames Go types whose contract name differs.
var schemaNames = map[string]string{
	"ValidationResult": "ValidationResultModel",
}

// qualifiedSchemaNames names types whose Go name another package uses too,
// by package path and name (else the reflector numbers them: LineType2).
var qualifiedSchemaNames = map[string]string{
	"github.com/kadens/kadens/internal/billing.Line": "InvoiceLine",
	// The contract's names of the AvtaleGiro records.
	"github.com/kadens/kadens/internal/avtalegiro.AvtaleGiroAccount": "AccountView",
	"github.com/kadens/kadens/internal/avtalegiro.AvtaleGiroClaim":   "ClaimView",
	"github.com/kadens/kadens/internal/avtalegiro.AvtaleGiroMandate": "AvtaleGiroMandateView",
}

// Security schemes of the document. A client authenticates with an access
// token (fetched by Swagger UI itself through the OAuth 2.0 scheme, or
// pasted as a bearer token) and names its tenant in S4-TenantId.
const (
	schemeOAuth2 = "oauth2"
	schemeBearer = "bearer"
	schemeTenant = "tenant"
)

// tagDescriptions describe the document's tags, one per resource. Every tag a
// route uses needs one (TestOpenAPITagsAndDescriptions).
var tagDescriptions = map[string]string{
	"Bookkeeping":       "The general ledger derived from billing documents: an organization's chart of accounts with SAF-T codes and mapping rules, revenue recognition, accounting periods, reconciliation and the journal (docs/BOOKKEEPING.md).",
	"Authorizations":    "Subscriber users (who log in at the identity provider), account sources, identity-provider accounts (idp-a: login names in Kadens' own directory; idp-b: subjects of trusted external issuers) and entitlements: what a user may use now (docs/AUTHORIZATIONS.md).",
	"LoginClient":       "Relying parties (web sites, apps) that send the tenant's subscribers to the identity provider's login page: redirect and logout addresses, allowed scopes, a secret shown once (docs/LOGIN.md).",
	"Autogiro":          "Swedish direct debit through Bankgirot: payee accounts (bankgiro), payer mandates, debits and refunds, submission files to Bankgirot and the reports that come back (docs/AUTOGIRO.md).",
	"Delivery":          "Print delivery: the weekdays a print product is delivered, the tenant's days without paper, and the editions a range of days holds (docs/PRINT.md).",
	"Organization":      "The merchant's selling legal entities: name, registration number, currency, time zone, VAT convention and KID algorithm.",
	"Product":           "What a merchant sells, with its VAT rate; products are the lines of packages.",
	"BillingPlan":       "How often and how far in advance a subscription is billed.",
	"Package":           "Template packages: products, prices and the choices a subscriber may make, merged into a subscription's package at order time.",
	"PackageChain":      "Sequences of template packages, such as an introductory offer followed by the full price.",
	"Subscriber":        "The merchant's customers: people or companies, with addresses and contacts.",
	"Order":             "Orders start subscriptions: a subscriber, a package (or chain) and choices, completed into the first subscription period.",
	"Subscription":      "Subscription periods, their series, cancellations and plan changes.",
	"TestClock":         "Test tenants' clocks: advancing one runs renewals, billing and dunning up to the new time.",
	"Events":            "The tenant's event log, the outbox that webhooks deliver.",
	"Webhook":           "Webhook subscriptions and their deliveries.",
	"Vipps":             "Vipps MobilePay Recurring: the tenant's merchant keys and the Vipps side of Vipps payment agreements (docs/VIPPS.md).",
	"AvtaleGiro":        "Norwegian AvtaleGiro: the payee's accounts at the bank, payers' mandates, claims and their cancellation, and the OCR giro files exchanged with the bank (docs/AVTALEGIRO.md).",
	"Invoice":           "Issued invoices, their lines, VAT totals and printable documents.",
	"PaymentDemand":     "What a subscriber owes for a period, before or without an invoice.",
	"SubscriberAccount": "Subscribers' accounts: balances, entries, charges and allowances.",
	"DunningProcess":    "Reminder rules for unpaid invoices, and the reminders issued.",
	"CreditNote":        "Credit notes that reverse all or part of an invoice.",
	"ProrationPolicy":   "How cancellations and plan changes credit the unused part of a period.",
	"PaymentAgreement":  "How a subscriber pays: invoice, direct debit, card or an external provider.",
	"Payment":           "Payments registered against invoices.",
}

// openAPI renders the OpenAPI 3.1 document from the route table. The
// document is produced from the same declarations that register handlers,
// so it cannot list an operation that is not served, nor miss one that is.
func (s *Server) openAPI() ([]byte, error) {
	key := routeFingerprint(s.routes)
	v, ok := documents.Load(key)
	if !ok {
		doc, err := s.renderOpenAPI(docBaseURL, docIdPURL)
		if err != nil {
			return nil, err
		}
		v, _ = documents.LoadOrStore(key, doc)
	}
	// The addresses are put in last: as JSON strings are escaped one
	// character at a time, the escaped placeholder is replaced by the
	// escaped address wherever the document mentions it.
	doc := v.([]byte)
	doc = bytes.ReplaceAll(doc, jsonText(docIdPURL), jsonText(s.idpURL))
	doc = bytes.ReplaceAll(doc, jsonText(docBaseURL), jsonText(s.baseURL))
	return doc, nil
}

// documents keeps the rendered document per route table: rendering
// reflects over every request and response type (about a second of CPU,
// ten under the race detector), and a process that starts several
// servers — the test suites start hundreds — would otherwise pay it on
// every start. The addresses, the only part that differs between
// servers, are placeholders in the kept copy.
var documents sync.Map // routeFingerprint → []byte

// The placeholders for the server's and the identity provider's address
// in a kept document; neither can be a real address (RFC 2606's
// .invalid) or occur in the document otherwise.
const (
	docBaseURL = "https://base.kadens-openapi.invalid"
	docIdPURL  = "https://idp.kadens-openapi.invalid"
)

// routeFingerprint names a route table: its operations in order with the
// types of what they take and answer, so that servers whose tables
// differ never share a document.
func routeFingerprint(routes []route) string {
	var b strings.Builder
	for _, rt := range routes {
		fmt.Fprintf(&b, "%s %s %s %s %T %T %t %t %s|", rt.method, rt.path, rt.id, rt.tag, rt.request, rt.params, rt.public, rt.subscriber, rt.rawBody)
		for _, r := range rt.responses {
			fmt.Fprintf(&b, "%d %T %s;", r.status, r.body, r.contentType)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// jsonText is s as it appears inside a JSON string, without the quotes.
func jsonText(s string) []byte {
	b, _ := json.Marshal(s)
	return b[1 : len(b)-1]
}

// renderOpenAPI renders the document for the given addresses.
func (s *Server) renderOpenAPI(baseURL, idpURL string) ([]byte, error) {
	tokenURL := idpURL + "/oauth/token"
	ref := openapi31.NewReflector()
	ref.Spec.Info.
		WithTitle("Kadens").
		WithVersion(APIVersion).
		WithDescription("Subscription management and billing. Every operation needs `Authorization: Bearer <token>` " +
			"(OAuth 2.0 client_credentials at " + tokenURL + ") and the `S4-TenantId` header. " +
			"Errors: 400 with a ValidationResultModel; 401, 403 and 404 without a body; 500 with a request id. " +
			"Amounts of money and percentages are JSON numbers written out exactly (`format: decimal`, e.g. 199.00); " +
			"read them into a decimal type, never a binary float.")
	ref.Spec.WithServers(openapi31.Server{URL: baseURL})
	jsr := ref.JSONSchemaReflector()
	jsr.DefaultOptions = append(jsr.DefaultOptions, jsonschema.InterceptDefName(func(t reflect.Type, def string) string {
		// Schemas are named after their Go type without the package
		// prefix (Organization, not StoreOrganization), with the
		// contract's names where it gives one.
		if name, ok := qualifiedSchemaNames[t.PkgPath()+"."+t.Name()]; ok {
			return name
		}
		if name, ok := schemaNames[t.Name()]; ok {
			return name
		}
		if t.Name() == "" {
			return def
		}
		return strings.ToUpper(t.Name()[:1]) + t.Name()[1:]
	}))
	jsr.DefaultOptions = append(jsr.DefaultOptions, contractRules()...)
	jsr.AddTypeMapping(json.Number(""), *new(jsonschema.Schema).WithType(jsonschema.Number.Type()))
	declareSecurity(ref.Spec, tokenURL)
	tags := map[string]bool{}
	for _, rt := range s.routes {
		oc, err := ref.NewOperationContext(rt.method, rt.path)
		if err != nil {
			return nil, fmt.Errorf("api: openapi %s %s: %w", rt.method, rt.path, err)
		}
		oc.SetID(rt.id)
		oc.SetTags(rt.tag)
		tags[rt.tag] = true
		oc.SetSummary(rt.summary)
		desc := rt.desc
		if desc == "" {
			desc = conventionalDescription(rt)
		}
		oc.SetDescription(desc)
		if rt.request != nil {
			oc.AddReqStructure(rt.request)
		}
		if rt.params != nil {
			oc.AddReqStructure(rt.params)
		}
		if rt.rawBody != "" {
			if op, ok := oc.(openapi31.OperationExposer); ok {
				raw := openapi31.MediaType{Schema: map[string]any{"type": "string", "format": "binary"}}
				// A route with a JSON body too takes either.
				if rb := op.Operation().RequestBody; rb != nil && rb.RequestBody != nil && rb.RequestBody.Content != nil {
					rb.RequestBody.Content[rt.rawBody] = raw
				} else {
					body := openapi31.RequestBody{Required: new(true)}
					body.WithContent(map[string]openapi31.MediaType{rt.rawBody: raw})
					op.Operation().WithRequestBody(openapi31.RequestBodyOrReference{RequestBody: &body})
				}
			}
		}
		if !rt.public {
			if op, ok := oc.(openapi31.OperationExposer); ok {
				// Either way of getting a token, always with the tenant.
				op.Operation().WithSecurity(
					map[string][]string{schemeOAuth2: {idp.ScopeAPI}, schemeTenant: {}},
					map[string][]string{schemeBearer: {}, schemeTenant: {}},
				)
			}
			if rt.method == http.MethodPost {
				oc.AddReqStructure(new(idempotencyParam))
			}
		}
		for _, resp := range append(rt.responses, conventionalResponses(rt)...) {
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
	for _, name := range slices.Sorted(maps.Keys(tags)) {
		tag := openapi31.Tag{Name: name}
		if d, ok := tagDescriptions[name]; ok {
			tag.WithDescription(d)
		}
		ref.Spec.Tags = append(ref.Spec.Tags, tag)
	}
	finishSchemas(ref.Spec)
	return ref.Spec.MarshalJSON()
}

// declareSecurity declares how clients authenticate. The OAuth 2.0
// client-credentials scheme names the real token endpoint, so Swagger UI's
// "Authorize" fetches a token itself; S4-TenantId is an API-key scheme, so it
// is entered once rather than on every operation.
func declareSecurity(spec *openapi31.Spec, tokenURL string) {
	oauth := openapi31.SecurityScheme{Oauth2: &openapi31.SecuritySchemeOauth2{Flows: openapi31.OauthFlows{
		ClientCredentials: &openapi31.OauthFlowsDefsClientCredentials{
			TokenURL: tokenURL,
			Scopes:   map[string]string{idp.ScopeAPI: "The main API."},
		},
	}}}
	oauth.WithDescription("OAuth 2.0 client credentials of a machine client (`kadens client create`).")
	spec.ComponentsEns().WithSecuritySchemesItem(schemeOAuth2, openapi31.SecuritySchemeOrReference{SecurityScheme: &oauth})
	spec.SetHTTPBearerTokenSecurity(schemeBearer, "JWT", "An access token from "+tokenURL+".")
	spec.SetAPIKeySecurity(schemeTenant, "S4-TenantId", openapi.InHeader,
		"The tenant the request acts for (a uuid); must be the tenant of the access token.")
}

// conventionalDescription describes an operation declared without its own
// description by the conventions its shape follows.
func conventionalDescription(rt route) string {
	single := strings.HasSuffix(rt.path, "}")
	switch {
	case rt.method == http.MethodGet && !single && isList(rt):
		return "One page of the tenant's items in id order: at most `limit` (default 100). When more follow, " +
			"the `Link` header (rel=\"next\") holds the URL of the next page."
	case rt.method == http.MethodGet && single:
		return "The item with this id. An id of another tenant, or of nothing, is 404."
	case rt.method == http.MethodPost && hasStatus(rt, http.StatusCreated):
		return "Creates an item and answers 201 with its id (a JSON string) and its URL in `Location`. " +
			"Every problem with the body is listed in one 400."
	case rt.method == http.MethodPut:
		return "Updates the item with this id from the body. Every problem with the body is listed in one 400; " +
			"an id of another tenant, or of nothing, is 404."
	case rt.method == http.MethodDelete:
		return "Deletes the item with this id. An id of another tenant, or of nothing, is 404."
	}
	return rt.summary + "."
}

// conventionalResponses are the answers the shared middleware gives that a
// route does not declare itself: 413 for a body over the limit, 507 when a
// write finds the storage full, and for POSTs the Idempotency-Key outcomes.
func conventionalResponses(rt route) []response {
	if rt.public {
		return nil
	}
	var out []response
	add := func(status int, desc string) {
		if !hasStatus(rt, status) {
			out = append(out, response{status: status, desc: desc})
		}
	}
	switch rt.method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		add(http.StatusRequestEntityTooLarge, "The body is larger than the server's limit (--body-limit); no body.")
	}
	// Any request may meet a full disk: a write, and on PostgreSQL a read
	// whose sort spills to a temporary file.
	if !hasStatus(rt, http.StatusInsufficientStorage) {
		out = append(out, response{status: http.StatusInsufficientStorage, body: new(ServerError),
			desc: "The server's storage is full (SQLite: SQLITE_FULL; PostgreSQL: disk_full, SQLSTATE 53100): nothing of the request was saved; retry later. Quote the request id."})
	}
	if rt.method == http.MethodPost {
		add(http.StatusConflict, "A request with the same Idempotency-Key is still being handled, or another request changed the same records at the same moment and this one could not be applied after retrying inside; retry later. No body.")
		add(http.StatusUnprocessableEntity, "The Idempotency-Key was used before with another body; no body.")
	}
	return out
}

func isList(rt route) bool {
	for _, r := range rt.responses {
		if r.status != http.StatusOK || r.body == nil {
			continue
		}
		t := reflect.TypeOf(r.body)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Slice {
			return true
		}
	}
	return false
}

func hasStatus(rt route, status int) bool {
	return slices.ContainsFunc(rt.responses, func(r response) bool { return r.status == status })
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
