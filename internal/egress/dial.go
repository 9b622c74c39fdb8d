package egress

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Dialer returns a dialer whose connections p checks: its Control hook
// runs on every address the dialer tries, after name resolution, so what
// is checked is what is connected to.
func (p Policy) Dialer(timeout time.Duration) *net.Dialer {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Resolver: p.Resolver}
	if !p.allowsAll() {
		d.Control = p.control
	}
	return d
}

// control refuses a connection to an address p does not allow.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: %s: %w", address, err)
	}
	if err := p.Allows(ap.Addr()); err != nil {
		return fmt.Errorf("egress: %s %w", address, err)
	}
	return nil
}

// Transport returns an HTTP transport whose connections p checks. It uses
// no proxy: a proxy would connect on Kadens' behalf, where the check
// cannot see (HTTP_PROXY and HTTPS_PROXY are ignored).
func (p Policy) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           p.Dialer(10 * time.Second).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Client returns an HTTP client whose connections p checks, each request
// bounded by timeout (0: none). Redirects are followed: every hop's
// connection passes the same check.
func (p Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: p.Transport(), Timeout: timeout}
}
