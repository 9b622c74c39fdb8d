package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// settleDemandFixture writes an invoice and its demand of amount minor
// units straight into the tables, with next_dunning_at set, and returns
// the demand's id.
func settleDemandFixture(t *testing.T, s *store.Store, ctx context.Context, amount int64) (demand, invoice string) {
	t.Helper()
	at := time.Date(2027, 1, 10, 12, 0, 0, 0, time.UTC)
	sd := seed.NewStore(t, s, ctx, at)
	org := sd.Organization(seed.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo",
		PricesIncludeVAT: seed.Bool(false)})
	sub := sd.Subscriber(seed.Subscriber{Name: "Kari Nordmann"})
	demand, invoice = store.NewID(), store.NewID()
	var (
		account string
		err     error
	)
	if err := s.InTx(ctx, func(tx *store.Tx) error {
		account, err = tx.EnsureAccount(ctx, sub.ID, "NOK", at)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stamp := at.Format("2006-01-02T15:04:05.000000Z")
	tenant := tenantOf(t, s, ctx)
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO invoices (id, tenant_id, organization_id, invoice_number, payment_demand_id,
		account_id, subscriber_id, currency, prices_include_vat, status, issued_at, due_at, issue_date, due_date, seller, buyer,
		lines, vat_totals, net, vat, gross, kid, created_at)
		VALUES ($1, $2, $3, 1, $4, $5, $6, 'NOK', true, 'Issued', $7, $7, '2027-01-10', '2027-01-10', '{}', '{}', '[]', '[]',
		$8, 0, $8, '00000000018', $7)`, invoice, tenant, org.ID, demand, account, sub.ID, stamp, amount); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO payment_demands (id, tenant_id, kind, invoice_id, account_id, subscriber_id,
		organization_id, currency, amount, status, issued_at, due_at, created_at, next_dunning_at)
		VALUES ($1, $2, 'Period', $3, $4, $5, $6, 'NOK', $7, 'Open', $8, $8, $8, $8)`,
		demand, tenant, invoice, account, sub.ID, org.ID, amount, stamp); err != nil {
		t.Fatal(err)
	}
	return demand, invoice
}

func tenantOf(t *testing.T, s *store.Store, ctx context.Context) string {
	t.Helper()
	var id string
	if err := s.InTx(ctx, func(tx *store.Tx) error { id = tx.TenantID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

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
		demand, invoice := settleDemandFixture(t, s, ctx, 10000)
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
