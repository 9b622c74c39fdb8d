package analytics_test

import (
	"slices"
	"testing"
	"time"

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

// TestSQLiteReadsBesideWriter holds an analytics-style read open on the
// read pool (rows not yet consumed, as while a page streams) and writes
// through the API meanwhile: the write does not wait for the read.
func TestSQLiteReadsBesideWriter(t *testing.T) {
	e := apitest.Start(t, store.SQLite, nil)
	seedTenant(t, e.Tenant, people)
	rows, err := e.Store.ReadDB().QueryContext(t.Context(), "SELECT id FROM subscribers")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal("no rows")
	}
	start := time.Now()
	e.Tenant.Seed(t).Subscriber(seed.Subscriber{Name: "Written meanwhile", Email: "w@example.no", Country: "NO"})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the write waited %s beside an open read", d)
	}
	c := client{t: t, e: e, tn: e.Tenant}
	if p := c.page("/Subscribers?$filter=" + q("Name eq 'Written meanwhile'")); len(p.Value) != 1 {
		t.Fatalf("written row: %v", p.Value)
	}
}
