package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestInvoiceAccountBelongsToSubscriber: on PostgreSQL an invoice and a
// payment demand may only name the account of their own subscriber
// (migration 00013 folded two foreign keys into one that says so).
func TestInvoiceAccountBelongsToSubscriber(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		if s.Engine() != store.Postgres {
			t.Skip("SQLite keeps the separate account and subscriber keys (migrations/sqlite/00013)")
		}
		ctx := newTenant(t, s, "a")
		demand, invoice := seed.NewStore(t, s, ctx, time.Date(2027, 1, 10, 12, 0, 0, 0, time.UTC)).OpenDemand(10000)
		other, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "Ola Nordmann"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []struct{ table, id string }{{"invoices", invoice}, {"payment_demands", demand}} {
			_, err := s.DB().ExecContext(ctx, `UPDATE `+q.table+` SET subscriber_id = $1 WHERE id = $2`, other.ID, q.id)
			if err == nil || !strings.Contains(err.Error(), "account_subscriber_fkey") {
				t.Errorf("%s: moving the row to another subscriber than its account's: %v, want a foreign key violation", q.table, err)
			}
		}
	})
}
