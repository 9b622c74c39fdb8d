// Package egress is the one policy of every connection Kadens opens to an
// address it was given: webhook receivers, AvtaleGiro bank interfaces,
// Peppol SMPs, the Peppol Directory and access point, trusted issuers' key
// sets and the SMTP server. Public addresses are allowed; loopback,
// private and other non-public ranges only when the operator allows them
// (--egress-allow-private); link-local and cloud metadata addresses only
// with --egress-allow-link-local, which nothing else opens, because on a
// cloud machine they lead to the instance metadata service and its
// credentials.
//
// The policy is applied twice: when an address is registered or
// configured (CheckURL, CheckHost, CheckLiteral: a clear refusal naming
// the setting), and when a connection is made (Dialer, Client: a dialer
// Control hook on the address actually dialled, after name resolution),
// so a name that resolves to a public address at registration and to a
// private one later (DNS rebinding) is still refused.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// The settings of the policy, as refusals name them.
const (
	PrivateFlag   = "--egress-allow-private"
	PrivateEnv    = "KADENS_EGRESS_ALLOW_PRIVATE"
	LinkLocalFlag = "--egress-allow-link-local"
	LinkLocalEnv  = "KADENS_EGRESS_ALLOW_LINK_LOCAL"
)

// ErrRefused is wrapped by every refusal of the policy (ErrPrivateAddress,
// ErrLinkLocalAddress), at registration and at dial time, so callers can
// tell a refused destination from one that did not answer (and not retry
// it).
var ErrRefused = errors.New("egress refused")

// ErrPrivateAddress is returned for a destination in a loopback, private or
// otherwise non-public range. The message names the setting that opens
// these ranges, because the operator, not the API client, can change it.
var ErrPrivateAddress error = &refusal{"resolves to a loopback or private address, which this server refuses; " +
	"the operator can allow such addresses with " + PrivateFlag + " (" + PrivateEnv + "=true), e.g. for local development"}

// ErrLinkLocalAddress is returned for a link-local or cloud metadata
// destination, which PrivateFlag does not open.
var ErrLinkLocalAddress error = &refusal{"resolves to a link-local or cloud metadata address, which this server refuses; " +
	"only " + LinkLocalFlag + " (" + LinkLocalEnv + "=true) allows them"}

type refusal struct{ msg string }

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == ErrRefused }

// ErrUnresolved wraps a registration-time check of a host name that did
// not resolve. It is no refusal of the policy (the dialer checks whatever
// the name resolves to later); callers decide whether a destination must
// resolve when it is registered.
var ErrUnresolved = errors.New("does not resolve")

// Policy says which non-public destinations outbound connections may
// reach. The zero value allows public addresses only.
type Policy struct {
	// Private opens loopback, private and other non-public ranges (tests,
	// local development, an operator's own network).
	Private bool
	// LinkLocal opens link-local and cloud metadata addresses, which
	// Private alone leaves closed.
	LinkLocal bool
	// Resolver resolves host names, at registration and at dial time; nil
	// means the system's (tests use their own DNS server).
	Resolver *net.Resolver
}

// class is what an address is to the policy.
type class int

const (
	public class = iota
	private
	linkLocal // link-local and cloud metadata: never opened by Private alone
)

// nonPublic are ranges no destination may be in unless private
// destinations are allowed, beyond what netip's predicates cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // "this network"
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved, broadcast
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("100::/64"),      // discard-only
	netip.MustParsePrefix("fec0::/10"),     // site-local (deprecated)
}

// metadata are cloud instance metadata addresses outside the link-local
// ranges (those inside, such as 169.254.169.254, are covered by them).
var metadata = []netip.Addr{
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud (classic)
	netip.MustParseAddr("fd00:ec2::254"),   // AWS, IPv6
}

// embedding are IPv6 ranges whose addresses carry an IPv4 address in their
// last 32 bits (NAT64, RFC 6052/8215; IPv4-compatible, deprecated): they
// are classified by that IPv4 address, and are at least private.
var embedding = []netip.Prefix{
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("::/96"),
}

// sixToFour (RFC 3056) carries an IPv4 address in bits 16–47.
var sixToFour = netip.MustParsePrefix("2002::/16")

func classify(a netip.Addr) class {
	a = a.Unmap()
	if !a.IsValid() {
		return private
	}
	for _, m := range metadata {
		if a == m {
			return linkLocal
		}
	}
	if a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() {
		return linkLocal
	}
	if a.Is6() {
		b := a.As16()
		for _, p := range embedding {
			if p.Contains(a) {
				return max(private, classify(netip.AddrFrom4([4]byte(b[12:16]))))
			}
		}
		if sixToFour.Contains(a) {
			return max(private, classify(netip.AddrFrom4([4]byte(b[2:6]))))
		}
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return private
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return private
		}
	}
	return public
}

// Allows reports whether p lets a connection reach a, and if not, why (an
// error wrapping ErrRefused).
func (p Policy) Allows(a netip.Addr) error {
	switch classify(a) {
	case linkLocal:
		if !p.LinkLocal {
			return ErrLinkLocalAddress
		}
	case private:
		if !p.Private {
			return ErrPrivateAddress
		}
	}
	return nil
}

// allowsAll reports whether p refuses nothing, so checks can be skipped.
func (p Policy) allowsAll() bool { return p.Private && p.LinkLocal }

// isLocalhost reports whether host is a name that means this machine
// whatever DNS says (RFC 6761 §6.3).
func isLocalhost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// literal returns the address host stands for without asking DNS: an IP
// address (bracketed or not), or loopback for a localhost name.
func literal(host string) (netip.Addr, bool) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	if isLocalhost(host) {
		return netip.IPv6Loopback(), true
	}
	return netip.Addr{}, false
}

// CheckLiteral checks host without asking DNS: an IP address literal, or
// a localhost name (taken as loopback). Other names pass; the dialer
// checks what they resolve to. It is the check of operator settings at
// start-up, which should not wait on the network.
func (p Policy) CheckLiteral(host string) error {
	if a, ok := literal(host); ok {
		return p.Allows(a)
	}
	return nil
}

// CheckHost checks host, resolving a name: every address it resolves to
// must be allowed. A name that does not resolve gives an error wrapping
// ErrUnresolved (no refusal: see ErrUnresolved).
func (p Policy) CheckHost(ctx context.Context, host string) error {
	if a, ok := literal(host); ok {
		return p.Allows(a)
	}
	if p.allowsAll() {
		return nil
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("host %s %w", host, ErrUnresolved)
	}
	for _, a := range addrs {
		if err := p.Allows(a); err != nil {
			return err
		}
	}
	return nil
}

// CheckURL checks an http(s) destination at registration: absolute http
// or https, no user information (credentials in an address end up in
// logs), no fragment, and a host CheckHost allows. Its errors are worded
// to follow the field's name in a 400 ("url must be …").
func (p Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := ParseHTTP(raw)
	if err != nil {
		return err
	}
	return p.CheckHost(ctx, u.Hostname())
}

// ParseHTTP parses an absolute http or https URL without user information
// or fragment, the form of every HTTP destination Kadens calls.
func ParseHTTP(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("must be an absolute http or https URL")
	}
	if u.User != nil {
		return nil, errors.New("must not carry user information")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, errors.New("must not have a fragment")
	}
	return u, nil
}
