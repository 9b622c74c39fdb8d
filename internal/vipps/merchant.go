package vipps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// Modes of a merchant: Vipps' test environment or production.
const (
	ModeTest       = "test"
	ModeProduction = "production"
)

// VippsMerchant is a tenant's Vipps merchant as shown: never the secret or the
// subscription key.
type VippsMerchant struct {
	ClientID             string    `json:"clientId"`
	MerchantSerialNumber string    `json:"merchantSerialNumber"`
	Mode                 string    `json:"mode" enum:"test,production"`
	BaseURL              string    `json:"baseUrl"`
	ProductName          string    `json:"productName"`
	MerchantAgreementURL string    `json:"merchantAgreementUrl"`
	MerchantRedirectURL  string    `json:"merchantRedirectUrl"`
	MaxAmount            int64     `json:"maxAmount" description:"Suggested maximum per charge, in øre, of the VARIABLE agreements drafted."`
	IntervalUnit         string    `json:"intervalUnit" enum:"DAY,WEEK,MONTH,YEAR"`
	IntervalCount        int       `json:"intervalCount"`
	HasWebhookSecret     bool      `json:"hasWebhookSecret"`
	CreatedAt            time.Time `json:"createdAt"`
	UpdatedAt            time.Time `json:"updatedAt"`
}

// VippsMerchantInput sets a tenant's merchant (PUT /vipps/merchant).
type VippsMerchantInput struct {
	ClientID             string `json:"clientId" required:"true"`
	ClientSecret         string `json:"clientSecret" required:"true"`
	SubscriptionKey      string `json:"subscriptionKey" required:"true" description:"Ocp-Apim-Subscription-Key."`
	MerchantSerialNumber string `json:"merchantSerialNumber" required:"true"`
	Mode                 string `json:"mode" required:"true" enum:"test,production"`
	BaseURL              string `json:"baseUrl" description:"Default: the mode's environment (https://apitest.vipps.no or https://api.vipps.no)."`
	ProductName          string `json:"productName" required:"true" description:"Shown in the app, at most 45 characters."`
	MerchantAgreementURL string `json:"merchantAgreementUrl" required:"true" description:"The subscriber's page to manage the subscription (https)."`
	MerchantRedirectURL  string `json:"merchantRedirectUrl" required:"true" description:"Where the app returns the subscriber after approval (https)."`
	MaxAmount            int64  `json:"maxAmount" required:"true"`
	IntervalUnit         string `json:"intervalUnit" enum:"DAY,WEEK,MONTH,YEAR" description:"Default MONTH."`
	IntervalCount        int    `json:"intervalCount" description:"Default 1."`
	WebhookSecret        string `json:"webhookSecret" description:"The secret Vipps answered when the webhook to /provider/Vipps/callback/{tenantId} was registered; left out: no webhooks are taken (401), the poll alone follows Vipps."`
}

// Wing is the Vipps provider over a store: merchants, agreements, charges.
type Wing struct {
	st     *store.Store
	master []byte
	egress egress.Policy
	hc     *http.Client

	mu      sync.Mutex
	clients map[string]cachedClient // tenant → client (its token cache)
}

type cachedClient struct {
	updated time.Time
	c       *Client
}

// New is the wing over st; secrets are sealed with master (idp.MasterKey)
// and every call to Vipps goes through policy's client.
func New(st *store.Store, master []byte, policy egress.Policy) *Wing {
	return &Wing{st: st, master: master, egress: policy, hc: policy.Client(30 * time.Second), clients: map[string]cachedClient{}}
}

// seal encrypts a secret under the master key, as the signing keys are
// (a compact JWE, dir + A256GCM).
func (w *Wing) seal(plain string) (string, error) {
	enc, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.DIRECT, Key: w.master}, nil)
	if err != nil {
		return "", fmt.Errorf("vipps: seal: %w", err)
	}
	obj, err := enc.Encrypt([]byte(plain))
	if err != nil {
		return "", fmt.Errorf("vipps: seal: %w", err)
	}
	return obj.CompactSerialize()
}

func (w *Wing) open(sealed string) (string, error) {
	obj, err := jose.ParseEncryptedCompact(sealed, []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A256GCM})
	if err != nil {
		return "", fmt.Errorf("vipps: open secret: %w", err)
	}
	plain, err := obj.Decrypt(w.master)
	if err != nil {
		return "", fmt.Errorf("vipps: a merchant secret cannot be decrypted with this master key (was KADENS_MASTER_KEY changed?): %w", err)
	}
	return string(plain), nil
}

var intervalUnits = []string{"DAY", "WEEK", "MONTH", "YEAR"}

// checkMerchant puts in in canonical form and names every problem.
func (w *Wing) checkMerchant(ctx context.Context, in *VippsMerchantInput) error {
	var errs validation.Errors
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"clientId", &in.ClientID, 200}, {"clientSecret", &in.ClientSecret, 500}, {"subscriptionKey", &in.SubscriptionKey, 200},
		{"merchantSerialNumber", &in.MerchantSerialNumber, 20}, {"productName", &in.ProductName, 45}} {
		*f.v = strings.TrimSpace(*f.v)
		switch {
		case *f.v == "":
			errs.Add(f.name, "is required")
		case len([]rune(*f.v)) > f.max:
			errs.Add(f.name, "must be at most %d characters", f.max)
		case validation.TextProblem(*f.v, false) != "":
			errs.Add(f.name, "%s", validation.TextProblem(*f.v, false))
		}
	}
	in.Mode = strings.ToLower(strings.TrimSpace(in.Mode))
	switch in.Mode {
	case ModeTest:
		if in.BaseURL == "" {
			in.BaseURL = BaseTest
		}
	case ModeProduction:
		if in.BaseURL == "" {
			in.BaseURL = BaseProduction
		}
	default:
		errs.Add("mode", "must be test or production")
	}
	if in.BaseURL != "" {
		in.BaseURL = strings.TrimRight(strings.TrimSpace(in.BaseURL), "/")
		if err := w.egress.CheckURL(ctx, in.BaseURL); err != nil && !errors.Is(err, egress.ErrUnresolved) {
			errs.Add("baseUrl", "%v", err)
		}
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"merchantAgreementUrl", &in.MerchantAgreementURL}, {"merchantRedirectUrl", &in.MerchantRedirectURL}} {
		*f.v = strings.TrimSpace(*f.v)
		// Vipps takes only https for the agreement page (the document
		// says so), and a browser follows these; Kadens never fetches them.
		if !strings.HasPrefix(*f.v, "https://") || len(*f.v) > 1024 || len(*f.v) < len("https://x") {
			errs.Add(f.name, "must be an https address of at most 1024 characters")
		}
	}
	// Vipps' limits of a VARIABLE agreement's suggested maximum.
	if in.MaxAmount < 100 || in.MaxAmount > 2_000_000 {
		errs.Add("maxAmount", "must be between 100 and 2000000 øre (Vipps' limits)")
	}
	in.IntervalUnit = strings.ToUpper(strings.TrimSpace(in.IntervalUnit))
	if in.IntervalUnit == "" {
		in.IntervalUnit = "MONTH"
	}
	if !contains(intervalUnits, in.IntervalUnit) {
		errs.Add("intervalUnit", "must be DAY, WEEK, MONTH or YEAR")
	}
	if in.IntervalCount == 0 {
		in.IntervalCount = 1
	}
	if in.IntervalCount < 1 || in.IntervalCount > 31 {
		errs.Add("intervalCount", "must be between 1 and 31 (Vipps' limits)")
	}
	return errs.Err()
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// SetMerchant stores the context tenant's merchant (replacing one set
// before), its secrets sealed. The cached client is dropped, so the next
// call fetches a token with the new keys.
func (w *Wing) SetMerchant(ctx context.Context, in VippsMerchantInput, now time.Time) (VippsMerchant, error) {
	if err := w.checkMerchant(ctx, &in); err != nil {
		return VippsMerchant{}, err
	}
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return VippsMerchant{}, err
	}
	secret, err := w.seal(in.ClientSecret)
	if err != nil {
		return VippsMerchant{}, err
	}
	key, err := w.seal(in.SubscriptionKey)
	if err != nil {
		return VippsMerchant{}, err
	}
	hook := ""
	if in.WebhookSecret = strings.TrimSpace(in.WebhookSecret); in.WebhookSecret != "" {
		if hook, err = w.seal(in.WebhookSecret); err != nil {
			return VippsMerchant{}, err
		}
	}
	m := VippsMerchant{ClientID: in.ClientID, MerchantSerialNumber: in.MerchantSerialNumber, Mode: in.Mode, BaseURL: in.BaseURL,
		ProductName: in.ProductName, MerchantAgreementURL: in.MerchantAgreementURL, MerchantRedirectURL: in.MerchantRedirectURL,
		MaxAmount: in.MaxAmount, IntervalUnit: in.IntervalUnit, IntervalCount: in.IntervalCount}
	if m, err = upsertMerchant(ctx, w.st, tenant, m, sealedKeys{secret: secret, key: key, hook: hook}, now); err != nil {
		return VippsMerchant{}, err
	}
	w.mu.Lock()
	delete(w.clients, tenant)
	w.mu.Unlock()
	return m, nil
}

// GetMerchant returns the context tenant's merchant; none is
// store.ErrNotFound.
func (w *Wing) GetMerchant(ctx context.Context) (VippsMerchant, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return VippsMerchant{}, err
	}
	m, _, err := merchant(ctx, w.st, tenant)
	return m, err
}

// ErrNoMerchant: the tenant has no Vipps merchant set.
var ErrNoMerchant = errors.New("vipps: the tenant has no Vipps merchant (PUT /vipps/merchant)")

// client returns the tenant's client, cached (with its access token) until
// the merchant changes.
func (w *Wing) client(ctx context.Context, tenant string) (*Client, VippsMerchant, error) {
	m, sealed, err := merchant(ctx, w.st, tenant)
	if errors.Is(err, store.ErrNotFound) {
		return nil, VippsMerchant{}, ErrNoMerchant
	}
	if err != nil {
		return nil, VippsMerchant{}, err
	}
	w.mu.Lock()
	cc, ok := w.clients[tenant]
	w.mu.Unlock()
	if ok && cc.updated.Equal(m.UpdatedAt) {
		return cc.c, m, nil
	}
	secret, err := w.open(sealed.secret)
	if err != nil {
		return nil, VippsMerchant{}, err
	}
	key, err := w.open(sealed.key)
	if err != nil {
		return nil, VippsMerchant{}, err
	}
	c := NewClient(Credentials{ClientID: m.ClientID, ClientSecret: secret, SubscriptionKey: key,
		MerchantSerialNumber: m.MerchantSerialNumber, BaseURL: m.BaseURL}, w.hc)
	w.mu.Lock()
	w.clients[tenant] = cachedClient{updated: m.UpdatedAt, c: c}
	w.mu.Unlock()
	return c, m, nil
}
