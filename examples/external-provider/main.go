// Command external-provider is an example integrator that brings its own
// payment provider to Kadens (docs/EXTERNAL_PROVIDER.md). It receives
// Kadens' webhooks, verifies their Standard Webhooks signatures with the
// Standard Webhooks reference library, answers the validation handshake,
// and for every InvoiceIssued event fetches the payment demand, the invoice
// and the subscriber, "charges" them with a pretend provider and reports
// the result with POST /payment, all through Kadens' typed Go client
// (package client, generated from the OpenAPI document). A configurable share of charges fails, so
// Kadens' dunning has something to do. Payment agreement events keep a
// local copy of the External agreements in sync.
//
//	go run ./examples/external-provider -api http://localhost:8080 \
//	    -token-url http://localhost:8080/idp/oauth/token \
//	    -client-id ... -client-secret ... -tenant ... -secret whsec_...
//
// Reporting is idempotent on Kadens' side (the provider reference is
// derived from the invoice), so a redelivered event never pays twice.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shopspring/decimal"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/kadens/kadens/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "external-provider:", err)
		os.Exit(1)
	}
}

// Config is what the receiver needs to know.
type Config struct {
	Listen       string
	API          string  // Kadens main API base URL
	TokenURL     string  // {idp_url}/oauth/token
	ClientID     string  // a machine client of the tenant
	ClientSecret string  // its secret
	Tenant       string  // S4-TenantId
	Secret       string  // the webhook registration's signing secret (whsec_...)
	FailShare    float64 // share of charges that fail, 0..1
}

func parse(args []string, stderr io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("external-provider", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:9090", "address to receive webhooks on (POST /)")
	fs.StringVar(&c.API, "api", "http://localhost:8080", "Kadens main API base URL")
	fs.StringVar(&c.TokenURL, "token-url", "", "token endpoint ({idp_url}/oauth/token); default {api}/idp/oauth/token")
	fs.StringVar(&c.ClientID, "client-id", os.Getenv("KADENS_CLIENT_ID"), "machine client id (env KADENS_CLIENT_ID)")
	fs.StringVar(&c.ClientSecret, "client-secret", os.Getenv("KADENS_CLIENT_SECRET"), "machine client secret (env KADENS_CLIENT_SECRET)")
	fs.StringVar(&c.Tenant, "tenant", os.Getenv("KADENS_TENANT"), "tenant id (env KADENS_TENANT)")
	fs.StringVar(&c.Secret, "secret", os.Getenv("KADENS_WEBHOOK_SECRET"), "webhook signing secret (env KADENS_WEBHOOK_SECRET)")
	fs.Float64Var(&c.FailShare, "fail-share", 0.1, "share of charges that fail (0..1)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.API = strings.TrimRight(c.API, "/")
	if c.TokenURL == "" {
		c.TokenURL = c.API + "/idp/oauth/token"
	}
	var missing []string
	for name, v := range map[string]string{"client-id": c.ClientID, "client-secret": c.ClientSecret, "tenant": c.Tenant, "secret": c.Secret} {
		if v == "" {
			missing = append(missing, "-"+name)
		}
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("missing %s; create a machine client with `kadens client create` and a webhook with POST /webhook", strings.Join(missing, ", "))
	}
	if c.FailShare < 0 || c.FailShare > 1 {
		return c, errors.New("-fail-share must be from 0 to 1")
	}
	return c, nil
}

// run serves until ctx ends. ready, when not nil, receives the listener's
// address once it accepts connections.
func run(ctx context.Context, args []string, stderr io.Writer, ready chan<- string) error {
	cfg, err := parse(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	rc, err := NewReceiver(ctx, cfg, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	log.Info("receiving Kadens webhooks", "addr", ln.Addr().String(), "api", cfg.API, "failShare", cfg.FailShare)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Receiver handles Kadens' webhook POSTs.
type Receiver struct {
	cfg Config
	wh  *standardwebhooks.Webhook
	api *client.Client // Kadens' typed client, with a client_credentials token
	log *slog.Logger

	mu         sync.Mutex
	stats      Stats
	agreements map[string]string // External agreement id → provider reference
}

// Stats count what the receiver did; GET /stats shows them.
type Stats struct {
	Deliveries  int            `json:"deliveries"`
	Rejected    int            `json:"rejected"`
	Events      map[string]int `json:"events"`
	Paid        int            `json:"paid"`
	Failed      int            `json:"failed"`
	Skipped     int            `json:"skipped"`
	Invoices    []string       `json:"invoices"`
	Agreements  int            `json:"agreements"`
	Validations int            `json:"validations"`
}

// NewReceiver returns a receiver for cfg.
func NewReceiver(ctx context.Context, cfg Config, log *slog.Logger) (*Receiver, error) {
	wh, err := standardwebhooks.NewWebhook(cfg.Secret)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	api, err := client.New(cfg.API, cfg.Tenant, client.ClientCredentials(ctx, cfg.TokenURL, cfg.ClientID, cfg.ClientSecret))
	if err != nil {
		return nil, err
	}
	return &Receiver{cfg: cfg, wh: wh, api: api, log: log, agreements: map[string]string{},
		stats: Stats{Events: map[string]int{}}}, nil
}

// event is the part of an EventGrid or CloudEvents event the receiver reads.
type event struct {
	ID        string          `json:"id"`
	EventType string          `json:"eventType"`
	Type      string          `json:"type"` // CloudEvents
	Data      json.RawMessage `json:"data"`
}

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/stats" {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rc.stats)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	// Verify first: an unsigned or tampered message is never acted on.
	if err := rc.wh.Verify(body, r.Header); err != nil || r.Header.Get("S4-TenantId") != rc.cfg.Tenant {
		rc.count(func(s *Stats) { s.Rejected++ })
		rc.log.Warn("rejected a delivery", "err", err, "tenant", r.Header.Get("S4-TenantId"))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var events []event
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		err = json.Unmarshal(body, &events) // EventGrid: an array
	} else {
		var one event // CloudEvents: one event
		err = json.Unmarshal(body, &one)
		one.EventType = one.Type
		events = []event{one}
	}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rc.count(func(s *Stats) { s.Deliveries++ })
	for _, e := range events {
		// The handshake: Event Grid's name in the EventGrid format, ours
		// in the CloudEvents format.
		if e.EventType == "Microsoft.EventGrid.SubscriptionValidationEvent" || e.EventType == "WebhookValidation" {
			var v struct {
				ValidationCode string `json:"validationCode"`
			}
			_ = json.Unmarshal(e.Data, &v)
			rc.count(func(s *Stats) { s.Validations++ })
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": v.ValidationCode})
			return
		}
	}
	// Handle every event before answering: if anything fails, a 5xx makes
	// Kadens deliver the message again, and handling is idempotent.
	for _, e := range events {
		if err := rc.handle(r.Context(), e); err != nil {
			rc.log.Error("handling an event failed; Kadens will retry", "event", e.ID, "type", e.EventType, "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *Receiver) count(f func(*Stats)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	f(&rc.stats)
}

func (rc *Receiver) handle(ctx context.Context, e event) error {
	rc.count(func(s *Stats) { s.Events[e.EventType]++ })
	var data map[string]any
	if err := json.Unmarshal(e.Data, &data); err != nil {
		return fmt.Errorf("event data: %w", err)
	}
	id := func(k string) string { s, _ := data[k].(string); return s }
	switch e.EventType {
	case "InvoiceIssued":
		return rc.charge(ctx, id("paymentDemandId"), id("invoiceId"), id("subscriberId"))
	case "PaymentAgreementCreated", "PaymentAgreementDeleted":
		return rc.syncAgreement(ctx, e.EventType, id("paymentAgreementId"))
	}
	return nil
}

// charge fetches what an InvoiceIssued event names, charges it with the
// pretend provider and reports the result.
func (rc *Receiver) charge(ctx context.Context, demandID, invoiceID, subscriberID string) error {
	demand, err := rc.api.GetPaymentDemand(ctx, demandID)
	if err != nil {
		return err
	}
	invoice, err := rc.api.GetInvoice(ctx, invoiceID, nil)
	if err != nil {
		return err
	}
	subscriber, err := rc.api.GetSubscriber(ctx, subscriberID)
	if err != nil {
		return err
	}
	if demand.Status == "Paid" || demand.Status == "Credited" {
		rc.count(func(s *Stats) { s.Skipped++ })
		return nil
	}
	// Charge what is still outstanding (a credit note may have taken part).
	// Amounts are exact decimals; they never pass through a float.
	var left decimal.Decimal
	for i, n := range []client.Decimal{demand.Amount, demand.PaidAmount, demand.CreditedAmount} {
		d, err := decimal.NewFromString(n.String())
		if err != nil {
			return fmt.Errorf("payment demand %s: amount %q: %w", demandID, n, err)
		}
		if i > 0 {
			d = d.Neg()
		}
		left = left.Add(d)
	}
	if !left.IsPositive() {
		rc.count(func(s *Stats) { s.Skipped++ })
		return nil
	}
	status, reason := "Succeeded", ""
	if rc.fails(invoiceID) {
		status, reason = "Failed", "Card declined (example provider)"
	}
	body := client.PaymentInput{PaymentDemandID: &demandID, Status: &status, Amount: client.Ptr(client.Decimal(left.String())),
		Currency: &demand.Currency, Provider: client.Ptr("External"), ProviderReference: client.Ptr("example-" + invoiceID),
		PaymentAgreementID: invoice.PaymentAgreementID}
	if reason != "" {
		body.FailureReason = &reason
	}
	if _, err := rc.api.CreatePayment(ctx, body); err != nil {
		return err
	}
	rc.log.Info("charged", "invoice", invoice.InvoiceNumber, "kid", invoice.KID, "subscriber", subscriber.Name, "status", status)
	rc.count(func(s *Stats) {
		s.Invoices = append(s.Invoices, invoiceID)
		if status == "Failed" {
			s.Failed++
		} else {
			s.Paid++
		}
	})
	return nil
}

// fails decides, from the invoice id alone, whether its charge fails, so a
// redelivery decides the same way.
func (rc *Receiver) fails(invoiceID string) bool {
	h := sha256.Sum256([]byte(invoiceID))
	return float64(binary.BigEndian.Uint64(h[:8])>>11)/float64(1<<53) < rc.cfg.FailShare
}

func (rc *Receiver) syncAgreement(ctx context.Context, kind, id string) error {
	if kind == "PaymentAgreementDeleted" {
		rc.mu.Lock()
		delete(rc.agreements, id)
		rc.stats.Agreements = len(rc.agreements)
		rc.mu.Unlock()
		return nil
	}
	a, err := rc.api.GetPaymentAgreement(ctx, id)
	if err != nil {
		return err
	}
	if a.ProviderType == "External" {
		rc.mu.Lock()
		rc.agreements[id] = a.ProviderAgreementReference
		rc.stats.Agreements = len(rc.agreements)
		rc.mu.Unlock()
	}
	return nil
}
