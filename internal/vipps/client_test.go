package vipps_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/vipps"
	"github.com/kadens/kadens/internal/vipps/vippstest"
)

func testClient(srv *vippstest.Server) *vipps.Client {
	return vipps.NewClient(vipps.Credentials{
		ClientID: srv.ClientID, ClientSecret: srv.ClientSecret, SubscriptionKey: srv.SubscriptionKey,
		MerchantSerialNumber: srv.MerchantSerialNumber, BaseURL: srv.URL,
	}, egress.Policy{Private: true}.Client(10*time.Second))
}

func draft() vipps.DraftAgreement {
	return vipps.DraftAgreement{
		Pricing:              vipps.Pricing{Type: "LEGACY", Amount: 29900, Currency: "NOK"},
		Interval:             vipps.Interval{Unit: "MONTH", Count: 1},
		MerchantAgreementURL: "https://kadens.example/my/", MerchantRedirectURL: "https://kadens.example/vipps/return",
		ProductName: "Avisa Digital", PhoneNumber: "4791234567",
	}
}

// TestClientLifecycle runs every call Kadens makes against the test
// server, which validates each request against the published document
// and fails the test for any that does not.
func TestClientLifecycle(t *testing.T) {
	t.Parallel()
	srv := vippstest.New(t)
	c := testClient(srv)
	ctx := context.Background()
	today := time.Now().UTC()

	d := draft()
	d.InitialCharge = &vipps.InitialCharge{Amount: 29900, Description: "First month", TransactionType: "DIRECT_CAPTURE", OrderID: "k-initial-1"}
	d.Campaign = &vipps.Campaign{Type: "PERIOD_CAMPAIGN", Price: 100, Period: &vipps.Interval{Unit: "MONTH", Count: 3}}
	dr, err := c.DraftAgreement(ctx, "draft-1", d)
	if err != nil {
		t.Fatal(err)
	}
	if dr.AgreementID == "" || dr.ConfirmationURL == "" || dr.ChargeID != "k-initial-1" {
		t.Fatalf("draft answer %+v", dr)
	}
	again, err := c.DraftAgreement(ctx, "draft-1", d)
	if err != nil || again.AgreementID != dr.AgreementID {
		t.Fatalf("a repeated Idempotency-Key drafted %+v (%v), want %s again", again, err, dr.AgreementID)
	}
	if a, err := c.Agreement(ctx, dr.AgreementID); err != nil || a.Status != "PENDING" {
		t.Fatalf("fresh agreement %+v, %v", a, err)
	}
	if _, err := c.CreateCharge(ctx, dr.AgreementID, "early", vipps.ChargeRequest{Amount: 29900, TransactionType: "DIRECT_CAPTURE",
		Description: "x", Due: today.AddDate(0, 0, 2).Format(time.DateOnly), RetryDays: 3}); !vipps.Permanent(err) {
		t.Fatalf("charge on a pending agreement: %v, want a refusal", err)
	}
	if err := c.ForceAccept(ctx, dr.AgreementID, "accept-1", "4791234567"); err != nil {
		t.Fatal(err)
	}
	a, err := c.Agreement(ctx, dr.AgreementID)
	if err != nil || a.Status != "ACTIVE" || a.Pricing.Amount != 29900 || a.Interval.Unit != "MONTH" {
		t.Fatalf("approved agreement %+v, %v", a, err)
	}
	if ic, err := c.Charge(ctx, dr.AgreementID, dr.ChargeID); err != nil || ic.Status != "CHARGED" || ic.Type != "INITIAL" {
		t.Fatalf("initial charge %+v, %v", ic, err)
	}

	req := vipps.ChargeRequest{Amount: 29900, TransactionType: "DIRECT_CAPTURE", Description: "Avisa Digital, February",
		Due: today.AddDate(0, 0, 2).Format(time.DateOnly), RetryDays: 5, OrderID: "k-inv-1"}
	id, err := c.CreateCharge(ctx, dr.AgreementID, "inv-1", req)
	if err != nil {
		t.Fatal(err)
	}
	if id2, err := c.CreateCharge(ctx, dr.AgreementID, "inv-1", req); err != nil || id2 != id {
		t.Fatalf("retried charge: %q, %v; want %q once", id2, err, id)
	}
	if _, err := c.CreateCharge(ctx, dr.AgreementID, "inv-1-other-key", req); !vipps.IsStatus(err, http.StatusConflict) {
		t.Fatalf("same orderId under a new key: %v, want 409", err)
	}
	if got := srv.Charges(dr.AgreementID); len(got) != 2 {
		t.Fatalf("%d charges, want the initial and one recurring", len(got))
	}
	if err := srv.SettleCharge(id, true); err != nil {
		t.Fatal(err)
	}
	if err := c.RefundCharge(ctx, dr.AgreementID, id, "refund-1", 10000, "Credit note 1"); err != nil {
		t.Fatal(err)
	}
	if ch, err := c.Charge(ctx, dr.AgreementID, id); err != nil || ch.Status != "PARTIALLY_REFUNDED" || ch.Summary.Refunded != 10000 {
		t.Fatalf("partly refunded charge %+v, %v", ch, err)
	}
	if err := c.RefundCharge(ctx, dr.AgreementID, id, "refund-2", 19901, "too much"); !vipps.Permanent(err) {
		t.Fatalf("refund beyond the charge: %v, want a refusal", err)
	}
	if err := c.RefundCharge(ctx, dr.AgreementID, id, "refund-3", 19900, "Credit note 2"); err != nil {
		t.Fatal(err)
	}

	id3, err := c.CreateCharge(ctx, dr.AgreementID, "inv-2", vipps.ChargeRequest{Amount: 29900, TransactionType: "DIRECT_CAPTURE",
		Description: "March", Due: today.AddDate(0, 1, 0).Format(time.DateOnly), RetryDays: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CancelCharge(ctx, dr.AgreementID, id3, "cancel-inv-2"); err != nil {
		t.Fatal(err)
	}
	list, err := c.Charges(ctx, dr.AgreementID)
	if err != nil || len(list) != 3 || list[1].Status != "REFUNDED" || list[2].Status != "CANCELLED" {
		t.Fatalf("charges %+v, %v", list, err)
	}
	if err := c.UpdatePrice(ctx, dr.AgreementID, "price-1", 34900); err != nil {
		t.Fatal(err)
	}
	if err := c.StopAgreement(ctx, dr.AgreementID, "stop-1"); err != nil {
		t.Fatal(err)
	}
	if a, err := c.Agreement(ctx, dr.AgreementID); err != nil || a.Status != "STOPPED" || a.Pricing.Amount != 34900 {
		t.Fatalf("stopped agreement %+v, %v", a, err)
	}
	if n := srv.TokenCalls(); n != 1 {
		t.Errorf("%d access tokens fetched, want 1 (cached until expiry)", n)
	}
}

// TestClientTokenRenewal: a revoked token (401) is replaced once, and a
// token near its expiry is renewed before use.
func TestClientTokenRenewal(t *testing.T) {
	t.Parallel()
	srv := vippstest.New(t)
	srv.TokenTTL = 2 * time.Minute
	c := testClient(srv)
	ctx := context.Background()
	dr, err := c.DraftAgreement(ctx, "d", draft())
	if err != nil {
		t.Fatal(err)
	}
	srv.RevokeTokens()
	if _, err := c.Agreement(ctx, dr.AgreementID); err != nil {
		t.Fatalf("after a revoked token: %v", err)
	}
	if n := srv.TokenCalls(); n != 2 {
		t.Fatalf("%d tokens, want 2", n)
	}
	vipps.SetClientClock(c, func() time.Time { return time.Now().Add(90 * time.Second) })
	if _, err := c.Agreement(ctx, dr.AgreementID); err != nil {
		t.Fatal(err)
	}
	if n := srv.TokenCalls(); n != 3 {
		t.Fatalf("%d tokens, want 3: a token within a minute of expiry is renewed", n)
	}
	bad := vipps.NewClient(vipps.Credentials{ClientID: srv.ClientID, ClientSecret: "wrong", SubscriptionKey: srv.SubscriptionKey,
		MerchantSerialNumber: srv.MerchantSerialNumber, BaseURL: srv.URL}, egress.Policy{Private: true}.Client(5*time.Second))
	if _, err := bad.Agreement(ctx, dr.AgreementID); !vipps.IsStatus(err, http.StatusUnauthorized) {
		t.Fatalf("wrong secret: %v, want 401", err)
	}
}

// TestServerValidatesRequests: a request the document does not allow is
// refused by the test server and reported (here collected on purpose).
func TestServerValidatesRequests(t *testing.T) {
	t.Parallel()
	srv := vippstest.New(t)
	c := testClient(srv)
	ctx := context.Background()
	cases := map[string]vipps.DraftAgreement{}
	d := draft()
	d.ProductName = "a name far longer than the forty-five characters Vipps allows"
	cases["productName too long"] = d
	d = draft()
	d.Pricing.Amount = 99
	cases["amount below 100 øre"] = d
	d = draft()
	d.Interval = vipps.Interval{Unit: "FORTNIGHT", Count: 1}
	cases["unknown interval unit"] = d
	d = draft()
	d.Pricing.Currency = "SEK"
	cases["currency not NOK"] = d
	for name, d := range cases {
		if _, err := c.DraftAgreement(ctx, "k-"+name[:4], d); !vipps.IsStatus(err, http.StatusBadRequest) {
			t.Errorf("%s: %v, want 400", name, err)
		}
		if got := srv.Invalid(); len(got) != 1 {
			t.Errorf("%s: %d validation reports, want 1: %v", name, len(got), got)
		}
	}
	// A missing Idempotency-Key (required by the document).
	if _, err := c.DraftAgreement(ctx, "", draft()); !vipps.IsStatus(err, http.StatusBadRequest) {
		t.Errorf("no Idempotency-Key: %v, want 400", err)
	}
	if got := srv.Invalid(); len(got) != 1 {
		t.Errorf("no Idempotency-Key: %d reports, want 1", len(got))
	}
}

// TestClientEgress: the client's connections pass the egress guard; the
// zero policy refuses the loopback test server.
func TestClientEgress(t *testing.T) {
	t.Parallel()
	srv := vippstest.New(t)
	c := vipps.NewClient(vipps.Credentials{BaseURL: srv.URL}, egress.Policy{}.Client(5*time.Second))
	_, err := c.Agreement(context.Background(), "agr_1")
	if !errors.Is(err, egress.ErrRefused) {
		t.Fatalf("loopback without --egress-allow-private: %v, want egress.ErrRefused", err)
	}
}
