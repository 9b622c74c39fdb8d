package peppol

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/kadens/kadens/internal/egress"
)

// SML zones of the Peppol networks (the Peppol-operated SML since
// 2026-03-19).
const (
	ProductionZone = "participant.sml.prod.tech.peppol.org"
	TestZone       = "participant.sml.test.tech.peppol.org"
)

// SMLName is the DNS name the SML publishes participant p's NAPTR records
// under in zone: base32 (RFC 4648, no padding, lower case) of the SHA-256
// of the lower-cased "scheme:value", then the identifier scheme, then the
// zone.
func SMLName(p ParticipantID, zone string) string {
	sum := sha256.Sum256([]byte(p.Value0()))
	label := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))
	return label + "." + ParticipantScheme + "." + strings.TrimSuffix(zone, ".")
}

// LookupError is a lookup that could not be answered because a server of
// the network failed (DNS, SMP or the Directory): not an answer about the
// participant.
type LookupError struct {
	// Stage is SML (DNS), SMP or Directory.
	Stage string
	Err   error
}

func (e *LookupError) Error() string {
	return fmt.Sprintf("peppol %s lookup failed: %v", e.Stage, e.Err)
}
func (e *LookupError) Unwrap() error { return e.Err }

// Result answers whether a participant can receive BIS Billing 3.0
// invoices and credit notes.
type Result struct {
	Participant ParticipantID
	// Found: the SML knows the participant and its SMP has a service
	// group for it.
	Found bool
	// SMP is the metadata server's base URL ("" when not found).
	SMP               string
	AcceptsInvoice    bool
	AcceptsCreditNote bool
	// Source is SML (the authoritative DNS + SMP path) or Directory (the
	// fallback, used only when the SML could not be asked).
	Source    string
	CheckedAt time.Time
}

// Registered: the participant can receive BIS Billing 3.0 invoices.
func (r Result) Registered() bool { return r.Found && r.AcceptsInvoice }

// LookupConfig configures a Lookup.
type LookupConfig struct {
	// Zone is the SML zone (ProductionZone, TestZone, or a private one).
	Zone string
	// DNSServer is host:port of the resolver to ask; empty means the
	// system's (/etc/resolv.conf).
	DNSServer string
	// HTTP fetches SMP and Directory answers (default: Egress's client
	// with a 10 s timeout).
	HTTP *http.Client
	// Egress is the policy of the default HTTP client's connections: the
	// SMP's address comes from DNS, which the network's participants
	// publish. The zero value allows public addresses only.
	Egress egress.Policy
	// TTL is how long answers are cached (default 1 h); NegativeTTL how
	// long "not registered" is (default 5 min). Failures are not cached.
	TTL, NegativeTTL time.Duration
	// DirectoryURL, if set, is the Peppol Directory asked when the SML
	// cannot be (e.g. https://directory.peppol.eu). Only its hits count:
	// its misses prove nothing.
	DirectoryURL string
	// DNSTimeout bounds one DNS exchange (default 5 s).
	DNSTimeout time.Duration
	// Now is the clock of the cache (default time.Now).
	Now func() time.Time
}

// Lookup finds participants in the Peppol network, with a cache.
type Lookup struct {
	cfg   LookupConfig
	dns   *dns.Client
	mu    sync.RWMutex
	cache map[ParticipantID]cached
}

type cached struct {
	r       Result
	expires time.Time
}

// NewLookup returns a Lookup with cfg's defaults filled in.
func NewLookup(cfg LookupConfig) *Lookup {
	if cfg.Zone == "" {
		cfg.Zone = ProductionZone
	}
	if cfg.HTTP == nil {
		cfg.HTTP = cfg.Egress.Client(10 * time.Second)
	}
	if cfg.TTL <= 0 {
		cfg.TTL = time.Hour
	}
	if cfg.NegativeTTL <= 0 {
		cfg.NegativeTTL = 5 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DNSTimeout <= 0 {
		cfg.DNSTimeout = 5 * time.Second
	}
	return &Lookup{cfg: cfg, dns: &dns.Client{Timeout: cfg.DNSTimeout}, cache: map[ParticipantID]cached{}}
}

// Lookup answers for participant p, from the cache while its answer is
// fresh. Network failures are *LookupError, never a "not registered".
func (l *Lookup) Lookup(ctx context.Context, p ParticipantID) (Result, error) {
	now := l.cfg.Now()
	l.mu.RLock()
	c, ok := l.cache[p]
	l.mu.RUnlock()
	if ok && now.Before(c.expires) {
		return c.r, nil
	}
	r, err := l.lookupSML(ctx, p)
	var le *LookupError
	if errors.As(err, &le) && le.Stage == "SML" && l.cfg.DirectoryURL != "" {
		if dr, derr := l.lookupDirectory(ctx, p); derr == nil && dr.Found {
			r, err = dr, nil
		}
	}
	if err != nil {
		return Result{}, err
	}
	r.CheckedAt = now
	ttl := l.cfg.TTL
	if !r.Registered() {
		ttl = l.cfg.NegativeTTL
	}
	l.mu.Lock()
	if len(l.cache) > 100_000 {
		clear(l.cache) // a bound, not a policy: answers are cheap to fetch again
	}
	l.cache[p] = cached{r: r, expires: now.Add(ttl)}
	l.mu.Unlock()
	return r, nil
}

func (l *Lookup) lookupSML(ctx context.Context, p ParticipantID) (Result, error) {
	res := Result{Participant: p, Source: "SML"}
	smp, found, err := l.naptr(ctx, SMLName(p, l.cfg.Zone))
	if err != nil {
		return Result{}, &LookupError{Stage: "SML", Err: err}
	}
	if !found {
		return res, nil
	}
	res.SMP = smp
	refs, found, err := l.serviceGroup(ctx, smp, p)
	if err != nil {
		return Result{}, &LookupError{Stage: "SMP", Err: err}
	}
	if !found {
		res.SMP = ""
		return res, nil
	}
	res.Found = true
	for _, dt := range []struct {
		id  string
		dst *bool
	}{{DocTypeInvoice, &res.AcceptsInvoice}, {DocTypeCreditNote, &res.AcceptsCreditNote}} {
		href, listed := refs[dt.id]
		if !listed {
			continue
		}
		ok, err := l.serviceMetadata(ctx, href, dt.id)
		if err != nil {
			return Result{}, &LookupError{Stage: "SMP", Err: err}
		}
		*dt.dst = ok
	}
	return res, nil
}

// resolver is the DNS server to ask.
func (l *Lookup) resolver() (string, error) {
	if l.cfg.DNSServer != "" {
		return l.cfg.DNSServer, nil
	}
	conf, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil || len(conf.Servers) == 0 {
		return "", fmt.Errorf("no DNS server configured: %v", err)
	}
	return net.JoinHostPort(conf.Servers[0], conf.Port), nil
}

// naptr resolves name's U-NAPTR records of service Meta:SMP to the SMP
// base URL of the lowest order and preference. found is false when the
// name does not exist (NXDOMAIN) or has no such record.
func (l *Lookup) naptr(ctx context.Context, name string) (smp string, found bool, err error) {
	server, err := l.resolver()
	if err != nil {
		return "", false, err
	}
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), dns.TypeNAPTR)
	q.RecursionDesired = true
	ans, _, err := l.dns.ExchangeContext(ctx, q, server)
	if err == nil && ans.Truncated {
		tcp := &dns.Client{Net: "tcp", Timeout: l.dns.Timeout}
		ans, _, err = tcp.ExchangeContext(ctx, q, server)
	}
	if err != nil {
		return "", false, fmt.Errorf("NAPTR %s: %w", name, err)
	}
	switch ans.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		return "", false, nil
	default:
		return "", false, fmt.Errorf("NAPTR %s: %s", name, dns.RcodeToString[ans.Rcode])
	}
	var recs []*dns.NAPTR
	for _, rr := range ans.Answer {
		if n, ok := rr.(*dns.NAPTR); ok && strings.EqualFold(n.Service, "Meta:SMP") && strings.EqualFold(n.Flags, "U") {
			recs = append(recs, n)
		}
	}
	slices.SortStableFunc(recs, func(a, b *dns.NAPTR) int {
		if a.Order != b.Order {
			return int(a.Order) - int(b.Order)
		}
		return int(a.Preference) - int(b.Preference)
	})
	for _, n := range recs {
		if u, ok := naptrURL(n.Regexp); ok {
			return u, true, nil
		}
	}
	return "", false, nil
}

// naptrURL takes the replacement of a U-NAPTR regexp "!^.*$!https://…!"
// (the first character is the delimiter).
func naptrURL(re string) (string, bool) {
	if len(re) < 3 {
		return "", false
	}
	parts := strings.Split(re[1:], re[:1])
	if len(parts) < 3 {
		return "", false
	}
	u, err := url.Parse(parts[1])
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", false
	}
	return parts[1], true
}

// pathSegment escapes an identifier as one path segment the way SMPs
// expect: every ':' as %3A and '#' as %23 (url.PathEscape keeps ':').
func pathSegment(s string) string { return url.QueryEscape(s) }

// ServiceGroup and SignedServiceMetadata of the SMP REST API (SMP 1.x).
type serviceGroupXML struct {
	Refs []struct {
		Href string `xml:"href,attr"`
	} `xml:"ServiceMetadataReferenceCollection>ServiceMetadataReference"`
}

type serviceMetadataXML struct {
	Processes []struct {
		ID        string `xml:"ProcessIdentifier"`
		Endpoints []struct {
			Transport string `xml:"transportProfile,attr"`
			Address   string `xml:"EndpointReference>Address"`
		} `xml:"ServiceEndpointList>Endpoint"`
	} `xml:"ServiceMetadata>ServiceInformation>ProcessList>Process"`
	Redirect *struct {
		Href string `xml:"href,attr"`
	} `xml:"ServiceMetadata>Redirect"`
}

func (l *Lookup) get(ctx context.Context, u string) (body []byte, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, err
	}
	resp, err := l.cfg.HTTP.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, false, fmt.Errorf("GET %s: %w", u, err)
	}
	return body, true, nil
}

// serviceGroup returns the document types the SMP lists for p, each with
// the URL of its metadata; found is false when the SMP does not know p.
func (l *Lookup) serviceGroup(ctx context.Context, smp string, p ParticipantID) (map[string]string, bool, error) {
	u := strings.TrimRight(smp, "/") + "/" + pathSegment(p.String())
	body, found, err := l.get(ctx, u)
	if err != nil || !found {
		return nil, false, err
	}
	var sg serviceGroupXML
	if err := xml.Unmarshal(body, &sg); err != nil {
		return nil, false, fmt.Errorf("service group of %s: %w", p, err)
	}
	refs := map[string]string{}
	for _, r := range sg.Refs {
		_, enc, ok := strings.Cut(r.Href, "/services/")
		if !ok {
			continue
		}
		id, err := url.PathUnescape(enc)
		if err != nil {
			continue
		}
		// "busdox-docid-qns::<id>": the scheme is case-insensitive, the id not.
		scheme, docID, ok := strings.Cut(id, "::")
		if ok && strings.EqualFold(scheme, DocTypeScheme) {
			refs[docID] = r.Href
		}
	}
	return refs, true, nil
}

// serviceMetadata reports whether the metadata at href offers docType in
// the billing process over AS4. A redirect to another SMP is followed once.
func (l *Lookup) serviceMetadata(ctx context.Context, href, docType string) (bool, error) {
	for hop := 0; hop < 2; hop++ {
		body, found, err := l.get(ctx, href)
		if err != nil || !found {
			return false, err
		}
		var md serviceMetadataXML
		if err := xml.Unmarshal(body, &md); err != nil {
			return false, fmt.Errorf("service metadata of %s: %w", docType, err)
		}
		if md.Redirect != nil && md.Redirect.Href != "" {
			href = md.Redirect.Href
			continue
		}
		for _, p := range md.Processes {
			if strings.TrimSpace(p.ID) != ProcessID {
				continue
			}
			for _, e := range p.Endpoints {
				if e.Transport == "peppol-transport-as4-v2_0" && strings.TrimSpace(e.Address) != "" {
					return true, nil
				}
			}
		}
		return false, nil
	}
	return false, errors.New("service metadata redirects more than once")
}

// lookupDirectory asks the Peppol Directory about p. Found only on a hit
// listing the invoice document type.
func (l *Lookup) lookupDirectory(ctx context.Context, p ParticipantID) (Result, error) {
	u := strings.TrimRight(l.cfg.DirectoryURL, "/") + "/search/1.0/json?participant=" + url.QueryEscape(p.String())
	body, found, err := l.get(ctx, u)
	if err != nil || !found {
		if err == nil {
			err = errors.New("not found")
		}
		return Result{}, &LookupError{Stage: "Directory", Err: err}
	}
	var ans struct {
		Matches []struct {
			DocTypes []struct {
				Scheme string `json:"scheme"`
				Value  string `json:"value"`
			} `json:"docTypes"`
		} `json:"matches"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return Result{}, &LookupError{Stage: "Directory", Err: err}
	}
	r := Result{Participant: p, Source: "Directory"}
	for _, m := range ans.Matches {
		r.Found = true
		for _, dt := range m.DocTypes {
			switch dt.Value {
			case DocTypeInvoice:
				r.AcceptsInvoice = true
			case DocTypeCreditNote:
				r.AcceptsCreditNote = true
			}
		}
	}
	return r, nil
}
