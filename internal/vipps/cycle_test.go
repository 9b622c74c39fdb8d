package vipps_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/vipps"
	"github.com/kadens/kadens/internal/vipps/vippstest"
)

var loopback = map[string]string{"KADENS_EGRESS_ALLOW_PRIVATE": "true"}

type vcycle struct {
	t   *testing.T
	e   *apitest.Env
	tn  apitest.Tenant
	ctx context.Context
	srv *vippstest.Server
	p   provider.Provider
	sub string
	now time.Time
	org string
	pkg string
}

func (c *vcycle) create(path string, body any) string {
	c.t.Helper()
	return c.tn.Do("POST", path, body).ID(c.t)
}

func (c *vcycle) advance(to time.Time) {
	c.t.Helper()
	if r := c.tn.Do("POST", "/testclock/advance", map[string]any{"to": to.UTC().Format(time.RFC3339)}); r.Status != http.StatusOK {
		c.t.Fatalf("advance: %d %s", r.Status, r.Body)
	}
	c.now = to
	c.srv.SetNow(func() time.Time { return to })
}

func (c *vcycle) invoices() []store.Invoice {
	c.t.Helper()
	var out []store.Invoice
	c.tn.Do("GET", "/invoice?subscriberId="+c.sub+"&limit=1000", nil).JSON(c.t, &out)
	return out
}

// issue fires the collector hook for every invoice four times at once, as
// redelivered events and a concurrent run would (the outbox consumer runs
// it too): on PostgreSQL they race for real, and each invoice must still
// have one charge (asserted by the cycle).
func (c *vcycle) issue() {
	c.t.Helper()
	for _, inv := range c.invoices() {
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				errs <- c.p.InvoiceIssued(c.ctx, provider.Invoice{TenantID: c.tn.ID, InvoiceID: inv.ID, Now: c.now})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				c.t.Fatal(err)
			}
		}
	}
}

func (c *vcycle) poll() {
	c.t.Helper()
	if err := c.p.Poll.Run(c.ctx); err != nil {
		c.t.Fatal(err)
	}
}

func (c *vcycle) invoice(id string) store.Invoice {
	c.t.Helper()
	inv, err := c.e.Store.Invoice(c.ctx, id)
	if err != nil {
		c.t.Fatal(err)
	}
	return inv
}

// newCycle is a tenant on a test clock (4 January 2027) with a Vipps
// merchant on the test server, an organization, a monthly digital package
// of 299.00 and a subscriber.
func newCycle(t *testing.T, e *apitest.Env) *vcycle {
	t.Helper()
	srv := vippstest.New(t)
	p, _ := e.Server.Providers.Lookup("Vipps")
	c := &vcycle{t: t, e: e, tn: e.Tenant, ctx: tenancy.With(context.Background(), e.Tenant.ID), srv: srv, p: p}
	c.advance(time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC))
	c.org = c.create("/organization", map[string]any{"name": "Nordavis AS", "organizationNumber": "923609016", "country": "NO",
		"currency": "NOK", "timeZone": "Europe/Oslo"})
	product := c.create("/product", map[string]any{"name": "Nordavis Digital", "category": "digital", "vatRate": 0})
	plan := c.create("/billingplan", map[string]any{"name": "Monthly", "intervalUnit": "Month", "minimumDueDays": 14, "paymentTermsDays": 10})
	c.pkg = c.create("/package", fmt.Sprintf(`{"Name": "Digital", "Currency": "NOK", "Price": 299.00,
		"products": [{"productId": %q}], "BillingPlans": [%q]}`, product, plan))
	c.sub = c.create("/subscriber", map[string]any{"name": "Kari Nordmann", "email": "kari@example.no", "country": "NO"})
	if r := c.tn.Do("PUT", "/vipps/merchant", map[string]any{"clientId": srv.ClientID, "clientSecret": srv.ClientSecret,
		"subscriptionKey": srv.SubscriptionKey, "merchantSerialNumber": srv.MerchantSerialNumber, "mode": "test", "baseUrl": srv.URL,
		"productName": "Nordavis Digital", "merchantAgreementUrl": "https://nordavis.example/my/",
		"merchantRedirectUrl": "https://nordavis.example/vipps/back", "maxAmount": 50000}); r.Status != http.StatusOK {
		t.Fatalf("merchant: %d %s", r.Status, r.Body)
	}
	return c
}

// TestCycle is the must-show cycle against the test server on a test
// clock: order on a Vipps agreement, approval, the first charge, three
// renewals charged, a failed charge left to dunning, a credit note
// refunded (partly) through Vipps, a credit before the charge cancelling
// it, and deleting the agreement stopping it in Vipps.
func TestCycle(t *testing.T) {
	apitest.EachWith(t, loopback, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		srv := c.srv

		// The agreement: drafted, approved in the app, found by the poller.
		agreement := c.create("/paymentagreement", map[string]any{"subscriberId": c.sub, "providerType": "Vipps"})
		vid := waitAgreement(t, c.tn, agreement, "PENDING")["vippsAgreementId"].(string)
		if err := srv.Approve(vid, 0); err != nil {
			t.Fatal(err)
		}
		c.poll()
		waitAgreement(t, c.tn, agreement, "ACTIVE")

		// The order on it; its first invoice becomes the first charge.
		order := c.create("/order", map[string]any{"organizationId": c.org, "templatePackageId": c.pkg, "subscriberId": c.sub,
			"paymentAgreementId": agreement, "requestedStart": "2027-02-01T00:00:00+01:00"})
		if r := c.tn.Do("POST", "/order/"+order+"/complete", nil); r.Status != http.StatusOK {
			t.Fatalf("complete: %d %s", r.Status, r.Body)
		}
		settleAll := func(ok bool) {
			t.Helper()
			for _, ch := range srv.Charges(vid) {
				if ch.Status == vippstest.ChargeDue {
					if err := srv.SettleCharge(ch.ID, ok); err != nil {
						t.Fatal(err)
					}
				}
			}
			c.poll()
		}
		month := func(ok bool) store.Invoice {
			t.Helper()
			c.issue()
			invs := c.invoices()
			last := invs[0]
			for _, inv := range invs {
				if inv.InvoiceNumber > last.InvoiceNumber {
					last = inv
				}
			}
			ch, err := vipps.ChargeOf(c.ctx, e.Store, c.tn.ID, last.ID)
			if err != nil {
				t.Fatalf("invoice %d has no charge: %v", last.InvoiceNumber, err)
			}
			due, _ := time.Parse(time.DateOnly, ch.DueDate)
			if earliest := c.now.Truncate(24*time.Hour).AddDate(0, 0, 1); due.Before(earliest) {
				t.Fatalf("charge due %s, before the lead time allows (%s)", ch.DueDate, earliest.Format(time.DateOnly))
			}
			settleAll(ok)
			return c.invoice(last.ID)
		}
		first := month(true)
		if first.Status != "Paid" {
			t.Fatalf("first invoice %s after its charge", first.Status)
		}
		day := time.Date(2027, 1, 20, 9, 0, 0, 0, time.UTC)
		var charged []store.Invoice
		for range 3 {
			day = day.AddDate(0, 1, 0)
			c.advance(day)
			inv := month(true)
			if inv.Status != "Paid" {
				t.Fatalf("renewal invoice %d: %s", inv.InvoiceNumber, inv.Status)
			}
			charged = append(charged, inv)
		}
		// A failed charge: the invoice stays open for dunning, the failure
		// recorded as a payment of status Failed.
		day = day.AddDate(0, 1, 0)
		c.advance(day)
		failed := month(false)
		if failed.Status == "Paid" {
			t.Fatalf("invoice %d paid after a failed charge", failed.InvoiceNumber)
		}
		var pays []store.Payment
		c.tn.Do("GET", "/payment?paymentDemandId="+failed.PaymentDemandID, nil).JSON(t, &pays)
		if len(pays) != 1 || pays[0].Status != store.PaymentFailed || pays[0].Provider != "Vipps" {
			t.Fatalf("payments of the failed invoice: %+v", pays)
		}
		// Every invoice one charge, however often the hook ran.
		if got, want := len(srv.Charges(vid)), len(c.invoices()); got != want {
			t.Fatalf("%d charges for %d invoices", got, want)
		}

		// A credit note of a charged invoice: refunded through Vipps, partly.
		target := charged[0]
		cn := c.create("/invoice/"+target.ID+"/credit", map[string]any{"reason": "Missed delivery",
			"lines": []map[string]any{{"lineNumber": 1, "amount": "100.00"}}})
		// Fired three times at once: refunded once.
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if err := c.p.InvoiceCredited(c.ctx, provider.Invoice{TenantID: c.tn.ID, InvoiceID: target.ID, CreditNoteID: cn, Now: c.now}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		ch, _ := vipps.ChargeOf(c.ctx, e.Store, c.tn.ID, target.ID)
		for _, vc := range srv.Charges(vid) {
			if vc.ID == ch.ChargeID && (vc.Status != vippstest.ChargePartiallyRefunded || vc.Refunded != 10000) {
				t.Fatalf("after the credit note: %s refunded %d, want PARTIALLY_REFUNDED 10000 once", vc.Status, vc.Refunded)
			}
		}

		// A credit before the charge is made cancels it.
		day = day.AddDate(0, 1, 0)
		c.advance(day)
		c.issue()
		var next store.Invoice
		for _, inv := range c.invoices() {
			if inv.InvoiceNumber > next.InvoiceNumber {
				next = inv
			}
		}
		cn2 := c.create("/invoice/"+next.ID+"/credit", map[string]any{"reason": "Goodwill"})
		if err := c.p.InvoiceCredited(c.ctx, provider.Invoice{TenantID: c.tn.ID, InvoiceID: next.ID, CreditNoteID: cn2, Now: c.now}); err != nil {
			t.Fatal(err)
		}
		ch, _ = vipps.ChargeOf(c.ctx, e.Store, c.tn.ID, next.ID)
		for _, vc := range srv.Charges(vid) {
			if vc.ID == ch.ChargeID && vc.Status != vippstest.ChargeCancelled {
				t.Fatalf("charge of a credited invoice: %s, want CANCELLED", vc.Status)
			}
		}

		// Ending the agreement stops it in Vipps.
		if r := c.tn.Do("DELETE", "/paymentagreement/"+agreement, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		waitAgreement(t, c.tn, agreement, "STOPPED")
		if va, _ := srv.Agreement(vid); va.Status != vippstest.AgreementStopped {
			t.Fatalf("at Vipps: %s", va.Status)
		}
	})
}

// TestChargeAfterApproval: an invoice issued while the subscriber has not
// yet approved the agreement in the app is not charged then; once the
// agreement is ACTIVE the poller charges it, once, however often it runs.
func TestChargeAfterApproval(t *testing.T) {
	apitest.EachWith(t, loopback, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		agreement := c.create("/paymentagreement", map[string]any{"subscriberId": c.sub, "providerType": "Vipps"})
		vid := waitAgreement(t, c.tn, agreement, "PENDING")["vippsAgreementId"].(string)
		order := c.create("/order", map[string]any{"organizationId": c.org, "templatePackageId": c.pkg, "subscriberId": c.sub,
			"paymentAgreementId": agreement, "requestedStart": "2027-02-01T00:00:00+01:00"})
		if r := c.tn.Do("POST", "/order/"+order+"/complete", nil); r.Status != http.StatusOK {
			t.Fatalf("complete: %d %s", r.Status, r.Body)
		}
		c.issue()
		if n := len(c.srv.Charges(vid)); n != 0 {
			t.Fatalf("%d charges on a PENDING agreement, want none", n)
		}
		if err := c.srv.Approve(vid, 0); err != nil {
			t.Fatal(err)
		}
		c.poll()
		c.poll()
		invs := c.invoices()
		if len(invs) != 1 {
			t.Fatalf("%d invoices, want the order's one", len(invs))
		}
		if _, err := vipps.ChargeOf(c.ctx, e.Store, c.tn.ID, invs[0].ID); err != nil {
			t.Fatalf("the invoice issued while PENDING has no charge after the approval: %v", err)
		}
		if n := len(c.srv.Charges(vid)); n != 1 {
			t.Fatalf("%d charges after two polls, want 1", n)
		}
	})
}

// TestSubscriptionEndStopsAgreement: the agreement stays while any
// subscription on it lives; when the last one is deactivated the outbox's
// dispatch of SubscriptionDeactivated ends it: stopped at Vipps, the
// payment agreement deleted (its event once, however often the hook runs).
func TestSubscriptionEndStopsAgreement(t *testing.T) {
	apitest.EachWith(t, loopback, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		agreement := c.create("/paymentagreement", map[string]any{"subscriberId": c.sub, "providerType": "Vipps"})
		vid := waitAgreement(t, c.tn, agreement, "PENDING")["vippsAgreementId"].(string)
		if err := c.srv.Approve(vid, 0); err != nil {
			t.Fatal(err)
		}
		c.poll()
		waitAgreement(t, c.tn, agreement, "ACTIVE")
		var subs []string
		for range 2 {
			order := c.create("/order", map[string]any{"organizationId": c.org, "templatePackageId": c.pkg, "subscriberId": c.sub,
				"paymentAgreementId": agreement})
			var done struct {
				SubscriptionID string `json:"subscriptionId"`
			}
			r := c.tn.Do("POST", "/order/"+order+"/complete", nil)
			if r.Status != http.StatusOK {
				t.Fatalf("complete: %d %s", r.Status, r.Body)
			}
			r.JSON(t, &done)
			subs = append(subs, done.SubscriptionID)
		}
		cancel := func(id string) {
			t.Helper()
			if r := c.tn.Do("POST", "/subscription/"+id+"/cancel", map[string]any{"mode": "Immediately"}); r.Status != http.StatusOK {
				t.Fatalf("cancel: %d %s", r.Status, r.Body)
			}
		}
		stopped := func() bool {
			a, ok := c.srv.Agreement(vid)
			return ok && a.Status == "STOPPED"
		}
		ref := provider.AgreementRef{TenantID: c.tn.ID, AgreementID: agreement, SubscriberID: c.sub, Now: c.now}
		cancel(subs[0])
		// The hook as the outbox calls it for the first deactivation: the
		// other subscription keeps the agreement.
		if err := c.p.SubscriptionEnded(c.ctx, ref); err != nil {
			t.Fatal(err)
		}
		if stopped() {
			t.Fatal("the agreement stopped while a subscription on it lives")
		}
		cancel(subs[1])
		deadline := time.Now().Add(15 * time.Second)
		for !stopped() {
			if time.Now().After(deadline) {
				t.Fatal("the agreement still runs at Vipps after its last subscription ended")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// Redelivered: nothing more.
		if err := c.p.SubscriptionEnded(c.ctx, ref); err != nil {
			t.Fatal(err)
		}
		if pa, err := e.Store.PaymentAgreement(c.ctx, agreement); err != nil || pa.DeletedAt == nil {
			t.Errorf("the payment agreement after its Vipps agreement stopped: %+v %v, want it deleted", pa, err)
		}
		evs, _, err := e.Store.ListEvents(c.ctx, store.EventFilter{EventType: store.EventPaymentAgreementDeleted, Subject: "/paymentagreement/" + agreement}, store.Page{Limit: 10})
		if err != nil || len(evs) != 1 {
			t.Errorf("PaymentAgreementDeleted events: %d %v, want 1", len(evs), err)
		}
	})
}
