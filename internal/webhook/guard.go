package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// ErrPrivateAddress is returned for a destination in a loopback, private or
// otherwise non-public range. The message names the setting that opens
// these ranges, because the operator, not the API client, can change it.
var ErrPrivateAddress = errors.New("resolves to a loopback or private address, which this server refuses; " +
	"the operator can allow such addresses with --webhook-allow-private (KADENS_WEBHOOK_ALLOW_PRIVATE=true), e.g. for local development")

// ErrLinkLocalAddress is returned for a link-local or cloud metadata
// destination. --webhook-allow-private does not open these: on a cloud
// machine they lead to the instance metadata service and its credentials.
var ErrLinkLocalAddress = errors.New("resolves to a link-local or cloud metadata address, which this server refuses; " +
	"only --webhook-allow-link-local (KADENS_WEBHOOK_ALLOW_LINK_LOCAL=true) allows them")

// Reach says which non-public destinations webhook deliveries may reach.
// The zero value allows public addresses only.
type Reach struct {
	// Private opens loopback, private and other non-public ranges (tests,
	// local development).
	Private bool
	// LinkLocal opens link-local and cloud metadata addresses, which
	// Private alone leaves closed.
	LinkLocal bool
}

// class is what an address is to the guard.
type class int

const (
	public class = iota
	private
	linkLocal // link-local and cloud metadata: never opened by Private alone
)

// nonPublic are ranges no webhook may reach unless private destinations are
// allowed, beyond what netip's predicates cover.
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

// IsPublic reports whether a is a public unicast address.
func IsPublic(a netip.Addr) bool { return classify(a) == public }

// Allows reports whether r lets a webhook reach a, and if not, why.
func (r Reach) Allows(a netip.Addr) error {
	switch classify(a) {
	case linkLocal:
		if !r.LinkLocal {
			return ErrLinkLocalAddress
		}
	case private:
		if !r.Private {
			return ErrPrivateAddress
		}
	}
	return nil
}

// CheckURL validates a webhook URL: absolute http or https, no user info,
// and a host whose every address r allows. It is the registration-time
// check; the dialer checks again at connect time, so a DNS answer that
// changes later (rebinding) is still refused.
func CheckURL(ctx context.Context, raw string, r Reach, resolver *net.Resolver) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return errors.New("must be an absolute http or https URL")
	}
	if u.User != nil {
		return errors.New("must not carry user information")
	}
	if u.Fragment != "" {
		return errors.New("must not have a fragment")
	}
	if r.Private && r.LinkLocal {
		return nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		return r.Allows(a)
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return r.Allows(netip.IPv6Loopback())
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("host %s does not resolve", host)
	}
	for _, a := range addrs {
		if err := r.Allows(a); err != nil {
			return err
		}
	}
	return nil
}

// dialControl refuses connections to addresses r does not allow. It runs
// after name resolution, on the address actually dialled.
func (r Reach) dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: dial %s: %w", address, err)
	}
	if err := r.Allows(ap.Addr()); err != nil {
		return fmt.Errorf("webhook: dial %s: %w", address, err)
	}
	return nil
}
