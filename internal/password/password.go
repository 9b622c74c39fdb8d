// Package password hashes and checks passwords with argon2id, stored as
// PHC strings. It is a base below the wings: the subscriber users of the
// identity provider (internal/subscriberuser) and the staff users of the
// console (internal/staff) both hash with it, and a wing may not import
// another wing (internal/archtest), so the hasher cannot live in either.
// The cost is explained at DefaultParams and in docs/AUTHORIZATIONS.md.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// Params are the argon2id cost parameters of new hashes. Stored hashes
// carry their own, so a change applies to passwords set (or, with
// NeedsRehash, logged in with) from then on.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8  // lanes
}

// DefaultParams: 16 MiB, one pass, one lane. Measured on the 2-core build
// machine (Go's argon2, idle): 11.8 ms per hash; 19 MiB × 2 passes (OWASP's
// first argon2id option) took 30 ms, 12 MiB × 1 took 9.8 ms. The cost is
// CPU time at login, and logins are the service's most expensive request:
// at 12 ms a core checks about 85 passwords a second, so the chosen cost is
// the largest one that keeps a check in the 10–20 ms band we set for a
// login (docs/AUTHORIZATIONS.md, "Passwords"). One lane, because more lanes
// only spread the same work over cores (latency, not cost) and a busy
// server has no idle cores to spread it over.
var DefaultParams = Params{Memory: 16 * 1024, Time: 1, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
)

// hashSlots bounds how many hashes run at once: each holds Params.Memory
// of RAM, and running more than the cores can serve only makes every login
// wait longer while memory grows with the queue.
var hashSlots = make(chan struct{}, max(2, 2*runtime.GOMAXPROCS(0)))

// hashes counts argon2id runs, so a test can see that every login attempt
// costs one (subscriberuser's and staff's TestAuthenticateCostsOneHash),
// which timing on a shared machine cannot show reliably.
var hashes atomic.Int64

// Hashes is how many argon2id runs (Hash and Verify) the process has made.
// Tests compare it before and after a call; nothing else should read it.
func Hashes() int64 { return hashes.Load() }

// Slots is how many hashes may run at once (see hashSlots).
func Slots() int { return cap(hashSlots) }

// key runs argon2id in a hash slot.
func key(password, salt []byte, p Params, n uint32) []byte {
	hashes.Add(1)
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	return argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, n)
}

var b64 = base64.RawStdEncoding

// Hash returns the PHC string of password under p:
// $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash> (base64
// without padding), with a fresh random salt.
func Hash(password string, p Params) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password: salt: %w", err)
	}
	sum := key([]byte(password), salt, p, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(sum)), nil
}

// ErrMalformedHash: a stored hash is not an argon2id PHC string this
// package can check.
var ErrMalformedHash = errors.New("password: malformed password hash")

// decoded is a parsed PHC string.
type decoded struct {
	params    Params
	salt, sum []byte
}

// Bounds on the parameters a stored hash may ask for, so that a corrupt or
// planted row cannot make one check take gigabytes or minutes.
const (
	maxMemory = 1 << 20 // KiB: 1 GiB
	maxTime   = 16
)

func decode(encoded string) (decoded, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return decoded{}, ErrMalformedHash
	}
	var (
		d       decoded
		threads uint32
	)
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &d.params.Memory, &d.params.Time, &threads); err != nil {
		return decoded{}, ErrMalformedHash
	}
	if d.params.Memory < 8 || d.params.Memory > maxMemory || d.params.Time < 1 || d.params.Time > maxTime ||
		threads < 1 || threads > 255 || d.params.Memory < 8*threads {
		return decoded{}, ErrMalformedHash
	}
	d.params.Threads = uint8(threads)
	var err error
	if d.salt, err = b64.DecodeString(parts[4]); err != nil || len(d.salt) < 8 {
		return decoded{}, ErrMalformedHash
	}
	if d.sum, err = b64.DecodeString(parts[5]); err != nil || len(d.sum) < 16 || len(d.sum) > 64 {
		return decoded{}, ErrMalformedHash
	}
	return d, nil
}

// Verify reports whether password matches the PHC string encoded. The
// comparison takes the same time wherever the two differ.
func Verify(encoded, password string) (bool, error) {
	d, err := decode(encoded)
	if err != nil {
		return false, err
	}
	sum := key([]byte(password), d.salt, d.params, uint32(len(d.sum)))
	return subtle.ConstantTimeCompare(sum, d.sum) == 1, nil
}

// ParamsOf returns the parameters encoded was made with, or
// ErrMalformedHash.
func ParamsOf(encoded string) (Params, error) {
	d, err := decode(encoded)
	return d.params, err
}

// NeedsRehash reports whether encoded was made with other parameters than
// p (a login that succeeded may then store a new hash).
func NeedsRehash(encoded string, p Params) bool {
	d, err := decode(encoded)
	return err != nil || d.params != p || len(d.sum) != keyLen
}
