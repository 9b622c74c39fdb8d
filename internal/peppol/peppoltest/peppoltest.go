// Package peppoltest runs the Peppol network's parts locally for tests: a
// DNS server answering SML NAPTR questions, an SMP serving service groups
// and metadata, an access point's HTTP API that deduplicates by
// idempotency key, and checks of documents against the UBL 2.1 schemas
// (xmllint) and the Peppol BIS 3 schematron rules (node-schematron).
package peppoltest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"

	"github.com/kadens/kadens/internal/nodetest"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/standardstest"
)

// DNS answers NAPTR questions for registered names; other names are
// NXDOMAIN, and while Fail is set every question is SERVFAIL.
type DNS struct {
	Addr    string
	Queries atomic.Int64
	mu      sync.Mutex
	records map[string]string // fqdn → SMP URL
	fail    bool
}

// StartDNS runs a DNS server on a loopback UDP port until the test ends.
func StartDNS(t testing.TB) *DNS {
	t.Helper()
	f := &DNS{records: map[string]string{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(f.serve)}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	f.Addr = pc.LocalAddr().String()
	return f
}

func (f *DNS) serve(w dns.ResponseWriter, q *dns.Msg) {
	f.Queries.Add(1)
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
}

// Register publishes p in zone as served by the SMP at smp.
func (f *DNS) Register(p peppol.ParticipantID, zone, smp string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records[dns.Fqdn(peppol.SMLName(p, zone))] = smp
}

// SetFail makes every answer SERVFAIL (or stops doing so).
func (f *DNS) SetFail(fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

// SMP serves SMP 1.x service groups and service metadata under /smp.
type SMP struct {
	*httptest.Server
	mu       sync.Mutex
	docTypes map[string][]string // participant id → document types
	fail     bool
}

// StartSMP runs an SMP until the test ends. Its base URL is URL+"/smp".
func StartSMP(t testing.TB) *SMP {
	t.Helper()
	f := &SMP{docTypes: map[string][]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// Base is the SMP's base URL, as a NAPTR record gives it.
func (f *SMP) Base() string { return f.URL + "/smp" }

// Publish lists docTypes for p.
func (f *SMP) Publish(p peppol.ParticipantID, docTypes ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.docTypes[p.String()] = docTypes
}

// SetFail makes every answer a 500 (or stops doing so).
func (f *SMP) SetFail(fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

func (f *SMP) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	// The participant id is one path segment with its ':' escaped.
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
			fmt.Fprintf(w, `<ServiceMetadataReference href="%s/smp/%s/services/%s"/>`, f.URL, seg, url.QueryEscape(peppol.DocTypeScheme+"::"+dt))
		}
		fmt.Fprint(w, `</ServiceMetadataReferenceCollection></ServiceGroup>`)
		return
	}
	fmt.Fprintf(w, `<?xml version="1.0"?><SignedServiceMetadata xmlns="http://busdox.org/serviceMetadata/publishing/1.0/" xmlns:id="http://busdox.org/transport/identifiers/1.0/" xmlns:wsa="http://www.w3.org/2005/08/addressing">
<ServiceMetadata><ServiceInformation><id:ParticipantIdentifier scheme="iso6523-actorid-upis">x</id:ParticipantIdentifier>
<ProcessList><Process><id:ProcessIdentifier scheme="cenbii-procid-ubl">%s</id:ProcessIdentifier><ServiceEndpointList>
<Endpoint transportProfile="peppol-transport-as4-v2_0"><wsa:EndpointReference><wsa:Address>https://ap.example/as4</wsa:Address></wsa:EndpointReference>
<RequireBusinessLevelSignature>false</RequireBusinessLevelSignature><Certificate>MIIB</Certificate><ServiceDescription>AP</ServiceDescription><TechnicalContactUrl>x</TechnicalContactUrl></Endpoint>
</ServiceEndpointList></Process></ProcessList></ServiceInformation></ServiceMetadata></SignedServiceMetadata>`, peppol.ProcessID)
}

// AccessPoint is an access point's HTTP API (docs/PEPPOL.md): it accepts a
// document once per idempotency key (a repeat answers 409 with the first
// receipt), fails the next FailNext hand-overs with a 503, and reports
// every accepted message Delivered when asked.
type AccessPoint struct {
	*httptest.Server
	mu        sync.Mutex
	byKey     map[string]string // idempotency key → message id
	docs      []Received
	posts     int
	failNext  int
	wantToken string
}

// Received is a document the access point accepted.
type Received struct {
	MessageID, Key, Receiver, DocumentType string
	Body                                   []byte
}

// StartAccessPoint runs an access point until the test ends; token, if
// set, is the bearer token it requires.
func StartAccessPoint(t testing.TB, token string) *AccessPoint {
	t.Helper()
	a := &AccessPoint{byKey: map[string]string{}, wantToken: token}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

// FailNext makes the next n hand-overs fail with 503.
func (a *AccessPoint) FailNext(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failNext = n
}

// Docs are the documents accepted (each key once).
func (a *AccessPoint) Docs() []Received {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Received(nil), a.docs...)
}

// Posts counts hand-overs tried, failed and repeated ones included.
func (a *AccessPoint) Posts() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.posts
}

func (a *AccessPoint) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.wantToken != "" && r.Header.Get("Authorization") != "Bearer "+a.wantToken {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	answer := func(status int, id, state string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"messageId": id, "status": state})
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/outbound":
		a.posts++
		if a.failNext > 0 {
			a.failNext--
			http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		if key == "" {
			http.Error(w, "Idempotency-Key required", http.StatusBadRequest)
			return
		}
		if id, ok := a.byKey[key]; ok {
			answer(http.StatusConflict, id, "Accepted")
			return
		}
		body, _ := io.ReadAll(r.Body)
		id := fmt.Sprintf("msg-%d", len(a.docs)+1)
		a.byKey[key] = id
		a.docs = append(a.docs, Received{MessageID: id, Key: key, Receiver: r.Header.Get("Peppol-Receiver"),
			DocumentType: r.Header.Get("Peppol-Document-Type"), Body: body})
		answer(http.StatusAccepted, id, "Accepted")
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/outbound/"):
		id := strings.TrimPrefix(r.URL.Path, "/outbound/")
		for _, d := range a.docs {
			if d.MessageID == id {
				answer(http.StatusOK, id, "Delivered")
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

// ErrNoXmllint: xmllint is not installed.
var ErrNoXmllint = errors.New("peppoltest: xmllint not found")

// ErrNoStandards: a standard is not in the standards folder
// (internal/standardstest); errors.Is matches the error CheckUBL returns.
var ErrNoStandards = errors.New("peppoltest: standard not found")

// CheckUBL checks doc against the OASIS UBL 2.1 schemas in the standards
// folder (ubl-2.1/, internal/standardstest) with xmllint, choosing the
// Invoice or CreditNote schema by the root element.
func CheckUBL(doc []byte) error {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		return ErrNoXmllint
	}
	rel := "ubl-2.1/maindoc/UBL-Invoice-2.1.xsd"
	if rootName(doc) == "CreditNote" {
		rel = "ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd"
	}
	schema, err := standardstest.Find(rel)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoStandards, err)
	}
	cmd := exec.Command(xmllint, "--noout", "--nonet", "--schema", schema, "-")
	cmd.Stdin = bytes.NewReader(doc)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("not valid UBL 2.1: %v\n%s", err, out)
	}
	return nil
}

// ValidateUBL checks doc (CheckUBL) in a subtest of t named after it, so
// that a check that could not run shows as that subtest's skip: without
// xmllint (a failure under KADENS_TEST_REQUIRE_XMLLINT=1, as in CI) or
// without the schemas (a failure under KADENS_TEST_REQUIRE_STANDARDS).
func ValidateUBL(t *testing.T, name string, doc []byte) {
	t.Helper()
	t.Run("UBL 2.1 schema "+name, func(t *testing.T) {
		switch err := CheckUBL(doc); {
		case errors.Is(err, ErrNoXmllint):
			if os.Getenv("KADENS_TEST_REQUIRE_XMLLINT") == "1" {
				t.Fatalf("xmllint is required (KADENS_TEST_REQUIRE_XMLLINT=1) but not found")
			}
			t.Skipf("skipped: xmllint is not installed, %s not checked against the UBL 2.1 XSD (CI installs it)", name)
		case errors.Is(err, ErrNoStandards):
			standardstest.Missing(t, err)
		case err != nil:
			t.Fatalf("%s: %v", name, err)
		}
	})
}

// Assertion is a schematron assertion that failed (or a report that
// fired) on a document.
type Assertion struct {
	Document string `json:"document"`
	Schema   string `json:"schema"`
	ID       string `json:"id"`
	// Flag is the rule's severity: "fatal" or "warning".
	Flag     string `json:"flag"`
	Location string `json:"location"`
	Message  string `json:"message"`
}

func (a Assertion) String() string {
	return fmt.Sprintf("%s: %s [%s, %s] at %s: %s", a.Document, a.ID, a.Flag, a.Schema, a.Location, a.Message)
}

// SchematronRules are the rule files of Peppol BIS Billing 3.0 (its own
// and CEN's EN 16931 rules for UBL), in the standards folder.
var SchematronRules = []string{"peppol-bis-3/PEPPOL-EN16931-UBL.sch", "peppol-bis-3/CEN-EN16931-UBL.sch"}

// Schematron runs SchematronRules over docs (file name → content) in one
// run of the ISO Schematron implementation in testdata/schematron
// (node-schematron, pinned there) and returns every failed assertion,
// fatal or warning. Without node or its npm packages t is skipped
// (failing under KADENS_TEST_REQUIRE_NODE, internal/nodetest), without
// the rules likewise (KADENS_TEST_REQUIRE_STANDARDS).
func Schematron(t *testing.T, docs map[string][]byte) []Assertion {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	node, dir := nodetest.Find(t, filepath.Join(filepath.Dir(here), "..", "testdata", "schematron"), "node-schematron", "fontoxpath", "slimdom")
	args := []string{filepath.Join(dir, "run.js")}
	for _, rel := range SchematronRules {
		args = append(args, standardstest.Path(t, rel))
	}
	args = append(args, "--")
	tmp := t.TempDir()
	for name, doc := range docs {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	cmd := exec.Command(node, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("schematron run: %v\n%s", err, stderr.Bytes())
	}
	var res struct {
		Documents int         `json:"documents"`
		Results   []Assertion `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Documents != len(docs) {
		t.Fatalf("schematron run: %d documents checked of %d (%v): %s", res.Documents, len(docs), err, out)
	}
	return res.Results
}

// rootName is the local name of doc's root element.
func rootName(doc []byte) string {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local
		}
	}
}
