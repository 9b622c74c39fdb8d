package store_test

import (
	"context"
	"testing"

	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestMigrationAutogiroSentPayments: a payment sent before migration 00043
// (status Sent, its file and day on the transaction's row) reads the same
// after it — Sent, in its file — and the migration recorded its sending
// with the day, so a cancellation of it is a TK25 again; a payment that
// was not sent stays Created with no file.
//
// It is the one Autogiro test left in internal/store: it tests a migration
// of the store's sequence and needs RedoMigration, which only the store's
// own tests can reach; it reads the result through the wing, which this
// external test package may import (the store itself may not).
func TestMigrationAutogiroSentPayments(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		tenant, err := tenancy.From(ctx)
		if err != nil {
			t.Fatal(err)
		}
		o, err := s.CreateOrganization(ctx, store.Organization{Name: "Nordavis AB", Country: "SE", Currency: "SEK",
			TimeZone: "Europe/Stockholm", KIDAlgorithm: "MOD10"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		a, err := autogiro.CreateAccount(ctx, s, autogiro.AutogiroAccount{OrganizationID: o.ID, BankgiroCustomerNumber: "543210",
			BankgiroNumber: "9912346", Name: "Autogiro"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := s.CreateSubscriber(ctx, store.Subscriber{SubscriberNumber: 4200, Name: "Payer"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		m, err := autogiro.CreateMandate(ctx, s, autogiro.AutogiroMandate{AccountID: a.ID, SubscriberID: sub.ID, ClearingNumber: "3300",
			BankAccountNumber: "1212121212", PayerID: "191212121212"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		pay := func(ref string) string {
			tr, err := autogiro.CreateTransaction(ctx, s, autogiro.AutogiroTransaction{MandateID: m.ID, Kind: autogiro.AutogiroDebit,
				AmountMinor: 100, PaymentDate: "2026-03-02", Reference: ref}, t0)
			if err != nil {
				t.Fatal(err)
			}
			return tr.ID
		}
		sent, waiting, file := pay("SENT"), pay("WAITING"), store.NewID()
		err = s.RedoMigration(context.Background(), 43, func() error {
			_, err := s.DB().Exec(`UPDATE autogiro_transactions SET status = 'Sent', sent_file_id = $3, sent_on = '2026-02-01'
				WHERE tenant_id = $1 AND id = $2`, tenant, sent, file)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if tr, err := autogiro.Transaction(ctx, s, sent); err != nil || tr.Status != autogiro.AutogiroSent || tr.SentFileID == nil || *tr.SentFileID != file {
			t.Fatalf("sent before the migration: %+v %v", tr, err)
		}
		var on string
		if err := s.DB().QueryRow(`SELECT sent_on FROM autogiro_sent_payments WHERE tenant_id = $1 AND transaction_id = $2`,
			tenant, sent).Scan(&on); err != nil || on != "2026-02-01" {
			t.Fatalf("sent on %q: %v", on, err)
		}
		if tr, err := autogiro.Transaction(ctx, s, waiting); err != nil || tr.Status != autogiro.AutogiroCreated || tr.SentFileID != nil {
			t.Fatalf("not sent: %+v %v", tr, err)
		}
		if err := autogiro.CancelTransaction(ctx, s, sent, t0); err != nil {
			t.Fatal(err)
		}
		if tr, err := autogiro.Transaction(ctx, s, sent); err != nil || tr.Status != autogiro.AutogiroCancelled || !tr.CancelPending {
			t.Fatalf("cancelled after the migration: %+v %v", tr, err)
		}
	})
}
