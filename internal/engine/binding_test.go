package engine_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/ledger"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/substatus"
)

// bindingView is a period with the binding fields of the API's view.
type bindingView struct {
	subView
	BindingEndsAt              *time.Time `json:"bindingEndsAt"`
	ScheduledCancelEffectiveAt *time.Time `json:"scheduledCancelEffectiveAt"`
}

func (w *world) bview(id string) bindingView {
	w.t.Helper()
	var v bindingView
	r := w.tn.Do("GET", "/subscription/"+id, nil)
	if r.Status != http.StatusOK {
		w.t.Fatalf("GET subscription %s: %d", id, r.Status)
	}
	r.JSON(w.t, &v)
	return v
}

// last is the last period of the series id begins (renewals only).
func (w *world) last(id string) bindingView {
	w.t.Helper()
	s := w.series(id)
	return w.bview(s[len(s)-1].ID)
}

// boundPkg creates a template of price per period on plan, bound for
// periods (0: no contract) with rule ("" leaves it to the default), of
// products (default the digital product, VAT 0).
func (w *world) boundPkg(name, price, plan string, periods int, rule string, products ...string) string {
	w.t.Helper()
	if len(products) == 0 {
		products = []string{w.digital}
	}
	ps := make([]map[string]any, len(products))
	for i, p := range products {
		ps[i] = map[string]any{"productId": p}
	}
	body := map[string]any{"Name": name, "Currency": "NOK", "Price": jsonNumber(price), "products": ps, "BillingPlans": []string{plan}}
	if periods > 0 {
		c := map[string]any{"bindingPeriods": periods, "terms": "bound"}
		if rule != "" {
			c["earlyCancellation"] = rule
		}
		body["contract"] = c
	}
	return w.create("/package", body)
}

// cancel cancels id with body and returns the answer's status and view.
func (w *world) cancel(id string, body map[string]any) (int, bindingView) {
	w.t.Helper()
	r := w.tn.Do("POST", "/subscription/"+id+"/cancel", body)
	var v bindingView
	if r.Status == http.StatusOK {
		r.JSON(w.t, &v)
	}
	return r.Status, v
}

// openCharges are the subscriber's open account items in NOK.
func (w *world) openCharges(subscriber string) []store.OpenItem {
	w.t.Helper()
	_, items, err := w.e.Store.OpenItemsOf(w.ctx, store.AccountKey{SubscriberID: subscriber, Currency: "NOK"}, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		w.t.Fatal(err)
	}
	return items
}

func (w *world) invoices(subscriber string) []store.Invoice {
	w.t.Helper()
	invs, _, err := w.e.Store.ListInvoices(w.ctx, store.DocumentFilter{SubscriberID: subscriber}, store.Page{Limit: 1000})
	if err != nil {
		w.t.Fatal(err)
	}
	return invs
}

// begins starts a subscription for subscriber on template at start.
func (w *world) beginFor(subscriber, template string, start time.Time) store.Subscription {
	w.t.Helper()
	keep := w.subscriber
	w.subscriber = subscriber
	defer func() { w.subscriber = keep }()
	return w.begin(template, start)
}

func checkLedger(t *testing.T, e *apitest.Env) {
	t.Helper()
	report, err := ledger.Check(context.Background(), e.Store, ledger.Options{TenantID: e.Tenant.ID})
	if err != nil || !report.Clean() {
		t.Fatalf("ledger check: %v %+v", err, report.Problems)
	}
}

// TestBindingEndOfBinding is the EndOfBinding rule end to end: a 12-month
// bound monthly package started on 31 January and cancelled in month 3
// keeps renewing until month 12 and ends at the binding end, with twelve
// invoices; every way of cancelling waits for the binding end, a second
// cancellation and a plan change are refused meanwhile.
func TestBindingEndOfBinding(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		sd := w.tn.Seed(t)
		monthly := w.plan("Month", 0)
		bound := w.boundPkg("Bound", "100", monthly, 12, "") // the default rule
		other := w.boundPkg("Other", "200", monthly, 0, "")
		start := local(2027, 1, 31)
		w.advance(start)
		subs := map[string]string{}
		firsts := map[string]store.Subscription{}
		for _, mode := range []string{"EndOfPeriod", "Immediately", "Date"} {
			subs[mode] = sd.Subscriber(seed.Subscriber{Name: "Bound " + mode})
			firsts[mode] = w.beginFor(subs[mode], bound, start)
		}
		bindingEnd := local(2028, 1, 31)
		if v := w.bview(firsts["EndOfPeriod"].ID); v.BindingEndsAt == nil || !v.BindingEndsAt.Equal(bindingEnd) {
			t.Fatalf("bindingEndsAt %v, want %s (12 months from 31 January)", v.BindingEndsAt, bindingEnd)
		}
		w.advance(local(2027, 4, 10)) // month 3: 31 March – 30 April
		bodies := map[string]map[string]any{
			"EndOfPeriod": {"mode": "EndOfPeriod", "reason": "moving"},
			"Immediately": {"mode": "Immediately", "reason": "moving"},
			"Date":        {"cancellationTime": local(2027, 4, 20).Format(time.RFC3339), "reason": "moving"},
		}
		for mode, body := range bodies {
			cur := w.last(firsts[mode].ID)
			if cur.startOslo() != local(2027, 3, 31) {
				t.Fatalf("%s: current period starts %s, want 31 March", mode, cur.PeriodStart.In(oslo))
			}
			status, v := w.cancel(cur.ID, body)
			if status != http.StatusOK {
				t.Fatalf("%s: cancel %d", mode, status)
			}
			if v.CancelledAt != nil || v.Status != substatus.Active || v.ScheduledCancelEffectiveAt == nil || !v.ScheduledCancelEffectiveAt.Equal(bindingEnd) {
				t.Fatalf("%s: after cancel cancelledAt %v status %s scheduled %v, want active, scheduled for %s", mode, v.CancelledAt, v.Status, v.ScheduledCancelEffectiveAt, bindingEnd)
			}
			if r := w.tn.Do("POST", "/subscription/"+cur.ID+"/cancel", body); r.Status != http.StatusBadRequest || !slices.Contains(r.Fields(t), "id") {
				t.Fatalf("%s: second cancel %d, want 400 naming id", mode, r.Status)
			}
			if r := w.tn.Do("POST", "/subscription/"+cur.ID+"/scheduledchange", map[string]any{"processingType": "Immediately", "templatePackageId": other}); r.Status != http.StatusBadRequest || !slices.Contains(r.Fields(t), "id") {
				t.Fatalf("%s: plan change of a cancelled series %d, want 400 naming id", mode, r.Status)
			}
		}
		// Each accepted cancellation was told at once, on the period asked
		// about.
		scheduled := map[string]bool{}
		for _, ev := range w.events(store.EventSubscriptionCancellationScheduled) {
			scheduled[ev.Subject] = true
		}
		for mode, first := range firsts {
			if cur := w.last(first.ID); !scheduled["/subscription/"+cur.ID] {
				t.Errorf("%s: no SubscriptionCancellationScheduled on %s (events %v)", mode, cur.ID, scheduled)
			}
		}
		// The upcoming invoice still renews and shows the cancellation
		// waiting for the binding end.
		var up struct {
			WillRenew bool
			Binding   *struct {
				EndsAt                time.Time
				CancellationScheduled bool
				PeriodsAfter          int
			}
			PendingChanges []struct {
				Kind string
				At   *time.Time
			}
		}
		w.tn.Do("GET", "/subscription/"+firsts["EndOfPeriod"].ID+"/upcominginvoice", nil).JSON(t, &up)
		if !up.WillRenew || up.Binding == nil || !up.Binding.CancellationScheduled || !up.Binding.EndsAt.Equal(bindingEnd) || up.Binding.PeriodsAfter != 9 ||
			len(up.PendingChanges) != 1 || up.PendingChanges[0].Kind != "Cancellation" || !up.PendingChanges[0].At.Equal(bindingEnd) {
			t.Fatalf("upcoming invoice %+v", up)
		}
		w.advance(local(2028, 3, 15))
		wantDays := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
		for mode, first := range firsts {
			periods := w.series(first.ID)
			if len(periods) != 12 {
				t.Fatalf("%s: %d periods, want 12 (renewing until the binding end)", mode, len(periods))
			}
			for i, p := range periods {
				if d := p.PeriodStart.In(oslo).Day(); d != wantDays[i] {
					t.Errorf("%s: period %d starts on day %d, want %d", mode, i, d, wantDays[i])
				}
			}
			lastP := periods[11]
			if !lastP.PeriodEnd.Equal(bindingEnd) || lastP.CancelEffectiveAt == nil || !lastP.CancelEffectiveAt.Equal(bindingEnd) ||
				lastP.DeactivatedAt == nil || !lastP.DeactivatedAt.Equal(bindingEnd) || lastP.CancelReason != "moving" {
				t.Fatalf("%s: last period %+v, want cancelled and deactivated at %s", mode, lastP.Subscription, bindingEnd)
			}
			if n := len(w.invoices(subs[mode])); n != 12 {
				t.Errorf("%s: %d invoices, want 12", mode, n)
			}
			if items := w.openCharges(subs[mode]); len(items) != 0 {
				t.Errorf("%s: open account items %+v, want none (EndOfBinding charges nothing)", mode, items)
			}
			if v := w.bview(lastP.ID); v.BindingEndsAt != nil || v.ScheduledCancelEffectiveAt != nil {
				t.Errorf("%s: bindingEndsAt %v scheduled %v after the binding, want null", mode, v.BindingEndsAt, v.ScheduledCancelEffectiveAt)
			}
		}
	})
}

// startOslo is the period's start, in Oslo.
func (v bindingView) startOslo() time.Time { return v.PeriodStart.In(oslo) }

// TestBindingChargeRemainder is the ChargeRemainder rule end to end: a
// 12-month bound monthly package of a 0 % and a 25 % product cancelled in
// month 3 ends as asked (at once, at the period end, at a chosen date)
// and is charged exactly the 9 remaining periods' price, split by the
// products' VAT rates, once.
func TestBindingChargeRemainder(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		sd := w.tn.Seed(t)
		print := sd.Product(seed.Product{Name: "Nordavis Papir", Category: "print", VATRate: "25"})
		monthly := w.plan("Month", 0)
		bound := w.boundPkg("Bound", "100", monthly, 12, "ChargeRemainder", w.digital, print)
		start := local(2027, 1, 1)
		w.advance(start)
		cases := []struct {
			name    string
			body    map[string]any
			ends    time.Time
			periods int
		}{
			{"Immediately", map[string]any{"mode": "Immediately"}, local(2027, 3, 10), 3},
			{"EndOfPeriod", map[string]any{"mode": "EndOfPeriod"}, local(2027, 4, 1), 3},
			{"Date", map[string]any{"cancellationTime": local(2027, 3, 20).Format(time.RFC3339)}, local(2027, 3, 20), 3},
		}
		subs := map[string]string{}
		firsts := map[string]store.Subscription{}
		for _, c := range cases {
			subs[c.name] = sd.Subscriber(seed.Subscriber{Name: "Charged " + c.name})
			firsts[c.name] = w.beginFor(subs[c.name], bound, start)
		}
		w.advance(local(2027, 3, 10))
		for _, c := range cases {
			cur := w.last(firsts[c.name].ID)
			status, v := w.cancel(cur.ID, c.body)
			if status != http.StatusOK || v.CancelEffectiveAt == nil || !v.CancelEffectiveAt.Equal(c.ends) {
				t.Fatalf("%s: cancel %d, effective %v, want %s", c.name, status, v.CancelEffectiveAt, c.ends)
			}
			if v.ScheduledCancelEffectiveAt != nil {
				t.Errorf("%s: a ChargeRemainder cancellation is not scheduled", c.name)
			}
		}
		w.advance(local(2028, 2, 1))
		for _, c := range cases {
			if n := len(w.series(firsts[c.name].ID)); n != c.periods {
				t.Errorf("%s: %d periods, want %d", c.name, n, c.periods)
			}
			if n := len(w.invoices(subs[c.name])); n != c.periods {
				t.Errorf("%s: %d invoices, want %d", c.name, n, c.periods)
			}
			items := w.openCharges(subs[c.name])
			if len(items) != 2 {
				t.Fatalf("%s: open items %+v, want two charges (one per VAT rate)", c.name, items)
			}
			rates := map[string]int64{}
			for _, it := range items {
				if it.Kind != "Charge" || it.Description != "Remaining binding period, 9 periods" {
					t.Errorf("%s: item %+v", c.name, it)
				}
				rates[it.VATRate.String()] += it.Remaining
			}
			// 9 periods × 100.00, half each product.
			if rates["0"] != 45000 || rates["25"] != 45000 {
				t.Errorf("%s: charged by rate %v, want 450.00 at 0 %% and 450.00 at 25 %%", c.name, rates)
			}
		}
		checkLedger(t, e) // the charges' Binding source included
	})
}

// TestBindingChargeRemainderOnceConcurrently fires one cancellation from
// 8 goroutines: one wins, and the remaining periods are charged once. A
// renewal created ahead (14 days) is cancelled with it and credited.
func TestBindingChargeRemainderOnceConcurrently(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		bound := w.boundPkg("Bound", "100", w.plan("Month", 14), 12, "ChargeRemainder")
		start := local(2027, 1, 1)
		w.advance(start)
		first := w.begin(bound, start)
		w.advance(local(2027, 3, 20)) // month 3, month 4 created ahead on 18 March
		cur := w.series(first.ID)[2]
		if cur.NextID == nil {
			t.Fatal("month 4 was not created ahead")
		}
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			codes []int
		)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := w.tn.Do("POST", "/subscription/"+cur.ID+"/cancel", map[string]any{"mode": "Immediately"})
				mu.Lock()
				codes = append(codes, r.Status)
				mu.Unlock()
			}()
		}
		wg.Wait()
		ok := 0
		for _, c := range codes {
			switch c {
			case http.StatusOK:
				ok++
			case http.StatusBadRequest, http.StatusConflict:
			default:
				t.Errorf("cancel answered %d", c)
			}
		}
		if ok != 1 {
			t.Fatalf("answers %v, want exactly one 200", codes)
		}
		items := w.openCharges(w.subscriber)
		var charged int64
		n := 0
		for _, it := range items {
			if it.Description == "Remaining binding period, 9 periods" {
				charged += it.Remaining
				n++
			}
		}
		if n != 1 || charged != 90000 {
			t.Fatalf("binding charges %+v, want one of 900.00", items)
		}
	})
}

// TestBindingPlanChanges: during the binding a change to a lower price per
// period (normalised to a month) is refused on every processing type
// unless it takes effect at or after the binding end; an upward change is
// allowed and keeps the binding end; a target with its own contract starts
// a new binding at the change; after the binding a downward change is
// allowed.
func TestBindingPlanChanges(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		sd := w.tn.Seed(t)
		monthly, yearly := w.plan("Month", 0), w.plan("Year", 0)
		bound := w.boundPkg("Bound", "100", monthly, 12, "")
		cheaper := w.boundPkg("Cheaper", "80", monthly, 0, "")
		cheaperYearly := w.boundPkg("Cheaper yearly", "1000", yearly, 0, "") // 83.33 a month
		dearer := w.boundPkg("Dearer", "150", monthly, 0, "")
		dearerYearly := w.boundPkg("Dearer yearly", "1300", yearly, 0, "") // 108.33 a month
		dearerBound := w.boundPkg("Dearer bound", "150", monthly, 6, "ChargeRemainder")
		start := local(2027, 1, 1)
		bindingEnd := local(2028, 1, 1)
		w.advance(start)
		first := w.begin(bound, start)
		w.advance(local(2027, 3, 10))
		cur := w.last(first.ID)
		refused := []map[string]any{
			{"processingType": "Immediately", "templatePackageId": cheaper},
			{"processingType": "Immediately", "templatePackageId": cheaperYearly},
			{"processingType": "OnRenewal", "templatePackageId": cheaper},
			{"processingType": "OnScheduledTime", "templatePackageId": cheaper, "scheduledTime": local(2027, 12, 31).Format(time.RFC3339)},
		}
		for _, body := range refused {
			r := w.tn.Do("POST", "/subscription/"+cur.ID+"/scheduledchange", body)
			if r.Status != http.StatusBadRequest || !slices.Contains(r.Fields(t), "bindingPeriod") {
				t.Fatalf("%v during the binding: %d %s, want 400 naming bindingPeriod", body, r.Status, r.Body)
			}
		}
		// At the binding end it may be registered (and is revoked here).
		id, status := change(t, w, cur.ID, map[string]any{"processingType": "OnScheduledTime", "templatePackageId": cheaper, "scheduledTime": bindingEnd.Format(time.RFC3339)})
		if status != http.StatusCreated {
			t.Fatalf("downward change at the binding end: %d", status)
		}
		if r := w.tn.Do("DELETE", "/subscription/"+cur.ID+"/scheduledchange/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d", r.Status)
		}
		// Upward: allowed, and the new series keeps the binding end.
		if _, status := change(t, w, cur.ID, map[string]any{"processingType": "OnRenewal", "templatePackageId": dearerYearly}); status != http.StatusCreated {
			t.Fatalf("upward OnRenewal change: %d", status)
		}
		if _, status := change(t, w, cur.ID, map[string]any{"processingType": "Immediately", "templatePackageId": dearer}); status != http.StatusCreated {
			t.Fatalf("upward Immediately change: %d", status)
		}
		next := w.bview(*w.bview(cur.ID).NextID)
		if next.Package.Name != "Dearer" || next.BindingEndsAt == nil || !next.BindingEndsAt.Equal(bindingEnd) {
			t.Fatalf("after the upward change: package %s bindingEndsAt %v, want Dearer bound until %s", next.Package.Name, next.BindingEndsAt, bindingEnd)
		}
		// Still bound: down to the first plan's price is refused.
		if r := w.tn.Do("POST", "/subscription/"+next.ID+"/scheduledchange", map[string]any{"processingType": "Immediately", "templatePackageId": bound}); r.Status != http.StatusBadRequest {
			t.Fatalf("down again during the binding: %d", r.Status)
		}
		// After the binding end: down is allowed.
		w.advance(local(2028, 1, 5))
		cur = w.last(next.ID)
		if cur.BindingEndsAt != nil {
			t.Fatalf("bindingEndsAt %v after the binding", cur.BindingEndsAt)
		}
		if _, status := change(t, w, cur.ID, map[string]any{"processingType": "Immediately", "templatePackageId": cheaper}); status != http.StatusCreated {
			t.Fatalf("downward change after the binding: %d", status)
		}

		// A target with its own contract starts a new binding at the change.
		other := sd.Subscriber(seed.Subscriber{Name: "Rebound"})
		s2 := w.beginFor(other, bound, local(2028, 1, 5))
		w.advance(local(2028, 3, 10))
		c2 := w.last(s2.ID)
		if _, status := change(t, w, c2.ID, map[string]any{"processingType": "Immediately", "templatePackageId": dearerBound}); status != http.StatusCreated {
			t.Fatalf("change to a bound package: %d", status)
		}
		n2 := w.bview(*w.bview(c2.ID).NextID)
		if n2.BindingEndsAt == nil || !n2.BindingEndsAt.Equal(local(2028, 9, 10)) {
			t.Fatalf("new binding ends %v, want 6 months from the change (10 September)", n2.BindingEndsAt)
		}
	})
}

// TestBindingChainAndRenewal: renewals carry the binding; a chain counts
// it across its steps from the series start (a step's own contract starts
// none); a cancellation on a later step still waits for the binding end.
func TestBindingChainAndRenewal(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		monthly := w.plan("Month", 0)
		intro := w.boundPkg("Intro bound", "99", monthly, 6, "")
		full := w.boundPkg("Full bound", "199", monthly, 12, "ChargeRemainder")
		chain := w.create("/packagechain", map[string]any{"name": "Intro", "packageChain": map[string]any{"steps": []map[string]any{
			{"step": 1, "nextPackageId": intro, "periods": 2}, {"step": 2, "nextPackageId": full}}}})
		var tmpl map[string]any
		w.tn.Do("GET", "/package/"+intro, nil).JSON(t, &tmpl)
		tmpl["packageChainId"] = chain
		if r := w.tn.Do("PUT", "/package/"+intro, tmpl); r.Status != http.StatusNoContent {
			t.Fatalf("link template: %d %s", r.Status, r.Body)
		}
		start := local(2027, 1, 1)
		bindingEnd := local(2027, 7, 1)
		w.advance(start)
		first := w.begin(intro, start)
		// A cancellation scheduled on step 1 goes through the chain step.
		early := w.tn.Seed(t).Subscriber(seed.Subscriber{Name: "Early"})
		earlyFirst := w.beginFor(early, intro, start)
		w.advance(local(2027, 1, 10))
		if status, v := w.cancel(earlyFirst.ID, map[string]any{"mode": "EndOfPeriod"}); status != http.StatusOK || v.ScheduledCancelEffectiveAt == nil {
			t.Fatalf("cancel on step 1: %d %+v", status, v)
		}
		w.advance(local(2027, 4, 10)) // month 4, on step 2 since 1 March
		periods := w.series(first.ID)
		if len(periods) != 4 || periods[3].Package.Name != "Full bound" {
			t.Fatalf("%d periods, last on %s; want 4, the last on step 2", len(periods), periods[len(periods)-1].Package.Name)
		}
		for i, p := range periods {
			if v := w.bview(p.ID); v.BindingEndsAt == nil || !v.BindingEndsAt.Equal(bindingEnd) {
				t.Fatalf("period %d (%s): bindingEndsAt %v, want %s from the series start", i, p.Package.Name, v.BindingEndsAt, bindingEnd)
			}
		}
		// The rule is the one the binding was started with (EndOfBinding).
		status, v := w.cancel(periods[3].ID, map[string]any{"mode": "Immediately"})
		if status != http.StatusOK || v.ScheduledCancelEffectiveAt == nil || !v.ScheduledCancelEffectiveAt.Equal(bindingEnd) {
			t.Fatalf("cancel on step 2: %d scheduled %v, want scheduled for %s", status, v.ScheduledCancelEffectiveAt, bindingEnd)
		}
		w.advance(local(2027, 9, 1))
		periods = w.series(first.ID)
		if len(periods) != 6 || !periods[5].PeriodEnd.Equal(bindingEnd) || periods[5].DeactivatedAt == nil {
			t.Fatalf("%d periods, want 6 ending at the binding end", len(periods))
		}
		if items := w.openCharges(w.subscriber); len(items) != 0 {
			t.Fatalf("open items %+v, want none", items)
		}
		earlyPeriods := w.series(earlyFirst.ID)
		if len(earlyPeriods) != 6 || earlyPeriods[2].Package.Name != "Full bound" || !earlyPeriods[5].PeriodEnd.Equal(bindingEnd) || earlyPeriods[5].DeactivatedAt == nil {
			t.Fatalf("cancelled on step 1: %d periods, want 6 through step 2 ending at the binding end", len(earlyPeriods))
		}
	})
}

// TestBindingFree: once the binding has ended, or in its last bound
// period, or without a contract, cancellations are ordinary: nothing waits
// and nothing is charged.
func TestBindingFree(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		sd := w.tn.Seed(t)
		monthly := w.plan("Month", 0)
		short := w.boundPkg("Short charge", "100", monthly, 2, "ChargeRemainder")
		lastBound := w.boundPkg("Three", "100", monthly, 3, "")
		lastCharge := w.boundPkg("Three charge", "100", monthly, 3, "ChargeRemainder")
		free := w.boundPkg("Free", "100", monthly, 0, "")
		start := local(2027, 1, 1)
		w.advance(start)
		cases := []struct {
			name, template string
			body           map[string]any
			ends           time.Time
		}{
			{"after the binding, Immediately", short, map[string]any{"mode": "Immediately"}, local(2027, 3, 10)},
			{"after the binding, Date", short, map[string]any{"cancellationTime": local(2027, 3, 20).Format(time.RFC3339)}, local(2027, 3, 20)},
			{"last bound period, EndOfBinding, Immediately", lastBound, map[string]any{"mode": "Immediately"}, local(2027, 4, 1)},
			{"last bound period, ChargeRemainder, Immediately", lastCharge, map[string]any{"mode": "Immediately"}, local(2027, 3, 10)},
			{"last bound period, ChargeRemainder, EndOfPeriod", lastCharge, map[string]any{"mode": "EndOfPeriod"}, local(2027, 4, 1)},
			{"no contract", free, map[string]any{"mode": "Immediately"}, local(2027, 3, 10)},
			{"last bound period, EndOfBinding, Date", lastBound, map[string]any{"cancellationTime": local(2027, 3, 20).Format(time.RFC3339)}, local(2027, 4, 1)},
		}
		subs := map[string]string{}
		firsts := map[string]store.Subscription{}
		for _, c := range cases {
			subs[c.name] = sd.Subscriber(seed.Subscriber{Name: c.name})
			firsts[c.name] = w.beginFor(subs[c.name], c.template, start)
		}
		w.advance(local(2027, 3, 10))
		for _, c := range cases {
			cur := w.last(firsts[c.name].ID)
			status, v := w.cancel(cur.ID, c.body)
			if status != http.StatusOK || v.CancelEffectiveAt == nil || !v.CancelEffectiveAt.Equal(c.ends) || v.ScheduledCancelEffectiveAt != nil {
				t.Fatalf("%s: cancel %d effective %v scheduled %v, want effective %s", c.name, status, v.CancelEffectiveAt, v.ScheduledCancelEffectiveAt, c.ends)
			}
			if items := w.openCharges(subs[c.name]); len(items) != 0 {
				t.Errorf("%s: open items %+v, want none", c.name, items)
			}
		}
		checkLedger(t, e)

		// In the last bound period a downward change may run at the
		// renewal (the binding end), not before.
		cheaper := w.boundPkg("Cheaper", "50", monthly, 0, "")
		other := sd.Subscriber(seed.Subscriber{Name: "Changes"})
		s := w.beginFor(other, lastBound, local(2027, 3, 10))
		w.advance(local(2027, 5, 15)) // period 3 of 3: 10 May – 10 June
		cur := w.last(s.ID)
		if r := w.tn.Do("POST", "/subscription/"+cur.ID+"/scheduledchange", map[string]any{"processingType": "Immediately", "templatePackageId": cheaper}); r.Status != http.StatusBadRequest {
			t.Fatalf("downward Immediately in the last bound period: %d", r.Status)
		}
		if _, status := change(t, w, cur.ID, map[string]any{"processingType": "OnRenewal", "templatePackageId": cheaper}); status != http.StatusCreated {
			t.Fatalf("downward OnRenewal from the last bound period: %d", status)
		}
		w.advance(local(2027, 6, 15))
		if after := w.last(s.ID); after.Package.Name != "Cheaper" || after.BindingEndsAt != nil {
			t.Fatalf("after the binding: %s bound until %v, want Cheaper, free", after.Package.Name, after.BindingEndsAt)
		}
	})
}
