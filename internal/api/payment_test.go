package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/ledger"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
)

// pay reports a payment and returns its id, failing unless the answer is
// want (201 or 200).
func (f *billingFixture) pay(body map[string]any, want int) string {
	f.t.Helper()
	if _, ok := body["currency"]; !ok {
		body["currency"] = "NOK"
	}
	if _, ok := body["provider"]; !ok {
		body["provider"] = "External"
	}
	if _, ok := body["status"]; !ok {
		body["status"] = "Succeeded"
	}
	r := f.tn.Do("POST", "/payment", body)
	if r.Status != want {
		f.t.Fatalf("POST /payment %v: %d %s, want %d", body, r.Status, r.Body, want)
	}
	var id string
	r.JSON(f.t, &id)
	if loc := r.Header.Get("Location"); loc != apitest.BaseURL+"/payment/"+id {
		f.t.Fatalf("Location %q", loc)
	}
	return id
}

func (f *billingFixture) payment(id string) store.Payment {
	f.t.Helper()
	var p store.Payment
	r := f.tn.Do("GET", "/payment/"+id, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET /payment/%s: %d %s", id, r.Status, r.Body)
	}
	r.JSON(f.t, &p)
	return p
}

func (f *billingFixture) invoice(id string) store.Invoice {
	f.t.Helper()
	var inv store.Invoice
	r := f.tn.Do("GET", "/invoice/"+id, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET /invoice/%s: %d %s", id, r.Status, r.Body)
	}
	r.JSON(f.t, &inv)
	return inv
}

func (f *billingFixture) demand(id string) store.PaymentDemand {
	f.t.Helper()
	var d store.PaymentDemand
	r := f.tn.Do("GET", "/paymentdemand/"+id, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET /paymentdemand/%s: %d %s", id, r.Status, r.Body)
	}
	r.JSON(f.t, &d)
	return d
}

// ledgerClean fails the test unless the ledger check finds nothing.
func ledgerClean(t *testing.T, e *apitest.Env, tn apitest.Tenant) ledger.Report {
	t.Helper()
	rep, err := ledger.Check(tenantCtx(tn), e.Store, ledger.Options{TenantID: tn.ID})
	if err != nil {
		t.Fatalf("ledger check: %v", err)
	}
	if !rep.Clean() {
		for _, p := range rep.Problems {
			t.Errorf("ledger: %s", p)
		}
		t.FailNow()
	}
	return rep
}

func eventData(t *testing.T, ev store.Event) map[string]string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func TestPaymentFullAndPartial(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		f.order(&start)
		f.order(&start)
		invs := f.invoices("")
		if len(invs) != 2 || invs[0].Gross.String() != "248.00" {
			t.Fatalf("invoices: %d", len(invs))
		}
		full, part := invs[0], invs[1]

		// Full payment by invoice id: Paid, PaymentCompleted, InvoicePaid.
		id := f.pay(map[string]any{"invoiceId": full.ID, "amount": 248, "providerReference": "ext-1",
			"paidAt": "2027-01-09T10:00:00+01:00"}, http.StatusCreated)
		p := f.payment(id)
		if p.Status != store.PaymentSucceeded || p.Amount.String() != "248.00" || p.Applied.String() != "248.00" ||
			p.Surplus.String() != "0.00" || p.AllowanceItemID != nil || p.InvoiceID != full.ID || p.PaymentDemandID != full.PaymentDemandID ||
			p.SubscriberID != f.subscriber || p.SubscriberAccountID != full.SubscriberAccountID || p.Currency != "NOK" ||
			!p.PaidAt.Equal(time.Date(2027, 1, 9, 9, 0, 0, 0, time.UTC)) || p.Provider != "External" || p.ProviderReference != "ext-1" ||
			p.FailureReason != nil {
			t.Fatalf("payment: %+v", p)
		}
		if inv := f.invoice(full.ID); inv.Status != billing.InvoicePaid {
			t.Fatalf("invoice status %s", inv.Status)
		}
		if d := f.demand(full.PaymentDemandID); d.Status != billing.DemandPaid || d.PaidAmount.String() != "248.00" {
			t.Fatalf("demand: %+v", d)
		}
		paid := eventsOf(t, e, e.Tenant, store.EventInvoicePaid)
		completed := eventsOf(t, e, e.Tenant, store.EventPaymentCompleted)
		if len(paid) != 1 || paid[0].Subject != "/invoice/"+full.ID || eventData(t, paid[0])["paymentDemandId"] != full.PaymentDemandID {
			t.Fatalf("InvoicePaid events: %+v", paid)
		}
		if len(completed) != 1 || completed[0].Subject != "/payment/"+id {
			t.Fatalf("PaymentCompleted events: %+v", completed)
		}
		if d := eventData(t, completed[0]); d["paymentId"] != id || d["invoiceId"] != full.ID || d["paymentDemandId"] != full.PaymentDemandID ||
			d["subscriberId"] != f.subscriber {
			t.Fatalf("PaymentCompleted data: %v", d)
		}
		// Both invoices are on one account: 2 × 248 − 248.
		a := f.account(full.SubscriberAccountID)
		if a.Balance.String() != "248.00" || a.Entries[0].Kind != store.EntryPayment || a.Entries[0].Amount.String() != "-248.00" {
			t.Fatalf("account after full payment: %s %+v", a.Balance, a.Entries[0])
		}

		// Partial by payment demand, then the rest by KID.
		f.pay(map[string]any{"paymentDemandId": part.PaymentDemandID, "amount": json.Number("100.50"), "providerReference": "ext-2"}, http.StatusCreated)
		if inv := f.invoice(part.ID); inv.Status != billing.InvoicePartiallyPaid {
			t.Fatalf("invoice after partial payment: %s", inv.Status)
		}
		if d := f.demand(part.PaymentDemandID); d.Status != billing.DemandPartiallyPaid || d.PaidAmount.String() != "100.50" {
			t.Fatalf("demand after partial payment: %+v", d)
		}
		if n := len(eventsOf(t, e, e.Tenant, store.EventInvoicePaid)); n != 1 {
			t.Fatalf("%d InvoicePaid events after a partial payment", n)
		}
		f.pay(map[string]any{"kid": part.KID, "amount": 147.50, "providerReference": "ext-3", "provider": "Bank"}, http.StatusCreated)
		if inv := f.invoice(part.ID); inv.Status != billing.InvoicePaid {
			t.Fatalf("invoice after the rest: %s", inv.Status)
		}
		if n := len(eventsOf(t, e, e.Tenant, store.EventInvoicePaid)); n != 2 {
			t.Fatalf("%d InvoicePaid events", n)
		}
		if a := f.account(full.SubscriberAccountID); a.Balance.String() != "0.00" {
			t.Fatalf("balance %s", a.Balance)
		}

		// Lists and their filters.
		var ps []store.Payment
		f.tn.Do("GET", "/payment?invoiceId="+part.ID, nil).JSON(t, &ps)
		if len(ps) != 2 || ps[0].ProviderReference != "ext-2" || ps[1].ProviderReference != "ext-3" {
			t.Fatalf("payments of invoice: %+v", ps)
		}
		for q, want := range map[string]int{"": 3, "subscriberId=" + f.subscriber: 3, "provider=Bank": 1,
			"providerReference=ext-1": 1, "status=Failed": 0, "status=succeeded": 3, "paymentDemandId=" + full.PaymentDemandID: 1} {
			var ps []store.Payment
			r := f.tn.Do("GET", "/payment?"+q, nil)
			r.JSON(t, &ps)
			if r.Status != http.StatusOK || len(ps) != want {
				t.Errorf("GET /payment?%s: %d, %d payments, want %d", q, r.Status, len(ps), want)
			}
		}
		r := f.tn.Do("GET", "/payment?limit=2", nil)
		if r.Header.Get("Link") == "" {
			t.Error("no Link header on a first page of 2 of 3")
		}
		for _, q := range []string{"subscriberId=", "invoiceId=", "paymentDemandId="} {
			wantEmpty(t, f.tn.Do("GET", "/payment?"+q+store.NewID(), nil), "GET /payment?"+q+"<unknown>")
		}
		ledgerClean(t, e, e.Tenant)
	})
}

func TestOverpaymentBecomesAllowanceOnNextInvoice(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		f.order(&start)
		inv := f.invoices("")[0]
		id := f.pay(map[string]any{"invoiceId": inv.ID, "amount": 300, "providerReference": "over-1"}, http.StatusCreated)
		p := f.payment(id)
		if p.Applied.String() != "248.00" || p.Surplus.String() != "52.00" || p.AllowanceItemID == nil {
			t.Fatalf("overpayment: %+v", p)
		}
		if got := f.invoice(inv.ID); got.Status != billing.InvoicePaid {
			t.Fatalf("invoice %s", got.Status)
		}
		a := f.account(inv.SubscriberAccountID)
		if a.Balance.String() != "-52.00" || a.AvailableAllowance.String() != "52.00" {
			t.Fatalf("account after overpayment: %+v", a)
		}
		ledgerClean(t, e, e.Tenant)

		f.advance(osloDay(2027, 2, 20)) // the March invoice is issued on 15 February
		invs := f.invoices("")
		if len(invs) != 2 {
			t.Fatalf("%d invoices", len(invs))
		}
		next := invs[1]
		al := next.Lines[len(next.Lines)-1]
		if next.Gross.String() != "196.00" || al.Kind != billing.LineAllowance || *al.AccountItemID != *p.AllowanceItemID ||
			al.Gross.String() != "-52.00" || al.Description != fmt.Sprintf("Overpayment of invoice %d", inv.InvoiceNumber) {
			t.Fatalf("next invoice: %s %+v", next.Gross, next.Lines)
		}
		if a := f.account(inv.SubscriberAccountID); a.Balance.String() != "196.00" || a.AvailableAllowance.String() != "0.00" {
			t.Fatalf("account after renewal: %+v", a)
		}
		ledgerClean(t, e, e.Tenant)
	})
}

func TestPaymentFailureAndIdempotency(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.order(nil)
		inv := f.invoices("")[0]

		id := f.pay(map[string]any{"invoiceId": inv.ID, "amount": 248, "status": "failed", "providerReference": "try-1",
			"failureReason": "Insufficient funds"}, http.StatusCreated)
		p := f.payment(id)
		if p.Status != store.PaymentFailed || p.Applied.String() != "0.00" || p.FailureReason == nil || *p.FailureReason != "Insufficient funds" {
			t.Fatalf("failed payment: %+v", p)
		}
		if got := f.invoice(inv.ID); got.Status != billing.InvoiceIssued {
			t.Fatalf("invoice after failure: %s", got.Status)
		}
		if a := f.account(inv.SubscriberAccountID); a.Balance.String() != "248.00" || len(a.Entries) != 1 {
			t.Fatalf("account after failure: %+v", a)
		}
		failed := eventsOf(t, e, e.Tenant, store.EventPaymentFailed)
		if len(failed) != 1 || eventData(t, failed[0])["paymentId"] != id || len(eventsOf(t, e, e.Tenant, store.EventPaymentCompleted)) != 0 {
			t.Fatalf("PaymentFailed events: %+v", failed)
		}

		// The same success reported twice is one payment.
		body := map[string]any{"invoiceId": inv.ID, "amount": 248, "providerReference": "try-2"}
		first := f.pay(body, http.StatusCreated)
		again := f.pay(map[string]any{"paymentDemandId": inv.PaymentDemandID, "amount": json.Number("248.00"), "providerReference": "try-2"}, http.StatusOK)
		if again != first {
			t.Fatalf("second report answered %s, want %s", again, first)
		}
		if a := f.account(inv.SubscriberAccountID); a.Balance.String() != "0.00" {
			t.Fatalf("balance after a repeated report: %s", a.Balance)
		}
		if n := len(eventsOf(t, e, e.Tenant, store.EventPaymentCompleted)); n != 1 {
			t.Fatalf("%d PaymentCompleted events", n)
		}
		// The same reference with another amount, status or provider.
		for _, b := range []map[string]any{
			{"invoiceId": inv.ID, "amount": 100, "providerReference": "try-2"},
			{"invoiceId": inv.ID, "amount": 248, "providerReference": "try-2", "status": "Failed"},
			{"invoiceId": inv.ID, "amount": 248, "providerReference": "try-1"},
		} {
			b["currency"], b["provider"] = "NOK", "External"
			if _, ok := b["status"]; !ok {
				b["status"] = "Succeeded"
			}
			if r := f.tn.Do("POST", "/payment", b); r.Status != http.StatusConflict {
				t.Errorf("POST %v: %d %s, want 409", b, r.Status, r.Body)
			}
		}
		// Another provider may use the same reference.
		f.pay(map[string]any{"invoiceId": inv.ID, "amount": 1, "providerReference": "try-2", "provider": "Manual"}, http.StatusCreated)
		var ps []store.Payment
		f.tn.Do("GET", "/payment?providerReference=try-2", nil).JSON(t, &ps)
		if len(ps) != 2 {
			t.Fatalf("%d payments with reference try-2", len(ps))
		}
		ledgerClean(t, e, e.Tenant)
	})
}

func TestPaymentValidationAndTenants(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.order(nil)
		inv := f.invoices("")[0]
		base := func(extra map[string]any) map[string]any {
			b := map[string]any{"status": "Succeeded", "amount": 10, "currency": "NOK", "provider": "External", "providerReference": "v"}
			for k, v := range extra {
				b[k] = v
			}
			return b
		}
		for _, tc := range []struct {
			body any
			want []string
		}{
			{`{}`, []string{"invoiceId", "status", "currency", "amount", "provider", "providerReference"}},
			{base(map[string]any{"invoiceId": inv.ID, "currency": "SEK"}), []string{"currency"}},
			{base(map[string]any{"invoiceId": inv.ID, "currency": "XXY"}), []string{"currency"}},
			{base(map[string]any{"invoiceId": store.NewID()}), []string{"invoiceId"}},
			{base(map[string]any{"paymentDemandId": store.NewID()}), []string{"paymentDemandId"}},
			{base(map[string]any{"kid": "99999999990"}), []string{"kid"}},
			{base(map[string]any{"kid": "12AB"}), []string{"kid"}},
			{base(map[string]any{"invoiceId": inv.ID, "kid": inv.KID}), []string{"invoiceId", "kid"}},
			{base(map[string]any{"invoiceId": "nope"}), []string{"invoiceId"}},
			{base(map[string]any{"invoiceId": inv.ID, "amount": 0}), []string{"amount"}},
			{base(map[string]any{"invoiceId": inv.ID, "amount": 10.001}), []string{"amount"}},
			{base(map[string]any{"invoiceId": inv.ID, "amount": true}), []string{"amount"}},
			{base(map[string]any{"invoiceId": inv.ID, "status": "Pending"}), []string{"status"}},
			{base(map[string]any{"invoiceId": inv.ID, "paidAt": "yesterday"}), []string{"paidAt"}},
			{base(map[string]any{"invoiceId": inv.ID, "failureReason": "x"}), []string{"failureReason"}},
			{base(map[string]any{"invoiceId": inv.ID, "organizationId": f.org}), []string{"organizationId"}},
			{base(map[string]any{"invoiceId": inv.ID, "paymentAgreementId": store.NewID()}), []string{"paymentAgreementId"}},
		} {
			if got := f.tn.Do("POST", "/payment", tc.body).Fields(t); !slices.Equal(got, tc.want) {
				t.Errorf("POST /payment %v: fields %v, want %v", tc.body, got, tc.want)
			}
		}
		if n := len(f.invoices("status=Issued")); n != 1 {
			t.Fatalf("a refused payment changed the invoice")
		}
		if got := f.tn.Do("GET", "/payment?status=Done&invoiceId=x", nil).Fields(t); !slices.Equal(got, []string{"invoiceId", "status"}) {
			t.Errorf("list fields: %v", got)
		}
		if got := f.tn.Do("GET", "/payment/x", nil).Fields(t); !slices.Equal(got, []string{"id"}) {
			t.Errorf("GET /payment/x: %v", got)
		}
		// The invoice's own agreement is accepted.
		id := f.pay(map[string]any{"invoiceId": inv.ID, "amount": 10, "providerReference": "agr", "paymentAgreementId": *inv.PaymentAgreementID},
			http.StatusCreated)
		if p := f.payment(id); p.PaymentAgreementID == nil || *p.PaymentAgreementID != *inv.PaymentAgreementID {
			t.Fatalf("agreement: %+v", p)
		}

		// Another tenant sees none of it, and cannot pay this tenant's
		// invoice: an unknown reference in a body is a 400 on its field.
		other := e.NewTenant("other", true)
		if r := other.Do("GET", "/payment/"+id, nil); r.Status != http.StatusNotFound {
			t.Errorf("other tenant GET the payment: %d", r.Status)
		}
		for _, p := range []string{"/payment?invoiceId=" + inv.ID, "/payment?paymentDemandId=" + inv.PaymentDemandID,
			"/payment?subscriberId=" + f.subscriber} {
			wantEmpty(t, other.Do("GET", p, nil), "other tenant GET "+p)
		}
		for field, v := range map[string]string{"invoiceId": inv.ID, "paymentDemandId": inv.PaymentDemandID, "kid": inv.KID} {
			if got := other.Do("POST", "/payment", base(map[string]any{field: v})).Fields(t); !slices.Equal(got, []string{field}) {
				t.Errorf("other tenant POST /payment by %s: %v", field, got)
			}
		}
		var ps []store.Payment
		if other.Do("GET", "/payment", nil).JSON(t, &ps); len(ps) != 0 {
			t.Fatalf("other tenant lists %d payments", len(ps))
		}
	})
}

func TestPaymentByKIDWithSeveralOrganizations(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.order(nil)
		first := f.invoices("")[0]
		// A second organization's first invoice has the same number and KID.
		f.org = create(t, f.tn, "/organization", map[string]any{"name": "Bygdeposten AS", "organizationNumber": "974760673",
			"country": "NO", "currency": "NOK", "timeZone": "Europe/Oslo"})
		f.order(nil)
		second := f.invoices("")[1]
		if second.KID != first.KID || second.OrganizationID != f.org {
			t.Fatalf("KIDs %s and %s", first.KID, second.KID)
		}
		body := map[string]any{"kid": first.KID, "amount": 248, "currency": "NOK", "status": "Succeeded", "provider": "Bank", "providerReference": "k1"}
		if got := f.tn.Do("POST", "/payment", body).Fields(t); !slices.Equal(got, []string{"organizationId"}) {
			t.Fatalf("ambiguous KID: %v", got)
		}
		body["organizationId"] = f.org
		id := f.pay(body, http.StatusCreated)
		if p := f.payment(id); p.InvoiceID != second.ID {
			t.Fatalf("paid invoice %s, want %s", p.InvoiceID, second.ID)
		}
		if f.invoice(second.ID).Status != billing.InvoicePaid || f.invoice(first.ID).Status != billing.InvoiceIssued {
			t.Fatal("the KID paid the wrong invoice")
		}
	})
}

// TestConcurrentPaymentsOfOneDemand: 20 payments of 1/20 each, at once,
// end exactly Paid with nothing lost.
func TestConcurrentPaymentsOfOneDemand(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.order(nil)
		inv := f.invoices("")[0]
		const n = 20
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := f.tn.Do("POST", "/payment", map[string]any{"paymentDemandId": inv.PaymentDemandID, "amount": json.Number("12.40"), "currency": "NOK",
					"status": "Succeeded", "provider": "External", "providerReference": fmt.Sprintf("c-%d", i)})
				if r.Status != http.StatusCreated {
					errs <- fmt.Sprintf("%d %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Fatalf("payment: %s", msg)
		}
		d := f.demand(inv.PaymentDemandID)
		if d.Status != billing.DemandPaid || d.PaidAmount.String() != "248.00" || f.invoice(inv.ID).Status != billing.InvoicePaid {
			t.Fatalf("demand after concurrent payments: %+v", d)
		}
		var ps []store.Payment
		f.tn.Do("GET", "/payment?paymentDemandId="+inv.PaymentDemandID, nil).JSON(t, &ps)
		if len(ps) != n {
			t.Fatalf("%d payments", len(ps))
		}
		for _, p := range ps {
			if p.Applied.String() != "12.40" || p.Surplus.String() != "0.00" {
				t.Fatalf("payment %+v", p)
			}
		}
		if n := len(eventsOf(t, e, e.Tenant, store.EventInvoicePaid)); n != 1 {
			t.Fatalf("%d InvoicePaid events", n)
		}
		if a := f.account(inv.SubscriberAccountID); a.Balance.String() != "0.00" {
			t.Fatalf("balance %s", a.Balance)
		}
		ledgerClean(t, e, e.Tenant)
	})
}

// TestLedgerCheckFindsTampering: a clean ledger after orders and full,
// partial and over payments; each tampered row is reported under its rule.
func TestLedgerCheckFindsTampering(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		for range 3 {
			f.order(&start)
		}
		invs := f.invoices("")
		f.pay(map[string]any{"invoiceId": invs[0].ID, "amount": 248, "providerReference": "t1"}, http.StatusCreated)
		f.pay(map[string]any{"invoiceId": invs[1].ID, "amount": 48, "providerReference": "t2"}, http.StatusCreated)
		f.pay(map[string]any{"invoiceId": invs[2].ID, "amount": 300, "providerReference": "t3"}, http.StatusCreated)
		f.advance(osloDay(2027, 2, 20))
		rep := ledgerClean(t, e, e.Tenant)
		if rep.Tenants != 1 || rep.Accounts != 1 || rep.Demands != 6 || rep.Invoices != 6 || rep.Payments != 3 || rep.Items != 1 {
			t.Fatalf("report counts: %+v", rep)
		}
		// Big tenants report progress every ProgressEvery rows of a step.
		steps := map[string]int{}
		if _, err := ledger.Check(tenantCtx(e.Tenant), e.Store, ledger.Options{TenantID: e.Tenant.ID, ProgressEvery: 2,
			Progress: func(tenant, step string, done int) { steps[step] = done }}); err != nil {
			t.Fatal(err)
		}
		if steps["payment demands"] != 6 || steps["payments"] != 2 || steps["accounts"] != 0 {
			t.Fatalf("progress: %v", steps)
		}

		db := e.Store.DB()
		for _, tc := range []struct {
			name, tamper, undo string
			rules              []string
		}{
			{"entry amount", `UPDATE account_entries SET amount = amount + 1 WHERE kind = 'Payment' AND payment_id IN
				(SELECT id FROM payments WHERE provider_reference = 't2')`,
				`UPDATE account_entries SET amount = amount - 1 WHERE kind = 'Payment' AND payment_id IN
				(SELECT id FROM payments WHERE provider_reference = 't2')`,
				[]string{ledger.RuleBalance, ledger.RulePaymentEntry}},
			{"paid amount", `UPDATE payment_demands SET paid_amount = paid_amount + 20000 WHERE invoice_id = '` + invs[1].ID + `'`,
				`UPDATE payment_demands SET paid_amount = paid_amount - 20000 WHERE invoice_id = '` + invs[1].ID + `'`,
				[]string{ledger.RuleDemandPaid, ledger.RuleStatus}},
			{"invoice status", `UPDATE invoices SET status = 'Paid' WHERE id = '` + invs[1].ID + `'`,
				`UPDATE invoices SET status = 'PartiallyPaid' WHERE id = '` + invs[1].ID + `'`,
				[]string{ledger.RuleStatus}},
			{"invoice gross", `UPDATE invoices SET gross = gross + 5 WHERE id = '` + invs[0].ID + `'`,
				`UPDATE invoices SET gross = gross - 5 WHERE id = '` + invs[0].ID + `'`,
				[]string{ledger.RuleBalance, ledger.RuleInvoiceEntry, ledger.RuleDemandInvoice}},
			{"item remaining", `UPDATE account_items SET remaining = remaining + 1`, `UPDATE account_items SET remaining = remaining - 1`,
				[]string{ledger.RuleBalance, ledger.RuleItemRemaining}},
		} {
			if _, err := db.Exec(tc.tamper); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			rep, err := ledger.Check(tenantCtx(e.Tenant), e.Store, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, p := range rep.Problems {
				if !slices.Contains(rules, p.Rule) {
					rules = append(rules, p.Rule)
				}
				if p.TenantID != e.Tenant.ID || p.ID == "" || p.Detail == "" || p.Fix == "" {
					t.Errorf("%s: problem %+v", tc.name, p)
				}
			}
			slices.Sort(rules)
			want := slices.Sorted(slices.Values(tc.rules))
			if rep.Clean() || !slices.Equal(rules, want) {
				t.Errorf("%s: rules %v, want %v (%+v)", tc.name, rules, want, rep.Problems)
			}
			if _, err := db.Exec(tc.undo); err != nil {
				t.Fatalf("%s undo: %v", tc.name, err)
			}
			ledgerClean(t, e, e.Tenant)
		}
	})
}
