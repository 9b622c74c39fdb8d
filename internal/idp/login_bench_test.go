package idp

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/password"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// processCPU is the CPU time (user + system) this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCodeFlow is subscriber login over real HTTP on loopback, in
// parallel, three ways:
//
//   - argon2id-default: a whole login — authorize, the login page, the
//     form post (argon2id at password.DefaultParams, the production
//     cost), the callback and the code exchange with PKCE;
//   - protocol: the same with a negligible password cost, to show what
//     the flow costs apart from argon2id;
//   - session: token issuance for a browser that logged in before —
//     authorize with its login session cookie (no form), the callback and
//     the code exchange.
//
// It reports logins/s and the process's CPU per login (client and server
// together: both run here), which on a shared machine says more than the
// wall clock.
//
//	go test ./internal/idp -run '^$' -bench CodeFlow -benchtime 2000x
//	KADENS_TEST_POSTGRES_URL=... KADENS_TEST_ONLY_ENGINE=postgres go test ./internal/idp -run '^$' -bench CodeFlow -benchtime 2000x
func BenchmarkCodeFlow(b *testing.B) {
	for _, eng := range storetest.Engines() {
		for _, mode := range []struct {
			name    string
			p       subscriberuser.Params
			session bool
		}{{"argon2id-default", password.DefaultParams, false}, {"protocol", cheapPasswords, false}, {"session", cheapPasswords, true}} {
			b.Run(string(eng)+"/"+mode.name, func(b *testing.B) {
				s := storetest.Open(b, eng)
				f := newLoginFixture(b, s)
				f.Server.users.Params = mode.p
				email := "bench@example.com"
				ctx := tenancy.With(context.Background(), f.tenant)
				if _, err := (&subscriberuser.Directory{Store: s, Params: mode.p}).Create(ctx, email, testPassword, f.subscriberID); err != nil {
					b.Fatal(err)
				}
				verifier, _ := pkce()
				tr := &http.Transport{MaxIdleConnsPerHost: 64}
				b.Cleanup(tr.CloseIdleConnections)
				exchange := func(p page) bool {
					u, err := url.Parse(p.location)
					if p.status != http.StatusFound || err != nil || !strings.HasPrefix(p.location, testRedirect) {
						b.Errorf("login: %d %s %s", p.status, p.location, p.body)
						return false
					}
					if r := f.exchange(b, u.Query().Get("code"), verifier); r.status != http.StatusOK {
						b.Errorf("exchange: %d %v", r.status, r.body)
						return false
					}
					return true
				}
				b.SetParallelism(4)
				b.ResetTimer()
				start, cpu := time.Now(), processCPU(b)
				b.RunParallel(func(pb *testing.PB) {
					c := browser(b)
					c.Transport = tr
					if mode.session {
						// The browser's one password login, outside the
						// measured loop's work but inside its time.
						if !exchange(f.login(b, c, f.authorizeURL(nil), email, testPassword)) {
							return
						}
					}
					for pb.Next() {
						var p page
						if mode.session {
							p = f.authorizeAgain(b, c, f.authorizeURL(nil))
						} else {
							// A browser without a login session, each time.
							fresh := browser(b)
							fresh.Transport = tr
							p = f.login(b, fresh, f.authorizeURL(nil), email, testPassword)
						}
						if !exchange(p) {
							return
						}
					}
				})
				elapsed, used := time.Since(start), processCPU(b)-cpu
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "logins/s")
				b.ReportMetric(float64(used.Microseconds())/1000/float64(b.N), "cpu-ms/login")
			})
		}
	}
}
