package store_test

import (
	"context"
	"database/sql"
	"errors"
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

// TestSettleDemand: the one settlement rule applied in steps of payments
// and credits, with what each step absorbs, the statuses written to the
// demand and the invoice, dunning stopping once settled, and InvoicePaid
// only on the transition to Paid.
func TestSettleDemand(t *testing.T) {
	t.Parallel()
	type step struct {
		paid, credited   int64
		applied, surplus int64
		demand, invoice  string
		dunning          bool // next_dunning_at still set
	}
	for _, tc := range []struct {
		name   string
		amount int64
		steps  []step
		paidEv int
	}{
		{"full payment", 24800, []step{{24800, 0, 24800, 0, "Paid", "Paid", false}}, 1},
		{"partial then rest", 24800, []step{
			{10000, 0, 10000, 0, "PartiallyPaid", "PartiallyPaid", true},
			{14800, 0, 14800, 0, "Paid", "Paid", false}}, 1},
		{"overpayment", 24800, []step{{30000, 0, 24800, 5200, "Paid", "Paid", false},
			{100, 0, 0, 100, "Paid", "Paid", false}}, 1},
		{"full credit", 24800, []step{{0, 24800, 24800, 0, "Credited", "Credited", false}}, 0},
		{"partial credit leaves it open", 24800, []step{{0, 8000, 8000, 0, "Open", "Issued", true},
			{16800, 0, 16800, 0, "Paid", "Paid", false}}, 1},
		{"credit after partial payment", 24800, []step{{4800, 0, 4800, 0, "PartiallyPaid", "PartiallyPaid", true},
			{0, 24800, 20000, 4800, "Paid", "Paid", false}}, 1},
		{"payment and credit at once", 24800, []step{{20000, 10000, 24800, 5200, "Paid", "Paid", false}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, s *store.Store) {
				ctx := newTenant(t, s, "settle")
				demand, invoice := settleDemandFixture(t, s, ctx, tc.amount)
				for i, st := range tc.steps {
					var c store.DemandChange
					err := s.InTx(ctx, func(tx *store.Tx) error {
						var err error
						c, err = tx.SettleDemand(ctx, demand, st.paid, st.credited, time.Date(2027, 1, 20, 0, 0, 0, 0, time.UTC))
						return err
					})
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if c.Applied != st.applied || c.Surplus != st.surplus || c.NewStatus != st.demand || c.InvoiceStatus != st.invoice ||
						c.InvoiceID != invoice || c.Applied != c.PaidApplied+c.CreditedApplied {
						t.Fatalf("step %d: %+v", i, c)
					}
					d, err := s.PaymentDemand(ctx, demand)
					if err != nil {
						t.Fatal(err)
					}
					inv, err := s.Invoice(ctx, invoice)
					if err != nil {
						t.Fatal(err)
					}
					if d.Status != st.demand || inv.Status != st.invoice || d.PaidAmount.Minor != c.After.Paid || d.CreditedAmount.Minor != c.After.Credited {
						t.Fatalf("step %d: stored demand %s paid %s credited %s, invoice %s", i, d.Status, d.PaidAmount, d.CreditedAmount, inv.Status)
					}
					var next sql.NullString
					if err := s.DB().QueryRowContext(ctx, `SELECT CAST(next_dunning_at AS text) FROM payment_demands WHERE id = $1`, demand).Scan(&next); err != nil {
						t.Fatal(err)
					}
					if next.Valid != st.dunning {
						t.Fatalf("step %d: next_dunning_at %v, want set %v", i, next, st.dunning)
					}
				}
				evs, _, err := s.ListEvents(ctx, store.EventFilter{EventType: store.EventInvoicePaid}, store.Page{Limit: 10})
				if err != nil || len(evs) != tc.paidEv {
					t.Fatalf("%d InvoicePaid events, want %d (%v)", len(evs), tc.paidEv, err)
				}
			})
		})
	}
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "settle")
		err := s.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.SettleDemand(ctx, store.NewID(), 1, 0, time.Now())
			return err
		})
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown demand: %v", err)
		}
	})
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
