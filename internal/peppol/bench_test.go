package peppol_test

import (
	"context"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/peppol/peppoltest"
)

// BenchmarkInvoiceUBL: one Norwegian two-line invoice written as UBL
// (target: 2,000 documents/s on one core, i.e. ≤ 500 µs/op).
func BenchmarkInvoiceUBL(b *testing.B) {
	inv := norwegianInvoice()
	opt := peppol.Options{Buyer: peppol.ParticipantID{Scheme: "0192", Value: "987654325"}, Location: oslo}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := peppol.Invoice(inv, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

func BenchmarkCreditNoteUBL(b *testing.B) {
	inv, cn := norwegianInvoice(), norwegianCreditNote()
	opt := peppol.Options{Buyer: peppol.ParticipantID{Scheme: "0192", Value: "987654325"}, Location: oslo}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := peppol.CreditNote(cn, inv, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkLookupCached: a lookup answered from the cache (target:
// 10,000/s).
func BenchmarkLookupCached(b *testing.B) {
	dns, smp := peppoltest.StartDNS(b), peppoltest.StartSMP(b)
	p := peppol.ParticipantID{Scheme: "0192", Value: "923609016"}
	dns.Register(p, "sml.kadens.test", smp.Base())
	smp.Publish(p, peppol.DocTypeInvoice)
	l := peppol.NewLookup(peppol.LookupConfig{Zone: "sml.kadens.test", DNSServer: dns.Addr, TTL: time.Hour, Egress: egress.Policy{Private: true}})
	ctx := context.Background()
	if r, err := l.Lookup(ctx, p); err != nil || !r.Registered() {
		b.Fatal(r, err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Lookup(ctx, p); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	if n := dns.Queries.Load(); n != 1 {
		b.Fatalf("%d DNS queries: not served from the cache", n)
	}
}
