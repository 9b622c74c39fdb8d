package api_test

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/peppol/peppoltest"
	"github.com/kadens/kadens/internal/store"
)

// BenchmarkDocumentNetworkLookupCached: POST /invoice/documentnetworklookup
// answered from the cache, through the whole request path (token, tenant,
// body checks, JSON) over loopback, client included. Target: 10,000/s.
func BenchmarkDocumentNetworkLookupCached(b *testing.B) {
	dns, smp := peppoltest.StartDNS(b), peppoltest.StartSMP(b)
	p := peppol.ParticipantID{Scheme: "0192", Value: "987654325"}
	dns.Register(p, peppolZone, smp.Base())
	smp.Publish(p, peppol.DocTypeInvoice, peppol.DocTypeCreditNote)
	e := apitest.Start(b, store.SQLite, map[string]string{"KADENS_PEPPOL_SML_ZONE": peppolZone, "KADENS_PEPPOL_DNS_SERVER": dns.Addr})
	const body = `{"documentNetwork": "0192", "recipientIdentifier": "987654325"}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	do := func() error {
		req, _ := http.NewRequest("POST", e.URL+"/invoice/documentnetworklookup", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.Tenant.Token)
		req.Header.Set("S4-TenantId", e.Tenant.ID)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"registered":true`) {
			return &statusErr{resp.StatusCode, string(b)}
		}
		return nil
	}
	if err := do(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := do(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	// CPU per lookup, server and client together: robust to a busy
	// machine, unlike lookups/s.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	if n := dns.Queries.Load(); n != 1 {
		b.Fatalf("%d DNS queries: not served from the cache", n)
	}
}

type statusErr struct {
	status int
	body   string
}

func (e *statusErr) Error() string { return http.StatusText(e.status) + ": " + e.body }

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
