package analytics_test

import (
	"slices"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestReplica points one server's analytics at another server's database
// (standing in for a read replica): its queries go there, not to its own
// database.
func TestReplica(t *testing.T) {
	if !slices.Contains(storetest.Engines(), store.Postgres) {
		t.Skip("needs PostgreSQL (" + storetest.PostgresEnv + ")")
	}
	replica := apitest.Start(t, store.Postgres, nil)
	e := apitest.Start(t, store.Postgres, map[string]string{"KADENS_ANALYTICS_DATABASE_URL": replica.Config.DatabaseURL})
	c := client{t: t, e: e, tn: e.Tenant}
	seedTenant(t, e.Tenant, []seed.Subscriber{{Name: "Only in the primary", Email: "p@example.no", Country: "NO"}})
	if p := c.page("/Subscribers"); len(p.Value) != 0 {
		t.Fatalf("analytics read the primary: %v", p.Value)
	}
	if e.Config.AnalyticsDatabaseURL == "" {
		t.Fatal("the setting was not read")
	}
}
