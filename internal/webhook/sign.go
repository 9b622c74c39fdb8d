package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret (Standard Webhooks).
const SecretPrefix = "whsec_"

// NewSecret returns a fresh signing secret: whsec_ and the base64 of 32
// random bytes.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// SecretKey checks a caller-supplied secret and returns its HMAC key: the
// base64 after whsec_, 24 to 64 bytes once decoded (the Standard Webhooks
// bounds).
func SecretKey(secret string) ([]byte, error) {
	enc, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, errors.New("must start with " + SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, errors.New("must be " + SecretPrefix + " followed by standard base64")
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, fmt.Errorf("must encode 24 to 64 bytes, not %d", len(key))
	}
	return key, nil
}

// Sign returns the webhook-signature header value for a message: v1, and
// the base64 HMAC-SHA256 of "id.timestamp.body" under key.
func Sign(key []byte, id string, at time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(at.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verify checks a received message's headers against secret, accepting a
// timestamp within tolerance of now. Receivers written in Go (tests, the
// example integrator) use it; signature may list several space-separated
// signatures, as during a secret rotation.
func Verify(secret, id, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := SecretKey(secret)
	if err != nil {
		return fmt.Errorf("webhook: secret %w", err)
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("webhook: bad webhook-timestamp")
	}
	at := time.Unix(sec, 0)
	if d := now.Sub(at); d > tolerance || d < -tolerance {
		return errors.New("webhook: webhook-timestamp outside the tolerance")
	}
	want := Sign(key, id, at, body)
	for _, s := range strings.Fields(signature) {
		if subtle.ConstantTimeCompare([]byte(s), []byte(want)) == 1 {
			return nil
		}
	}
	return errors.New("webhook: no matching signature")
}
