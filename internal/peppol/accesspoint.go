package peppol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/egress"
)

// AccessPoint hands documents to an access-point provider over HTTP (the
// protocol is in docs/PEPPOL.md, "Access point HTTP API"):
//
//	POST {URL}/outbound             the UBL document; Idempotency-Key: <delivery id>
//	GET  {URL}/outbound/{messageId} its status
//
// Answers are JSON {"messageId", "status": Accepted|Sent|Delivered|Failed,
// "reason"}. 2xx and 409 (the key was seen: the first hand-over's answer)
// are receipts; other 4xx but 408 and 429 are refusals (PermanentError);
// the rest, and network errors, are retried by the Deliverer.
type AccessPoint struct {
	URL string
	// Token is sent as a bearer token; else Username/Password as HTTP Basic.
	Token              string
	Username, Password string
	// Client sends the requests; nil means one whose connections the
	// zero egress policy checks (public addresses only).
	Client *http.Client
}

// Name implements Sender.
func (a *AccessPoint) Name() string { return "AccessPoint" }

// defaultClient is the access point client unless one is given: one
// client, so connections are reused.
var defaultClient = egress.Policy{}.Client(30 * time.Second)

func (a *AccessPoint) client() *http.Client {
	if a.Client != nil {
		return a.Client
	}
	return defaultClient
}

func (a *AccessPoint) authorize(req *http.Request) {
	switch {
	case a.Token != "":
		req.Header.Set("Authorization", "Bearer "+a.Token)
	case a.Username != "":
		req.SetBasicAuth(a.Username, a.Password)
	}
}

type apAnswer struct {
	MessageID string `json:"messageId"`
	Status    string `json:"status"`
	Reason    string `json:"reason"`
}

// Send implements Sender.
func (a *AccessPoint) Send(ctx context.Context, m Message) (Receipt, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(a.URL, "/")+"/outbound", bytes.NewReader(m.Body))
	if err != nil {
		return Receipt{}, fmt.Errorf("peppol: access point request: %w", err)
	}
	h := req.Header
	h.Set("Content-Type", ContentType)
	h.Set("Accept", "application/json")
	h.Set("Idempotency-Key", m.IdempotencyKey)
	h.Set("Peppol-Receiver", m.Receiver.String())
	if m.Sender.Value != "" {
		h.Set("Peppol-Sender", m.Sender.String())
	}
	h.Set("Peppol-Document-Type", DocTypeScheme+"::"+m.DocumentType)
	h.Set("Peppol-Process", ProcessScheme+"::"+ProcessID)
	a.authorize(req)
	return a.do(req)
}

// Status implements Sender.
func (a *AccessPoint) Status(ctx context.Context, messageID string) (Receipt, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		strings.TrimRight(a.URL, "/")+"/outbound/"+url.PathEscape(messageID), nil)
	if err != nil {
		return Receipt{}, fmt.Errorf("peppol: access point request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	a.authorize(req)
	return a.do(req)
}

func (a *AccessPoint) do(req *http.Request) (Receipt, error) {
	resp, err := a.client().Do(req)
	if err != nil {
		return Receipt{}, fmt.Errorf("peppol: access point: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Receipt{}, fmt.Errorf("peppol: access point answer: %w", err)
	}
	ok := resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusConflict
	if !ok {
		reason := fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body[:min(len(body), 500)])))
		if resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
			return Receipt{}, &PermanentError{Reason: reason}
		}
		return Receipt{}, errors.New("peppol: access point: " + reason)
	}
	var ans apAnswer
	if err := json.Unmarshal(body, &ans); err != nil || ans.MessageID == "" {
		return Receipt{}, fmt.Errorf("peppol: access point answered HTTP %d without a message id", resp.StatusCode)
	}
	r := Receipt{MessageID: ans.MessageID, Reason: ans.Reason}
	switch ans.Status {
	case "Delivered":
		r.Status = PeppolDelivered
	case "Failed", "Rejected":
		r.Status = PeppolFailed
		if r.Reason == "" {
			r.Reason = "the access point reports the delivery failed"
		}
	default: // Accepted, Sent, Queued…: on its way
		r.Status = PeppolSent
	}
	return r, nil
}
