package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// agreementFixture: seed's parties of one tenant (a seller and two
// subscribers), with the writer that made them for the agreements.
type agreementFixture struct {
	s   *store.Store
	ctx context.Context
	sd  *seed.Store
	seed.Parties
}

func newAgreementFixture(t *testing.T, s *store.Store, ctx context.Context) agreementFixture {
	t.Helper()
	sd := seed.NewStore(t, s, ctx, catalogNow)
	return agreementFixture{s: s, ctx: ctx, sd: sd, Parties: sd.Parties()}
}

// periods writes a linked series of monthly periods of sub using
// agreement, starting at start, and returns them as stored.
func (f agreementFixture) periods(t *testing.T, sub, agreement string, start time.Time, n int) []store.Subscription {
	t.Helper()
	out := make([]store.Subscription, n)
	for i := range out {
		p := store.Subscription{ID: store.NewID(), SubscriberID: sub, OrganizationID: f.Org.ID, PaymentAgreementID: &agreement,
			Currency: "NOK", Package: catalog.SubscriptionPackage{Name: "Digital"}, TimeZone: "Europe/Oslo", StepPeriod: 1,
			Anchor: start, PeriodIndex: i, PeriodStart: start.AddDate(0, i, 0), PeriodEnd: start.AddDate(0, i+1, 0), CreatedAt: catalogNow}
		if i > 0 {
			p.PreviousID = &out[i-1].ID
		}
		out[i] = p
	}
	for i := range out {
		if i+1 < n {
			out[i].NextID = &out[i+1].ID
		}
	}
	if err := f.s.InTx(f.ctx, func(tx *store.Tx) error {
		for _, p := range out {
			next := p.NextID
			p.NextID = nil // the successor does not exist yet
			if err := tx.InsertSubscription(f.ctx, p); err != nil {
				return err
			}
			p.NextID, p.Version = next, 1
			if next != nil {
				if err := tx.UpdateSubscription(f.ctx, p); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return f.reread(t, out)
}

func (f agreementFixture) reread(t *testing.T, subs []store.Subscription) []store.Subscription {
	t.Helper()
	out := make([]store.Subscription, len(subs))
	for i, p := range subs {
		var err error
		if out[i], err = f.s.Subscription(f.ctx, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func (f agreementFixture) events(t *testing.T, kind string) []store.Event {
	t.Helper()
	evs, _, err := f.s.ListEvents(f.ctx, store.EventFilter{EventType: kind}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestPaymentAgreementCreateReadList(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		other := catalogTenant(t, s, "b")
		f := newAgreementFixture(t, s, ctx)

		ehf := f.sd.Agreement(f.Sub.ID, store.ProviderEHF, "923609016", store.MethodEInvoice)
		got, err := s.PaymentAgreement(ctx, ehf.ID)
		if err != nil || got.ProviderAgreementReference != "923609016" || got.SubscriberID != f.Sub.ID || got.DeletedAt != nil ||
			!got.CreatedAt.Equal(catalogNow.Truncate(time.Microsecond)) {
			t.Fatalf("read back %+v, %v", got, err)
		}
		if _, err := s.PaymentAgreement(other, ehf.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant reads it: %v", err)
		}

		// One live Invoice agreement per subscriber: asking again returns it.
		inv := f.sd.Agreement(f.Sub.ID, store.ProviderInvoice, "", store.MethodBankTransfer)
		again, created, err := s.CreatePaymentAgreement(ctx, store.PaymentAgreement{SubscriberID: f.Sub.ID, ProviderType: store.ProviderInvoice,
			PaymentMethod: store.MethodBankTransfer}, catalogNow)
		if err != nil || created || again.ID != inv.ID {
			t.Fatalf("second Invoice agreement: %+v created %t, %v", again, created, err)
		}
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			a, err := tx.InvoiceAgreement(ctx, f.Sub.ID, catalogNow)
			if err == nil && a.ID != inv.ID {
				t.Errorf("InvoiceAgreement %s, want %s", a.ID, inv.ID)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}

		// External references are unique among the tenant's live External
		// agreements, and free again once deleted; other tenants don't count.
		ext := f.sd.Agreement(f.Sub.ID, store.ProviderExternal, "psp-1", "Card")
		if _, _, err := s.CreatePaymentAgreement(ctx, store.PaymentAgreement{SubscriberID: f.Sub2.ID, ProviderType: store.ProviderExternal,
			ProviderAgreementReference: "psp-1", PaymentMethod: "Card"}, catalogNow); !errors.Is(err, store.ErrAgreementReferenceTaken) {
			t.Fatalf("duplicate External reference: %v", err)
		}
		otherSub, err := s.CreateSubscriber(other, store.Subscriber{Name: "B"}, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CreatePaymentAgreement(other, store.PaymentAgreement{SubscriberID: otherSub.ID, ProviderType: store.ProviderExternal,
			ProviderAgreementReference: "psp-1", PaymentMethod: "Card"}, catalogNow); err != nil {
			t.Fatalf("same reference in another tenant: %v", err)
		}
		// A subscriber of another tenant is not found.
		if _, _, err := s.CreatePaymentAgreement(ctx, store.PaymentAgreement{SubscriberID: otherSub.ID, ProviderType: store.ProviderEHF,
			ProviderAgreementReference: "923609016", PaymentMethod: store.MethodEInvoice}, catalogNow); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant's subscriber: %v", err)
		}

		list := func(f store.AgreementFilter) []string {
			t.Helper()
			got, _, err := s.ListPaymentAgreements(ctx, f, store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, a := range got {
				ids = append(ids, a.ID)
			}
			return ids
		}
		if got := list(store.AgreementFilter{}); !slices.Equal(got, []string{ehf.ID, inv.ID, ext.ID}) {
			t.Fatalf("all: %v", got)
		}
		if got := list(store.AgreementFilter{SubscriberID: f.Sub.ID, ProviderType: store.ProviderExternal}); !slices.Equal(got, []string{ext.ID}) {
			t.Fatalf("External of sub: %v", got)
		}
		if got := list(store.AgreementFilter{SubscriberID: f.Sub2.ID}); len(got) != 0 {
			t.Fatalf("sub2: %v", got)
		}
		if del, err := s.DeletePaymentAgreement(ctx, ext.ID, catalogNow); err != nil || !del.Deleted {
			t.Fatalf("delete: %+v, %v", del, err)
		}
		if got := list(store.AgreementFilter{}); !slices.Equal(got, []string{ehf.ID, inv.ID}) {
			t.Fatalf("live after delete: %v", got)
		}
		if got := list(store.AgreementFilter{IncludeDeleted: true, Reference: "psp-1"}); !slices.Equal(got, []string{ext.ID}) {
			t.Fatalf("with deleted: %v", got)
		}
		f.sd.Agreement(f.Sub2.ID, store.ProviderExternal, "psp-1", "Card")

		// Every creation recorded PaymentAgreementCreated with light data.
		evs := f.events(t, store.EventPaymentAgreementCreated)
		if len(evs) != 4 || evs[0].Subject != "/paymentagreement/"+ehf.ID ||
			string(evs[0].Data) != `{"paymentAgreementId":"`+ehf.ID+`","providerType":"EHF","subscriberId":"`+f.Sub.ID+`"}` {
			t.Fatalf("created events: %d %+v", len(evs), evs)
		}
	})
}

func TestDeletePaymentAgreementFallsBackToInvoice(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newAgreementFixture(t, s, ctx)
		ehf := f.sd.Agreement(f.Sub.ID, store.ProviderEHF, "923609016", store.MethodEInvoice)
		now := time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC)
		// Feb and Mar have ended, Apr runs, May was created ahead.
		subs := f.periods(t, f.Sub.ID, ehf.ID, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), 4)
		// A separate period cancelled before it started is not moved.
		cancelled := f.periods(t, f.Sub.ID, ehf.ID, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), 1)[0]
		cancelled.DeactivatedAt, cancelled.CancelledAt, cancelled.CancelEffectiveAt = &now, &now, &now
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSubscription(ctx, cancelled) }); err != nil {
			t.Fatal(err)
		}

		del, err := s.DeletePaymentAgreement(ctx, ehf.ID, now)
		if err != nil || !del.Deleted || del.FallbackID == "" || !slices.Equal(del.Moved, []string{subs[2].ID, subs[3].ID}) {
			t.Fatalf("delete: %+v, %v", del, err)
		}
		inv, err := s.PaymentAgreement(ctx, del.FallbackID)
		if err != nil || inv.ProviderType != store.ProviderInvoice || inv.SubscriberID != f.Sub.ID || inv.PaymentMethod != store.MethodBankTransfer {
			t.Fatalf("fallback %+v, %v", inv, err)
		}
		after := f.reread(t, subs)
		for i, p := range after {
			want, version := ehf.ID, subs[i].Version
			if i >= 2 {
				want, version = inv.ID, version+1 // moved, and the engine's optimistic lock sees it
			}
			if *p.PaymentAgreementID != want || p.Version != version {
				t.Errorf("period %d: agreement %s version %d, want %s %d", i, *p.PaymentAgreementID, p.Version, want, version)
			}
		}
		if c, _ := s.Subscription(ctx, cancelled.ID); *c.PaymentAgreementID != ehf.ID {
			t.Errorf("cancelled period moved")
		}
		a, _ := s.PaymentAgreement(ctx, ehf.ID)
		if a.DeletedAt == nil || !a.DeletedAt.Equal(now) {
			t.Fatalf("deletedAt %v", a.DeletedAt)
		}
		evs := f.events(t, store.EventPaymentAgreementDeleted)
		if len(evs) != 1 || evs[0].Subject != "/paymentagreement/"+ehf.ID || !evs[0].EventTime.Equal(now) {
			t.Fatalf("deleted events %+v", evs)
		}
		if len(f.events(t, store.EventPaymentAgreementCreated)) != 2 {
			t.Fatal("the fallback Invoice agreement's creation was not recorded")
		}

		// Deleting again changes nothing.
		if del, err := s.DeletePaymentAgreement(ctx, ehf.ID, now.Add(time.Hour)); err != nil || del.Deleted {
			t.Fatalf("second delete: %+v, %v", del, err)
		}
		if len(f.events(t, store.EventPaymentAgreementDeleted)) != 1 {
			t.Fatal("second delete recorded an event")
		}
		// The Invoice agreement is in use, so it stays.
		_, err = s.DeletePaymentAgreement(ctx, inv.ID, now)
		var inUse *store.InUseError
		if !errors.As(err, &inUse) || !slices.Equal(inUse.IDs, []string{subs[2].ID, subs[3].ID}) {
			t.Fatalf("delete Invoice in use: %v", err)
		}
		if a, _ := s.PaymentAgreement(ctx, inv.ID); a.DeletedAt != nil {
			t.Fatal("refused delete marked it deleted")
		}
		// Once nothing unended uses it, it can go.
		if del, err := s.DeletePaymentAgreement(ctx, inv.ID, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)); err != nil || !del.Deleted {
			t.Fatalf("delete unused Invoice: %+v, %v", del, err)
		}
		if _, err := s.DeletePaymentAgreement(ctx, store.NewID(), now); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing: %v", err)
		}
	})
}

func TestChangePaymentAgreementOfSubscription(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		other := catalogTenant(t, s, "b")
		f := newAgreementFixture(t, s, ctx)
		var inv store.PaymentAgreement
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			var err error
			inv, err = tx.InvoiceAgreement(ctx, f.Sub.ID, catalogNow)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		subs := f.periods(t, f.Sub.ID, inv.ID, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), 3)
		ehf := f.sd.Agreement(f.Sub.ID, store.ProviderEHF, "923609016", store.MethodEInvoice)
		foreign := f.sd.Agreement(f.Sub2.ID, store.ProviderEHF, "984851006", store.MethodEInvoice)
		now := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC) // in the second period; the third is ahead

		// Named by its first (ended) period, the subscription's unended
		// periods change.
		changed, err := s.ChangePaymentAgreement(ctx, subs[0].ID, ehf.ID, now)
		if err != nil || !slices.Equal(changed, []string{subs[1].ID, subs[2].ID}) {
			t.Fatalf("change: %v, %v", changed, err)
		}
		after := f.reread(t, subs)
		if *after[0].PaymentAgreementID != inv.ID || after[0].Version != subs[0].Version {
			t.Errorf("ended period changed: %+v", after[0])
		}
		for i, p := range after[1:] {
			if *p.PaymentAgreementID != ehf.ID || p.Version != subs[i+1].Version+1 {
				t.Errorf("period %s: agreement %s version %d", p.ID, *p.PaymentAgreementID, p.Version)
			}
		}
		if changed, err := s.ChangePaymentAgreement(ctx, subs[1].ID, ehf.ID, now); err != nil || len(changed) != 0 {
			t.Fatalf("same agreement again: %v, %v", changed, err)
		}
		for name, id := range map[string]string{"another subscriber's": foreign.ID, "missing": store.NewID(), "not an id": "x"} {
			if _, err := s.ChangePaymentAgreement(ctx, subs[1].ID, id, now); !errors.Is(err, store.ErrAgreementNotUsable) {
				t.Errorf("%s agreement: %v", name, err)
			}
		}
		if _, err := s.DeletePaymentAgreement(ctx, ehf.ID, now); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ChangePaymentAgreement(ctx, subs[1].ID, ehf.ID, now); !errors.Is(err, store.ErrAgreementNotUsable) {
			t.Errorf("deleted agreement: %v", err)
		}
		if _, err := s.ChangePaymentAgreement(ctx, subs[1].ID, inv.ID, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)); !errors.Is(err, store.ErrSubscriptionEnded) {
			t.Errorf("ended subscription: %v", err)
		}
		if _, err := s.ChangePaymentAgreement(other, subs[1].ID, inv.ID, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's subscription: %v", err)
		}
	})
}

func TestImportPaymentAgreements(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := catalogTenant(t, s, "a")
		f := newAgreementFixture(t, s, ctx)
		existing := f.sd.Agreement(f.Sub.ID, store.ProviderEHF, "923609016", store.MethodEInvoice)
		row := func(sub, typ, ref string) store.ImportRow {
			return store.ImportRow{Agreement: store.PaymentAgreement{SubscriberID: sub, ProviderType: typ, ProviderAgreementReference: ref, PaymentMethod: "m"}}
		}
		rows := []store.ImportRow{
			row(f.Sub.ID, store.ProviderEHF, "923609016"),     // 0 exists: Skipped
			row(f.Sub.ID, store.ProviderExternal, "psp-1"),    // 1 Created
			row(f.Sub2.ID, store.ProviderExternal, "psp-1"),   // 2 another subscriber holds it: Rejected
			row(f.Sub.ID, store.ProviderExternal, "psp-1"),    // 3 row 1 created it: Skipped
			row(store.NewID(), store.ProviderOIO, "24256790"), // 4 no such subscriber: Rejected
			{Rejected: true}, // 5 the caller rejected it
			row(f.Sub2.ID, store.ProviderInvoice, ""),     // 6 Created
			row(f.Sub2.ID, store.ProviderOIO, "24256790"), // 7 Created
		}
		out, err := s.ImportPaymentAgreements(ctx, rows, catalogNow)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{store.ImportSkipped, store.ImportCreated, store.ImportRejected, store.ImportSkipped, store.ImportRejected, "",
			store.ImportCreated, store.ImportCreated}
		for i, o := range out {
			if o.Status != want[i] {
				t.Errorf("row %d: %+v, want %s", i, o, want[i])
			}
		}
		if out[0].ID != existing.ID || out[3].ID != out[1].ID || out[2].Field != "providerAgreementReference" || out[4].Field != "subscriberId" {
			t.Fatalf("outcomes %+v", out)
		}
		if n := len(f.events(t, store.EventPaymentAgreementCreated)); n != 4 {
			t.Fatalf("%d created events, want 1 + 3", n)
		}
		// Again: nothing new, the same ids.
		again, err := s.ImportPaymentAgreements(ctx, rows, catalogNow.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range again {
			if want[i] == store.ImportCreated && (o.Status != store.ImportSkipped || o.ID != out[i].ID) {
				t.Errorf("rerun row %d: %+v, want Skipped %s", i, o, out[i].ID)
			}
		}
		if n := len(f.events(t, store.EventPaymentAgreementCreated)); n != 4 {
			t.Fatalf("%d created events after the rerun", n)
		}
	})
}
