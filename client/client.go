// Package client is a typed Go client of the Kadens API. Its types and
// operations (zz_generated.go) are generated from the OpenAPI document the
// server publishes (internal/api/testdata/openapi.json, checked against the
// served one by TestOpenAPIGolden); this file holds the hand-written part:
// transport, authentication, errors, paging and exact decimals.
//
//	c, err := client.New("https://api.example.com", tenantID,
//		client.ClientCredentials(ctx, tokenURL, clientID, clientSecret))
//	orgs, err := c.ListOrganizations(ctx, nil)
//
// Regenerate after the document changed with `go generate ./client`.
package client

//go:generate go run ./internal/codegen/gen -in ../internal/api/testdata/openapi.json -out zz_generated.go

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

	"golang.org/x/oauth2/clientcredentials"
)

// Client calls one tenant's API.
type Client struct {
	base   string
	tenant string
	http   *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests with hc, which must add the access token
// (e.g. an oauth2 client); ClientCredentials is the usual choice.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// ClientCredentials authenticates with a machine client's id and secret at
// tokenURL ({idp_url}/oauth/token), fetching and renewing tokens as needed.
func ClientCredentials(ctx context.Context, tokenURL, clientID, clientSecret string) Option {
	cc := clientcredentials.Config{ClientID: clientID, ClientSecret: clientSecret, TokenURL: tokenURL, Scopes: []string{"api"}}
	return WithHTTPClient(cc.Client(ctx))
}

// New returns a client of the API at baseURL acting for tenant.
func New(baseURL, tenant string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q is not an absolute http(s) URL", baseURL)
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), tenant: tenant, http: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// RequestOption adjusts one request.
type RequestOption func(*http.Request)

// WithIdempotencyKey makes a POST safe to retry: the server answers a
// repeat with the same key and body with the first response.
func WithIdempotencyKey(key string) RequestOption {
	return func(r *http.Request) { r.Header.Set("Idempotency-Key", key) }
}

// WithHeader sets a request header.
func WithHeader(name, value string) RequestOption {
	return func(r *http.Request) { r.Header.Set(name, value) }
}

// Page is one page of a list and the cursor of the next ("" on the last).
type Page[T any] struct {
	Items []T
	Next  string
}

// Error is a response outside 2xx. Validation is set for a 400 (every
// problem with the request, by field), Server for a 500.
type Error struct {
	Method, Path string
	Status       int
	Validation   *ValidationResultModel
	Server       *ServerError
	Body         []byte
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("client: %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Validation != nil {
		var fields []string
		for _, f := range e.Validation.Errors {
			fields = append(fields, f.Field+" "+f.Message)
		}
		msg += ": " + strings.Join(fields, "; ")
	}
	if e.Server != nil {
		msg += ": request id " + e.Server.RequestID
	}
	return msg
}

// StatusOf returns the HTTP status of an *Error in err's chain, 0 for none.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// do sends one request and decodes a 2xx JSON body into out (when not nil).
// It returns the cursor of the next page from a Link header.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any, opts []RequestOption) (string, error) {
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case io.Reader: // a file sent as it is
		rd, contentType = b, "application/octet-stream"
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return "", fmt.Errorf("client: %s %s: encode body: %w", method, path, err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return "", fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	req.Header.Set("S4-TenantId", c.tenant)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	for _, o := range opts {
		o(req)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", fmt.Errorf("client: %s %s: read body: %w", method, path, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		e := &Error{Method: method, Path: path, Status: res.StatusCode, Body: b}
		switch res.StatusCode {
		case http.StatusBadRequest:
			var v ValidationResultModel
			if json.Unmarshal(b, &v) == nil {
				e.Validation = &v
			}
		case http.StatusInternalServerError:
			var v ServerError
			if json.Unmarshal(b, &v) == nil {
				e.Server = &v
			}
		}
		return "", e
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return "", fmt.Errorf("client: %s %s: decode %d response: %w", method, path, res.StatusCode, err)
		}
	}
	return nextCursor(res.Header.Get("Link")), nil
}

// nextCursor reads the cursor of the rel="next" link, "" when there is none.
func nextCursor(link string) string {
	for _, part := range strings.Split(link, ",") {
		target, params, ok := strings.Cut(part, ";")
		if !ok || !strings.Contains(params, `rel="next"`) {
			continue
		}
		u, err := url.Parse(strings.Trim(strings.TrimSpace(target), "<>"))
		if err != nil {
			return ""
		}
		return u.Query().Get("cursor")
	}
	return ""
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

// Decimal is an exact decimal number as the API writes and reads it: money
// in major units ("199.00") and percentages. It keeps the literal, so
// nothing passes through a binary float; convert it with a decimal library
// (e.g. shopspring/decimal's NewFromString). The zero value is 0.
type Decimal string

// MarshalJSON writes the decimal as a JSON number.
func (d Decimal) MarshalJSON() ([]byte, error) {
	if d == "" {
		return []byte("0"), nil
	}
	if !isNumber(string(d)) {
		return nil, fmt.Errorf("client: %q is not a decimal number", string(d))
	}
	return []byte(d), nil
}

// UnmarshalJSON reads a JSON number.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if !isNumber(s) {
		return fmt.Errorf("client: %.40s is not a decimal number", s)
	}
	*d = Decimal(s)
	return nil
}

// isNumber reports whether s is exactly one JSON number literal.
func isNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) || strings.TrimSpace(s) != s {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

// String returns the decimal as written ("199.00").
func (d Decimal) String() string {
	if d == "" {
		return "0"
	}
	return string(d)
}

// Ptr returns a pointer to v, for the optional fields of request bodies:
// client.OrganizationInput{Name: client.Ptr("Nordavis AS"), …}.
func Ptr[T any](v T) *T { return &v }
