package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// DefaultKeySetRefetchInterval is how often, at most, an external issuer's
// key set is fetched again because a token names a key it does not hold.
// Anyone can send a token naming a trusted issuer, before any
// authentication, so this interval is what bounds the calls such tokens
// make Kadens send to the issuer (go-oidc's RemoteKeySet fetches again on
// every miss). Five minutes is the usual bound for unknown key ids; a
// rotating issuer publishes a new key well before it signs with it.
const DefaultKeySetRefetchInterval = 5 * time.Minute

// maxKeySetBytes bounds a key set response; real ones are a few kilobytes.
const maxKeySetBytes = 1 << 20

// remoteKeySet is an external issuer's key set (go-oidc's KeySet),
// fetched with the egress policy's client and used to verify signatures
// with go-jose.
//
// It fetches the set on the first token, and again only when a token
// names a key id it does not hold (or has no key id and no held key
// verifies it) and the last attempt is at least interval old. A token
// whose key id is held but whose signature does not verify is refused
// without a fetch: a key the issuer still publishes does not change.
// Concurrent misses wait for one fetch and share its result.
type remoteKeySet struct {
	url      string
	client   *http.Client
	now      func() time.Time
	interval time.Duration
	// ctx carries no request's cancellation: a fetch is shared by every
	// request waiting for it, so one client going away must not end it.
	ctx context.Context

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	attempted bool      // a fetch was started at least once
	last      time.Time // when the last fetch was started
	inflight  *keySetFetch
}

// keySetFetch is one fetch that several requests may wait for.
type keySetFetch struct {
	done chan struct{}
	keys []jose.JSONWebKey
	err  error
}

// errRefetchTooSoon is the reason a token naming an unknown key is refused
// without fetching the key set again.
var errRefetchTooSoon = errors.New("key set fetched too recently to fetch again")

func newRemoteKeySet(ctx context.Context, url string, client *http.Client, now func() time.Time, interval time.Duration) *remoteKeySet {
	if interval <= 0 {
		interval = DefaultKeySetRefetchInterval
	}
	return &remoteKeySet{url: url, client: client, now: now, interval: interval, ctx: context.WithoutCancel(ctx)}
}

// VerifySignature implements oidc.KeySet. The verifier has already checked
// the algorithm against its allowed list and that there is one signature.
func (s *remoteKeySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, allAlgorithms)
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("want exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID

	s.mu.Lock()
	keys := s.keys
	s.mu.Unlock()
	candidates := keysFor(keys, kid)
	if payload, ok := verifyWith(jws, candidates); ok {
		return payload, nil
	}
	if kid != "" && len(candidates) > 0 {
		// A held key that does not verify: a forgery or a damaged token,
		// not a rotation.
		return nil, fmt.Errorf("signature does not verify with key %q", kid)
	}

	keys, err = s.refetch(ctx)
	if errors.Is(err, errRefetchTooSoon) {
		return nil, fmt.Errorf("unknown signing key %q (%w; at most once per %s)", kid, err, s.interval)
	}
	if err != nil {
		return nil, fmt.Errorf("fetching the key set of %s: %w", s.url, err)
	}
	if payload, ok := verifyWith(jws, keysFor(keys, kid)); ok {
		return payload, nil
	}
	return nil, fmt.Errorf("no key of the issuer's key set verifies the token (key id %q)", kid)
}

// refetch fetches the key set unless the last attempt is younger than the
// interval, joining a fetch that is under way. The attempt is counted when
// it starts, whether it succeeds or not, so a failing key set endpoint is
// not called more often either.
func (s *remoteKeySet) refetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	s.mu.Lock()
	f := s.inflight
	if f == nil {
		if s.attempted && s.now().Sub(s.last) < s.interval {
			s.mu.Unlock()
			return nil, errRefetchTooSoon
		}
		s.attempted, s.last = true, s.now()
		f = &keySetFetch{done: make(chan struct{})}
		s.inflight = f
		go s.run(f)
	}
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-f.done:
		return f.keys, f.err
	}
}

// run performs fetch f and publishes its result.
func (s *remoteKeySet) run(f *keySetFetch) {
	keys, err := s.fetch(s.ctx)
	s.mu.Lock()
	if err == nil {
		// The issuer's current set replaces the old one: a key it no
		// longer publishes is no longer trusted.
		s.keys = keys
	}
	s.inflight = nil
	s.mu.Unlock()
	f.keys, f.err = keys, err
	close(f.done)
}

// fetch reads the key set: its public signing keys that go-jose parses.
// Keys of types or algorithms go-jose does not support are skipped rather
// than failing the whole set (RFC 7517 §5: implementations SHOULD ignore
// JWKs they do not understand).
func (s *remoteKeySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("key set request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the key set: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("key set answered %s", resp.Status)
	}
	if len(body) > maxKeySetBytes {
		return nil, fmt.Errorf("key set larger than %d bytes", maxKeySetBytes)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("decoding the key set: %w", err)
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, rawKey := range set.Keys {
		var k jose.JSONWebKey
		if err := json.Unmarshal(rawKey, &k); err != nil || k.Use == "enc" {
			continue
		}
		if pub := k.Public(); pub.Valid() {
			keys = append(keys, pub)
		}
	}
	return keys, nil
}

// keysFor returns the keys a token with key id kid may be verified with:
// those with that id, or every key when the token names none.
func keysFor(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	if kid == "" {
		return keys
	}
	var out []jose.JSONWebKey
	for _, k := range keys {
		if k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out
}

// verifyWith verifies jws with the first of keys that accepts it.
func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey) ([]byte, bool) {
	for i := range keys {
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload, true
		}
	}
	return nil, false
}
