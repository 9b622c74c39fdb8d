package idp

import (
	"crypto/sha256"
	"crypto/subtle"
	"sync"
	"time"
)

// Limits bound failed client authentications at the token endpoint (and
// /revoke). Each pair of client id and remote address, and each remote
// address, has a bucket of Burst failures that refills at one per Every;
// while either bucket of a request is empty the endpoint answers 429 with
// Retry-After, without looking at the secret. Successful authentications
// take nothing from the buckets, and a secret this process has verified
// before is admitted even from a limited address (knownSecrets). There is
// no bucket per client id alone: it would let anyone who knows a client id
// lock the real client out, and it guards nothing, since client secrets
// are 256-bit random values that cannot be guessed; the buckets bound the
// bcrypt work an address can cause. (LoginLimits reuse the type: Client*
// per account, Address* per address.)
type Limits struct {
	ClientBurst   int // per client id and address
	ClientEvery   time.Duration
	AddressBurst  int
	AddressEvery  time.Duration
	MaxKeysByKind int // how many buckets of each kind are kept at most
}

// DefaultLimits: a client that gets its secret wrong 10 times in a row
// from one address waits 6 s per further try from there; an address, 30
// failures then one per 2 s. Legitimate clients do not fail repeatedly,
// and an attacker gets a few tries a minute per address instead of one per
// bcrypt comparison (~60 ms of CPU).
var DefaultLimits = Limits{ClientBurst: 10, ClientEvery: 6 * time.Second, AddressBurst: 30, AddressEvery: 2 * time.Second, MaxKeysByKind: 100_000}

// DefaultLoginLimits bound failed subscriber logins: an account (tenant and
// e-mail) 5 failures, then one per 30 s; an address 50, then one per 2 s
// (many readers can share one office or mobile-network address).
var DefaultLoginLimits = Limits{ClientBurst: 5, ClientEvery: 30 * time.Second, AddressBurst: 50, AddressEvery: 2 * time.Second, MaxKeysByKind: 100_000}

// Rate is a token bucket per remote address: Burst at once, then one per
// Every.
type Rate struct {
	Burst int
	Every time.Duration
}

// DefaultAuthorizeRate bounds the authorization requests (GET /authorize)
// one address may make: 200 at once, then 5 a second. Each may store a
// login request of up to ~10 KB (the parameters' bounds, params.go) for
// LoginTTL, so one address can hold at most a few tens of MB, and the
// sweep deletes them when they expire. A mobile network's shared address
// carries many readers, hence the generous rate: at 5 a second it admits
// 18,000 logins an hour.
var DefaultAuthorizeRate = Rate{Burst: 200, Every: 200 * time.Millisecond}

// knownSecrets remembers, per client id ("login:"-prefixed for login
// clients), the SHA-256 of the secret that last passed bcrypt in this
// process. A request with that secret is then authenticated without
// bcrypt (~50 ms of CPU each), and is admitted even while its failure
// buckets are empty: checking it costs nothing the buckets guard, so
// failures, from any address (a reverse proxy's, shared by everyone,
// included), never lock out a client that has authenticated here before.
// Secrets are 256-bit random values, so their SHA-256 is as strong as the
// bcrypt hash the database keeps. A deleted or revoked client is still
// looked up each time and then fails.
type knownSecrets struct {
	mu sync.Mutex
	m  map[string][sha256.Size]byte
}

// matches reports whether secret is the one remembered for id.
func (k *knownSecrets) matches(id, secret string) bool {
	sum := sha256.Sum256([]byte(secret))
	k.mu.Lock()
	known, ok := k.m[id]
	k.mu.Unlock()
	return ok && subtle.ConstantTimeCompare(known[:], sum[:]) == 1
}

// remember records secret as id's, which bcrypt has just accepted.
func (k *knownSecrets) remember(id, secret string) {
	sum := sha256.Sum256([]byte(secret))
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= 10_000 {
		k.m = map[string][sha256.Size]byte{} // bounded: forgetting costs one bcrypt per client
	}
	k.m[id] = sum
}

// clientAddressKey is the bucket key of a client id (or a login client's,
// with its "login:" prefix) and a remote address.
func clientAddressKey(client, addr string) string { return client + "\x00" + addr }
