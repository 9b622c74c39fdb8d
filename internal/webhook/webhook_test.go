package webhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/webhook"
)

// The Standard Webhooks specification's test vector.
func TestSignMatchesSpecVector(t *testing.T) {
	key, err := webhook.SecretKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := webhook.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	now := time.Unix(1614265330, 0)
	if err := webhook.Verify("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330",
		"v1,bogus "+got, []byte(`{"test": 2432232314}`), now, time.Minute); err != nil {
		t.Fatalf("Verify with several signatures: %v", err)
	}
	if err := webhook.Verify("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330",
		got, []byte(`{"test": 2432232314}`), now.Add(10*time.Minute), 5*time.Minute); err == nil {
		t.Fatal("Verify accepted an old timestamp")
	}
}

func TestSecrets(t *testing.T) {
	s := webhook.NewSecret()
	if key, err := webhook.SecretKey(s); err != nil || len(key) != 32 || !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("NewSecret %q: %d bytes, %v", s, len(key), err)
	}
	if webhook.NewSecret() == s {
		t.Fatal("two secrets are equal")
	}
	for _, bad := range []string{"", "secret", "whsec_", "whsec_!!!", "whsec_c2hvcnQ=", "whsec_" + strings.Repeat("QUFB", 30)} {
		if _, err := webhook.SecretKey(bad); err == nil {
			t.Errorf("SecretKey(%q) accepted", bad)
		}
	}
}

// The dial-time guard: a registration whose host resolves to a private
// address after it was registered (DNS rebinding) is still refused when
// delivering, and the receiver gets nothing. The host is localhost, a name
// that resolves to 127.0.0.1 (the check at registration refuses it).
func TestDialRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		rcv := newReceiver(t, nil)
		u := strings.Replace(rcv.srv.URL, "127.0.0.1", "localhost", 1)
		ctx, w := setup(t, s, u) // stored directly, as if it had resolved publicly
		d := webhook.New(webhook.Options{Store: s, Schedule: []time.Duration{}, Timeout: time.Second})
		d.Start()
		defer func() { _ = d.Stop(context.Background()) }()
		commit(t, s, ctx, 1)
		var ds []webhook.WebhookDelivery
		waitFor(t, "a failed attempt", 10*time.Second, func() bool {
			ds, _, _ = webhook.ListDeliveries(ctx, s, w.ID, webhook.DeliveryFilter{Status: webhook.DeliveryFailed}, store.Page{Limit: 10})
			return len(ds) == 1
		})
		if a := ds[0].Attempts; len(a) != 1 || a[0].StatusCode != nil || !strings.Contains(a[0].Error, "--egress-allow-private") {
			t.Fatalf("attempts %+v", a)
		}
		if n := len(rcv.messages()); n != 0 {
			t.Fatalf("receiver on loopback got %d requests", n)
		}
	})
}
