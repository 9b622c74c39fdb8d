package webhook_test

import (
	"context"
	"slices"
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

func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{webhook.DefaultSchedule, "", "1s", "1h*0", "-1s", "10s,,20s", "1m*3,5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := webhook.ParseSchedule(s)
		if err != nil {
			return
		}
		for _, x := range d {
			if x <= 0 {
				t.Fatalf("%q: non-positive delay %s", s, x)
			}
		}
	})
}

func TestDefaultSchedule(t *testing.T) {
	d, err := webhook.ParseSchedule(webhook.DefaultSchedule)
	if err != nil {
		t.Fatal(err)
	}
	first := []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}
	if !slices.Equal(d[:7], first) {
		t.Fatalf("schedule starts %v", d[:7])
	}
	var total time.Duration
	for _, x := range d {
		total += x
	}
	for _, x := range d[7:] {
		if x != time.Hour {
			t.Fatalf("after the first hour, retries are hourly: %v", d)
		}
	}
	if total > 24*time.Hour || total+time.Hour <= 24*time.Hour {
		t.Fatalf("retries span %s, want the last within 24 h of the first attempt", total)
	}
	if _, err := webhook.ParseSchedule("10s,soon"); err == nil {
		t.Fatal("bad schedule accepted")
	}
	if d, err := webhook.ParseSchedule(""); err != nil || d == nil || len(d) != 0 {
		t.Fatalf("empty schedule: %v %v", d, err)
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
		var ds []store.WebhookDelivery
		waitFor(t, "a failed attempt", 10*time.Second, func() bool {
			ds, _, _ = s.ListWebhookDeliveries(ctx, w.ID, store.DeliveryFilter{Status: store.DeliveryFailed}, store.Page{Limit: 10})
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
