package peppol_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/peppol/peppoltest"
)

// TestSMLNameWorkedExample: the host names of the fact sheet's worked
// example and peppol-commons' test vector.
func TestSMLNameWorkedExample(t *testing.T) {
	p := peppol.ParticipantID{Scheme: "0192", Value: "123456785"}
	for zone, want := range map[string]string{
		peppol.ProductionZone: "ldf6l6loqed45btrp5wsar7sqpkxa3wpx5wliewgnwe5fj5urppq.iso6523-actorid-upis.participant.sml.prod.tech.peppol.org",
		peppol.TestZone:       "ldf6l6loqed45btrp5wsar7sqpkxa3wpx5wliewgnwe5fj5urppq.iso6523-actorid-upis.participant.sml.test.tech.peppol.org",
	} {
		if got := peppol.SMLName(p, zone); got != want {
			t.Errorf("%s: %s, want %s", zone, got, want)
		}
	}
	if got := peppol.SMLName(peppol.ParticipantID{Scheme: "9915", Value: "TEST"}, "z"); !strings.HasPrefix(got, "eh5boavaktmbgzyh2a63dz4qov33fvp5nsdvqklucfraayoodw6a.") {
		t.Errorf("9915:TEST (lower-cased before hashing): %s", got)
	}
}

const zone = "sml.kadens.test"

type lookupEnv struct {
	dns    *peppoltest.DNS
	smp    *peppoltest.SMP
	lookup *peppol.Lookup
	now    time.Time
}

func newLookupEnv(t *testing.T, directory string) *lookupEnv {
	e := &lookupEnv{dns: peppoltest.StartDNS(t), smp: peppoltest.StartSMP(t), now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	// The SMP and the Directory listen on loopback.
	e.lookup = peppol.NewLookup(peppol.LookupConfig{Zone: zone, DNSServer: e.dns.Addr, DirectoryURL: directory, Now: func() time.Time { return e.now },
		Egress: egress.Policy{Private: true}})
	return e
}

func TestLookup(t *testing.T) {
	e := newLookupEnv(t, "")
	registered := peppol.ParticipantID{Scheme: "0192", Value: "923609016"}
	invoiceOnly := peppol.ParticipantID{Scheme: "0184", Value: "13585628"}
	otherDocs := peppol.ParticipantID{Scheme: "0088", Value: "1548079098355"}
	notAtSMP := peppol.ParticipantID{Scheme: "0192", Value: "987654325"}
	unknown := peppol.ParticipantID{Scheme: "0192", Value: "123456785"}
	for _, p := range []peppol.ParticipantID{registered, invoiceOnly, otherDocs, notAtSMP} {
		e.dns.Register(p, zone, e.smp.Base())
	}
	e.smp.Publish(registered, peppol.DocTypeInvoice, peppol.DocTypeCreditNote)
	e.smp.Publish(invoiceOnly, peppol.DocTypeInvoice)
	// A national variant, not plain BIS 3.
	e.smp.Publish(otherDocs, "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#conformant#urn:fdc:example:1.0::2.1")

	for _, tc := range []struct {
		name                       string
		p                          peppol.ParticipantID
		found, invoice, creditNote bool
	}{
		{"registered", registered, true, true, true},
		{"invoices only", invoiceOnly, true, true, false},
		{"registered without the invoice document type", otherDocs, true, false, false},
		{"in the SML, unknown at its SMP", notAtSMP, false, false, false},
		{"not registered", unknown, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.lookup.Lookup(context.Background(), tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Found != tc.found || r.AcceptsInvoice != tc.invoice || r.AcceptsCreditNote != tc.creditNote || r.Registered() != tc.invoice {
				t.Errorf("%+v; want found %v invoice %v credit note %v", r, tc.found, tc.invoice, tc.creditNote)
			}
			if tc.found && r.SMP != e.smp.Base() {
				t.Errorf("SMP %q", r.SMP)
			}
		})
	}
}

func TestLookupFailuresAreNotAnswers(t *testing.T) {
	e := newLookupEnv(t, "")
	p := peppol.ParticipantID{Scheme: "0192", Value: "923609016"}
	e.dns.Register(p, zone, e.smp.Base())
	e.smp.Publish(p, peppol.DocTypeInvoice)

	e.dns.SetFail(true)
	_, err := e.lookup.Lookup(context.Background(), p)
	var le *peppol.LookupError
	if !errors.As(err, &le) || le.Stage != "SML" {
		t.Fatalf("DNS SERVFAIL: %v, want an SML peppol.LookupError", err)
	}
	e.dns.SetFail(false)

	e.smp.SetFail(true)
	_, err = e.lookup.Lookup(context.Background(), p)
	if !errors.As(err, &le) || le.Stage != "SMP" {
		t.Fatalf("SMP 500: %v, want an SMP peppol.LookupError", err)
	}
	e.smp.SetFail(false)

	// A DNS server that does not answer at all.
	dead, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	l := peppol.NewLookup(peppol.LookupConfig{Zone: zone, DNSServer: dead.LocalAddr().String(), DNSTimeout: 200 * time.Millisecond})
	if _, err := l.Lookup(context.Background(), p); !errors.As(err, &le) || le.Stage != "SML" {
		t.Fatalf("DNS timeout: %v, want an SML peppol.LookupError", err)
	}

	// Failures were not cached: the next lookup asks again and answers.
	r, err := e.lookup.Lookup(context.Background(), p)
	if err != nil || !r.Registered() {
		t.Fatalf("after recovery: %+v %v", r, err)
	}
}

func TestLookupCache(t *testing.T) {
	e := newLookupEnv(t, "")
	p := peppol.ParticipantID{Scheme: "0192", Value: "923609016"}
	e.dns.Register(p, zone, e.smp.Base())
	e.smp.Publish(p, peppol.DocTypeInvoice)
	for range 3 {
		if r, err := e.lookup.Lookup(context.Background(), p); err != nil || !r.Registered() {
			t.Fatal(r, err)
		}
	}
	if n := e.dns.Queries.Load(); n != 1 {
		t.Errorf("%d DNS queries for three lookups within the TTL, want 1", n)
	}
	e.now = e.now.Add(2 * time.Hour)
	if _, err := e.lookup.Lookup(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if n := e.dns.Queries.Load(); n != 2 {
		t.Errorf("%d DNS queries after the TTL, want 2", n)
	}
}

func TestLookupDirectoryFallback(t *testing.T) {
	p := peppol.ParticipantID{Scheme: "0192", Value: "923609016"}
	missing := peppol.ParticipantID{Scheme: "0192", Value: "987654325"}
	dir := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search/1.0/json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("participant") != p.String() {
			fmt.Fprint(w, `{"total-result-count":0,"matches":[]}`)
			return
		}
		fmt.Fprintf(w, `{"matches":[{"participantID":{"scheme":"iso6523-actorid-upis","value":"0192:923609016"},
			"docTypes":[{"scheme":"busdox-docid-qns","value":%q}]}]}`, peppol.DocTypeInvoice)
	}))
	defer dir.Close()
	e := newLookupEnv(t, dir.URL)
	e.dns.SetFail(true)
	r, err := e.lookup.Lookup(context.Background(), p)
	if err != nil || !r.Registered() || r.Source != "Directory" {
		t.Fatalf("directory hit while the SML fails: %+v %v", r, err)
	}
	// A Directory miss proves nothing: still a failure, not "not registered".
	var le *peppol.LookupError
	if _, err := e.lookup.Lookup(context.Background(), missing); !errors.As(err, &le) || le.Stage != "SML" {
		t.Fatalf("directory miss while the SML fails: %v, want the SML failure", err)
	}
}

func TestParticipant(t *testing.T) {
	for _, tc := range []struct {
		network, id string
		want        peppol.ParticipantID
		err         bool
	}{
		{"0192", "923 609 016", peppol.ParticipantID{"0192", "923609016"}, false},
		{"0192", "923609017", peppol.ParticipantID{}, true},
		{"0192", "12345678", peppol.ParticipantID{}, true},
		{"0096", "13585628", peppol.ParticipantID{"0184", "13585628"}, false},
		{"0096", "13585627", peppol.ParticipantID{}, true},
		{"0096", "1548079098355", peppol.ParticipantID{"0088", "1548079098355"}, false},
		{"0096", "1548079098356", peppol.ParticipantID{}, true},
		{"0107", "1548079098355", peppol.ParticipantID{"0088", "1548079098355"}, false},
		{"0107", "2120000787", peppol.ParticipantID{"0007", "2120000787"}, false},
		{"0107", "2120000788", peppol.ParticipantID{}, true},
		{"0107", "13585628", peppol.ParticipantID{}, true},
	} {
		got, err := peppol.Participant(tc.network, tc.id)
		var ie *peppol.IdentifierError
		if tc.err != errors.As(err, &ie) || got != tc.want {
			t.Errorf("%s %s: %+v %v; want %+v (error %v)", tc.network, tc.id, got, err, tc.want, tc.err)
		}
	}
	if _, err := peppol.Participant("0007", "2120000787"); !errors.Is(err, peppol.ErrUnknownNetwork) {
		t.Errorf("network 0007: %v, want peppol.ErrUnknownNetwork", err)
	}
}

func FuzzParticipant(f *testing.F) {
	for _, s := range []string{"923609016", "13585628", "1548079098355", "2120000787", "", "abc", "９２３"} {
		f.Add("0192", s)
		f.Add("0096", s)
		f.Add("0107", s)
	}
	f.Fuzz(func(t *testing.T, network, id string) {
		p, err := peppol.Participant(network, id)
		if err != nil {
			return
		}
		if p.Scheme == "0107" || p.Scheme == "0096" || strings.Trim(p.Value, "0123456789") != "" {
			t.Errorf("%q %q → %+v", network, id, p)
		}
	})
}
