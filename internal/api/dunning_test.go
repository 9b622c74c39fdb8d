package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
)

func (f *billingFixture) reminders(invoiceID string) []invoicing.Reminder {
	f.t.Helper()
	r := f.tn.Do("GET", "/reminder?invoiceId="+invoiceID, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET /reminder: %d %s", r.Status, r.Body)
	}
	var out []invoicing.Reminder
	r.JSON(f.t, &out)
	return out
}

func (f *billingFixture) subscription(id string) struct {
	Status       string     `json:"status"`
	CancelReason string     `json:"cancelReason"`
	CancelledAt  *time.Time `json:"cancelledAt"`
	NextID       *string    `json:"nextSubscriptionId"`
} {
	f.t.Helper()
	var v struct {
		Status       string     `json:"status"`
		CancelReason string     `json:"cancelReason"`
		CancelledAt  *time.Time `json:"cancelledAt"`
		NextID       *string    `json:"nextSubscriptionId"`
	}
	r := f.tn.Do("GET", "/subscription/"+id, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET subscription: %d %s", r.Status, r.Body)
	}
	r.JSON(f.t, &v)
	return v
}

func TestDunning(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		create(t, f.tn, "/dunningprocess", map[string]any{"name": "Standard", "reminderDays": []int{7, 14}, "reminderFee": 35,
			"paymentStopDays": 7, "isDefault": true})
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		unpaid := f.order(&start)
		payer := create(t, f.tn, "/subscriber", map[string]any{"name": "Ola Betaler", "country": "NO"})
		saved := f.subscriber
		f.subscriber = payer
		paid := f.order(&start)
		f.subscriber = saved
		invUnpaid := f.invoices("subscriptionId=" + unpaid)[0]
		invPaid := f.invoices("subscriptionId=" + paid)[0]

		// Nothing before 7 days after the due date.
		f.advance(osloDay(2027, 2, 7).Add(23 * time.Hour))
		if rs := f.reminders(invUnpaid.ID); len(rs) != 0 {
			t.Fatalf("reminded early: %+v", rs)
		}
		f.advance(osloDay(2027, 2, 8))
		for _, inv := range []store.Invoice{invUnpaid, invPaid} {
			rs := f.reminders(inv.ID)
			if len(rs) != 1 || rs[0].Number != 1 || rs[0].FeeAmount.String() != "35.00" || !rs[0].IssuedAt.Equal(osloDay(2027, 2, 8)) {
				t.Fatalf("first reminder: %+v", rs)
			}
			if a := f.account(inv.SubscriberAccountID); a.OutstandingCharges.String() != "35.00" || a.Balance.String() != "283.00" {
				t.Fatalf("after the first reminder: charges %s balance %s", a.OutstandingCharges, a.Balance)
			}
		}
		// One of them pays after the first reminder: no more reminders for it.
		f.pay(map[string]any{"invoiceId": invPaid.ID, "amount": 248, "providerReference": "bank-1"}, http.StatusCreated)

		f.advance(osloDay(2027, 2, 15))
		if rs := f.reminders(invUnpaid.ID); len(rs) != 2 || rs[1].Number != 2 || !rs[1].IssuedAt.Equal(osloDay(2027, 2, 15)) {
			t.Fatalf("second reminder: %+v", rs)
		}
		if rs := f.reminders(invPaid.ID); len(rs) != 1 {
			t.Fatalf("a paid invoice was reminded again: %+v", rs)
		}
		var evs []store.Event
		f.tn.Do("GET", "/events?eventType=ReminderIssued", nil).JSON(t, &evs)
		if len(evs) != 3 {
			t.Fatalf("%d ReminderIssued events, want 3", len(evs))
		}

		// Seven days after the last reminder: payment stop.
		f.advance(osloDay(2027, 2, 21))
		if s := f.subscription(unpaid); s.Status != "Active" {
			t.Fatalf("stopped early: %+v", s)
		}
		f.advance(osloDay(2027, 2, 23))
		s := f.subscription(unpaid)
		if s.Status != "Cancelled" || s.CancelReason != "PaymentStop" || s.CancelledAt == nil || !s.CancelledAt.Equal(osloDay(2027, 2, 22)) {
			t.Fatalf("after payment stop: %+v", s)
		}
		// The unpaid period is credited for the 7 days it will not run
		// (248.00 × 7/28 = 62.00), and the March period created ahead is
		// credited whole (its reminder-fee line stays owed).
		cs := f.creditNotes("invoiceId=" + invUnpaid.ID)
		if len(cs) != 1 || cs[0].Gross.String() != "62.00" {
			t.Fatalf("credit of the stopped period: %+v", cs)
		}
		if s.NextID == nil {
			t.Fatal("the renewal created ahead is missing")
		}
		if ahead := f.subscription(*s.NextID); ahead.Status != "Cancelled" {
			t.Fatalf("period ahead: %+v", ahead)
		}
		march := f.invoices("subscriptionId=" + *s.NextID)[0]
		if cs := f.creditNotes("invoiceId=" + march.ID); len(cs) != 1 || cs[0].Gross.String() != "248.00" {
			t.Fatalf("credit of the period ahead: %+v", cs)
		}
		if d := f.demand(march.PaymentDemandID); d.Status != billing.DemandOpen || d.Amount.String() != "283.00" {
			t.Fatalf("March demand: %+v", d)
		}
		if p := f.subscription(paid); p.Status != "Active" || p.CancelledAt != nil {
			t.Fatalf("the paying subscriber was stopped: %+v", p)
		}
		if rs := f.reminders(invUnpaid.ID); len(rs) != 2 {
			t.Fatalf("reminders after the stop: %d", len(rs))
		}
		ledgerClean(t, e, f.tn)
	})
}

func TestDunningProcessValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		for _, tc := range []struct {
			name   string
			body   map[string]any
			fields []string
		}{
			{"no days", map[string]any{"name": "x", "reminderDays": []int{}}, []string{"reminderDays"}},
			{"not ascending", map[string]any{"name": "x", "reminderDays": []int{14, 7}}, []string{"reminderDays"}},
			{"day zero", map[string]any{"name": "x", "reminderDays": []int{0}}, []string{"reminderDays"}},
			{"fee decimals", map[string]any{"name": "x", "reminderDays": []int{7}, "reminderFee": 1.001}, []string{"reminderFee"}},
			{"negative stop", map[string]any{"name": "x", "reminderDays": []int{7}, "paymentStopDays": -1}, []string{"paymentStopDays"}},
			{"unknown policy", map[string]any{"name": "x", "reminderDays": []int{7}, "prorationPolicyId": "01900000-0000-7000-8000-000000000000"}, []string{"prorationPolicyId"}},
			{"no name", map[string]any{"reminderDays": []int{7}}, []string{"name"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := tn.Do("POST", "/dunningprocess", tc.body)
				if fields := r.Fields(t); len(fields) != len(tc.fields) || fields[0] != tc.fields[0] {
					t.Fatalf("fields %v, want %v", fields, tc.fields)
				}
			})
		}
		if fields := tn.Do("POST", "/prorationpolicy", map[string]any{"name": "x", "paidProration": "Sometimes"}).Fields(t); fields[0] != "paidProration" {
			t.Fatalf("fields %v", fields)
		}
		policy := create(t, tn, "/prorationpolicy", map[string]any{"name": "Default"})
		var p invoicing.ProrationPolicy
		tn.Do("GET", "/prorationpolicy/"+policy, nil).JSON(t, &p)
		if p.PaidProration != billing.ProrateAllowanceForRemaining || p.NotPaidProration != billing.ProrateChargeForConsumed {
			t.Fatalf("defaults: %+v", p)
		}
		first := create(t, tn, "/dunningprocess", map[string]any{"name": "A", "reminderDays": []int{7}, "prorationPolicyId": policy, "isDefault": true})
		second := create(t, tn, "/dunningprocess", map[string]any{"name": "B", "reminderDays": []int{10, 20}, "reminderFee": "70", "isDefault": true})
		var a, b invoicing.DunningProcess
		tn.Do("GET", "/dunningprocess/"+first, nil).JSON(t, &a)
		tn.Do("GET", "/dunningprocess/"+second, nil).JSON(t, &b)
		if a.IsDefault || !b.IsDefault || b.ReminderFee != "70.00" || len(b.ReminderDays) != 2 {
			t.Fatalf("one default: %+v %+v", a, b)
		}
		// In use: the policy by a process, the process by a plan.
		if fields := tn.Do("DELETE", "/prorationpolicy/"+policy, nil).Fields(t); fields[0] != "id" {
			t.Fatalf("delete policy in use: %v", fields)
		}
		plan := create(t, tn, "/billingplan", map[string]any{"name": "P", "intervalUnit": "Month", "dunningProcessId": first})
		if fields := tn.Do("DELETE", "/dunningprocess/"+first, nil).Fields(t); fields[0] != "id" {
			t.Fatalf("delete process in use: %v", fields)
		}
		if fields := tn.Do("POST", "/billingplan", map[string]any{"name": "Q", "intervalUnit": "Month",
			"dunningProcessId": "01900000-0000-7000-8000-000000000000"}).Fields(t); fields[0] != "dunningProcessId" {
			t.Fatalf("unknown process on a plan: %v", fields)
		}
		if r := tn.Do("PUT", "/billingplan/"+plan, map[string]any{"name": "P", "intervalUnit": "Month"}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT plan: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("DELETE", "/dunningprocess/"+first, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete unused process: %d %s", r.Status, r.Body)
		}
		other := e.NewTenant("dunning-other", false)
		for _, path := range []string{"/dunningprocess/" + second, "/prorationpolicy/" + policy} {
			if r := other.Do("GET", path, nil); r.Status != http.StatusNotFound {
				t.Fatalf("other tenant GET %s: %d", path, r.Status)
			}
			if r := other.Do("DELETE", path, nil); r.Status != http.StatusNotFound {
				t.Fatalf("other tenant DELETE %s: %d", path, r.Status)
			}
		}
		wantEmpty(t, other.Do("GET", "/reminder?invoiceId=01900000-0000-7000-8000-000000000000", nil), "reminders of an unknown invoice")
	})
}

// A process edited while a demand is in dunning applies from its next
// action on: dropping the payment stop means no stop.
func TestDunningProcessEditedMidway(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		process := create(t, f.tn, "/dunningprocess", map[string]any{"name": "Short", "reminderDays": []int{7}, "paymentStopDays": 7,
			"isDefault": true})
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		sub := f.order(&start)
		inv := f.invoices("subscriptionId=" + sub)[0]
		f.advance(osloDay(2027, 2, 9))
		if rs := f.reminders(inv.ID); len(rs) != 1 {
			t.Fatalf("reminders: %+v", rs)
		}
		if r := f.tn.Do("PUT", "/dunningprocess/"+process, map[string]any{"name": "Short", "reminderDays": []int{7}, "isDefault": true}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		f.advance(osloDay(2027, 2, 20))
		if s := f.subscription(sub); s.Status != "Active" || s.CancelledAt != nil {
			t.Fatalf("stopped although the process no longer stops: %+v", s)
		}
		ledgerClean(t, e, f.tn)
	})
}
