// Package throttle counts failures per key in token buckets: a key that
// has failed Burst times waits Every per further try. The identity
// provider bounds client and subscriber logins with it and the console its
// staff logins, so both surfaces limit the same way (docs/LOGIN.md,
// docs/CONSOLE.md). Memory stays bounded: a flood of made-up keys makes it
// forget the buckets that remember nothing first.
package throttle

import (
	"math"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Failures holds the buckets of one kind (e.g. client ids and addresses,
// or addresses); a rate limit can use one too, every request counting as
// a "failure".
type Failures struct {
	every time.Duration
	burst int
	max   int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// New makes the buckets of one kind: burst failures, then one per every,
// for at most maxKeys keys.
func New(every time.Duration, burst, maxKeys int) *Failures {
	return &Failures{every: every, burst: burst, max: maxKeys, buckets: map[string]*rate.Limiter{}}
}

// Wait returns how long key must wait before its next try; 0 means now.
func (f *Failures) Wait(key string, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.buckets[key]
	if b == nil {
		return 0
	}
	if tokens := b.TokensAt(now); tokens < 1 {
		return time.Duration(math.Ceil((1 - tokens) * float64(f.every)))
	}
	return 0
}

// Fail takes one failure from key's bucket.
func (f *Failures) Fail(key string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.buckets[key]
	if b == nil {
		if len(f.buckets) >= f.max {
			f.sweep(now)
		}
		b = rate.NewLimiter(rate.Every(f.every), f.burst)
		f.buckets[key] = b
	}
	b.AllowN(now, 1)
}

// sweep forgets full buckets (no failure remembered), and if that is not
// enough, arbitrary ones: memory stays bounded under a flood of made-up
// client ids, at the price of forgetting some failures during it.
func (f *Failures) sweep(now time.Time) {
	for k, b := range f.buckets {
		if b.TokensAt(now) >= float64(f.burst) {
			delete(f.buckets, k)
		}
	}
	for k := range f.buckets {
		if len(f.buckets) < f.max*9/10 {
			break
		}
		delete(f.buckets, k)
	}
}

// Len is how many buckets are kept.
func (f *Failures) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.buckets)
}

// AddressKey is the bucket key of a remote address: the IP, and for IPv6
// its /64, which one host or site usually has whole.
func AddressKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
