package peppol_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/peppol/peppoltest"
)

// counting is a server on loopback that counts what it is asked, and its
// address by a name that resolves to 127.0.0.1 (localhost).
func counting(t *testing.T, h http.Handler) (named string, n *atomic.Int64) {
	t.Helper()
	n = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), n
}

// The SMP's address comes from DNS (the SML's NAPTR record), which the
// network's participants publish; the Directory's is the operator's. Both
// are called through the egress policy: an address resolving to
// 127.0.0.1 is refused at dial time and gets no request.
func TestLookupEgress(t *testing.T) {
	t.Parallel()
	p := peppol.ParticipantID{Scheme: "0192", Value: "923609016"}
	t.Run("SMP", func(t *testing.T) {
		t.Parallel()
		dns := peppoltest.StartDNS(t)
		smp := peppoltest.StartSMP(t)
		smp.Publish(p, peppol.DocTypeInvoice)
		named, n := counting(t, smp.Config.Handler)
		dns.Register(p, zone, named+"/smp")
		_, err := peppol.NewLookup(peppol.LookupConfig{Zone: zone, DNSServer: dns.Addr}).Lookup(context.Background(), p)
		var le *peppol.LookupError
		if !errors.As(err, &le) || le.Stage != "SMP" || !errors.Is(err, egress.ErrRefused) ||
			!strings.Contains(err.Error(), "--egress-allow-private") {
			t.Fatalf("lookup at an SMP on loopback: %v, want an SMP failure naming --egress-allow-private", err)
		}
		if n.Load() != 0 {
			t.Fatalf("the SMP on loopback got %d requests", n.Load())
		}
		r, err := peppol.NewLookup(peppol.LookupConfig{Zone: zone, DNSServer: dns.Addr, Egress: egress.Policy{Private: true}}).Lookup(context.Background(), p)
		if err != nil || !r.Registered() || n.Load() == 0 {
			t.Fatalf("with private addresses allowed: %+v %v (%d requests)", r, err, n.Load())
		}
	})
	t.Run("Directory", func(t *testing.T) {
		t.Parallel()
		dns := peppoltest.StartDNS(t)
		dns.SetFail(true) // the Directory is asked when the SML cannot be
		named, n := counting(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"matches":[]}`))
		}))
		lookup := func(pol egress.Policy) error {
			_, err := peppol.NewLookup(peppol.LookupConfig{Zone: zone, DNSServer: dns.Addr, DirectoryURL: named, Egress: pol,
				DNSTimeout: time.Second}).Lookup(context.Background(), p)
			return err
		}
		if err := lookup(egress.Policy{}); err == nil {
			t.Fatal("lookup succeeded while the SML fails")
		}
		if n.Load() != 0 {
			t.Fatalf("the Directory on loopback got %d requests", n.Load())
		}
		_ = lookup(egress.Policy{Private: true}) // a Directory miss is still the SML's failure
		if n.Load() != 1 {
			t.Fatalf("with private addresses allowed the Directory got %d requests, want 1", n.Load())
		}
	})
}

// The access point (--peppol-ap-url) is called through the egress policy:
// by default (no Client) public addresses only, so an address resolving
// to 127.0.0.1 is refused at dial time and the access point gets nothing.
func TestAccessPointEgress(t *testing.T) {
	t.Parallel()
	ap := peppoltest.StartAccessPoint(t, "")
	named, _ := counting(t, ap.Config.Handler)
	m := peppol.Message{IdempotencyKey: "d1", Receiver: peppol.ParticipantID{Scheme: "0192", Value: "923609016"},
		DocumentType: peppol.DocTypeInvoice, Body: []byte("<Invoice/>")}
	_, err := (&peppol.AccessPoint{URL: named}).Send(context.Background(), m)
	if !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), "--egress-allow-private") {
		t.Fatalf("send to an access point on loopback: %v, want a refusal naming --egress-allow-private", err)
	}
	if _, err := (&peppol.AccessPoint{URL: named}).Status(context.Background(), "msg-1"); !errors.Is(err, egress.ErrRefused) {
		t.Fatalf("status from an access point on loopback: %v", err)
	}
	if ap.Posts() != 0 {
		t.Fatalf("the access point got %d hand-overs", ap.Posts())
	}
	allowed := &peppol.AccessPoint{URL: named, Client: egress.Policy{Private: true}.Client(5 * time.Second)}
	if _, err := allowed.Send(context.Background(), m); err != nil || ap.Posts() != 1 {
		t.Fatalf("with private addresses allowed: %v (%d hand-overs)", err, ap.Posts())
	}
}
