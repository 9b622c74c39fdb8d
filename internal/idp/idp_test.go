package idp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/throttle"
)

func init() { SecretHashCost = bcrypt.MinCost }

// tokenServer is an IdP on a real loopback listener whose clock the test
// moves, with a tenant and one client.
type tokenServer struct {
	*Server
	url            string
	id, secret     string
	mu             sync.Mutex
	clock          time.Time
	comparedHashes [][]byte
}

func newTokenServer(t *testing.T, s *store.Store, limits Limits) *tokenServer {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	keys := NewKeys(s, make([]byte, 32), time.Hour, log)
	if err := keys.Load(ctx); err != nil {
		t.Fatal(err)
	}
	tenant, err := tenancy.From(seed.Tenant(t, s, "t", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	ts := &tokenServer{clock: time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)}
	ts.id, ts.secret, err = NewClientCredentials(ctx, s, tenant, "m", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ts.Server = New(Config{Issuer: "http://idp", Audience: "http://api", ClaimsNamespace: "https://k/c", TokenTTL: time.Hour, Limits: limits}, s, keys, log)
	ts.now = func() time.Time { ts.mu.Lock(); defer ts.mu.Unlock(); return ts.clock }
	ts.compare = func(hash, secret []byte) error {
		ts.mu.Lock()
		ts.comparedHashes = append(ts.comparedHashes, hash)
		ts.mu.Unlock()
		return bcrypt.CompareHashAndPassword(hash, secret)
	}
	// Listen on all of 127.0.0.0/8 so that clients can come from several
	// loopback addresses.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(ts.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	ts.url = srv.URL + "/oauth/token"
	return ts
}

func (ts *tokenServer) advance(d time.Duration) {
	ts.mu.Lock()
	ts.clock = ts.clock.Add(d)
	ts.mu.Unlock()
}

// post asks for a token as id/secret from local address from (127.0.0.x).
func (ts *tokenServer) post(t *testing.T, from, id, secret string) *http.Response {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}}
	req, _ := http.NewRequest("POST", ts.url, strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	client.CloseIdleConnections()
	return resp
}

// An unknown or revoked client id costs the same bcrypt comparison as a
// wrong secret, against a hash of the same cost, so the answer's timing
// does not tell which ids exist.
func TestUnknownClientComparesDummyHash(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ts := newTokenServer(t, s, DefaultLimits)
		for _, c := range []struct{ id, secret string }{
			{ts.id, "wrong"},             // known client, wrong secret
			{"kc_doesnotexist", "wrong"}, // unknown client
		} {
			ts.comparedHashes = nil
			if r := ts.post(t, "127.0.0.1", c.id, c.secret); r.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s: status %d", c.id, r.StatusCode)
			}
			if len(ts.comparedHashes) != 1 {
				t.Fatalf("%s: %d bcrypt comparisons, want 1", c.id, len(ts.comparedHashes))
			}
			cost, err := bcrypt.Cost(ts.comparedHashes[0])
			if err != nil || cost != SecretHashCost {
				t.Fatalf("%s: compared against a hash of cost %d (%v), want %d", c.id, cost, err, SecretHashCost)
			}
		}
		if r := ts.post(t, "127.0.0.1", ts.id, ts.secret); r.StatusCode != http.StatusOK {
			t.Fatalf("right secret: %d", r.StatusCode)
		}
	})
}

// Failed authentications are limited per client id and remote address
// and per address: past a burst the endpoint answers 429 with Retry-After
// without comparing the secret, alike for known and unknown ids, and the
// bucket refills with time. Successes take nothing; failures from one
// address never refuse the right secret from another; and a secret that
// passed before is admitted even from a limited address.
func TestFailedAuthenticationsAreRateLimited(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		limits := Limits{ClientBurst: 3, ClientEvery: 10 * time.Second, AddressBurst: 5, AddressEvery: 4 * time.Second, MaxKeysByKind: 100}
		ts := newTokenServer(t, s, limits)
		// Per client id and address: three failures from one address,
		// then 429 from there (even the right secret, never verified by
		// this process yet); the right secret from another address is a
		// token.
		for i, id := range []string{ts.id, "kc_unknown"} {
			from := "127.0.0." + strconv.Itoa(10+i)
			for j := range 3 {
				if r := ts.post(t, from, id, "wrong"); r.StatusCode != http.StatusUnauthorized {
					t.Fatalf("%s failure %d: %d", id, j, r.StatusCode)
				}
			}
			ts.comparedHashes = nil
			r := ts.post(t, from, id, ts.secret)
			if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "10" {
				t.Fatalf("%s after its burst: %d Retry-After %q, want 429 and 10", id, r.StatusCode, r.Header.Get("Retry-After"))
			}
			if len(ts.comparedHashes) != 0 {
				t.Fatalf("%s: a limited request still compared the secret", id)
			}
		}
		if r := ts.post(t, "127.0.0.12", ts.id, ts.secret); r.StatusCode != http.StatusOK {
			t.Fatalf("right secret from another address: %d", r.StatusCode)
		}
		for range 10 { // successes are not limited
			if r := ts.post(t, "127.0.0.1", ts.id, ts.secret); r.StatusCode != http.StatusOK {
				t.Fatalf("right secret: %d", r.StatusCode)
			}
		}
		// Now that the secret passed, the limited address gets a token with
		// it too (no bcrypt), and still a 429 for anything else.
		ts.comparedHashes = nil
		if r := ts.post(t, "127.0.0.10", ts.id, ts.secret); r.StatusCode != http.StatusOK {
			t.Fatalf("a verified secret from the limited address: %d", r.StatusCode)
		}
		if r := ts.post(t, "127.0.0.10", ts.id, "wrong again"); r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a wrong secret from the limited address: %d", r.StatusCode)
		}
		if len(ts.comparedHashes) != 0 {
			t.Fatalf("%d bcrypt comparisons for a verified secret and a limited request", len(ts.comparedHashes))
		}
		// The address that failed may try other ids (its own bucket has
		// two failures left).
		if r := ts.post(t, "127.0.0.10", "kc_other", "wrong"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("another id from the failing address: %d", r.StatusCode)
		}
		ts.advance(10 * time.Second)
		if r := ts.post(t, "127.0.0.10", ts.id, "wrong"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("after the refill: %d, want a plain 401", r.StatusCode)
		}

		// Per address: five failures with five made-up ids from one
		// address, then that address is refused for any unverified secret,
		// others not.
		for j := range 5 {
			if r := ts.post(t, "127.0.0.40", "kc_made_up_"+strconv.Itoa(j), "wrong"); r.StatusCode != http.StatusUnauthorized {
				t.Fatalf("address failure %d: %d", j, r.StatusCode)
			}
		}
		if r := ts.post(t, "127.0.0.40", ts.id, "wrong"); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "4" {
			t.Fatalf("address after its burst: %d Retry-After %q", r.StatusCode, r.Header.Get("Retry-After"))
		}
		if r := ts.post(t, "127.0.0.41", ts.id, "wrong"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("another address: %d", r.StatusCode)
		}
		ts.advance(4 * time.Second)
		if r := ts.post(t, "127.0.0.40", ts.id, "wrong"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("address after the refill: %d", r.StatusCode)
		}
	})
}

// Anyone who knows a client id cannot lock the client out: failures from
// other addresses, however many, never refuse the right secret from the
// client's own, for machine clients (client_credentials) and login clients
// (the code and refresh grants and /revoke alike); the failing addresses
// themselves are refused, except for a secret that passed before.
func TestFailuresDoNotLockOutTheClient(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ts := newTokenServer(t, s, DefaultLimits)
		for a := range 4 {
			from := "127.0.0." + strconv.Itoa(100+a)
			for range DefaultLimits.ClientBurst + 2 {
				ts.post(t, from, ts.id, "wrong")
			}
			if r := ts.post(t, from, ts.id, ts.secret); r.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("the right secret from an attacking address: %d, want 429", r.StatusCode)
			}
		}
		if r := ts.post(t, "127.0.0.1", ts.id, ts.secret); r.StatusCode != http.StatusOK {
			t.Fatalf("machine client from its own address after the attack: %d", r.StatusCode)
		}
		// Behind a reverse proxy everyone has the proxy's address: failures
		// from there still do not refuse a secret that passed before.
		for range DefaultLimits.AddressBurst + 2 {
			ts.post(t, "127.0.0.1", "kc_made_up", "wrong")
		}
		if r := ts.post(t, "127.0.0.1", ts.id, ts.secret); r.StatusCode != http.StatusOK {
			t.Fatalf("machine client from its own, limited address: %d", r.StatusCode)
		}

		f := newLoginFixture(t, s)
		f.byClientAddress = throttle.New(time.Hour, 3, 100)
		f.byAddress = throttle.New(time.Hour, 1000, 100)
		post := func(from, path string, form url.Values, secret string) reply {
			t.Helper()
			req, _ := http.NewRequest("POST", f.url+path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth(f.client, secret)
			resp, err := fromAddress(t, from).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&body)
			return reply{status: resp.StatusCode, header: resp.Header, body: body}
		}
		refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"made-up"}}
		revoke := url.Values{"token": {"made-up"}}
		for a := range 3 {
			from := "127.0.0." + strconv.Itoa(50+a)
			for i := range 4 {
				want := http.StatusUnauthorized
				if i >= 3 {
					want = http.StatusTooManyRequests
				}
				if r := post(from, "/oauth/token", refresh, "wrong"); r.status != want {
					t.Fatalf("failure %d from %s: %d %v, want %d", i, from, r.status, r.body, want)
				}
			}
			if r := post(from, "/revoke", revoke, f.secret); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
				t.Fatalf("/revoke with the right secret from an attacking address: %d %v", r.status, r.body)
			}
		}
		// The real client, from its own address: the code exchange, the
		// refresh and the revocation all work.
		verifier, _ := pkce()
		form := url.Values{"grant_type": {"authorization_code"}, "code": {f.code(t)}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}}
		r := post("127.0.0.60", "/oauth/token", form, f.secret)
		if r.status != http.StatusOK {
			t.Fatalf("code exchange from the client's address: %d %v", r.status, r.body)
		}
		r = post("127.0.0.60", "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.body["refresh_token"].(string)}}, f.secret)
		if r.status != http.StatusOK {
			t.Fatalf("refresh from the client's address: %d %v", r.status, r.body)
		}
		if r := post("127.0.0.60", "/revoke", url.Values{"token": {r.body["refresh_token"].(string)}}, f.secret); r.status != http.StatusOK {
			t.Fatalf("revoke from the client's address: %d %v", r.status, r.body)
		}
		// Its own address limited too (a shared proxy's): the verified
		// secret still passes, a wrong one does not.
		for range 3 {
			post("127.0.0.60", "/revoke", revoke, "wrong")
		}
		if r := post("127.0.0.60", "/revoke", revoke, "wrong"); r.status != http.StatusTooManyRequests {
			t.Fatalf("a wrong secret from the limited address: %d %v", r.status, r.body)
		}
		if r := post("127.0.0.60", "/revoke", revoke, f.secret); r.status != http.StatusOK {
			t.Fatalf("the verified secret from the limited address: %d %v", r.status, r.body)
		}
	})
}
