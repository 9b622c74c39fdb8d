package vipps

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// The signed headers of Vipps' webhook requests (Vipps' Webhooks API
// guide, "Request authentication": the webhooks document itself only
// describes registering a webhook and the secret it answers).
const (
	headerDate    = "X-Ms-Date"
	headerContent = "X-Ms-Content-Sha256"
	signedHeaders = "x-ms-date;host;x-ms-content-sha256"
)

// Sign returns the Authorization and content-hash headers Vipps sends
// with a webhook: HMAC-SHA256 with the webhook's secret over
// "METHOD\npath?query\ndate;host;content-hash", the content hash being
// the base64 SHA-256 of the body. The test server signs with it, and
// VerifyWebhook recomputes it.
func Sign(secret, method, target, host, date string, body []byte) (authorization, contentHash string) {
	sum := sha256.Sum256(body)
	contentHash = base64.StdEncoding.EncodeToString(sum[:])
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%s\n%s\n%s;%s;%s", method, target, date, host, contentHash)
	sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return "HMAC-SHA256 SignedHeaders=" + signedHeaders + "&Signature=" + sig, contentHash
}

// VerifyWebhook checks a callback's signature with secret: the content
// hash must be the body's and the signature the one Sign makes, compared
// in constant time. Anything else is provider.ErrUnauthenticated.
func VerifyWebhook(secret string, c provider.Callback) error {
	date, got := c.Header.Get(headerDate), c.Header.Get("Authorization")
	if secret == "" || date == "" || got == "" {
		return provider.ErrUnauthenticated
	}
	want, hash := Sign(secret, "POST", c.Target, c.Host, date, c.Body)
	if !hmac.Equal([]byte(c.Header.Get(headerContent)), []byte(hash)) || !hmac.Equal([]byte(got), []byte(want)) {
		return provider.ErrUnauthenticated
	}
	return nil
}

// notification is what Kadens reads of a Recurring webhook: which
// agreement and charge it is about. Their state is read from Vipps, not
// taken from the notification, so a replayed, late or reordered one
// leads to the state Vipps has now.
type notification struct {
	AgreementID string `json:"agreementId"`
	ChargeID    string `json:"chargeId"`
	EventType   string `json:"eventType"`
}

// Callback takes a Vipps webhook for the context's tenant: verified with
// the merchant's webhook secret (401 otherwise), deduplicated by its
// body's digest, then the agreement (and charge) it names are read from
// Vipps and applied as the poller would. A failure to process it is a
// 500, which Vipps retries; the digest is recorded only once processing
// succeeded, so a retry is processed again (processing is idempotent).
func (w *Wing) Callback(ctx context.Context, c provider.Callback) error {
	_, k, err := merchant(ctx, w.st, c.TenantID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && k.hook == "") {
		return provider.ErrUnauthenticated
	}
	if err != nil {
		return err
	}
	secret, err := w.open(k.hook)
	if err != nil {
		return err
	}
	if err := VerifyWebhook(secret, c); err != nil {
		return err
	}
	var n notification
	if err := json.Unmarshal(c.Body, &n); err != nil || n.AgreementID == "" {
		return validation.Field("body", "must be a Vipps Recurring notification naming an agreementId")
	}
	sum := sha256.Sum256(c.Body)
	digest := hex.EncodeToString(sum[:])
	var seen int
	err = w.st.Writer().QueryRow(ctx, `SELECT count(*) FROM vipps_webhook_events WHERE tenant_id = $1 AND digest = $2`,
		c.TenantID, digest).Scan(&seen)
	if err != nil {
		return fmt.Errorf("vipps: webhook: %w", err)
	}
	if seen > 0 {
		return nil
	}
	ctx = tenancy.With(ctx, c.TenantID)
	now := w.tenantNow(c.TenantID)
	rec, err := agreementByVippsID(ctx, w.st, c.TenantID, n.AgreementID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // not one of Kadens' agreements: nothing to do
	}
	if err != nil {
		return err
	}
	if err := w.Sync(ctx, c.TenantID, rec.PaymentAgreementID, now); err != nil {
		return err
	}
	if n.ChargeID != "" {
		inv, err := invoiceOfCharge(ctx, w.st, c.TenantID, n.ChargeID)
		if err == nil {
			err = w.SyncCharge(ctx, c.TenantID, inv, now)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	_, err = w.st.Writer().Exec(ctx, `INSERT INTO vipps_webhook_events (tenant_id, digest, event_type, received_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, c.TenantID, digest, truncate(n.EventType, 100), store.TimeParam(c.Received))
	if err != nil {
		return fmt.Errorf("vipps: webhook: %w", err)
	}
	return nil
}

// truncate keeps at most n bytes of s as valid UTF-8 (an event type is
// only kept for reading, never trusted).
func truncate(s string, n int) string { return strings.ToValidUTF8(s[:min(len(s), n)], "") }
