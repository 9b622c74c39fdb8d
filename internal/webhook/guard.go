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

// ErrPrivateAddress is returned for a destination in a loopback, private,
// link-local or otherwise non-public range.
var ErrPrivateAddress = errors.New("resolves to a private, loopback or link-local address")

// nonPublic are ranges no webhook may reach unless private destinations are
// allowed, beyond what netip's predicates cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // "this network"
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),  // NAT64 (embeds IPv4)
	netip.MustParsePrefix("2002::/16"),     // 6to4 (embeds IPv4)
}

// IsPublic reports whether a is a public unicast address.
func IsPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// CheckURL validates a webhook URL: absolute http or https, no user info,
// and (unless allowPrivate) a host whose every address is public. It is
// the registration-time check; the dialer checks again at connect time, so
// a DNS answer that changes later (rebinding) is still refused.
func CheckURL(ctx context.Context, raw string, allowPrivate bool, resolver *net.Resolver) error {
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
	if allowPrivate {
		return nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if !IsPublic(a) {
			return ErrPrivateAddress
		}
		return nil
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return ErrPrivateAddress
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("host %s does not resolve", host)
	}
	for _, a := range addrs {
		if !IsPublic(a) {
			return ErrPrivateAddress
		}
	}
	return nil
}

// dialControl refuses connections to non-public addresses. It runs after
// name resolution, on the address actually dialled.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: dial %s: %w", address, err)
	}
	if !IsPublic(ap.Addr()) {
		return fmt.Errorf("webhook: dial %s: %w", address, ErrPrivateAddress)
	}
	return nil
}
