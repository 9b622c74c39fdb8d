package invoicing_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

var t0 = time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)

func newTenant(t testing.TB, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, t0)
}

// TestSettle: the one settlement rule applied in steps of payments
// and credits, with what each step absorbs, the statuses written to the
// demand and the invoice, dunning stopping once settled, and InvoicePaid
// only on the transition to Paid.
func TestSettle(t *testing.T) {
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
				demand, invoice := seed.NewStore(t, s, ctx, time.Date(2027, 1, 10, 12, 0, 0, 0, time.UTC)).OpenDemand(tc.amount)
				for i, st := range tc.steps {
					var c invoicing.Change
					err := s.InTx(ctx, func(tx *store.Tx) error {
						var err error
						c, err = invoicing.Settle(ctx, tx, demand, st.paid, st.credited, time.Date(2027, 1, 20, 0, 0, 0, 0, time.UTC))
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
			_, err := invoicing.Settle(ctx, tx, store.NewID(), 1, 0, time.Now())
			return err
		})
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown demand: %v", err)
		}
	})
}
