package vipps_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/vipps"
)

// FuzzVerifyWebhook: whatever arrives, verification never panics, accepts
// only what Sign made with the secret, and refuses the same request with
// a changed body.
func FuzzVerifyWebhook(f *testing.F) {
	f.Add("secret", "/provider/Vipps/callback/t", "kadens.example", "Thu, 03 Dec 2026 17:00:00 GMT", []byte(`{"agreementId":"agr_1"}`), "HMAC-SHA256 x")
	f.Add("", "", "", "", []byte{}, "")
	f.Fuzz(func(t *testing.T, secret, target, host, date string, body []byte, forged string) {
		auth, hash := vipps.Sign(secret, "POST", target, host, date, body)
		h := http.Header{}
		h.Set("X-Ms-Date", date)
		h.Set("X-Ms-Content-Sha256", hash)
		h.Set("Authorization", auth)
		c := provider.Callback{Header: h, Body: body, Host: host, Target: target}
		err := vipps.VerifyWebhook(secret, c)
		valid := secret != "" && h.Get("X-Ms-Date") != "" && date == h.Get("X-Ms-Date")
		if valid && err != nil {
			t.Fatalf("a signed request refused: %v", err)
		}
		if err != nil && !errors.Is(err, provider.ErrUnauthenticated) {
			t.Fatalf("error %v, want ErrUnauthenticated", err)
		}
		c.Body = append(append([]byte(nil), body...), 'x')
		if vipps.VerifyWebhook(secret, c) == nil {
			t.Fatal("a changed body verified")
		}
		h.Set("Authorization", forged)
		if forged != auth && vipps.VerifyWebhook(secret, provider.Callback{Header: h, Body: body, Host: host, Target: target}) == nil {
			t.Fatal("a forged signature verified")
		}
	})
}
