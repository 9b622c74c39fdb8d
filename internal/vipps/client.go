// Package vipps is the Vipps MobilePay Recurring (v3) payment provider:
// its client of Vipps' API (every call through the egress guard), the
// merchant's credentials per tenant (sealed with the master key), and the
// provider's records and SQL (docs/VIPPS.md).
package vipps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Base URLs of Vipps' two environments.
const (
	BaseTest       = "https://apitest.vipps.no"
	BaseProduction = "https://api.vipps.no"
)

// systemName and systemVersion fill Vipps-System-Name/-Version, which Vipps
// asks integrations to send (at most 30 characters each).
const (
	systemName    = "kadens"
	systemVersion = "1"
)

// Credentials are one merchant's keys for Vipps' API. BaseURL is the
// environment (BaseTest or BaseProduction; a test server's address in
// tests).
type Credentials struct {
	ClientID             string
	ClientSecret         string
	SubscriptionKey      string
	MerchantSerialNumber string
	BaseURL              string
}

// APIError is an answer of Vipps' other than success: Status and the
// problem's detail. A 4xx is Vipps refusing the request (retrying the
// same request gets the same answer); a 5xx is transient.
type APIError struct {
	Op     string
	Status int
	Detail string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("vipps: %s: %d %s", e.Op, e.Status, e.Detail)
}

// Permanent reports whether err is Vipps refusing the request (a 4xx other
// than 401, 408 and 429), which a retry would not change.
func Permanent(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 &&
		ae.Status != http.StatusUnauthorized && ae.Status != http.StatusRequestTimeout && ae.Status != http.StatusTooManyRequests
}

// IsStatus reports whether err is an APIError with status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// Client calls Vipps' Recurring API for one merchant. Its access token is
// fetched on first use and cached until shortly before it expires (and
// dropped when Vipps answers 401), so a busy charge run costs one token
// request an hour, not one per charge. It is safe for concurrent use.
type Client struct {
	creds Credentials
	http  *http.Client
	now   func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

// tokenMargin: a token is renewed this long before Vipps says it expires,
// so a request never leaves with a token that lapses on the way.
const tokenMargin = time.Minute

// NewClient is a client for creds over hc (egress.Policy.Client: every call
// to Vipps passes the egress guard).
func NewClient(creds Credentials, hc *http.Client) *Client {
	return &Client{creds: creds, http: hc, now: time.Now}
}

type tokenAnswer struct {
	TokenType   string `json:"token_type"`
	ExpiresIn   string `json:"expires_in"`
	AccessToken string `json:"access_token"`
}

// accessToken returns the cached token or fetches a new one.
func (c *Client) accessToken(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && c.now().Before(c.expires) {
		return c.token, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.creds.BaseURL, "/")+"/accesstoken/get", nil)
	if err != nil {
		return "", fmt.Errorf("vipps: access token: %w", err)
	}
	req.Header.Set("client_id", c.creds.ClientID)
	req.Header.Set("client_secret", c.creds.ClientSecret)
	req.Header.Set("Ocp-Apim-Subscription-Key", c.creds.SubscriptionKey)
	req.Header.Set("Merchant-Serial-Number", c.creds.MerchantSerialNumber)
	req.Header.Set("Vipps-System-Name", systemName)
	req.Header.Set("Vipps-System-Version", systemVersion)
	start := c.now()
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("vipps: access token: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return "", &APIError{Op: "access token", Status: resp.StatusCode, Detail: detail(raw)}
	}
	var ans tokenAnswer
	if err := json.Unmarshal(raw, &ans); err != nil || ans.AccessToken == "" {
		return "", fmt.Errorf("vipps: access token: unreadable answer")
	}
	// Vipps sends expires_in as a string of seconds.
	secs, err := strconv.Atoi(ans.ExpiresIn)
	if err != nil || secs <= 0 {
		return "", fmt.Errorf("vipps: access token: expires_in %q is not a number of seconds", ans.ExpiresIn)
	}
	c.token = ans.AccessToken
	c.expires = start.Add(time.Duration(secs)*time.Second - tokenMargin)
	return c.token, nil
}

func (c *Client) dropToken(tok string) {
	c.mu.Lock()
	if c.token == tok {
		c.token = ""
	}
	c.mu.Unlock()
}

// do sends one API request; out (if non-nil) receives a JSON answer. A 401
// drops the cached token and the request is sent once more with a new one.
func (c *Client) do(ctx context.Context, op, method, path, idemKey string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("vipps: %s: %w", op, err)
		}
	}
	for attempt := 0; ; attempt++ {
		tok, err := c.accessToken(ctx)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.creds.BaseURL, "/")+path, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("vipps: %s: %w", op, err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Ocp-Apim-Subscription-Key", c.creds.SubscriptionKey)
		req.Header.Set("Merchant-Serial-Number", c.creds.MerchantSerialNumber)
		req.Header.Set("Vipps-System-Name", systemName)
		req.Header.Set("Vipps-System-Version", systemVersion)
		if in != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if idemKey != "" {
			req.Header.Set("Idempotency-Key", idemKey)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return fmt.Errorf("vipps: %s: %w", op, err)
		}
		raw, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if rerr != nil {
			return fmt.Errorf("vipps: %s: read answer: %w", op, rerr)
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			c.dropToken(tok)
			continue
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return &APIError{Op: op, Status: resp.StatusCode, Detail: detail(raw)}
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				return fmt.Errorf("vipps: %s: unreadable answer: %w", op, err)
			}
		}
		return nil
	}
}

// detail is the problem's detail (or title) of an error answer, else its
// first 200 bytes.
func detail(raw []byte) string {
	var p struct{ Title, Detail string }
	if json.Unmarshal(raw, &p) == nil && (p.Detail != "" || p.Title != "") {
		if p.Detail != "" {
			return p.Detail
		}
		return p.Title
	}
	if len(raw) > 200 {
		raw = raw[:200]
	}
	return string(raw)
}

// Pricing of an agreement: LEGACY (a fixed Amount per interval) or
// VARIABLE (charges up to the maximum the customer chooses, SuggestedMax
// proposed). Amounts in øre.
type Pricing struct {
	Type               string `json:"type"`
	Amount             int64  `json:"amount,omitempty"`
	SuggestedMaxAmount int64  `json:"suggestedMaxAmount,omitempty"`
	MaxAmount          int64  `json:"maxAmount,omitempty"`
	Currency           string `json:"currency"`
}

// Interval is an agreement's period: count units (DAY, WEEK, MONTH, YEAR).
type Interval struct {
	Unit  string `json:"unit"`
	Count int    `json:"count"`
}

// InitialCharge is charged when the customer approves the agreement.
type InitialCharge struct {
	Amount          int64  `json:"amount"`
	Description     string `json:"description"`
	TransactionType string `json:"transactionType"`
	OrderID         string `json:"orderId,omitempty"`
	ExternalID      string `json:"externalId,omitempty"`
}

// Campaign is a v3 campaign (docs/VIPPS.md maps the catalog's intro offers
// to them): PRICE_CAMPAIGN (price until End), PERIOD_CAMPAIGN (price for
// Period), EVENT_CAMPAIGN (price until an event named EventText on
// EventDate), FULL_FLEX_CAMPAIGN (price for Interval until End).
type Campaign struct {
	Type      string    `json:"type"`
	Price     int64     `json:"price"`
	End       string    `json:"end,omitempty"`
	Period    *Interval `json:"period,omitempty"`
	EventDate string    `json:"eventDate,omitempty"`
	EventText string    `json:"eventText,omitempty"`
	Interval  *Interval `json:"interval,omitempty"`
}

// DraftAgreement is the request that drafts an agreement.
type DraftAgreement struct {
	Pricing              Pricing        `json:"pricing"`
	Interval             Interval       `json:"interval"`
	Campaign             *Campaign      `json:"campaign,omitempty"`
	InitialCharge        *InitialCharge `json:"initialCharge,omitempty"`
	MerchantAgreementURL string         `json:"merchantAgreementUrl"`
	MerchantRedirectURL  string         `json:"merchantRedirectUrl"`
	ProductName          string         `json:"productName"`
	ProductDescription   string         `json:"productDescription,omitempty"`
	PhoneNumber          string         `json:"phoneNumber,omitempty"`
	ExternalID           string         `json:"externalId,omitempty"`
}

// Draft is Vipps' answer to a draft.
type Draft struct {
	AgreementID     string `json:"agreementId"`
	UUID            string `json:"uuid"`
	ConfirmationURL string `json:"vippsConfirmationUrl"`
	ChargeID        string `json:"chargeId"`
}

// DraftAgreement drafts an agreement for the customer to approve.
func (c *Client) DraftAgreement(ctx context.Context, idemKey string, d DraftAgreement) (Draft, error) {
	var out Draft
	err := c.do(ctx, "draft agreement", http.MethodPost, "/recurring/v3/agreements", idemKey, d, &out)
	return out, err
}

// AgreementInfo is what Kadens reads of an agreement.
type AgreementInfo struct {
	ID       string   `json:"id"`
	Status   string   `json:"status"`
	Pricing  Pricing  `json:"pricing"`
	Interval Interval `json:"interval"`
	Start    *string  `json:"start"`
	Stop     *string  `json:"stop"`
}

// Agreement fetches an agreement.
func (c *Client) Agreement(ctx context.Context, id string) (AgreementInfo, error) {
	var out AgreementInfo
	err := c.do(ctx, "fetch agreement", http.MethodGet, "/recurring/v3/agreements/"+url.PathEscape(id), "", nil, &out)
	return out, err
}

// StopAgreement stops an agreement (for good: Vipps cannot restart it).
func (c *Client) StopAgreement(ctx context.Context, id, idemKey string) error {
	return c.do(ctx, "stop agreement", http.MethodPatch, "/recurring/v3/agreements/"+url.PathEscape(id), idemKey,
		map[string]string{"status": "STOPPED"}, nil)
}

// UpdatePrice changes a LEGACY agreement's price (Vipps requires the
// customer be told beforehand; docs/VIPPS.md).
func (c *Client) UpdatePrice(ctx context.Context, id, idemKey string, amount int64) error {
	return c.do(ctx, "update agreement price", http.MethodPatch, "/recurring/v3/agreements/"+url.PathEscape(id), idemKey,
		map[string]any{"pricing": map[string]any{"type": "LEGACY", "amount": amount}}, nil)
}

// ChargeRequest is a new recurring charge: Due is YYYY-MM-DD.
type ChargeRequest struct {
	Amount          int64  `json:"amount"`
	TransactionType string `json:"transactionType"`
	Description     string `json:"description"`
	Due             string `json:"due"`
	RetryDays       int    `json:"retryDays"`
	OrderID         string `json:"orderId,omitempty"`
	ExternalID      string `json:"externalId,omitempty"`
}

// CreateCharge creates a charge and returns its id.
func (c *Client) CreateCharge(ctx context.Context, agreementID, idemKey string, r ChargeRequest) (string, error) {
	var out struct {
		ChargeID string `json:"chargeId"`
	}
	err := c.do(ctx, "create charge", http.MethodPost, "/recurring/v3/agreements/"+url.PathEscape(agreementID)+"/charges", idemKey, r, &out)
	return out.ChargeID, err
}

// ChargeInfo is what Kadens reads of a charge.
type ChargeInfo struct {
	ID          string `json:"id"`
	AgreementID string `json:"agreementId"`
	Amount      int64  `json:"amount"`
	Status      string `json:"status"`
	Due         string `json:"due"`
	Type        string `json:"type"`
	Summary     struct {
		Captured  int64 `json:"captured"`
		Refunded  int64 `json:"refunded"`
		Cancelled int64 `json:"cancelled"`
	} `json:"summary"`
}

// Charge fetches one charge.
func (c *Client) Charge(ctx context.Context, agreementID, chargeID string) (ChargeInfo, error) {
	var out ChargeInfo
	err := c.do(ctx, "fetch charge", http.MethodGet,
		"/recurring/v3/agreements/"+url.PathEscape(agreementID)+"/charges/"+url.PathEscape(chargeID), "", nil, &out)
	return out, err
}

// Charges lists an agreement's charges.
func (c *Client) Charges(ctx context.Context, agreementID string) ([]ChargeInfo, error) {
	var out []ChargeInfo
	err := c.do(ctx, "list charges", http.MethodGet, "/recurring/v3/agreements/"+url.PathEscape(agreementID)+"/charges", "", nil, &out)
	return out, err
}

// CancelCharge cancels a charge not yet made.
func (c *Client) CancelCharge(ctx context.Context, agreementID, chargeID, idemKey string) error {
	return c.do(ctx, "cancel charge", http.MethodDelete,
		"/recurring/v3/agreements/"+url.PathEscape(agreementID)+"/charges/"+url.PathEscape(chargeID), idemKey, nil, nil)
}

// RefundCharge refunds amount (øre, at least 100: Vipps' minimum) of a
// charged charge.
func (c *Client) RefundCharge(ctx context.Context, agreementID, chargeID, idemKey string, amount int64, description string) error {
	return c.do(ctx, "refund charge", http.MethodPost,
		"/recurring/v3/agreements/"+url.PathEscape(agreementID)+"/charges/"+url.PathEscape(chargeID)+"/refund", idemKey,
		map[string]any{"amount": amount, "description": description}, nil)
}

// ForceAccept approves an agreement as the customer with phone would; only
// Vipps' test environment has it (tests and test-mode tenants).
func (c *Client) ForceAccept(ctx context.Context, id, idemKey, phone string) error {
	return c.do(ctx, "force accept agreement", http.MethodPatch, "/recurring/v3/agreements/"+url.PathEscape(id)+"/accept", idemKey,
		map[string]string{"phoneNumber": phone}, nil)
}
