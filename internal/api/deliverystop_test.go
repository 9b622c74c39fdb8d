package api_test

import (
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	deliverywing "github.com/kadens/kadens/internal/delivery"
	"github.com/kadens/kadens/internal/seed"
)

type stopView struct {
	ID, SubscriptionID, AskedOnSubscriptionID string
	FirstDate, LastDate, State                string
	MissedDays, CreditedDays                  []string
	Credits                                   []struct {
		SubscriptionID             string
		Editions, CreditedEditions int
		AmountMinor                int64
		AllowanceItemID            *string
	}
}

// stopFixture: a Tue/Thu/Sat title at 399.00 a month (prices including VAT,
// 0 % VAT, minimumDueDays 14) under the default stop rules, a digital
// package, and a subscriber; the tenant's clock on Monday 17 December 2029
// at 10:00 in Oslo.
type stopFixture struct {
	t                 *testing.T
	tn                apitest.Tenant
	org, print, web   string
	subscriber, other string
	printPkg, digital string
}

func newStopFixture(t *testing.T, tn apitest.Tenant) *stopFixture {
	t.Helper()
	sd := tn.Seed(t)
	f := &stopFixture{t: t, tn: tn}
	f.org = sd.Organization(seed.Nordavis)
	f.print = sd.Product(seed.Product{Name: "Avisa papir", Category: "print", VATRate: "0"})
	f.web = sd.Product(seed.Product{Name: "Avisa digital", Category: "digital", VATRate: "0"})
	plan := sd.Plan(seed.Plan{Name: "Monthly 14", Unit: "Month", MinimumDueDays: seed.Days(14), PaymentTermsDays: seed.Days(10)})
	f.printPkg = sd.Package(seed.Package{Name: "Papir Ti/To/Lø", Price: "399.00", Products: []string{f.print, f.web}, Plans: []string{plan}})
	f.digital = sd.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{f.web}, Plans: []string{plan}})
	f.subscriber = sd.Subscriber(seed.Kari)
	f.other = sd.Subscriber(seed.Subscriber{Name: "Ola Nordmann", Email: "ola@example.no", Country: "NO"})
	if r := tn.Do("PUT", "/product/"+f.print+"/deliveryschedule", map[string]any{"weekdays": []string{"Tue", "Thu", "Sat"}}); r.Status != http.StatusNoContent {
		t.Fatalf("schedule: %d %s", r.Status, r.Body)
	}
	f.advance(time.Date(2029, 12, 17, 10, 0, 0, 0, osloZone))
	return f
}

func (f *stopFixture) advance(to time.Time) {
	f.t.Helper()
	if r := f.tn.Do("POST", "/testclock/advance", map[string]any{"to": to.UTC().Format(time.RFC3339)}); r.Status != http.StatusOK {
		f.t.Fatalf("advance: %d %s", r.Status, r.Body)
	}
}

func (f *stopFixture) order(pkg, subscriber string) string {
	f.t.Helper()
	id := create(f.t, f.tn, "/order", map[string]any{"organizationId": f.org, "templatePackageId": pkg, "subscriberId": subscriber,
		"requestedStart": osloDay(2030, 1, 1).Format(time.RFC3339)})
	r := f.tn.Do("POST", "/order/"+id+"/complete", nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	var o struct{ SubscriptionID string }
	r.JSON(f.t, &o)
	return o.SubscriptionID
}

func (f *stopFixture) stop(sub, first, last string) string {
	f.t.Helper()
	return create(f.t, f.tn, "/subscription/"+sub+"/deliverystop", map[string]any{"firstDate": first, "lastDate": last})
}

func (f *stopFixture) get(sub, stop string) stopView {
	f.t.Helper()
	r := f.tn.Do("GET", "/subscription/"+sub+"/deliverystop/"+stop, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET stop %s: %d %s", stop, r.Status, r.Body)
	}
	var v stopView
	r.JSON(f.t, &v)
	return v
}

// refused asserts a 400 naming field (and rule, when given).
func (f *stopFixture) refused(what string, r *apitest.Response, field, rule string) {
	f.t.Helper()
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), field) || !strings.Contains(string(r.Body), rule) {
		f.t.Errorf("%s: %d %s, want 400 naming %s %s", what, r.Status, r.Body, field, rule)
	}
}

func (f *stopFixture) next(sub string) string {
	f.t.Helper()
	var v struct{ NextSubscriptionID *string }
	f.tn.Do("GET", "/subscription/"+sub, nil).JSON(f.t, &v)
	if v.NextSubscriptionID == nil {
		f.t.Fatalf("subscription %s has no next period", sub)
	}
	return *v.NextSubscriptionID
}

// invoiceGross is the gross of the one invoice of period sub.
func (f *stopFixture) invoiceGross(sub string) int64 {
	f.t.Helper()
	var inv []struct{ Gross float64 }
	r := f.tn.Do("GET", "/invoice?subscriptionId="+sub, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("invoices: %d %s", r.Status, r.Body)
	}
	r.JSON(f.t, &inv)
	if len(inv) != 1 {
		f.t.Fatalf("period %s has %d invoices", sub, len(inv))
	}
	return int64(math.Round(inv[0].Gross * 100))
}

// Vacation stops through a real server on both engines, cell by cell of
// the states × events table in docs/PRINT.md, with the credits the
// renewals' invoices apply, over January–April 2030 of a Tue/Thu/Sat title.
func TestDeliveryStopAPI(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newStopFixture(t, tn)
		s1 := f.order(f.printPkg, f.subscriber)
		// The second series is another subscriber's: its credits go to its
		// own account, not to the invoices of the first.
		s2 := f.order(f.printPkg, f.other)
		web := f.order(f.digital, f.other)
		path := "/subscription/" + s1 + "/deliverystop"

		// Input: each bad field a 400 naming it; a digital-only series refused.
		f.refused("no lastDate", tn.Do("POST", path, map[string]any{"firstDate": "2030-01-15"}), "lastDate", "required")
		f.refused("bad firstDate", tn.Do("POST", path, map[string]any{"firstDate": "2030-02-30", "lastDate": "2030-03-02"}), "firstDate", "date")
		f.refused("unknown property", tn.Do("POST", path, map[string]any{"firstDate": "2030-01-15", "lastDate": "2030-01-19", "days": 5}), "days", "")
		f.refused("a rule", tn.Do("POST", path, map[string]any{"firstDate": "2030-01-15", "lastDate": "2030-01-16"}), "lastDate", "rule minDays")
		f.refused("digital only", tn.Do("POST", "/subscription/"+web+"/deliverystop", map[string]any{"firstDate": "2030-01-15", "lastDate": "2030-01-19"}),
			"subscriptionId", "rule digitalOnly")

		// A: credited, across the January renewal. January has 14 editions,
		// February 12.
		a := f.stop(s1, "2030-01-15", "2030-02-09")
		if v := f.get(s1, a); v.State != "Planned" || len(v.MissedDays) != 12 || len(v.CreditedDays) != 12 || v.SubscriptionID != s1 {
			t.Fatalf("stop A: %+v", v)
		}
		// create × planned: an overlapping stop is refused, naming the rule.
		f.refused("overlap with a planned stop", tn.Do("POST", path, map[string]any{"firstDate": "2030-02-05", "lastDate": "2030-02-12"}),
			"firstDate", "rule overlap")
		// C: made while the organization credits nothing; credit is decided
		// when a stop is made.
		if r := tn.Do("PUT", "/organization/"+f.org+"/deliverystoprules", map[string]any{"credit": "None"}); r.Status != http.StatusNoContent {
			t.Fatalf("rules: %d %s", r.Status, r.Body)
		}
		c := f.stop(s1, "2030-03-05", "2030-03-09")
		if r := tn.Do("PUT", "/organization/"+f.org+"/deliverystoprules", map[string]any{}); r.Status != http.StatusNoContent {
			t.Fatalf("rules: %d %s", r.Status, r.Body)
		}
		if v := f.get(s1, c); len(v.MissedDays) != 3 || len(v.CreditedDays) != 0 {
			t.Fatalf("stop C: %+v", v)
		}
		// D is deleted while planned (delete × planned); then it is gone:
		// change, delete and get × deleted are 404, and its days are free
		// (create × deleted).
		d := f.stop(s1, "2030-04-02", "2030-04-06")
		if r := tn.Do("DELETE", path+"/"+d, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete planned: %d %s", r.Status, r.Body)
		}
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			if r := tn.Do(m, path+"/"+d, map[string]any{"firstDate": "2030-04-02", "lastDate": "2030-04-06"}); r.Status != http.StatusNotFound {
				t.Errorf("%s deleted stop: %d %s", m, r.Status, r.Body)
			}
		}
		stopE := f.stop(s1, "2030-04-04", "2030-04-09")
		// P will be active at the plan change.
		p := f.stop(s1, "2030-03-12", "2030-03-21")
		// change × planned: checked again, its own old days not in the way.
		if r := tn.Do("PUT", path+"/"+stopE, map[string]any{"firstDate": "2030-04-06", "lastDate": "2030-04-11"}); r.Status != http.StatusNoContent {
			t.Fatalf("change planned: %d %s", r.Status, r.Body)
		}
		if v := f.get(s1, stopE); v.FirstDate != "2030-04-06" || v.LastDate != "2030-04-11" || len(v.MissedDays) != 3 {
			t.Fatalf("changed E: %+v", v)
		}

		// Another tenant reaches none of it.
		other := e.NewTenant("other-stops", false)
		for _, m := range []string{"GET", "POST"} {
			if r := other.Do(m, path, map[string]any{"firstDate": "2030-03-19", "lastDate": "2030-03-23"}); r.Status != http.StatusNotFound {
				t.Errorf("other tenant's %s list: %d", m, r.Status)
			}
		}
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			if r := other.Do(m, path+"/"+a, map[string]any{"firstDate": "2030-03-19", "lastDate": "2030-03-23"}); r.Status != http.StatusNotFound {
				t.Errorf("other tenant's %s: %d", m, r.Status)
			}
		}
		// Another series' stop is not found under this one.
		if r := tn.Do("GET", "/subscription/"+s2+"/deliverystop/"+a, nil); r.Status != http.StatusNotFound {
			t.Errorf("stop of another series: %d", r.Status)
		}

		// The second series: H will be active and G planned when it is cancelled.
		k := f.stop(s2, "2030-01-01", "2030-01-05")
		h := f.stop(s2, "2030-01-15", "2030-01-19")
		g := f.stop(s2, "2030-01-22", "2030-02-02")
		d2 := f.stop(s2, "2030-02-05", "2030-02-09")
		if r := tn.Do("DELETE", "/subscription/"+s2+"/deliverystop/"+d2, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete planned: %d %s", r.Status, r.Body)
		}

		f.advance(time.Date(2030, 1, 16, 10, 0, 0, 0, osloZone))
		// change/delete/create × active.
		f.refused("change active", tn.Do("PUT", path+"/"+a, map[string]any{"firstDate": "2030-01-22", "lastDate": "2030-02-09"}), "firstDate", "Active")
		f.refused("delete active", tn.Do("DELETE", path+"/"+a, nil), "firstDate", "Active")
		f.refused("overlap with an active stop", tn.Do("POST", path, map[string]any{"firstDate": "2030-02-05", "lastDate": "2030-02-12"}),
			"firstDate", "rule overlap")

		// cancellation × active and × planned: the series is settled at once,
		// each stop's credited days before the effect (25 January) booked:
		// K (ended, not yet credited: no renewal since) and H 3 of 14, G 2 of
		// 14 (the 22nd and 24th); the deleted D2 nothing.
		if r := tn.Do("POST", "/subscription/"+s2+"/cancel", map[string]any{"cancellationTime": "2030-01-25T00:00:00+01:00"}); r.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		for _, c := range []struct {
			stop     string
			credited int
			amount   int64
		}{{k, 3, 8550}, {h, 3, 8550}, {g, 2, 5700}} {
			v := f.get(s2, c.stop)
			if len(v.Credits) != 1 || v.Credits[0].CreditedEditions != c.credited || v.Credits[0].Editions != 14 || v.Credits[0].AmountMinor != c.amount ||
				v.Credits[0].AllowanceItemID == nil {
				t.Errorf("stop %s after the cancellation: %+v", c.stop, v.Credits)
			}
		}
		if r := tn.Do("GET", "/subscription/"+s2+"/deliverystop/"+d2, nil); r.Status != http.StatusNotFound {
			t.Errorf("deleted stop after the cancellation: %d", r.Status)
		}
		// A planned stop settled by the cancellation is fixed.
		f.refused("change settled", tn.Do("PUT", "/subscription/"+s2+"/deliverystop/"+g, map[string]any{"firstDate": "2030-01-22", "lastDate": "2030-01-24"}),
			"firstDate", "credited")
		f.refused("delete settled", tn.Do("DELETE", "/subscription/"+s2+"/deliverystop/"+g, nil), "firstDate", "credited")
		// A stop from the effect on has nothing to stop.
		f.refused("after the effect", tn.Do("POST", "/subscription/"+s2+"/deliverystop", map[string]any{"firstDate": "2030-01-26", "lastDate": "2030-01-29"}),
			"firstDate", "ends on")

		// renewal × planned, active and deleted: on 18 January the series
		// renews into February; A (active), C and E (planned) follow it,
		// nothing is credited yet (A's January part has days ahead).
		f.advance(time.Date(2030, 1, 18, 12, 0, 0, 0, osloZone))
		feb := f.next(s1)
		var list []stopView
		tn.Do("GET", "/subscription/"+feb+"/deliverystop", nil).JSON(t, &list)
		if len(list) != 4 || list[0].ID != a || list[0].State != "Active" || list[1].ID != c || list[2].ID != p || list[3].ID != stopE {
			t.Fatalf("stops after the January renewal: %+v", list)
		}
		for _, v := range list {
			if v.SubscriptionID != feb || len(v.Credits) != 0 {
				t.Errorf("stop %s after the January renewal: %+v", v.ID, v)
			}
		}
		if r := tn.Do("GET", "/subscription/"+feb+"/deliverystop/"+d, nil); r.Status != http.StatusNotFound {
			t.Errorf("deleted stop after the renewal: %d", r.Status)
		}
		if got := f.invoiceGross(feb); got != 39900 {
			t.Errorf("February invoice: %d, want 39900 (nothing of A has passed)", got)
		}

		// renewal × ended: on 15 February A has ended; both its parts are
		// credited before March is invoiced: 399 × 8/14 = 228.00 and
		// 399 × 4/12 = 133.00.
		f.advance(time.Date(2030, 2, 15, 12, 0, 0, 0, osloZone))
		mar := f.next(feb)
		va := f.get(mar, a)
		if va.State != "Ended" || len(va.Credits) != 2 || va.Credits[0].AmountMinor+va.Credits[1].AmountMinor != 36100 {
			t.Fatalf("A after the February renewal: %+v", va)
		}
		for _, cr := range va.Credits {
			if !(cr.SubscriptionID == s1 && cr.Editions == 14 && cr.CreditedEditions == 8 && cr.AmountMinor == 22800) &&
				!(cr.SubscriptionID == feb && cr.Editions == 12 && cr.CreditedEditions == 4 && cr.AmountMinor == 13300) {
				t.Errorf("A's credit: %+v", cr)
			}
		}
		if got := f.invoiceGross(mar); got != 39900-36100 {
			t.Errorf("March invoice: %d, want %d", got, 39900-36100)
		}
		// change/delete × ended.
		f.refused("change ended", tn.Do("PUT", path+"/"+a, map[string]any{"firstDate": "2030-03-19", "lastDate": "2030-03-23"}), "firstDate", "Ended")
		f.refused("delete ended", tn.Do("DELETE", path+"/"+a, nil), "firstDate", "Ended")
		// deactivation: the cancelled series ended; its stops are still
		// listed, nothing new can be made on it.
		var ended []stopView
		tn.Do("GET", "/subscription/"+s2+"/deliverystop", nil).JSON(t, &ended)
		if len(ended) != 3 || ended[0].State != "Ended" || ended[1].State != "Ended" || ended[2].State != "Ended" {
			t.Errorf("stops of the ended series: %+v", ended)
		}
		f.refused("deactivated", tn.Do("POST", "/subscription/"+s2+"/deliverystop", map[string]any{"firstDate": "2030-02-19", "lastDate": "2030-02-23"}),
			"subscriptionId", "ended")

		// A stop of an organization that credits nothing books nothing: C
		// has ended by the March renewal; April's invoice is whole.
		f.advance(time.Date(2030, 3, 18, 12, 0, 0, 0, osloZone))
		apr := f.next(mar)
		if v := f.get(apr, c); v.State != "Ended" || len(v.Credits) != 0 {
			t.Errorf("C: %+v", v)
		}
		if got := f.invoiceGross(apr); got != 39900 {
			t.Errorf("April invoice: %d, want 39900", got)
		}

		// plan change × planned: an Immediately change to the digital
		// package on 20 March begins a new series; E follows it, and misses
		// and credits nothing there (no print).
		f.advance(time.Date(2030, 3, 20, 10, 0, 0, 0, osloZone))
		if r := tn.Do("POST", "/subscription/"+apr+"/scheduledchange", map[string]any{"processingType": "Immediately", "templatePackageId": f.digital}); r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("plan change: %d %s", r.Status, r.Body)
		}
		f.advance(time.Date(2030, 3, 20, 10, 1, 0, 0, osloZone))
		var after []stopView
		tn.Do("GET", "/subscription/"+mar+"/deliverystop", nil).JSON(t, &after)
		if len(after) != 4 || after[3].ID != stopE || after[3].SubscriptionID == apr || after[3].SubscriptionID == mar {
			t.Fatalf("stops after the plan change: %+v", after)
		}
		if len(f.get(mar, stopE).Credits) != 0 {
			t.Errorf("E credited at the plan change")
		}
		// plan change × active: P's days before the change (12, 14, 16
		// and 19 March) credited at once, of March's 13 editions:
		// 399 × 4/13 = 122.769… → 122.77; the 21st is not.
		if v := f.get(mar, p); len(v.Credits) != 1 || v.Credits[0].CreditedEditions != 4 || v.Credits[0].Editions != 13 ||
			v.Credits[0].AmountMinor != 12277 || v.Credits[0].SubscriptionID != mar {
			t.Errorf("P after the plan change: %+v", v.Credits)
		}
		// × ended: A keeps its two credits, C none; × deleted: D is gone.
		if v := f.get(mar, a); len(v.Credits) != 2 {
			t.Errorf("A after the plan change: %+v", v.Credits)
		}
		if v := f.get(mar, c); len(v.Credits) != 0 {
			t.Errorf("C after the plan change: %+v", v.Credits)
		}
		if r := tn.Do("GET", "/subscription/"+mar+"/deliverystop/"+d, nil); r.Status != http.StatusNotFound {
			t.Errorf("deleted stop after the plan change: %d", r.Status)
		}

		// The events, one per create, change and delete, through the outbox.
		for kind, want := range map[string]int{"DeliveryStopCreated": 9, "DeliveryStopChanged": 1, "DeliveryStopDeleted": 2} {
			var evs []struct{ Subject string }
			tn.Do("GET", "/events?eventType="+kind, nil).JSON(t, &evs)
			if len(evs) != want {
				t.Errorf("%s events: %d, want %d", kind, len(evs), want)
			}
		}
		// Every allowance is named back by its stop's credit.
		ledgerClean(t, e, tn)
	})
}

// The credit of one stop's part, booked from 8 goroutines at once (a retry,
// a second worker, the renewal): one credit and one allowance, on both
// engines; the renewal after books nothing more.
func TestDeliveryStopCreditOnce(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newStopFixture(t, tn)
		sub := f.order(f.printPkg, f.subscriber)
		stop := f.stop(sub, "2030-01-15", "2030-01-19")
		f.advance(time.Date(2030, 1, 21, 10, 0, 0, 0, osloZone))
		if v := f.get(sub, stop); len(v.Credits) != 0 {
			t.Fatalf("credited before the renewal after it: %+v", v.Credits)
		}
		ctx := tenantCtx(tn)
		at := time.Date(2030, 1, 21, 10, 0, 0, 0, osloZone)
		var wg sync.WaitGroup
		var mu sync.Mutex
		booked := 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := deliverywing.BookCredits(ctx, e.Store, sub, stop, at)
				if err != nil {
					t.Errorf("book: %v", err)
				}
				mu.Lock()
				booked += n
				mu.Unlock()
			}()
		}
		wg.Wait()
		if booked != 1 {
			t.Errorf("booked %d times", booked)
		}
		f.advance(time.Date(2030, 2, 1, 10, 0, 0, 0, osloZone))
		feb := f.next(sub)
		v := f.get(feb, stop)
		if len(v.Credits) != 1 || v.Credits[0].AmountMinor != 8550 {
			t.Fatalf("credits: %+v", v.Credits)
		}
		var items int
		if err := e.Store.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM account_items WHERE tenant_id = $1 AND source_kind = $2`,
			tn.ID, deliverywing.ItemSourceStop).Scan(&items); err != nil || items != 1 {
			t.Errorf("allowances: %d %v", items, err)
		}
		ledgerClean(t, e, tn)
	})
}

// chain step × planned/active: a stop across a chain's step follows the
// series into the next step's package and credits each period at its own
// price: an intro month at 99.00, then 399.00.
func TestDeliveryStopChainStep(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newStopFixture(t, tn)
		plan := tn.Seed(t).Plan(seed.Plan{Name: "Monthly chain", Unit: "Month", MinimumDueDays: seed.Days(14), PaymentTermsDays: seed.Days(10)})
		intro := create(t, tn, "/package", contractPackage("Papir intro", "99.00", f.print, plan))
		full := create(t, tn, "/package", contractPackage("Papir", "399.00", f.print, plan))
		chain := create(t, tn, "/packagechain", map[string]any{"name": "Intro", "packageChain": map[string]any{
			"steps": []map[string]any{{"step": 1, "nextPackageId": intro, "periods": 1}, {"step": 2, "nextPackageId": full}}}})
		linked := strings.Replace(contractPackage("Papir intro", "99.00", f.print, plan), `"packageChainId": null`, `"packageChainId": "`+chain+`"`, 1)
		if r := tn.Do("PUT", "/package/"+intro, linked); r.Status != http.StatusNoContent {
			t.Fatalf("link: %d %s", r.Status, r.Body)
		}
		jan := f.order(intro, f.subscriber)
		stop := f.stop(jan, "2030-01-29", "2030-02-09")
		f.advance(time.Date(2030, 1, 18, 12, 0, 0, 0, osloZone))
		feb := f.next(jan)
		if v := f.get(feb, stop); v.SubscriptionID != feb || len(v.Credits) != 0 {
			t.Fatalf("stop after the chain step: %+v", v)
		}
		if got := f.invoiceGross(feb); got != 39900 {
			t.Fatalf("the second step's invoice: %d", got)
		}
		f.advance(time.Date(2030, 2, 15, 12, 0, 0, 0, osloZone))
		mar := f.next(feb)
		v := f.get(mar, stop)
		// 99.00 × 2/14 = 14.142… → 14.14; 399.00 × 4/12 = 133.00.
		if len(v.Credits) != 2 || v.Credits[0].AmountMinor+v.Credits[1].AmountMinor != 1414+13300 {
			t.Fatalf("credits across the chain step: %+v", v.Credits)
		}
		if got := f.invoiceGross(mar); got != 39900-1414-13300 {
			t.Errorf("March invoice: %d, want %d", got, 39900-1414-13300)
		}
		ledgerClean(t, e, tn)
	})
}
