package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

// What INFO-Subscription's pages promise beyond their request bodies: the
// proration worked examples, payment matching, agreements by mandate and
// the response fields its clients read (docs/MIGRATION.md).

// TestInfoSubProrationExamples: the two worked examples of
// source/billing/proration-policies.rst give their documented amounts,
// on the pages' dates moved to 2027 (a test clock only runs forward; the
// weekdays play no part). A 30-day period paid 90.00 and cancelled on
// 15 January: 48.00 back as an allowance. A February period (28 days)
// invoiced 84.00 on 15 January, cancelled on 25 January with effect from
// 10 February: the invoice is adjusted to 27.00 for the 9 days used.
func TestInfoSubProrationExamples(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		t.Run("paid period: allowance 48.00", func(t *testing.T) {
			f := newEuroFixture(t, e.NewTenant("infosub-proration-1", true))
			f.advance(osloDay(2027, 1, 1))
			sub, inv := f.orderOf(f.pkg30)
			if inv.Gross.String() != "90.00" || !inv.PeriodEnd.Equal(osloDay(2027, 1, 31)) {
				t.Fatalf("invoice %s for the period to %s, want 90.00 to 31 January (30 days)", inv.Gross, inv.PeriodEnd)
			}
			f.payInvoice(inv, "90.00")
			f.advance(osloDay(2027, 1, 15))
			f.cancel(sub, "Immediately")
			if a := f.account(inv.SubscriberAccountID); a.AvailableAllowance.String() != "48.00" {
				t.Fatalf("allowance %s, want 48.00 (16/30 × 90.00)", a.AvailableAllowance)
			}
			if s := f.subscriptionView(sub); !s.EndTime.Equal(osloDay(2027, 1, 15)) {
				t.Errorf("endTime %s, want 15 January", s.EndTime)
			}
		})
		t.Run("invoiced period cancelled ahead: adjusted to 27.00", func(t *testing.T) {
			tn := e.NewTenant("infosub-proration-2", true)
			f := newEuroFixture(t, tn)
			sd := tn.Seed(t)
			product := sd.Product(seed.Product{Name: "News", Category: "digital", VATRate: "25"})
			plan := sd.Plan(seed.Plan{Name: "Monthly 17", Unit: "Month", MinimumDueDays: seed.Days(17), PaymentTermsDays: seed.Days(0)})
			monthly := sd.Package(seed.Package{Name: "News monthly", Currency: "EUR", Price: "84.00", Products: []string{product},
				Plans: []string{plan}})
			f.advance(osloDay(2027, 1, 1))
			january, _ := f.orderOf(monthly)
			f.advance(osloDay(2027, 1, 15)) // the renewal: February is invoiced 17 days ahead
			feb := f.subscriptionAt(january).NextID
			if feb == nil {
				t.Fatal("no February period on 15 January")
			}
			invs := f.invoices("subscriptionId=" + *feb)
			if len(invs) != 1 || invs[0].Gross.String() != "84.00" || !invs[0].IssuedAt.Equal(osloDay(2027, 1, 15)) {
				t.Fatalf("February invoices: %+v", invs)
			}
			f.advance(osloDay(2027, 1, 25))
			r := f.tn.Do("POST", "/subscription/"+january+"/cancel", map[string]any{"cancellationTime": "2027-02-10T00:00:00+01:00"})
			if r.Status != http.StatusOK {
				t.Fatalf("cancel: %d %s", r.Status, r.Body)
			}
			cs := f.creditNotes("invoiceId=" + invs[0].ID)
			if len(cs) != 1 || cs[0].Gross.String() != "57.00" {
				t.Fatalf("credit notes %+v, want one of 57.00 (19/28 × 84.00)", cs)
			}
			if d := f.demand(invs[0].PaymentDemandID); d.Amount.Minor-d.CreditedAmount.Minor != 2700 {
				t.Fatalf("demand %+v: %d left, want 27.00", d, d.Amount.Minor-d.CreditedAmount.Minor)
			}
			j, fv := f.subscriptionView(january), f.subscriptionView(*feb)
			if j.CancelledAt != nil || !j.EndTime.Equal(osloDay(2027, 2, 1)) {
				t.Errorf("January: cancelled %v, endTime %s; it runs to its end", j.CancelledAt, j.EndTime)
			}
			if fv.CancelEffectiveAt == nil || !fv.CancelEffectiveAt.Equal(osloDay(2027, 2, 10)) || !fv.EndTime.Equal(osloDay(2027, 2, 10)) {
				t.Errorf("February: cancelEffectiveAt %v endTime %s, want 10 February", fv.CancelEffectiveAt, fv.EndTime)
			}
			f.advance(osloDay(2027, 2, 11))
			if fv := f.subscriptionView(*feb); fv.DeactivatedAt == nil || fv.NextID != nil {
				t.Errorf("after 10 February: deactivated %v, next %v", fv.DeactivatedAt, fv.NextID)
			}
			ledgerClean(t, e, f.tn)
		})
		t.Run("cancellationTime must be a later day within the billed periods", func(t *testing.T) {
			f := newEuroFixture(t, e.NewTenant("infosub-proration-3", true))
			f.advance(osloDay(2027, 1, 1))
			sub, _ := f.orderOf(f.pkg30)
			for _, at := range []string{"2027-01-01T00:00:00+01:00", "2027-03-05T00:00:00+01:00", "tomorrow"} {
				wantFieldIn(t, f.tn.Do("POST", "/subscription/"+sub+"/cancel", map[string]any{"cancellationTime": at}), "cancellationTime")
			}
			wantFieldIn(t, f.tn.Do("POST", "/subscription/"+sub+"/cancel", map[string]any{"cancellationTime": "2027-01-20T00:00:00+01:00",
				"mode": "Immediately"}), "cancellationTime")
			// The period's end is EndOfPeriod.
			r := f.tn.Do("POST", "/subscription/"+sub+"/cancel", map[string]any{"cancellationTime": "2027-01-31T00:00:00+01:00"})
			if r.Status != http.StatusOK {
				t.Fatalf("cancel at the period end: %d %s", r.Status, r.Body)
			}
			if s := f.subscriptionView(sub); s.CancelEffectiveAt == nil || !s.CancelEffectiveAt.Equal(osloDay(2027, 1, 31)) {
				t.Errorf("cancelEffectiveAt %v", s.CancelEffectiveAt)
			}
		})
	})
}

// subscriptionCompat is a subscription with the names INFO-Subscription
// clients read.
type subscriptionCompat struct {
	store.Subscription
	StartTime time.Time `json:"startTime"`
	EndTime   time.Time `json:"endTime"`
}

func (f *billingFixture) subscriptionView(id string) subscriptionCompat {
	f.t.Helper()
	var s subscriptionCompat
	r := f.tn.Do("GET", "/subscription/"+id, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET /subscription/%s: %d %s", id, r.Status, r.Body)
	}
	r.JSON(f.t, &s)
	return s
}

// wantFieldIn fails unless r is a 400 naming field.
func wantFieldIn(t *testing.T, r *apitest.Response, field string) {
	t.Helper()
	if got := r.Fields(t); !slices.Contains(got, field) {
		t.Fatalf("the 400 names %v, want %s: %s", got, field, r.Body)
	}
}

// TestInfoSubPaymentMatching: POST /payment identifies payments the ways
// source/billing/payment-matching-settlement.rst describes.
func TestInfoSubPaymentMatching(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.NewTenant("infosub-matching", true))
		f.order(nil)
		invs := f.invoices("subscriberId=" + f.subscriber)
		if len(invs) != 1 {
			t.Fatalf("%d invoices", len(invs))
		}
		inv := invs[0]
		other := f.tn.Seed(t).Subscriber(seed.Subscriber{Name: "Ola Nordmann", Email: "ola@example.no", Country: "NO"})
		total := inv.Gross.String()

		t.Run("refused", func(t *testing.T) {
			for _, tc := range []struct {
				body  map[string]any
				field string
			}{
				{map[string]any{"matchingType": "UseSubscriberAndInvoice", "invoiceId": inv.ID}, "subscriberId"},
				{map[string]any{"matchingType": "UseSubscriberAndInvoice", "invoiceId": inv.ID, "subscriberId": other}, "subscriberId"},
				{map[string]any{"matchingType": "UseExternalIdentifier"}, "externalInvoiceIdentifier"},
				{map[string]any{"matchingType": "UseExternalIdentifier", "externalInvoiceIdentifier": "99999"}, "externalInvoiceIdentifier"},
				{map[string]any{"matchingType": "NoInvoiceMatch", "subscriberId": f.subscriber}, "matchingType"},
				{map[string]any{"matchingType": "UseBillingAccount", "invoiceId": inv.ID}, "matchingType"},
				{map[string]any{"matchingType": "Guess", "invoiceId": inv.ID}, "matchingType"},
				// Only the subscriber is identified, and the amount is not
				// what the one outstanding demand claims.
				{map[string]any{"matchingType": "UseSubscriberFromExternalIdentifier", "externalInvoiceIdentifier": inv.KID, "amount": json.Number("1.00")},
					"externalInvoiceIdentifier"},
			} {
				body := map[string]any{"status": "Succeeded", "amount": json.Number(total), "currency": "NOK", "provider": "Bank",
					"providerReference": "refused"}
				for k, v := range tc.body {
					body[k] = v
				}
				wantFieldIn(t, f.tn.Do("POST", "/payment", body), tc.field)
			}
		})
		t.Run("by external identifier: invoice number, then KID", func(t *testing.T) {
			f.pay(map[string]any{"matchingType": "UseExternalIdentifier", "externalInvoiceIdentifier": strconv.FormatInt(inv.InvoiceNumber, 10),
				"amount": json.Number("10.00"), "providerReference": "by-number"}, http.StatusCreated)
			f.pay(map[string]any{"externalInvoiceIdentifier": inv.KID, "amount": json.Number("5.00"), "providerReference": "by-kid"}, http.StatusCreated)
			if d := f.demand(inv.PaymentDemandID); d.PaidAmount.String() != "15.00" {
				t.Fatalf("paid %s, want 15.00", d.PaidAmount)
			}
		})
		t.Run("subscriber from external identifier: the one outstanding demand of that amount", func(t *testing.T) {
			left := f.demand(inv.PaymentDemandID)
			rest := json.Number(fmt.Sprintf("%d.%02d", (left.Amount.Minor-left.PaidAmount.Minor)/100, (left.Amount.Minor-left.PaidAmount.Minor)%100))
			body := map[string]any{"matchingType": "UseSubscriberFromExternalIdentifier", "externalInvoiceIdentifier": inv.KID,
				"subscriberId": f.subscriber, "amount": rest, "providerReference": "by-subscriber"}
			id := f.pay(body, http.StatusCreated)
			if d := f.demand(inv.PaymentDemandID); d.Status != "Paid" {
				t.Fatalf("demand %s after the rest was paid", d.Status)
			}
			// Reported again after the demand was settled: the first payment.
			if again := f.pay(body, http.StatusOK); again != id {
				t.Fatalf("repeat answered %s, want %s", again, id)
			}
		})
		t.Run("subscriber and invoice", func(t *testing.T) {
			id := f.pay(map[string]any{"matchingType": "UseSubscriberAndInvoice", "invoiceId": inv.ID, "subscriberId": f.subscriber,
				"amount": json.Number("1.00"), "providerReference": "by-both"}, http.StatusCreated)
			if p := f.payment(id); p.InvoiceID != inv.ID || p.Surplus.String() != "1.00" {
				t.Fatalf("payment %+v: a paid invoice's payment is a surplus", p)
			}
		})
	})
}

// TestInfoSubResponseFields: the fields INFO-Subscription clients read are
// there beside Kadens' own.
func TestInfoSubResponseFields(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.NewTenant("infosub-fields", true))
		sub := f.order(nil)
		s := f.subscriptionView(sub)
		if !s.StartTime.Equal(s.PeriodStart) || !s.EndTime.Equal(s.PeriodEnd) {
			t.Errorf("startTime %s endTime %s, period %s–%s", s.StartTime, s.EndTime, s.PeriodStart, s.PeriodEnd)
		}
		var list []subscriptionCompat
		f.tn.Do("GET", "/subscription?subscriberId="+f.subscriber, nil).JSON(t, &list)
		if len(list) != 1 || !list[0].StartTime.Equal(s.PeriodStart) || !list[0].EndTime.Equal(s.PeriodEnd) {
			t.Errorf("list: %+v", list)
		}

		inv := f.invoices("subscriptionId=" + sub)[0]
		if inv.Number != inv.InvoiceNumber || f.invoice(inv.ID).Number != inv.InvoiceNumber {
			t.Errorf("number %d, invoiceNumber %d", inv.Number, inv.InvoiceNumber)
		}

		type demandCompat struct {
			store.PaymentDemand
			OrderID                *string    `json:"orderId"`
			BillingPlanID          *string    `json:"billingPlanId"`
			SettleDate             *time.Time `json:"settleDate"`
			IsCredited             bool       `json:"isCredited"`
			SettlementTransactions struct {
				Payments []struct {
					PaymentID string `json:"paymentId"`
					Amount    json.Number
				} `json:"payments"`
				ConsumedAllowances []any `json:"consumedAllowances"`
				GeneratedCharges   []any `json:"generatedCharges"`
			} `json:"settlementTransactions"`
		}
		demand := func() demandCompat {
			var d demandCompat
			f.tn.Do("GET", "/paymentdemand/"+inv.PaymentDemandID, nil).JSON(t, &d)
			return d
		}
		d := demand()
		if d.OrderID == nil || *d.OrderID != *s.OrderID || d.BillingPlanID == nil || *d.BillingPlanID != s.Package.BillingPlan.BillingPlanID ||
			d.SettleDate != nil || d.IsCredited || len(d.SettlementTransactions.Payments) != 0 {
			t.Errorf("open demand: %+v", d)
		}
		paidAt := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		pay := f.pay(map[string]any{"invoiceId": inv.ID, "amount": json.Number(inv.Gross.String()), "providerReference": "fields",
			"paidAt": paidAt.Format(time.RFC3339)}, http.StatusCreated)
		d = demand()
		if d.SettleDate == nil || !d.SettleDate.Equal(paidAt) || len(d.SettlementTransactions.Payments) != 1 ||
			d.SettlementTransactions.Payments[0].PaymentID != pay || d.SettlementTransactions.ConsumedAllowances == nil ||
			d.SettlementTransactions.GeneratedCharges == nil {
			t.Errorf("paid demand: %+v", d)
		}
		var ds []demandCompat
		f.tn.Do("GET", "/paymentdemand?subscriberId="+f.subscriber, nil).JSON(t, &ds)
		if len(ds) != 1 || ds[0].SettleDate == nil || ds[0].OrderID == nil {
			t.Errorf("list: %+v", ds)
		}
	})
}

// TestInfoSubAgreementByMandate: an AvtaleGiro agreement written the
// INFO-Subscription way (the mandate's KID as providerAgreementReference,
// its id as providerAgreementId) is the agreement on that mandate.
func TestInfoSubAgreementByMandate(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.NewTenant("infosub-mandate", true)
		subscriber := tn.Seed(t).Subscriber(seed.Kari)
		account := create(t, tn, "/avtalegiro/account", map[string]any{"name": "Avis", "bankAccountNumber": "12345678903",
			"customerUnitId": "12345678", "kidAlgorithm": "MOD10", "kidLength": 14, "baseComboApiEndpointUrl": "https://bank.example/api"})
		mandate := create(t, tn, "/avtalegiro/mandate", map[string]any{"accountId": account, "kid": "00000000000018", "subscriberId": subscriber})
		body := func(ref, typ string) map[string]any {
			return map[string]any{"subscriberId": subscriber, "providerType": typ, "providerAgreementReference": ref,
				"paymentMethod": "DirectDebit", "providerAgreementId": mandate}
		}
		wantFieldIn(t, tn.Do("POST", "/paymentagreement", body("00000000000026", "AvtaleGiro")), "providerAgreementReference")
		wantFieldIn(t, tn.Do("POST", "/paymentagreement", body("999999999", "EHF")), "providerAgreementId")
		id := create(t, tn, "/paymentagreement", body("00000000000018", "AvtaleGiro"))
		var a store.PaymentAgreement
		tn.Do("GET", "/paymentagreement/"+id, nil).JSON(t, &a)
		if a.ProviderType != "AvtaleGiro" || a.ProviderAgreementReference != mandate || a.PaymentMethod != "DirectDebit" {
			t.Fatalf("agreement %+v: want the one on mandate %s", a, mandate)
		}
	})
}

// TestInfoSubAliases: the INFO-Subscription names mean what the Kadens
// names mean; given with a Kadens name that says otherwise, or where
// Kadens cannot honour them, they are a 400 naming them.
func TestInfoSubAliases(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.NewTenant("infosub-aliases", true)
		f := newBillingFixture(t, e, tn)
		order := func(extra map[string]any) *apitest.Response {
			body := map[string]any{"organizationId": f.org, "templatePackageId": f.pkg, "subscriberId": f.subscriber}
			for k, v := range extra {
				body[k] = v
			}
			return tn.Do("POST", "/order", body)
		}

		// paymentAgreementParameters is paymentAgreement.
		r := order(map[string]any{"paymentAgreementParameters": map[string]any{"providerType": "EHF", "providerAgreementReference": "999999999",
			"paymentMethod": "eInvoice"}})
		id := r.ID(t)
		var o struct {
			PaymentAgreement store.AgreementParams `json:"paymentAgreement"`
		}
		tn.Do("GET", "/order/"+id, nil).JSON(t, &o)
		if o.PaymentAgreement.ProviderType != "EHF" || o.PaymentAgreement.ProviderAgreementReference != "999999999" {
			t.Errorf("order agreement %+v", o.PaymentAgreement)
		}
		wantFieldIn(t, order(map[string]any{"paymentAgreementParameters": map[string]any{"providerType": "EHF", "providerAgreementReference": "999999990"}}),
			"paymentAgreementParameters.providerAgreementReference")
		wantFieldIn(t, order(map[string]any{"paymentAgreementParameters": map[string]any{"providerType": "Invoice"},
			"paymentAgreement": map[string]any{"providerType": "Invoice"}}), "paymentAgreementParameters")
		wantFieldIn(t, order(map[string]any{"paymentAgreementParameters": map[string]any{"paymentMethod": "MobilePay"}}),
			"paymentAgreementParameters.paymentMethod")

		// priceOverride is price; both, differing, is a 400.
		wantFieldIn(t, order(map[string]any{"templatePackageChoices": map[string]any{"price": 10, "priceOverride": 20}}),
			"templatePackageChoices.priceOverride")
		wantFieldIn(t, order(map[string]any{"templatePackageChoices": map[string]any{"priceOverride": 20}}), "templatePackageChoices.price")

		// cancellationProrationId is prorationPolicyId.
		policy := create(t, tn, "/prorationpolicy", map[string]any{"name": "P"})
		other := create(t, tn, "/prorationpolicy", map[string]any{"name": "Q"})
		wantFieldIn(t, tn.Do("POST", "/dunningprocess", map[string]any{"name": "D", "reminderDays": []int{7}, "prorationPolicyId": policy,
			"cancellationProrationId": other}), "cancellationProrationId")
		wantFieldIn(t, tn.Do("POST", "/dunningprocess", map[string]any{"name": "D", "reminderDays": []int{7},
			"cancellationProrationId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d41"}), "cancellationProrationId")
		d := create(t, tn, "/dunningprocess", map[string]any{"name": "D", "reminderDays": []int{7}, "prorationPolicyId": policy,
			"cancellationProrationId": policy})
		var dp invoicing.DunningProcess
		tn.Do("GET", "/dunningprocess/"+d, nil).JSON(t, &dp)
		if dp.ProrationPolicyID == nil || *dp.ProrationPolicyID != policy {
			t.Errorf("dunning process %+v", dp)
		}

		// Per-product full prices: all or none; Price, if given, their sum.
		sd := tn.Seed(t)
		p1 := sd.Product(seed.Product{Name: "A", Category: "digital", VATRate: "25"})
		p2 := sd.Product(seed.Product{Name: "B", Category: "paper", VATRate: "0"})
		plan := sd.Plan(seed.Plan{Name: "M", Unit: "Month"})
		pkg := func(price any, products ...map[string]any) *apitest.Response {
			body := map[string]any{"Name": "Bundle", "Currency": "NOK", "products": products, "BillingPlans": []string{plan}}
			if price != nil {
				body["Price"] = price
			}
			return tn.Do("POST", "/package", body)
		}
		wantFieldIn(t, pkg(nil, map[string]any{"productId": p1, "fullPrice": 100}, map[string]any{"productId": p2}), "products[1].fullPrice")
		wantFieldIn(t, pkg(json.Number("150"), map[string]any{"productId": p1, "fullPrice": 100}, map[string]any{"productId": p2, "fullPrice": 100}), "Price")
		wantFieldIn(t, pkg(nil, map[string]any{"productId": p1, "fullPrice": 100, "taxPercent": 25}, map[string]any{"productId": p2, "fullPrice": 100, "taxPercent": 25}),
			"products[1].taxPercent")
		bundle := pkg(json.Number("300.00"), map[string]any{"productId": p1, "fullPrice": 100, "taxPercent": 25},
			map[string]any{"productId": p2, "fullPrice": json.Number("200.00"), "taxPercent": 0}).ID(t)
		var preview struct {
			TotalPrice json.Number `json:"totalPrice"`
			Products   []struct {
				Amount json.Number `json:"amount"`
			} `json:"products"`
		}
		tn.Do("POST", "/package/"+bundle+"/preview", map[string]any{"products": []string{p2}}).JSON(t, &preview)
		if preview.TotalPrice != "200.00" || len(preview.Products) != 1 || preview.Products[0].Amount != "200.00" {
			t.Errorf("choosing the 200.00 product: %+v", preview)
		}
		tn.Do("POST", "/package/"+bundle+"/preview", nil).JSON(t, &preview)
		if preview.TotalPrice != "300.00" || len(preview.Products) != 2 || preview.Products[0].Amount != "100.00" {
			t.Errorf("both products: %+v", preview)
		}

		// Agreement lists: a provider type Kadens does not offer finds none.
		if r := tn.Do("GET", "/paymentagreement?providerType=Vipps&subscriberId="+f.subscriber, nil); r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "[]" {
			t.Errorf("Vipps agreements: %d %s", r.Status, r.Body)
		}
		wantFieldIn(t, tn.Do("GET", "/paymentagreement?providerType=Bitcoin", nil), "providerType")
	})
}
