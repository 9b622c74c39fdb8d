package peppol

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestSMLNameWorkedExample: the host names of the fact sheet's worked
// example and peppol-commons' test vector.
func TestSMLNameWorkedExample(t *testing.T) {
	p := ParticipantID{Scheme: "0192", Value: "123456785"}
	for zone, want := range map[string]string{
		ProductionZone: "ldf6l6loqed45btrp5wsar7sqpkxa3wpx5wliewgnwe5fj5urppq.iso6523-actorid-upis.participant.sml.prod.tech.peppol.org",
		TestZone:       "ldf6l6loqed45btrp5wsar7sqpkxa3wpx5wliewgnwe5fj5urppq.iso6523-actorid-upis.participant.sml.test.tech.peppol.org",
	} {
		if got := SMLName(p, zone); got != want {
			t.Errorf("%s: %s, want %s", zone, got, want)
		}
	}
	if got := SMLName(ParticipantID{Scheme: "9915", Value: "TEST"}, "z"); !strings.HasPrefix(got, "eh5boavaktmbgzyh2a63dz4qov33fvp5nsdvqklucfraayoodw6a.") {
		t.Errorf("9915:TEST (lower-cased before hashing): %s", got)
	}
}

// fakeDNS answers NAPTR questions from records; names missing are
// NXDOMAIN; fail makes it answer SERVFAIL.
type fakeDNS struct {
	addr    string
	mu      sync.Mutex
	records map[string]string // fqdn → SMP URL
	fail    bool
	queries atomic.Int64
}

func startDNS(t *testing.T) *fakeDNS {
	t.Helper()
	f := &fakeDNS{records: map[string]string{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		f.queries.Add(1)
		m := new(dns.Msg)
		m.SetReply(q)
		f.mu.Lock()
		defer f.mu.Unlock()
		name := strings.ToLower(q.Question[0].Name)
		switch smp, ok := f.records[name]; {
		case f.fail:
			m.Rcode = dns.RcodeServerFailure
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Question[0].Qtype == dns.TypeNAPTR:
			m.Answer = append(m.Answer, &dns.NAPTR{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeNAPTR, Class: dns.ClassINET, Ttl: 60},
				Order: 100, Preference: 10, Flags: "U", Service: "Meta:SMP", Regexp: "!^.*$!" + smp + "!", Replacement: "."})
		}
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	f.addr = pc.LocalAddr().String()
	return f
}

func (f *fakeDNS) register(p ParticipantID, zone, smp string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records[dns.Fqdn(SMLName(p, zone))] = smp
}

// fakeSMP serves service groups and metadata for participants.
type fakeSMP struct {
	*httptest.Server
	mu       sync.Mutex
	docTypes map[string][]string // participant id → document types
	fail     bool
}

func startSMP(t *testing.T) *fakeSMP {
	t.Helper()
	f := &fakeSMP{docTypes: map[string][]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.fail {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		// The participant id is one escaped path segment.
		raw := strings.TrimPrefix(r.URL.EscapedPath(), "/smp/")
		seg, rest, _ := strings.Cut(raw, "/services/")
		if strings.Contains(seg, ":") {
			http.Error(w, "participant id not escaped", http.StatusBadRequest)
			return
		}
		pid, _ := url.PathUnescape(seg)
		types, ok := f.docTypes[pid]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		if rest == "" {
			fmt.Fprintf(w, `<?xml version="1.0"?><ServiceGroup xmlns="http://busdox.org/serviceMetadata/publishing/1.0/" xmlns:id="http://busdox.org/transport/identifiers/1.0/">
<id:ParticipantIdentifier scheme="iso6523-actorid-upis">%s</id:ParticipantIdentifier><ServiceMetadataReferenceCollection>`, strings.TrimPrefix(pid, "iso6523-actorid-upis::"))
			for _, dt := range types {
				fmt.Fprintf(w, `<ServiceMetadataReference href="%s/smp/%s/services/%s"/>`, f.URL, seg, url.QueryEscape(DocTypeScheme+"::"+dt))
			}
			fmt.Fprint(w, `</ServiceMetadataReferenceCollection></ServiceGroup>`)
			return
		}
		fmt.Fprintf(w, `<?xml version="1.0"?><SignedServiceMetadata xmlns="http://busdox.org/serviceMetadata/publishing/1.0/" xmlns:id="http://busdox.org/transport/identifiers/1.0/" xmlns:wsa="http://www.w3.org/2005/08/addressing">
<ServiceMetadata><ServiceInformation><id:ParticipantIdentifier scheme="iso6523-actorid-upis">x</id:ParticipantIdentifier>
<ProcessList><Process><id:ProcessIdentifier scheme="cenbii-procid-ubl">%s</id:ProcessIdentifier><ServiceEndpointList>
<Endpoint transportProfile="peppol-transport-as4-v2_0"><wsa:EndpointReference><wsa:Address>https://ap.example/as4</wsa:Address></wsa:EndpointReference>
<RequireBusinessLevelSignature>false</RequireBusinessLevelSignature><Certificate>MIIB</Certificate><ServiceDescription>AP</ServiceDescription><TechnicalContactUrl>x</TechnicalContactUrl></Endpoint>
</ServiceEndpointList></Process></ProcessList></ServiceInformation></ServiceMetadata></SignedServiceMetadata>`, ProcessID)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSMP) publish(p ParticipantID, docTypes ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.docTypes[p.String()] = docTypes
}

const zone = "sml.kadens.test"

type lookupEnv struct {
	dns    *fakeDNS
	smp    *fakeSMP
	lookup *Lookup
	now    time.Time
}

func newLookupEnv(t *testing.T) *lookupEnv {
	e := &lookupEnv{dns: startDNS(t), smp: startSMP(t), now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	e.lookup = NewLookup(LookupConfig{Zone: zone, DNSServer: e.dns.addr, Now: func() time.Time { return e.now }})
	return e
}

func TestLookup(t *testing.T) {
	e := newLookupEnv(t)
	registered := ParticipantID{Scheme: "0192", Value: "923609016"}
	invoiceOnly := ParticipantID{Scheme: "0184", Value: "13585628"}
	otherDocs := ParticipantID{Scheme: "0088", Value: "1548079098355"}
	notAtSMP := ParticipantID{Scheme: "0192", Value: "987654325"}
	unknown := ParticipantID{Scheme: "0192", Value: "123456785"}
	for _, p := range []ParticipantID{registered, invoiceOnly, otherDocs, notAtSMP} {
		e.dns.register(p, zone, e.smp.URL+"/smp")
	}
	e.smp.publish(registered, DocTypeInvoice, DocTypeCreditNote)
	e.smp.publish(invoiceOnly, DocTypeInvoice)
	// A national variant, not plain BIS 3.
	e.smp.publish(otherDocs, "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#conformant#urn:fdc:example:1.0::2.1")

	for _, tc := range []struct {
		name                       string
		p                          ParticipantID
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
			if tc.found && r.SMP != e.smp.URL+"/smp" {
				t.Errorf("SMP %q", r.SMP)
			}
		})
	}
}

func TestLookupFailuresAreNotAnswers(t *testing.T) {
	e := newLookupEnv(t)
	p := ParticipantID{Scheme: "0192", Value: "923609016"}
	e.dns.register(p, zone, e.smp.URL+"/smp")
	e.smp.publish(p, DocTypeInvoice)

	e.dns.fail = true
	_, err := e.lookup.Lookup(context.Background(), p)
	var le *LookupError
	if !errors.As(err, &le) || le.Stage != "SML" {
		t.Fatalf("DNS SERVFAIL: %v, want an SML LookupError", err)
	}
	e.dns.fail = false

	e.smp.fail = true
	_, err = e.lookup.Lookup(context.Background(), p)
	if !errors.As(err, &le) || le.Stage != "SMP" {
		t.Fatalf("SMP 500: %v, want an SMP LookupError", err)
	}
	e.smp.fail = false

	// A DNS server that does not answer at all.
	dead, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	l := NewLookup(LookupConfig{Zone: zone, DNSServer: dead.LocalAddr().String()})
	l.dns.Timeout = 200 * time.Millisecond
	if _, err := l.Lookup(context.Background(), p); !errors.As(err, &le) || le.Stage != "SML" {
		t.Fatalf("DNS timeout: %v, want an SML LookupError", err)
	}

	// Failures were not cached: the next lookup asks again and answers.
	r, err := e.lookup.Lookup(context.Background(), p)
	if err != nil || !r.Registered() {
		t.Fatalf("after recovery: %+v %v", r, err)
	}
}

func TestLookupCache(t *testing.T) {
	e := newLookupEnv(t)
	p := ParticipantID{Scheme: "0192", Value: "923609016"}
	e.dns.register(p, zone, e.smp.URL+"/smp")
	e.smp.publish(p, DocTypeInvoice)
	for range 3 {
		if r, err := e.lookup.Lookup(context.Background(), p); err != nil || !r.Registered() {
			t.Fatal(r, err)
		}
	}
	if n := e.dns.queries.Load(); n != 1 {
		t.Errorf("%d DNS queries for three lookups within the TTL, want 1", n)
	}
	e.now = e.now.Add(2 * time.Hour)
	if _, err := e.lookup.Lookup(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if n := e.dns.queries.Load(); n != 2 {
		t.Errorf("%d DNS queries after the TTL, want 2", n)
	}
}

func TestLookupDirectoryFallback(t *testing.T) {
	e := newLookupEnv(t)
	p := ParticipantID{Scheme: "0192", Value: "923609016"}
	missing := ParticipantID{Scheme: "0192", Value: "987654325"}
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
			"docTypes":[{"scheme":"busdox-docid-qns","value":%q}]}]}`, DocTypeInvoice)
	}))
	defer dir.Close()
	e.lookup.cfg.DirectoryURL = dir.URL
	e.dns.fail = true
	r, err := e.lookup.Lookup(context.Background(), p)
	if err != nil || !r.Registered() || r.Source != "Directory" {
		t.Fatalf("directory hit while the SML fails: %+v %v", r, err)
	}
	// A Directory miss proves nothing: still a failure, not "not registered".
	var le *LookupError
	if _, err := e.lookup.Lookup(context.Background(), missing); !errors.As(err, &le) || le.Stage != "SML" {
		t.Fatalf("directory miss while the SML fails: %v, want the SML failure", err)
	}
}

func TestParticipant(t *testing.T) {
	for _, tc := range []struct {
		network, id string
		want        ParticipantID
		err         bool
	}{
		{"0192", "923 609 016", ParticipantID{"0192", "923609016"}, false},
		{"0192", "923609017", ParticipantID{}, true},
		{"0192", "12345678", ParticipantID{}, true},
		{"0096", "13585628", ParticipantID{"0184", "13585628"}, false},
		{"0096", "13585627", ParticipantID{}, true},
		{"0096", "1548079098355", ParticipantID{"0088", "1548079098355"}, false},
		{"0096", "1548079098356", ParticipantID{}, true},
		{"0107", "1548079098355", ParticipantID{"0088", "1548079098355"}, false},
		{"0107", "2120000787", ParticipantID{"0007", "2120000787"}, false},
		{"0107", "2120000788", ParticipantID{}, true},
		{"0107", "13585628", ParticipantID{}, true},
	} {
		got, err := Participant(tc.network, tc.id)
		var ie *IdentifierError
		if tc.err != errors.As(err, &ie) || got != tc.want {
			t.Errorf("%s %s: %+v %v; want %+v (error %v)", tc.network, tc.id, got, err, tc.want, tc.err)
		}
	}
	if _, err := Participant("0007", "2120000787"); !errors.Is(err, ErrUnknownNetwork) {
		t.Errorf("network 0007: %v, want ErrUnknownNetwork", err)
	}
}

func FuzzParticipant(f *testing.F) {
	for _, s := range []string{"923609016", "13585628", "1548079098355", "2120000787", "", "abc", "９２３"} {
		f.Add("0192", s)
		f.Add("0096", s)
		f.Add("0107", s)
	}
	f.Fuzz(func(t *testing.T, network, id string) {
		p, err := Participant(network, id)
		if err != nil {
			return
		}
		if p.Scheme == "0107" || p.Scheme == "0096" || strings.Trim(p.Value, "0123456789") != "" {
			t.Errorf("%q %q → %+v", network, id, p)
		}
	})
}

func FuzzNAPTRURL(f *testing.F) {
	for _, s := range []string{"!^.*$!https://smp.example/!", "!!!", "", "x", "!^.*$!ftp://a!", "|^.*$|http://h/p|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, re string) {
		if u, ok := naptrURL(re); ok && !strings.HasPrefix(u, "http") {
			t.Errorf("%q → %q", re, u)
		}
	})
}
