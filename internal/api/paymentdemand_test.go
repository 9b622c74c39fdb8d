package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
)

// demandCompatFields are the INFO-Subscription fields of a payment demand
// that the list reads set-wise (paymentdemand.go, demandViews).
type demandCompatFields struct {
	ID                     string     `json:"id"`
	InvoiceID              string     `json:"invoiceId"`
	SubscriptionID         *string    `json:"subscriptionId"`
	Status                 string     `json:"status"`
	OrderID                *string    `json:"orderId"`
	BillingPlanID          *string    `json:"billingPlanId"`
	SettleDate             *time.Time `json:"settleDate"`
	IsCredited             bool       `json:"isCredited"`
	SettlementTransactions struct {
		Payments []struct {
			PaymentID string      `json:"paymentId"`
			Amount    json.Number `json:"amount"`
			PaidAt    time.Time   `json:"paidAt"`
		} `json:"payments"`
		ConsumedAllowances []struct {
			AccountItemID *string     `json:"accountItemId"`
			Amount        json.Number `json:"amount"`
		} `json:"consumedAllowances"`
		GeneratedCharges []any `json:"generatedCharges"`
	} `json:"settlementTransactions"`
}

// TestPaymentDemandListMatchesGet: a page of payment demands — paid in
// parts with a surplus, partially paid, credited, renewals that consumed
// allowances, of several subscriptions — lists every demand byte for byte
// as GET /paymentdemand/{id} shows it, and its INFO-Subscription fields
// are what the subscription, the demand's succeeded payments and the
// invoice's allowance lines say (the per-demand reads the list replaced).
// The set-wise store reads stay inside their tenant.
func TestPaymentDemandListMatchesGet(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.NewTenant("demand-list", true))
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		subs := []string{f.order(&start), f.order(&start), f.order(&start)}
		invoiceOf := func(sub string) store.Invoice {
			invs := f.invoices("subscriptionId=" + sub)
			if len(invs) != 1 {
				t.Fatalf("subscription %s: %d invoices", sub, len(invs))
			}
			return invs[0]
		}
		paid, partial, credited := invoiceOf(subs[0]), invoiceOf(subs[1]), invoiceOf(subs[2])
		at := func(day int) string { return osloDay(2027, 1, day).Format(time.RFC3339) }

		// Paid in two parts, the second with 5.00 too much (an allowance
		// the renewals consume); a failed attempt between them counts for
		// nothing.
		f.pay(map[string]any{"invoiceId": paid.ID, "amount": json.Number("100.00"), "providerReference": "part-1", "paidAt": at(8)},
			http.StatusCreated)
		f.pay(map[string]any{"invoiceId": paid.ID, "amount": json.Number("1.00"), "providerReference": "failed", "status": "Failed",
			"paidAt": at(8)}, http.StatusCreated)
		rest := paid.Gross
		rest.Minor += 500 - 10000
		f.pay(map[string]any{"invoiceId": paid.ID, "amount": json.Number(rest.String()), "providerReference": "part-2",
			"paidAt": at(9)}, http.StatusCreated)
		f.pay(map[string]any{"invoiceId": partial.ID, "amount": json.Number("20.00"), "providerReference": "partial", "paidAt": at(9)},
			http.StatusCreated)
		if r := f.tn.Do("POST", "/invoice/"+credited.ID+"/credit", map[string]any{"reason": "Duplicate"}); r.Status != http.StatusCreated {
			t.Fatalf("credit: %d %s", r.Status, r.Body)
		}
		create(t, f.tn, "/subscriberaccount/"+paid.SubscriberAccountID+"/allowance",
			map[string]any{"amount": 100, "description": "Goodwill", "vatRate": 0})
		f.advance(osloDay(2027, 2, 20)) // the renewals are issued on 15 February

		r := f.tn.Do("GET", "/paymentdemand?limit=1000", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		var raw []json.RawMessage
		r.JSON(t, &raw)
		if len(raw) != 6 {
			t.Fatalf("%d demands, want 6", len(raw))
		}
		statuses, ofSub := map[string]int{}, map[string]bool{}
		consumed := 0
		for _, item := range raw {
			var d demandCompatFields
			if err := json.Unmarshal(item, &d); err != nil {
				t.Fatal(err)
			}
			one := f.tn.Do("GET", "/paymentdemand/"+d.ID, nil)
			if one.Status != http.StatusOK {
				t.Fatalf("GET %s: %d", d.ID, one.Status)
			}
			if got, want := compact(t, item), compact(t, one.Body); !bytes.Equal(got, want) {
				t.Errorf("demand %s\nlisted %s\nby id  %s", d.ID, got, want)
			}
			if want := expectedCompat(t, f, d); !reflect.DeepEqual(d, want) {
				t.Errorf("demand %s:\n got %+v\nwant %+v", d.ID, d, want)
			}
			statuses[d.Status]++
			ofSub[*d.SubscriptionID] = true
			consumed += len(d.SettlementTransactions.ConsumedAllowances)
		}
		if statuses[billing.DemandPaid] == 0 || statuses[billing.DemandCredited] == 0 || statuses[billing.DemandPartiallyPaid]+statuses[billing.DemandOverdue] == 0 ||
			len(ofSub) < 3 || consumed == 0 {
			t.Errorf("the page does not have the cases it is for: statuses %v, %d subscriptions, %d consumed allowances", statuses, len(ofSub), consumed)
		}

		// Paged two at a time: the same items.
		var paged []json.RawMessage
		for path := "/paymentdemand?limit=2"; path != ""; {
			var pg []json.RawMessage
			r := f.tn.Do("GET", path, nil)
			r.JSON(t, &pg)
			paged = append(paged, pg...)
			path = ""
			if m := nextLink.FindStringSubmatch(r.Header.Get("Link")); m != nil {
				path = strings.TrimPrefix(m[1], apitest.BaseURL)
			}
		}
		if len(paged) != len(raw) {
			t.Fatalf("paged %d demands, listed %d", len(paged), len(raw))
		}
		for i := range paged {
			if !bytes.Equal(compact(t, paged[i]), compact(t, raw[i])) {
				t.Errorf("page item %d differs:\n%s\n%s", i, paged[i], raw[i])
			}
		}

		// Another tenant sees none of it, listing or reading by id.
		other := e.NewTenant("demand-list-other", true)
		var none []json.RawMessage
		other.Do("GET", "/paymentdemand", nil).JSON(t, &none)
		if len(none) != 0 {
			t.Errorf("other tenant lists %d demands", len(none))
		}
		ctx := tenantCtx(other)
		origins, err := e.Store.SubscriptionOrigins(ctx, subs)
		if err != nil || len(origins) != 0 {
			t.Errorf("other tenant's subscription origins: %v %v", origins, err)
		}
		pays, err := e.Store.SucceededPayments(ctx, []string{paid.PaymentDemandID, partial.PaymentDemandID})
		if err != nil || len(pays) != 0 {
			t.Errorf("other tenant's payments: %v %v", pays, err)
		}
		lines, err := e.Store.AllowanceLines(ctx, []string{paid.ID, credited.ID})
		if err != nil || len(lines) != 0 {
			t.Errorf("other tenant's allowance lines: %v %v", lines, err)
		}
		if m, err := e.Store.AllowanceLines(tenantCtx(f.tn), nil); err != nil || len(m) != 0 {
			t.Errorf("no ids: %v %v", m, err)
		}
	})
}

// expectedCompat works out d's INFO-Subscription fields the way the
// per-demand reads did, through the API: the subscription, the demand's
// succeeded payments, the invoice's allowance lines.
func expectedCompat(t *testing.T, f *billingFixture, d demandCompatFields) demandCompatFields {
	t.Helper()
	want := d
	want.OrderID, want.BillingPlanID, want.SettleDate = nil, nil, nil
	want.IsCredited = d.Status == billing.DemandCredited
	st := &want.SettlementTransactions
	st.Payments, st.ConsumedAllowances = st.Payments[:0:0], st.ConsumedAllowances[:0:0]
	if d.SubscriptionID != nil {
		s := f.subscriptionView(*d.SubscriptionID)
		want.OrderID = s.OrderID
		if plan := s.Package.BillingPlan.BillingPlanID; plan != "" {
			want.BillingPlanID = &plan
		}
	}
	var pays []store.Payment
	f.tn.Do("GET", "/payment?limit=1000&status=Succeeded&paymentDemandId="+d.ID, nil).JSON(t, &pays)
	for _, p := range pays {
		if p.Applied.Minor == 0 {
			continue
		}
		st.Payments = append(st.Payments, struct {
			PaymentID string      `json:"paymentId"`
			Amount    json.Number `json:"amount"`
			PaidAt    time.Time   `json:"paidAt"`
		}{p.ID, json.Number(p.Applied.String()), p.PaidAt})
		if d.Status == billing.DemandPaid && (want.SettleDate == nil || p.PaidAt.After(*want.SettleDate)) {
			paidAt := p.PaidAt
			want.SettleDate = &paidAt
		}
	}
	for _, l := range f.invoice(d.InvoiceID).Lines {
		if l.Kind == billing.LineAllowance {
			a := l.Gross
			a.Minor = -a.Minor
			st.ConsumedAllowances = append(st.ConsumedAllowances, struct {
				AccountItemID *string     `json:"accountItemId"`
				Amount        json.Number `json:"amount"`
			}{l.AccountItemID, json.Number(a.String())})
		}
	}
	return want
}

func compact(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
