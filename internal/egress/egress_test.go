package egress_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kadens/kadens/internal/egress"
)

func TestIsPublic(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"93.184.215.14": true, "8.8.8.8": true, "2606:4700::1111": true,
		"127.0.0.1": false, "10.0.0.1": false, "172.16.5.4": false, "192.168.1.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "::1": false, "::": false, "fe80::1": false, "fc00::1": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "224.0.0.1": false, "255.255.255.255": false,
	} {
		if got := egress.IsPublic(netip.MustParseAddr(addr)); got != want {
			t.Errorf("IsPublic(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for raw, ok := range map[string]bool{
		"https://93.184.215.14/hook": true, "http://93.184.215.14:8080/x?y=1": true,
		"http://127.0.0.1/x": false, "http://localhost:8080/x": false, "http://api.localhost/x": false,
		"http://LOCALHOST./x": false, "http://[::1]/x": false, "ftp://93.184.215.14/x": false, "/relative": false,
		"https://user:pw@93.184.215.14/": false, "https://93.184.215.14/#frag": false, "https://93.184.215.14/#": false,
		"http://": false, "javascript:alert(1)": false,
	} {
		if err := (egress.Policy{}).CheckURL(ctx, raw); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", raw, err, ok)
		}
	}
	if err := (egress.Policy{Private: true}).CheckURL(ctx, "http://127.0.0.1/x"); err != nil {
		t.Errorf("Private: %v", err)
	}
	if err := (egress.Policy{Private: true}).CheckURL(ctx, "http://localhost/x"); err != nil {
		t.Errorf("Private, localhost: %v", err)
	}
	// A name that does not resolve is no refusal: it is reported apart,
	// for the caller to decide (the dialer checks it later).
	err := (egress.Policy{}).CheckURL(ctx, "https://bank.invalid/x")
	if !errors.Is(err, egress.ErrUnresolved) || errors.Is(err, egress.ErrRefused) {
		t.Errorf("unresolvable name: %v", err)
	}
	// Operator settings are checked without DNS.
	if err := (egress.Policy{}).CheckLiteral("bank.invalid"); err != nil {
		t.Errorf("CheckLiteral of a name: %v", err)
	}
	if err := (egress.Policy{}).CheckLiteral("[::1]"); !errors.Is(err, egress.ErrPrivateAddress) {
		t.Errorf("CheckLiteral([::1]) = %v", err)
	}
}

// --egress-allow-private opens loopback and private ranges but not
// link-local and cloud metadata addresses, also when those are written in
// another form (IPv4-mapped, NAT64, 6to4, IPv4-compatible); only the
// separate link-local setting opens them.
func TestPolicy(t *testing.T) {
	t.Parallel()
	none, priv, all := egress.Policy{}, egress.Policy{Private: true}, egress.Policy{Private: true, LinkLocal: true}
	linkOnly := egress.Policy{LinkLocal: true}
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
				name   string
				policy egress.Policy
				want   bool
			}{{"none", none, c.none}, {"private", priv, c.priv}, {"all", all, c.all}, {"link-local only", linkOnly, c.linkOnly}} {
				if err := r.policy.Allows(a); (err == nil) != r.want {
					t.Errorf("%s: Allows = %v, want allowed=%v", r.name, err, r.want)
				} else if err != nil && !errors.Is(err, egress.ErrRefused) {
					t.Errorf("%s: %v does not wrap ErrRefused", r.name, err)
				}
				host := c.addr
				if a.Is6() {
					host = "[" + host + "]"
				}
				if err := r.policy.CheckURL(context.Background(), "https://"+host+"/hook"); (err == nil) != r.want {
					t.Errorf("%s: CheckURL = %v, want allowed=%v", r.name, err, r.want)
				}
			}
			if got := egress.IsPublic(a); got != c.none {
				t.Errorf("IsPublic = %v, want %v", got, c.none)
			}
		})
	}
	// The refusals name the setting that would change them.
	if err := priv.Allows(netip.MustParseAddr("169.254.169.254")); err == nil ||
		!strings.Contains(err.Error(), "--egress-allow-link-local") || !strings.Contains(err.Error(), "KADENS_EGRESS_ALLOW_LINK_LOCAL") {
		t.Errorf("link-local refusal: %v", err)
	}
	if err := none.Allows(netip.MustParseAddr("10.0.0.1")); err == nil ||
		!strings.Contains(err.Error(), "--egress-allow-private") || !strings.Contains(err.Error(), "KADENS_EGRESS_ALLOW_PRIVATE") {
		t.Errorf("private refusal: %v", err)
	}
}

// target is a local HTTP server that counts the requests it gets.
func target(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	t.Cleanup(srv.Close)
	return srv, &n
}

// At dial time a host name is checked by what it resolved to: localhost
// (127.0.0.1 from /etc/hosts, not special-cased by the dialer) is refused
// unless private addresses are allowed, and the server gets nothing.
func TestDialRefusesNameResolvingToLoopback(t *testing.T) {
	t.Parallel()
	srv, n := target(t)
	u := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	_, err := (egress.Policy{}).Client(5 * time.Second).Get(u)
	if !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), "--egress-allow-private") {
		t.Fatalf("GET %s: %v, want a refusal naming --egress-allow-private", u, err)
	}
	// A link-local-only policy does not open loopback either.
	if _, err := (egress.Policy{LinkLocal: true}).Client(5 * time.Second).Get(u); !errors.Is(err, egress.ErrPrivateAddress) {
		t.Fatalf("GET %s with link-local allowed: %v", u, err)
	}
	if n.Load() != 0 {
		t.Fatalf("the refused server got %d requests", n.Load())
	}
	resp, err := (egress.Policy{Private: true}).Client(5 * time.Second).Get(u)
	if err != nil {
		t.Fatalf("GET %s with private addresses allowed: %v", u, err)
	}
	resp.Body.Close()
	if n.Load() != 1 {
		t.Fatalf("the allowed server got %d requests", n.Load())
	}
}

// rebindingDNS answers A questions for every name with the address it is
// set to (AAAA: none), like a DNS server an attacker controls.
type rebindingDNS struct {
	addr string
	mu   sync.Mutex
	a    net.IP
}

func startDNS(t *testing.T) *rebindingDNS {
	t.Helper()
	d := &rebindingDNS{}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		d.mu.Lock()
		if q.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: d.a})
		}
		d.mu.Unlock()
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	d.addr = pc.LocalAddr().String()
	return d
}

func (d *rebindingDNS) set(a string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.a = net.ParseIP(a)
}

func (d *rebindingDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var nd net.Dialer
		return nd.DialContext(ctx, "udp", d.addr)
	}}
}

// DNS rebinding: a name that resolved to a public address when it was
// registered and resolves to 127.0.0.1 when it is called is refused at
// dial time; a name that resolves to a private address is refused at
// registration already.
func TestDNSRebindingRefusedAtDial(t *testing.T) {
	t.Parallel()
	d := startDNS(t)
	srv, n := target(t)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p := egress.Policy{Resolver: d.resolver()}
	u := "http://hooks.rebind.test:" + port + "/x"

	d.set("93.184.215.14")
	if err := p.CheckURL(context.Background(), u); err != nil {
		t.Fatalf("registration while the name is public: %v", err)
	}
	d.set("127.0.0.1")
	if err := p.CheckURL(context.Background(), u); !errors.Is(err, egress.ErrPrivateAddress) {
		t.Fatalf("registration while the name is 127.0.0.1: %v", err)
	}
	_, err := p.Client(5 * time.Second).Get(u)
	if !errors.Is(err, egress.ErrPrivateAddress) {
		t.Fatalf("GET after rebinding to 127.0.0.1: %v", err)
	}
	d.set("169.254.169.254")
	if _, err := (egress.Policy{Private: true, Resolver: d.resolver()}).Client(5 * time.Second).Get(u); !errors.Is(err, egress.ErrLinkLocalAddress) {
		t.Fatalf("GET after rebinding to the metadata address, private allowed: %v", err)
	}
	if n.Load() != 0 {
		t.Fatalf("the loopback server got %d requests", n.Load())
	}
	// The same name, allowed: the resolver is the dialer's too.
	d.set("127.0.0.1")
	resp, err := (egress.Policy{Private: true, Resolver: d.resolver()}).Client(5 * time.Second).Get(u)
	if err != nil {
		t.Fatalf("GET with private addresses allowed: %v", err)
	}
	resp.Body.Close()
	if n.Load() != 1 {
		t.Fatalf("server got %d requests", n.Load())
	}
}
