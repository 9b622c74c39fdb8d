package idp

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// BenchmarkCodeFlow is a whole subscriber login over real HTTP on
// loopback, in parallel: authorize, the login page, the form post
// (argon2id at subscriberuser.DefaultParams, the production cost), the
// callback and the code exchange with PKCE. It reports logins/s twice:
// with the production password cost, and with a negligible one
// ("protocol"), which shows what the flow costs apart from argon2id.
//
//	go test ./internal/idp -run '^$' -bench CodeFlow -benchtime 2000x
//	KADENS_TEST_POSTGRES_URL=... KADENS_TEST_ONLY_ENGINE=postgres go test ./internal/idp -run '^$' -bench CodeFlow -benchtime 2000x
func BenchmarkCodeFlow(b *testing.B) {
	for _, eng := range storetest.Engines() {
		for _, cost := range []struct {
			name string
			p    subscriberuser.Params
		}{{"argon2id-default", subscriberuser.DefaultParams}, {"protocol", cheapPasswords}} {
			b.Run(string(eng)+"/"+cost.name, func(b *testing.B) {
				s := storetest.Open(b, eng)
				f := newLoginFixture(b, s)
				f.Server.users.Params = cost.p
				email := "bench@example.com"
				ctx := tenancy.With(context.Background(), f.tenant)
				if _, err := (&subscriberuser.Directory{Store: s, Params: cost.p}).Create(ctx, email, testPassword, f.subscriberID); err != nil {
					b.Fatal(err)
				}
				verifier, _ := pkce()
				tr := &http.Transport{MaxIdleConnsPerHost: 64}
				b.Cleanup(tr.CloseIdleConnections)
				b.SetParallelism(4)
				b.ResetTimer()
				start := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					c := browser(b)
					c.Transport = tr
					for pb.Next() {
						p := f.login(b, c, f.authorizeURL(nil), email, testPassword)
						u, err := url.Parse(p.location)
						if p.status != http.StatusFound || err != nil || !strings.HasPrefix(p.location, testRedirect) {
							b.Errorf("login: %d %s", p.status, p.body)
							return
						}
						if r := f.exchange(b, u.Query().Get("code"), verifier); r.status != http.StatusOK {
							b.Errorf("exchange: %d %v", r.status, r.body)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "logins/s")
			})
		}
	}
}
