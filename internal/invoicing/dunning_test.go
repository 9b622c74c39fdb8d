package invoicing_test

import (
	"context"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestDun: an unpaid invoice under the default dunning process gets its
// reminder at the first reminder day, with the fee booked as a VAT-free
// charge, then its payment stop, which Dun hands to the stop function;
// after that nothing is due.
func TestDun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBilled(t, s)
		stop := 10
		if _, err := invoicing.CreateDunningProcess(b.ctx, s, invoicing.DunningProcess{Name: "Standard", ReminderDays: []int{5}, ReminderFee: "35.00",
			PaymentStopDays: &stop, IsDefault: true}, t0); err != nil {
			t.Fatal(err)
		}
		jan := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
		b.issue(t, s, jan)
		next := func() *time.Time {
			var at *time.Time
			if err := s.InTx(b.ctx, func(tx *store.Tx) error {
				var err error
				at, err = invoicing.NextDunningAt(b.ctx, tx)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return at
		}
		var stopped []string
		dun := func(at time.Time) invoicing.DunningStats {
			var st invoicing.DunningStats
			if err := s.InTx(b.ctx, func(tx *store.Tx) error {
				var err error
				st, err = invoicing.Dun(b.ctx, tx, at, 100, func(_ context.Context, _ *store.Tx, subscriptionID string, _ time.Time) (bool, error) {
					stopped = append(stopped, subscriptionID)
					return true, nil
				})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return st
		}
		first := next()
		if first == nil {
			t.Fatal("no dunning scheduled")
		}
		if st := dun(*first); st.Reminders != 1 || st.PaymentStops != 0 {
			t.Fatalf("first action: %+v", st)
		}
		rs, _, err := invoicing.ListReminders(b.ctx, s, invoicing.ReminderFilter{}, store.Page{Limit: 10})
		if err != nil || len(rs) != 1 || rs[0].Number != 1 || rs[0].FeeAmount.Minor != 3500 || rs[0].FeeItemID == nil {
			t.Fatalf("reminders %+v (%v)", rs, err)
		}
		invs, _, err := s.ListInvoices(b.ctx, store.DocumentFilter{Now: jan}, store.Page{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.SubscriberAccount(b.ctx, invs[0].SubscriberAccountID)
		if err != nil || a.OutstandingCharges.Minor != 3500 {
			t.Fatalf("account charges %s (%v)", a.OutstandingCharges, err)
		}
		second := next()
		if second == nil || !second.Equal(first.AddDate(0, 0, stop)) {
			t.Fatalf("payment stop at %v, want %v", second, first.AddDate(0, 0, stop))
		}
		if st := dun(*second); st.Reminders != 0 || st.PaymentStops != 1 || len(stopped) != 1 || invs[0].SubscriptionID == nil || stopped[0] != *invs[0].SubscriptionID {
			t.Fatalf("second action: %+v, stopped %v", st, stopped)
		}
		if at := next(); at != nil {
			t.Fatalf("dunning still due at %v", at)
		}
	})
}
