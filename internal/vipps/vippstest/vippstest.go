// Package vippstest is a stand-in for Vipps MobilePay's Recurring API (v3)
// and its access-token endpoint, for tests: nothing in Kadens' tests may
// call the real Vipps. It is built from the published OpenAPI document
// (recurring-api-openapi.yaml, version 2.6.17, found through
// internal/standardstest), and every request it receives is validated
// against that document with kin-openapi's openapi3filter — path,
// parameters, required headers, body schema — so a request Kadens shapes
// wrongly fails the test that sent it (Server.Close reports them), not a
// merchant in production.
//
// Its limits, stated once:
//   - Only the v3 operations Kadens uses have behaviour: draft, fetch and
//     update (stop, price) an agreement, force-accept it, create, list,
//     fetch, cancel and refund charges. Any other operation of the document
//     is validated and then answered 501. v2, capture and reserve-capture
//     charges, campaigns' effect on charge limits, userinfo and list
//     pagination (Continuation-Token) are not modelled.
//   - The access-token endpoint is not in the Recurring document (it is in
//     Vipps' Access Token API); its request is checked by hand: POST
//     /accesstoken/get with the client_id, client_secret,
//     Ocp-Apim-Subscription-Key and Merchant-Serial-Number headers.
//   - Responses are shaped after the document's schemas but not validated
//     against it (the document's transactionId pattern '^\d{10+}$' cannot
//     match any id as a Go regular expression).
//   - Nothing happens by itself: charges stay DUE until a test settles them
//     (SettleCharge), agreements stay PENDING until a test approves, stops
//     or expires them. The "today" of due-date checks is Now (a test clock).
//   - Rules modelled from the document and Vipps' guide: a charge needs an
//     ACTIVE agreement, a due date at least LeadDays ahead (1 day in Vipps'
//     test environment, 2 in production), an amount of at least 100 øre and
//     at most the agreement's price (LEGACY) or the customer's maxAmount
//     (VARIABLE); an orderId is unique per merchant; a repeated
//     Idempotency-Key on the same operation answers the first result again;
//     only PENDING, DUE or RESERVED charges can be cancelled; only CHARGED
//     (or partially refunded) ones refunded, up to what is left.
//   - State lives in memory, one merchant (one set of credentials) per
//     server; no throughput limit is imposed, and none is claimed.
package vippstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/kadens/kadens/internal/standardstest"
)

// Agreement statuses and charge statuses, as the document names them.
const (
	AgreementPending = "PENDING"
	AgreementActive  = "ACTIVE"
	AgreementStopped = "STOPPED"
	AgreementExpired = "EXPIRED"

	ChargePending           = "PENDING"
	ChargeDue               = "DUE"
	ChargeCharged           = "CHARGED"
	ChargeFailed            = "FAILED"
	ChargeCancelled         = "CANCELLED"
	ChargeRefunded          = "REFUNDED"
	ChargePartiallyRefunded = "PARTIALLY_REFUNDED"
)

// Agreement is the server's record of one agreement.
type Agreement struct {
	ID                   string
	UUID                 string
	Status               string
	PricingType          string // LEGACY or VARIABLE
	Amount               int64  // LEGACY price
	SuggestedMaxAmount   int64  // VARIABLE
	MaxAmount            int64  // VARIABLE, chosen by the customer at approval
	Currency             string
	IntervalUnit         string
	IntervalCount        int
	ProductName          string
	ProductDescription   string
	MerchantAgreementURL string
	MerchantRedirectURL  string
	ExternalID           string
	PhoneNumber          string
	InitialChargeID      string
	Created              time.Time
	Start, Stop          time.Time
	Campaign             json.RawMessage // as sent, not interpreted
}

// Charge is the server's record of one charge.
type Charge struct {
	ID              string
	AgreementID     string
	Type            string // INITIAL or RECURRING
	TransactionType string
	Amount          int64
	Currency        string
	Description     string
	Due             time.Time
	RetryDays       int
	Status          string
	ExternalID      string
	Captured        int64
	Refunded        int64
	Cancelled       int64
	History         []Event
}

// Event is one entry of a charge's history.
type Event struct {
	Occurred       time.Time
	Event          string
	Amount         int64
	IdempotencyKey string
	Success        bool
}

// Server is a running test server for one merchant.
type Server struct {
	URL string
	// The merchant's credentials the server accepts.
	ClientID, ClientSecret, SubscriptionKey, MerchantSerialNumber string
	// TokenTTL is the lifetime of issued access tokens (default 1 h).
	TokenTTL time.Duration
	// LeadDays is the minimum number of days between today and a charge's
	// due date (Vipps' test environment: 1).
	LeadDays int

	t      testing.TB
	http   *httptest.Server
	router routers.Router

	mu         sync.Mutex
	now        func() time.Time
	tokens     map[string]time.Time
	agreements map[string]*Agreement
	charges    map[string]*Charge
	order      []string // charge ids in creation order
	idem       map[string]answer
	invalid    []string
	tokenCalls int
	seq        int
	failNext   map[string]int // operation id → status to answer once
}

type answer struct {
	status int
	body   []byte
}

// docs caches the parsed document by path: every test server uses the
// same one and parsing 3,000 lines per test would dominate short tests.
var docs sync.Map // path → *openapi3.T or error

func loadDoc(path string) (*openapi3.T, error) {
	if v, ok := docs.Load(path); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*openapi3.T), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(b)
	if err == nil {
		// The published document's own examples break its schemas (a
		// chargeId example of 18 characters under maxLength 15): they are
		// documentation, not rules, so only the schemas are checked.
		err = doc.Validate(context.Background(), openapi3.DisableExamplesValidation())
	}
	if err != nil {
		err = fmt.Errorf("vippstest: %s: %w", path, err)
		docs.Store(path, err)
		return nil, err
	}
	// The document names Vipps' hosts; tests reach the server on a
	// loopback port, so operations are matched by path alone.
	doc.Servers = nil
	docs.Store(path, doc)
	return doc, nil
}

// New starts a test server from the published document (t is skipped when
// the document is absent). Requests that do not validate are answered 400
// and fail t when the server is closed (at t's cleanup).
func New(t testing.TB) *Server {
	t.Helper()
	doc, err := loadDoc(standardstest.Vipps(t, "recurring-api-openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("vippstest: route the document: %v", err)
	}
	s := &Server{
		ClientID: "kadens-test-client", ClientSecret: randomHex(16), SubscriptionKey: randomHex(16),
		MerchantSerialNumber: "123456", TokenTTL: time.Hour, LeadDays: 1,
		t: t, router: router, now: time.Now,
		tokens: map[string]time.Time{}, agreements: map[string]*Agreement{}, charges: map[string]*Charge{},
		idem: map[string]answer{}, failNext: map[string]int{},
	}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.http.URL
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and fails the test for every request that did not
// validate against the document.
func (s *Server) Close() {
	s.http.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, msg := range s.invalid {
		s.t.Errorf("vippstest: request does not validate against the Recurring API document: %s", msg)
	}
	s.invalid = nil
}

// Invalid returns the validation failures so far (and forgets them), for a
// test that sends a bad request on purpose.
func (s *Server) Invalid() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.invalid
	s.invalid = nil
	return out
}

// SetNow sets the server's clock (the "today" of due dates).
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	s.now = now
	s.mu.Unlock()
}

// TokenCalls counts the access tokens issued.
func (s *Server) TokenCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenCalls
}

// FailNext makes the next request to the operation (its operationId, e.g.
// "CreateChargeV3") answer status without effect, once.
func (s *Server) FailNext(operationID string, status int) {
	s.mu.Lock()
	s.failNext[operationID] = status
	s.mu.Unlock()
}

// Agreement returns a copy of the agreement with id.
func (s *Server) Agreement(id string) (Agreement, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agreements[id]
	if !ok {
		return Agreement{}, false
	}
	return *a, true
}

// Charges returns copies of the agreement's charges in creation order
// (every charge when agreementID is "").
func (s *Server) Charges(agreementID string) []Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Charge
	for _, id := range s.order {
		c := s.charges[id]
		if agreementID == "" || c.AgreementID == agreementID {
			cc := *c
			cc.History = append([]Event(nil), c.History...)
			out = append(out, cc)
		}
	}
	return out
}

// Approve is the customer approving a PENDING agreement in the app: it
// becomes ACTIVE (with maxAmount for a VARIABLE agreement; 0 takes the
// suggested one) and its initial charge, if any, is charged.
func (s *Server) Approve(id string, maxAmount int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.approve(id, maxAmount)
}

func (s *Server) approve(id string, maxAmount int64) error {
	a, ok := s.agreements[id]
	if !ok {
		return fmt.Errorf("vippstest: no agreement %s", id)
	}
	if a.Status != AgreementPending {
		return fmt.Errorf("vippstest: agreement %s is %s, not PENDING", id, a.Status)
	}
	a.Status, a.Start = AgreementActive, s.now().UTC()
	if a.PricingType == "VARIABLE" {
		if maxAmount == 0 {
			maxAmount = a.SuggestedMaxAmount
		}
		a.MaxAmount = maxAmount
	}
	if c := s.charges[a.InitialChargeID]; c != nil {
		s.settle(c, true)
	}
	return nil
}

// Stop is the customer (or Vipps) stopping an agreement: it becomes
// STOPPED and its charges not yet made are cancelled, as Vipps does.
func (s *Server) Stop(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agreements[id]
	if !ok {
		return fmt.Errorf("vippstest: no agreement %s", id)
	}
	s.stop(a)
	return nil
}

func (s *Server) stop(a *Agreement) {
	if a.Status == AgreementStopped || a.Status == AgreementExpired {
		return
	}
	if a.Status == AgreementPending {
		a.Status = AgreementExpired
	} else {
		a.Status = AgreementStopped
	}
	a.Stop = s.now().UTC()
	for _, c := range s.charges {
		if c.AgreementID == a.ID && cancellable(c.Status) {
			s.cancel(c, "")
		}
	}
}

// Expire is a PENDING agreement left unapproved until Vipps expires it.
func (s *Server) Expire(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agreements[id]
	if !ok || a.Status != AgreementPending {
		return fmt.Errorf("vippstest: agreement %s is not PENDING", id)
	}
	a.Status, a.Stop = AgreementExpired, s.now().UTC()
	return nil
}

// SettleCharge processes a DUE (or PENDING) charge: charged (ok) or failed
// after its retry days.
func (s *Server) SettleCharge(id string, ok bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, found := s.charges[id]
	if !found {
		return fmt.Errorf("vippstest: no charge %s", id)
	}
	if c.Status != ChargePending && c.Status != ChargeDue {
		return fmt.Errorf("vippstest: charge %s is %s", id, c.Status)
	}
	s.settle(c, ok)
	return nil
}

func (s *Server) settle(c *Charge, ok bool) {
	if ok {
		c.Status, c.Captured = ChargeCharged, c.Amount
		c.History = append(c.History, Event{Occurred: s.now().UTC(), Event: "CAPTURE", Amount: c.Amount, Success: true})
		return
	}
	c.Status = ChargeFailed
	c.History = append(c.History, Event{Occurred: s.now().UTC(), Event: "FAIL", Amount: c.Amount, Success: false})
}

func cancellable(status string) bool {
	return status == ChargePending || status == ChargeDue || status == "RESERVED"
}

func (s *Server) cancel(c *Charge, key string) {
	c.Cancelled = c.Amount - c.Captured
	c.Status = ChargeCancelled
	c.History = append(c.History, Event{Occurred: s.now().UTC(), Event: "CANCEL", Amount: c.Cancelled, IdempotencyKey: key, Success: true})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/accesstoken/get" {
		s.accessToken(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		problem(w, http.StatusBadRequest, "body could not be read")
		return
	}
	route, params, err := s.router.FindRoute(r)
	if err != nil {
		s.reject(fmt.Sprintf("%s %s: no such operation: %v", r.Method, r.URL.Path, err))
		problem(w, http.StatusNotFound, "no such operation")
		return
	}
	// Authorization is a required header parameter in the document; the
	// token itself is checked here (issued by us and not expired), and an
	// unknown or expired one is a 401 like Vipps', not a shape error.
	if !s.authorized(r) {
		problem(w, http.StatusUnauthorized, "access token missing, unknown or expired")
		return
	}
	in := &openapi3filter.RequestValidationInput{
		Request: cloneWithBody(r, body), PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		s.reject(fmt.Sprintf("%s %s (%s): %v", r.Method, r.URL.Path, route.Operation.OperationID, err))
		problem(w, http.StatusBadRequest, "Input validation failed: "+err.Error())
		return
	}
	if got := r.Header.Get("Ocp-Apim-Subscription-Key"); got != s.SubscriptionKey {
		problem(w, http.StatusUnauthorized, "wrong Ocp-Apim-Subscription-Key")
		return
	}
	if got := r.Header.Get("Merchant-Serial-Number"); got != s.MerchantSerialNumber {
		problem(w, http.StatusForbidden, "wrong Merchant-Serial-Number")
		return
	}
	op := route.Operation.OperationID
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.failNext[op]; ok {
		delete(s.failNext, op)
		problem(w, st, "failure injected by the test")
		return
	}
	// A repeated Idempotency-Key on the same operation and path answers
	// what the first request got.
	key := r.Header.Get("Idempotency-Key")
	idemKey := op + " " + r.URL.Path + " " + key
	if key != "" {
		if a, ok := s.idem[idemKey]; ok {
			writeRaw(w, a.status, a.body)
			return
		}
	}
	status, out := s.operate(op, params, r, body, key)
	var raw []byte
	if out != nil {
		raw, _ = json.Marshal(out)
	}
	if key != "" && status < 500 && status != http.StatusConflict {
		s.idem[idemKey] = answer{status: status, body: raw}
	}
	writeRaw(w, status, raw)
}

func cloneWithBody(r *http.Request, body []byte) *http.Request {
	c := r.Clone(r.Context())
	c.Body = io.NopCloser(strings.NewReader(string(body)))
	return c
}

func writeRaw(w http.ResponseWriter, status int, raw []byte) {
	if raw == nil {
		w.WriteHeader(status)
		return
	}
	ct := "application/json"
	if status >= 400 {
		ct = "application/json;charset=UTF-8"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

func (s *Server) reject(msg string) {
	s.mu.Lock()
	s.invalid = append(s.invalid, msg)
	s.mu.Unlock()
}

type errorV3 struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

func problemBody(status int, detail string) errorV3 {
	return errorV3{Type: "https://developer.vippsmobilepay.com/docs/APIs/recurring-api/recurring-api-problems",
		Title: http.StatusText(status), Status: status, Detail: detail}
}

func problem(w http.ResponseWriter, status int, detail string) {
	raw, _ := json.Marshal(problemBody(status, detail))
	writeRaw(w, status, raw)
}

func (s *Server) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[tok]
	return ok && time.Now().Before(exp)
}

// accessToken answers Vipps' access-token request (POST /accesstoken/get):
// the four headers must name this merchant. The answer's numbers are
// strings, as Vipps sends them.
func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	h := r.Header
	if h.Get("client_id") != s.ClientID || h.Get("client_secret") != s.ClientSecret ||
		h.Get("Ocp-Apim-Subscription-Key") != s.SubscriptionKey || h.Get("Merchant-Serial-Number") != s.MerchantSerialNumber {
		problem(w, http.StatusUnauthorized, "invalid client credentials")
		return
	}
	tok := randomHex(24)
	now := time.Now()
	s.mu.Lock()
	s.tokens[tok] = now.Add(s.TokenTTL)
	s.tokenCalls++
	s.mu.Unlock()
	secs := strconv.Itoa(int(s.TokenTTL / time.Second))
	raw, _ := json.Marshal(map[string]string{
		"token_type": "Bearer", "expires_in": secs, "ext_expires_in": secs,
		"expires_on": strconv.FormatInt(now.Add(s.TokenTTL).Unix(), 10), "not_before": strconv.FormatInt(now.Unix(), 10),
		"resource": "00000002-0000-0000-c000-000000000000", "access_token": tok,
	})
	writeRaw(w, http.StatusOK, raw)
}

// The request bodies the server reads (the document validated their shape).
type draftRequest struct {
	Pricing struct {
		Type               string `json:"type"`
		Amount             int64  `json:"amount"`
		SuggestedMaxAmount int64  `json:"suggestedMaxAmount"`
		Currency           string `json:"currency"`
	} `json:"pricing"`
	Interval struct {
		Unit  string `json:"unit"`
		Count int    `json:"count"`
	} `json:"interval"`
	InitialCharge *struct {
		Amount          int64  `json:"amount"`
		Description     string `json:"description"`
		TransactionType string `json:"transactionType"`
		OrderID         string `json:"orderId"`
		ExternalID      string `json:"externalId"`
	} `json:"initialCharge"`
	Campaign             json.RawMessage `json:"campaign"`
	MerchantAgreementURL string          `json:"merchantAgreementUrl"`
	MerchantRedirectURL  string          `json:"merchantRedirectUrl"`
	ProductName          string          `json:"productName"`
	ProductDescription   string          `json:"productDescription"`
	PhoneNumber          string          `json:"phoneNumber"`
	ExternalID           string          `json:"externalId"`
}

type patchRequest struct {
	Status             string  `json:"status"`
	ProductName        *string `json:"productName"`
	ProductDescription *string `json:"productDescription"`
	ExternalID         *string `json:"externalId"`
	Pricing            *struct {
		Amount             *int64 `json:"amount"`
		SuggestedMaxAmount *int64 `json:"suggestedMaxAmount"`
	} `json:"pricing"`
}

type chargeRequest struct {
	Amount          int64  `json:"amount"`
	TransactionType string `json:"transactionType"`
	Description     string `json:"description"`
	Due             string `json:"due"`
	RetryDays       int    `json:"retryDays"`
	OrderID         string `json:"orderId"`
	ExternalID      string `json:"externalId"`
}

type refundRequest struct {
	Amount      int64  `json:"amount"`
	Description string `json:"description"`
}

func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%010d", prefix, s.seq)
}

func (s *Server) operate(op string, params map[string]string, r *http.Request, body []byte, key string) (int, any) {
	bad := func(detail string) (int, any) {
		return http.StatusBadRequest, problemBody(http.StatusBadRequest, detail)
	}
	agreement := func() (*Agreement, bool) {
		a, ok := s.agreements[params["agreementId"]]
		return a, ok
	}
	notFound := func() (int, any) { return http.StatusNotFound, problemBody(http.StatusNotFound, "not found") }
	switch op {
	case "DraftAgreementV3":
		var req draftRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return bad(err.Error())
		}
		a := &Agreement{
			ID: s.nextID("agr_"), UUID: uuid4(), Status: AgreementPending,
			PricingType: req.Pricing.Type, Amount: req.Pricing.Amount, SuggestedMaxAmount: req.Pricing.SuggestedMaxAmount,
			Currency: req.Pricing.Currency, IntervalUnit: req.Interval.Unit, IntervalCount: req.Interval.Count,
			ProductName: req.ProductName, ProductDescription: req.ProductDescription,
			MerchantAgreementURL: req.MerchantAgreementURL, MerchantRedirectURL: req.MerchantRedirectURL,
			ExternalID: req.ExternalID, PhoneNumber: req.PhoneNumber, Created: s.now().UTC(), Campaign: req.Campaign,
		}
		if a.PricingType == "" {
			a.PricingType = "LEGACY"
		}
		if a.PricingType == "LEGACY" && a.Amount == 0 {
			return bad("pricing.amount is required for LEGACY pricing")
		}
		if a.PricingType == "VARIABLE" && a.SuggestedMaxAmount == 0 {
			return bad("pricing.suggestedMaxAmount is required for VARIABLE pricing")
		}
		out := map[string]any{"agreementId": a.ID, "uuid": a.UUID, "vippsConfirmationUrl": s.URL + "/landing/" + a.ID}
		if ic := req.InitialCharge; ic != nil {
			id := ic.OrderID
			if id == "" {
				id = s.nextID("ic")
			}
			c := &Charge{ID: id, AgreementID: a.ID, Type: "INITIAL", TransactionType: ic.TransactionType,
				Amount: ic.Amount, Currency: a.Currency, Description: ic.Description, Due: s.now().UTC(),
				Status: ChargePending, ExternalID: ic.ExternalID}
			c.History = append(c.History, Event{Occurred: s.now().UTC(), Event: "CREATE", Amount: c.Amount, IdempotencyKey: key, Success: true})
			s.charges[id], a.InitialChargeID = c, id
			s.order = append(s.order, id)
			out["chargeId"] = id
		}
		s.agreements[a.ID] = a
		return http.StatusCreated, out
	case "FetchAgreementV3":
		a, ok := agreement()
		if !ok {
			return notFound()
		}
		return http.StatusOK, agreementView(a)
	case "UpdateAgreementPatchV3":
		a, ok := agreement()
		if !ok {
			return notFound()
		}
		var req patchRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return bad(err.Error())
		}
		if a.Status == AgreementStopped || a.Status == AgreementExpired {
			if req.Status == AgreementStopped {
				return http.StatusNoContent, nil // stopping a stopped agreement changes nothing
			}
			return bad("agreement is " + a.Status)
		}
		if req.Pricing != nil {
			if req.Pricing.Amount != nil {
				a.Amount = *req.Pricing.Amount
			}
			if req.Pricing.SuggestedMaxAmount != nil {
				a.SuggestedMaxAmount = *req.Pricing.SuggestedMaxAmount
			}
		}
		if req.ProductName != nil {
			a.ProductName = *req.ProductName
		}
		if req.ProductDescription != nil {
			a.ProductDescription = *req.ProductDescription
		}
		if req.ExternalID != nil {
			a.ExternalID = *req.ExternalID
		}
		if req.Status == AgreementStopped {
			s.stop(a)
		}
		return http.StatusNoContent, nil
	case "acceptUsingPATCHV3":
		if _, ok := agreement(); !ok {
			return notFound()
		}
		if err := s.approve(params["agreementId"], 0); err != nil {
			return bad(err.Error())
		}
		return http.StatusNoContent, nil
	case "CreateChargeV3":
		a, ok := agreement()
		if !ok {
			return notFound()
		}
		var req chargeRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return bad(err.Error())
		}
		if a.Status != AgreementActive {
			return bad("agreement is " + a.Status + ", not ACTIVE")
		}
		due, err := time.Parse(time.DateOnly, req.Due)
		if err != nil {
			return bad("due must be YYYY-MM-DD")
		}
		today := s.now().UTC().Truncate(24 * time.Hour)
		if earliest := today.AddDate(0, 0, s.LeadDays); due.Before(earliest) {
			return bad(fmt.Sprintf("due must be at least %d day(s) ahead (earliest %s)", s.LeadDays, earliest.Format(time.DateOnly)))
		}
		limit := a.Amount
		if a.PricingType == "VARIABLE" {
			limit = a.MaxAmount
		}
		if req.Amount > limit {
			return bad(fmt.Sprintf("amount %d exceeds the agreement's limit %d", req.Amount, limit))
		}
		id := req.OrderID
		if id == "" {
			id = s.nextID("chr")
		}
		if _, dup := s.charges[id]; dup {
			return http.StatusConflict, problemBody(http.StatusConflict, "orderId "+id+" is already used")
		}
		c := &Charge{ID: id, AgreementID: a.ID, Type: "RECURRING", TransactionType: req.TransactionType,
			Amount: req.Amount, Currency: a.Currency, Description: req.Description, Due: due, RetryDays: req.RetryDays,
			Status: ChargeDue, ExternalID: req.ExternalID}
		c.History = append(c.History, Event{Occurred: s.now().UTC(), Event: "CREATE", Amount: c.Amount, IdempotencyKey: key, Success: true})
		s.charges[id] = c
		s.order = append(s.order, id)
		return http.StatusCreated, map[string]string{"chargeId": id}
	case "ListChargesV3":
		a, ok := agreement()
		if !ok {
			return notFound()
		}
		status := r.URL.Query().Get("status")
		out := []any{}
		for _, id := range s.order {
			c := s.charges[id]
			if c.AgreementID == a.ID && (status == "" || c.Status == status) {
				out = append(out, chargeView(c))
			}
		}
		return http.StatusOK, out
	case "FetchChargeV3", "FetchChargeByIdV3":
		c, ok := s.charges[params["chargeId"]]
		if !ok || (op == "FetchChargeV3" && c.AgreementID != params["agreementId"]) {
			return notFound()
		}
		return http.StatusOK, chargeView(c)
	case "CancelChargeV3":
		c, ok := s.charges[params["chargeId"]]
		if !ok || c.AgreementID != params["agreementId"] {
			return notFound()
		}
		if c.Status == ChargeCancelled {
			return http.StatusNoContent, nil
		}
		if !cancellable(c.Status) {
			return bad("charge is " + c.Status + " and cannot be cancelled")
		}
		s.cancel(c, key)
		return http.StatusNoContent, nil
	case "RefundChargeV3":
		c, ok := s.charges[params["chargeId"]]
		if !ok || c.AgreementID != params["agreementId"] {
			return notFound()
		}
		var req refundRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return bad(err.Error())
		}
		if c.Status != ChargeCharged && c.Status != ChargePartiallyRefunded {
			return bad("charge is " + c.Status + " and cannot be refunded")
		}
		if req.Amount > c.Captured-c.Refunded {
			return bad(fmt.Sprintf("refund %d exceeds what is left to refund (%d)", req.Amount, c.Captured-c.Refunded))
		}
		c.Refunded += req.Amount
		c.Status = ChargePartiallyRefunded
		if c.Refunded == c.Captured {
			c.Status = ChargeRefunded
		}
		c.History = append(c.History, Event{Occurred: s.now().UTC(), Event: "REFUND", Amount: req.Amount, IdempotencyKey: key, Success: true})
		return http.StatusNoContent, nil
	}
	return http.StatusNotImplemented, problemBody(http.StatusNotImplemented, op+" is not modelled by vippstest")
}

func uuid4() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func agreementView(a *Agreement) map[string]any {
	pricing := map[string]any{"type": a.PricingType, "currency": a.Currency}
	if a.PricingType == "VARIABLE" {
		pricing["suggestedMaxAmount"], pricing["maxAmount"] = a.SuggestedMaxAmount, a.MaxAmount
	} else {
		pricing["amount"] = a.Amount
	}
	out := map[string]any{
		"id": a.ID, "uuid": a.UUID, "status": a.Status, "pricing": pricing,
		"interval":    map[string]any{"unit": a.IntervalUnit, "count": a.IntervalCount},
		"productName": a.ProductName, "productDescription": a.ProductDescription, "countryCode": "NO",
		"created": a.Created.Format(time.RFC3339), "merchantAgreementUrl": a.MerchantAgreementURL,
		"merchantRedirectUrl": a.MerchantRedirectURL, "start": nil, "stop": nil,
	}
	if a.ExternalID != "" {
		out["externalId"] = a.ExternalID
	}
	if !a.Start.IsZero() {
		out["start"] = a.Start.Format(time.RFC3339)
	}
	if !a.Stop.IsZero() {
		out["stop"] = a.Stop.Format(time.RFC3339)
	}
	return out
}

func chargeView(c *Charge) map[string]any {
	hist := make([]map[string]any, 0, len(c.History))
	for _, e := range c.History {
		hist = append(hist, map[string]any{"occurred": e.Occurred.Format(time.RFC3339), "event": e.Event,
			"amount": e.Amount, "idempotencyKey": e.IdempotencyKey, "success": e.Success})
	}
	ext := c.ExternalID
	if ext == "" {
		ext = c.ID
	}
	return map[string]any{
		"id": c.ID, "agreementId": c.AgreementID, "amount": c.Amount, "currency": c.Currency,
		"description": c.Description, "due": c.Due.Format(time.RFC3339), "retryDays": c.RetryDays,
		"status": c.Status, "type": c.Type, "transactionType": c.TransactionType, "externalId": ext,
		"transactionId": "5001" + strings.Repeat("0", 6),
		"summary":       map[string]any{"captured": c.Captured, "refunded": c.Refunded, "cancelled": c.Cancelled},
		"history":       hist,
	}
}

// RevokeTokens forgets every issued access token (Vipps rotating its
// keys): the next request with an old token gets a 401.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	clear(s.tokens)
	s.mu.Unlock()
}
