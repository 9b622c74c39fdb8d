package webhook_test

import (
	"context"
	"net/netip"
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

func TestIsPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.215.14": true, "8.8.8.8": true, "2606:4700::1111": true,
		"127.0.0.1": false, "10.0.0.1": false, "172.16.5.4": false, "192.168.1.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "::1": false, "::": false, "fe80::1": false, "fc00::1": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "224.0.0.1": false, "255.255.255.255": false,
	} {
		if got := webhook.IsPublic(netip.MustParseAddr(addr)); got != want {
			t.Errorf("IsPublic(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	for raw, ok := range map[string]bool{
		"https://93.184.215.14/hook": true, "http://93.184.215.14:8080/x?y=1": true,
		"http://127.0.0.1/x": false, "http://localhost:8080/x": false, "http://api.localhost/x": false,
		"http://[::1]/x": false, "ftp://93.184.215.14/x": false, "/relative": false, "https://user:pw@93.184.215.14/": false,
		"https://93.184.215.14/#frag": false, "http://": false,
	} {
		if err := webhook.CheckURL(ctx, raw, webhook.Reach{}, nil); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", raw, err, ok)
		}
	}
	if err := webhook.CheckURL(ctx, "http://127.0.0.1/x", webhook.Reach{Private: true}, nil); err != nil {
		t.Errorf("allowPrivate: %v", err)
	}
}

// --webhook-allow-private opens loopback and private ranges but not
// link-local and cloud metadata addresses, also when those are written in
// another form (IPv4-mapped, NAT64, 6to4, IPv4-compatible); only the
// separate link-local setting opens them.
func TestReach(t *testing.T) {
	none, priv, all := webhook.Reach{}, webhook.Reach{Private: true}, webhook.Reach{Private: true, LinkLocal: true}
	linkOnly := webhook.Reach{LinkLocal: true}
	cases := []struct {
		addr string
		// allowed under none, Private, Private+LinkLocal, LinkLocal only
		none, priv, all, linkOnly bool
	}{
		{"93.184.215.14", true, true, true, true},
		{"2606:4700::1111", true, true, true, true},
		{"127.0.0.1", false, true, true, false},
		{"::1", false, true, true, false},
		{"10.1.2.3", false, true, true, false},
		{"192.168.1.1", false, true, true, false},
		{"fd12:3456::1", false, true, true, false},
		{"100.64.0.1", false, true, true, false},
		{"64:ff9b::a00:1", false, true, true, false},         // NAT64 of 10.0.0.1
		{"64:ff9b::5db8:d70e", false, true, true, false},     // NAT64 of a public address: still not direct
		{"2001:db8::1", false, true, true, false},            // documentation
		{"169.254.169.254", false, false, true, true},        // AWS, GCP, Azure metadata
		{"169.254.0.1", false, false, true, true},            // IPv4 link-local
		{"fe80::1", false, false, true, true},                // IPv6 link-local
		{"febf:ffff::1", false, false, true, true},           // end of fe80::/10
		{"100.100.100.200", false, false, true, true},        // Alibaba metadata (inside CGNAT)
		{"fd00:ec2::254", false, false, true, true},          // AWS IPv6 metadata (inside ULA)
		{"192.0.0.192", false, false, true, true},            // Oracle metadata
		{"::ffff:169.254.169.254", false, false, true, true}, // IPv4-mapped
		{"64:ff9b::a9fe:a9fe", false, false, true, true},     // NAT64 of 169.254.169.254
		{"64:ff9b:1::a9fe:a9fe", false, false, true, true},   // local-use NAT64
		{"2002:a9fe:a9fe::1", false, false, true, true},      // 6to4 of 169.254.169.254
		{"::a9fe:a9fe", false, false, true, true},            // IPv4-compatible
		{"ff02::1", false, false, true, true},                // link-local multicast
		{"fec0::1", false, true, true, false},                // deprecated site-local
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			a := netip.MustParseAddr(c.addr)
			for _, r := range []struct {
				name  string
				reach webhook.Reach
				want  bool
			}{{"none", none, c.none}, {"private", priv, c.priv}, {"all", all, c.all}, {"link-local only", linkOnly, c.linkOnly}} {
				if err := r.reach.Allows(a); (err == nil) != r.want {
					t.Errorf("%s: Allows = %v, want allowed=%v", r.name, err, r.want)
				}
				host := c.addr
				if a.Is6() {
					host = "[" + host + "]"
				}
				if err := webhook.CheckURL(context.Background(), "https://"+host+"/hook", r.reach, nil); (err == nil) != r.want {
					t.Errorf("%s: CheckURL = %v, want allowed=%v", r.name, err, r.want)
				}
			}
			if got := webhook.IsPublic(a); got != c.none {
				t.Errorf("IsPublic = %v, want %v", got, c.none)
			}
		})
	}
	// The refusals name the setting that would change them.
	if err := priv.Allows(netip.MustParseAddr("169.254.169.254")); err == nil || !strings.Contains(err.Error(), "--webhook-allow-link-local") {
		t.Errorf("link-local refusal: %v", err)
	}
	if err := none.Allows(netip.MustParseAddr("10.0.0.1")); err == nil || !strings.Contains(err.Error(), "--webhook-allow-private") {
		t.Errorf("private refusal: %v", err)
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
// delivering, and the receiver gets nothing.
func TestDialRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		rcv := newReceiver(t, nil)
		ctx, w := setup(t, s, rcv.srv.URL) // stored directly, as if it had resolved publicly
		d := webhook.New(webhook.Options{Store: s, Schedule: []time.Duration{}, Timeout: time.Second})
		d.Start()
		defer func() { _ = d.Stop(context.Background()) }()
		commit(t, s, ctx, 1)
		var ds []store.WebhookDelivery
		waitFor(t, "a failed attempt", 10*time.Second, func() bool {
			ds, _, _ = s.ListWebhookDeliveries(ctx, w.ID, store.DeliveryFilter{Status: store.DeliveryFailed}, store.Page{Limit: 10})
			return len(ds) == 1
		})
		if a := ds[0].Attempts; len(a) != 1 || a[0].StatusCode != nil || !strings.Contains(a[0].Error, "private") {
			t.Fatalf("attempts %+v", a)
		}
		if n := len(rcv.messages()); n != 0 {
			t.Fatalf("receiver on loopback got %d requests", n)
		}
	})
}
