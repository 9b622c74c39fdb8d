package vipps_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/vipps"
	"github.com/kadens/kadens/internal/vipps/vippstest"
)

var t0 = time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)

func masterKey(t *testing.T) []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// fixture is one tenant with a Vipps merchant at a test server.
type fixture struct {
	st   *store.Store
	srv  *vippstest.Server
	wing *vipps.Wing
	ctx  context.Context
	tn   string
	sub  string
}

func newFixture(t *testing.T, st *store.Store, srv *vippstest.Server, wing *vipps.Wing, name string) *fixture {
	t.Helper()
	tn, err := st.CreateTenant(context.Background(), name, true, t0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := tenancy.With(context.Background(), tn.ID)
	sc, err := st.CreateSubscriber(ctx, store.Subscriber{Name: "Kari Nordmann", Country: "NO", Contacts: []store.Contact{}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, srv: srv, wing: wing, ctx: ctx, tn: tn.ID, sub: sc.ID}
	if srv != nil {
		if _, err := wing.SetMerchant(ctx, merchantInput(srv), t0); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func merchantInput(srv *vippstest.Server) vipps.VippsMerchantInput {
	return vipps.VippsMerchantInput{ClientID: srv.ClientID, ClientSecret: srv.ClientSecret, SubscriptionKey: srv.SubscriptionKey,
		MerchantSerialNumber: srv.MerchantSerialNumber, Mode: "test", BaseURL: srv.URL, ProductName: "Nordavis Digital",
		MerchantAgreementURL: "https://nordavis.example/my/", MerchantRedirectURL: "https://nordavis.example/vipps/back",
		MaxAmount: 50000}
}

// create checks and creates a Vipps payment agreement with reference and
// runs its AgreementCreated hook, as the outbox consumer would.
func (f *fixture) create(t *testing.T, reference string) store.PaymentAgreement {
	t.Helper()
	a := provider.Agreement{Reference: reference}
	if err := f.wing.Check(f.ctx, &a); err != nil {
		t.Fatal(err)
	}
	pa, _, err := f.st.CreatePaymentAgreement(f.ctx, store.PaymentAgreement{SubscriberID: f.sub, ProviderType: store.ProviderVipps,
		ProviderAgreementReference: a.Reference, PaymentMethod: a.PaymentMethod}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.wing.AgreementCreated(f.ctx, provider.AgreementRef{TenantID: f.tn, AgreementID: pa.ID, SubscriberID: f.sub, Now: t0}); err != nil {
		t.Fatal(err)
	}
	return pa
}

func (f *fixture) record(t *testing.T, id string) vipps.VippsAgreement {
	t.Helper()
	rec, err := vipps.AgreementOf(f.ctx, f.st, f.tn, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func (f *fixture) deleted(t *testing.T, id string) bool {
	t.Helper()
	pa, err := f.st.PaymentAgreement(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return pa.DeletedAt != nil
}

func (f *fixture) events(t *testing.T, kind, id string) int {
	t.Helper()
	evs, _, err := f.st.ListEvents(f.ctx, store.EventFilter{EventType: kind, Subject: "/paymentagreement/" + id}, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// TestTransition covers every cell of the agreement's states × events
// table in docs/VIPPS.md.
func TestTransition(t *testing.T) {
	t.Parallel()
	type cell struct {
		to    string
		ended bool
	}
	S := func(to string) cell { return cell{to, false} }
	E := func(to string) cell { return cell{to, true} }
	// rows: from; columns: observed PENDING, ACTIVE, STOPPED, EXPIRED.
	table := map[string][4]cell{
		vipps.StatusNew:     {S("PENDING"), S("ACTIVE"), E("STOPPED"), E("EXPIRED")},
		vipps.StatusPending: {S("PENDING"), S("ACTIVE"), E("STOPPED"), E("EXPIRED")},
		vipps.StatusActive:  {S("ACTIVE"), S("ACTIVE"), E("STOPPED"), E("EXPIRED")},
		vipps.StatusStopped: {S("STOPPED"), S("STOPPED"), S("STOPPED"), S("STOPPED")},
		vipps.StatusExpired: {S("EXPIRED"), S("EXPIRED"), S("EXPIRED"), S("EXPIRED")},
	}
	for from, row := range table {
		for i, observed := range []string{"PENDING", "ACTIVE", "STOPPED", "EXPIRED"} {
			to, ended := vipps.Transition(from, observed)
			if (cell{to, ended}) != row[i] {
				t.Errorf("%s + %s = %s (ended %v), want %+v", from, observed, to, ended, row[i])
			}
		}
	}
}

func TestAgreements(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		srv := vippstest.New(t)
		wing := vipps.New(st, masterKey(t), egress.Policy{Private: true})
		f := newFixture(t, st, srv, wing, "nordavis")
		other := newFixture(t, st, nil, wing, "other")

		t.Run("draft, approve, stop in Vipps", func(t *testing.T) {
			pa := f.create(t, "")
			if !strings.HasPrefix(pa.ProviderAgreementReference, "kvp-") || pa.PaymentMethod != "Vipps" {
				t.Fatalf("agreement %+v", pa)
			}
			rec := f.record(t, pa.ID)
			if rec.Status != vipps.StatusPending || rec.VippsAgreementID == "" || rec.ConfirmationURL == "" {
				t.Fatalf("after the draft: %+v", rec)
			}
			va, _ := srv.Agreement(rec.VippsAgreementID)
			if va.PricingType != "VARIABLE" || va.SuggestedMaxAmount != 50000 || va.IntervalUnit != "MONTH" || va.ExternalID != pa.ID {
				t.Fatalf("drafted at Vipps: %+v", va)
			}
			// The hook delivered again drafts nothing more.
			if err := wing.AgreementCreated(f.ctx, provider.AgreementRef{TenantID: f.tn, AgreementID: pa.ID, Now: t0}); err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Charges("")); n != 0 {
				t.Fatalf("%d charges", n)
			}
			if again := f.record(t, pa.ID); again.VippsAgreementID != rec.VippsAgreementID {
				t.Fatalf("redrafted: %s, was %s", again.VippsAgreementID, rec.VippsAgreementID)
			}
			if err := srv.Approve(rec.VippsAgreementID, 0); err != nil {
				t.Fatal(err)
			}
			if err := wing.PollAll(f.ctx, func(string) time.Time { return t0 }); err != nil {
				t.Fatal(err)
			}
			if got := f.record(t, pa.ID).Status; got != vipps.StatusActive {
				t.Fatalf("after approval and a poll: %s", got)
			}
			if err := srv.Stop(rec.VippsAgreementID); err != nil {
				t.Fatal(err)
			}
			// The same poll twice (a replay) ends in the same state, with one
			// PaymentAgreementDeleted.
			for range 2 {
				if err := wing.Sync(f.ctx, f.tn, pa.ID, t0); err != nil {
					t.Fatal(err)
				}
			}
			if got := f.record(t, pa.ID).Status; got != vipps.StatusStopped || !f.deleted(t, pa.ID) {
				t.Fatalf("after the stop in Vipps: %s, deleted %v", got, f.deleted(t, pa.ID))
			}
			if n := f.events(t, store.EventPaymentAgreementDeleted, pa.ID); n != 1 {
				t.Fatalf("%d PaymentAgreementDeleted, want 1", n)
			}
		})

		t.Run("deleting the payment agreement stops the Vipps agreement", func(t *testing.T) {
			pa := f.create(t, "")
			rec := f.record(t, pa.ID)
			if err := srv.Approve(rec.VippsAgreementID, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := st.DeletePaymentAgreement(f.ctx, pa.ID, t0); err != nil {
				t.Fatal(err)
			}
			for range 2 { // the hook is delivered at least once
				if err := wing.AgreementDeleted(f.ctx, provider.AgreementRef{TenantID: f.tn, AgreementID: pa.ID, Now: t0}); err != nil {
					t.Fatal(err)
				}
			}
			if va, _ := srv.Agreement(rec.VippsAgreementID); va.Status != vippstest.AgreementStopped {
				t.Fatalf("at Vipps: %s", va.Status)
			}
			if got := f.record(t, pa.ID).Status; got != vipps.StatusStopped {
				t.Fatalf("recorded %s", got)
			}
			if n := f.events(t, store.EventPaymentAgreementDeleted, pa.ID); n != 1 {
				t.Fatalf("%d PaymentAgreementDeleted, want 1", n)
			}
		})

		t.Run("an unapproved draft expires", func(t *testing.T) {
			pa := f.create(t, "")
			rec := f.record(t, pa.ID)
			if err := srv.Expire(rec.VippsAgreementID); err != nil {
				t.Fatal(err)
			}
			if err := wing.PollAll(context.Background(), func(string) time.Time { return t0 }); err != nil {
				t.Fatal(err)
			}
			if got := f.record(t, pa.ID).Status; got != vipps.StatusExpired || !f.deleted(t, pa.ID) {
				t.Fatalf("expired draft: %s", got)
			}
		})

		t.Run("import", func(t *testing.T) {
			// An agreement made by another system at the same merchant.
			c := testClient(srv)
			d, err := c.DraftAgreement(context.Background(), "legacy-system-1", draft())
			if err != nil {
				t.Fatal(err)
			}
			a := provider.Agreement{Reference: d.AgreementID}
			var verr validation.Errors
			if err := wing.Check(f.ctx, &a); !errors.As(err, &verr) || !strings.Contains(err.Error(), "PENDING") {
				t.Fatalf("a pending agreement imported: %v", err)
			}
			if err := srv.Approve(d.AgreementID, 0); err != nil {
				t.Fatal(err)
			}
			pa := f.create(t, d.AgreementID)
			if rec := f.record(t, pa.ID); rec.Status != vipps.StatusActive || rec.VippsAgreementID != d.AgreementID ||
				rec.PricingType != "LEGACY" || rec.Amount != 29900 {
				t.Fatalf("imported %+v", rec)
			}
			if n := len(srv.Charges("")); n != 0 {
				t.Fatalf("%d charges", n)
			}
			for ref, want := range map[string]string{"agr_nosuch": "no Vipps agreement", "bank-123": "leave it empty"} {
				a := provider.Agreement{Reference: ref}
				if err := wing.Check(f.ctx, &a); !errors.As(err, &verr) || !strings.Contains(err.Error(), want) ||
					verr[0].Field != provider.FieldReference {
					t.Errorf("reference %q: %v, want a 400 on %s saying %q", ref, err, provider.FieldReference, want)
				}
			}
			a = provider.Agreement{PaymentMethod: "Card"}
			if err := wing.Check(f.ctx, &a); !errors.As(err, &verr) || verr[0].Field != provider.FieldPaymentMethod {
				t.Errorf("method Card: %v", err)
			}
		})

		t.Run("tenants", func(t *testing.T) {
			a := provider.Agreement{}
			var verr validation.Errors
			if err := wing.Check(other.ctx, &a); !errors.As(err, &verr) || verr[0].Field != "providerType" {
				t.Fatalf("a tenant without a merchant: %v", err)
			}
			pa := f.create(t, "")
			if _, err := vipps.AgreementOf(other.ctx, st, other.tn, pa.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("another tenant read the agreement: %v", err)
			}
			if _, err := wing.GetMerchant(other.ctx); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("another tenant's merchant: %v", err)
			}
		})

		t.Run("merchant", func(t *testing.T) {
			m, err := wing.GetMerchant(f.ctx)
			if err != nil || m.ClientID != srv.ClientID || m.Mode != "test" || m.IntervalUnit != "MONTH" || m.IntervalCount != 1 {
				t.Fatalf("merchant %+v, %v", m, err)
			}
			var secret, key string
			if err := st.Writer().QueryRow(f.ctx, `SELECT client_secret_sealed, subscription_key_sealed FROM vipps_merchants WHERE tenant_id = $1`,
				f.tn).Scan(&secret, &key); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(secret, srv.ClientSecret) || strings.Contains(key, srv.SubscriptionKey) || strings.Count(secret, ".") != 4 {
				t.Fatalf("secrets not sealed: %q %q", secret, key)
			}
			// Another master key cannot open them.
			alien := vipps.New(st, masterKey(t), egress.Policy{Private: true})
			a := provider.Agreement{}
			if err := alien.Check(f.ctx, &a); err == nil || !strings.Contains(err.Error(), "master key") {
				t.Fatalf("opened with another master key: %v", err)
			}
			bad := vipps.VippsMerchantInput{Mode: "live", MerchantAgreementURL: "http://x.example", MaxAmount: 50, IntervalUnit: "FORTNIGHT",
				IntervalCount: 40, ProductName: strings.Repeat("x", 46)}
			err = func() error { _, err := wing.SetMerchant(f.ctx, bad, t0); return err }()
			var verr validation.Errors
			if !errors.As(err, &verr) {
				t.Fatalf("bad merchant: %v", err)
			}
			fields := map[string]bool{}
			for _, e := range verr {
				fields[e.Field] = true
			}
			for _, want := range []string{"clientId", "clientSecret", "subscriptionKey", "merchantSerialNumber", "mode", "productName",
				"merchantAgreementUrl", "merchantRedirectUrl", "maxAmount", "intervalUnit", "intervalCount"} {
				if !fields[want] {
					t.Errorf("no error on %s: %v", want, verr)
				}
			}
			in := merchantInput(srv)
			in.BaseURL = "http://127.0.0.1:1"
			strict := vipps.New(st, masterKey(t), egress.Policy{})
			if _, err := strict.SetMerchant(f.ctx, in, t0); !errors.As(err, &verr) || verr[0].Field != "baseUrl" {
				t.Fatalf("a loopback base URL without --egress-allow-private: %v", err)
			}
		})
	})
}
