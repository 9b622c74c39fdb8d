package idp

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// EnsureLoginClient registers Min side's client once per tenant, finds it
// again with the same secret and addresses, and registers another when
// the addresses (a new base URL) or the secret (a new master key) differ.
func TestEnsureLoginClient(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := seed.Tenant(t, s, "ensure", time.Now())
		tenant, _ := tenancy.From(ctx)
		spec := LoginClientSpec{Name: "Min side", RedirectURIs: []string{"https://avisa.example/my/callback"},
			PostLogoutRedirectURIs: []string{"https://avisa.example/my/login"}}
		first, err := EnsureLoginClient(ctx, s, tenant, spec, "derived-secret", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		again, err := EnsureLoginClient(ctx, s, tenant, spec, "derived-secret", time.Now())
		if err != nil || again.ID != first.ID {
			t.Errorf("the second call registered another client: %s, %s, %v", first.ID, again.ID, err)
		}
		moved := spec
		moved.RedirectURIs = []string{"https://ny.avisa.example/my/callback"}
		for name, c := range map[string]struct {
			spec   LoginClientSpec
			secret string
		}{"another base URL": {moved, "derived-secret"}, "another secret": {spec, "other-secret"}} {
			if other, err := EnsureLoginClient(ctx, s, tenant, c.spec, c.secret, time.Now()); err != nil || other.ID == first.ID {
				t.Errorf("%s: %s, %v; want a new client", name, other.ID, err)
			}
		}
		bad := spec
		bad.RedirectURIs = []string{"http://avisa.example/my/callback"}
		if _, err := EnsureLoginClient(ctx, s, tenant, bad, "derived-secret", time.Now()); err == nil {
			t.Error("a plain http redirect address off loopback was registered")
		}
	})
}
