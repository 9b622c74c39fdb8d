package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

// changeFixture: a NOK organization in Oslo, a product at 25 % VAT, a
// monthly plan (renewal on the period's last day, 10 days to pay) and
// packages at 100, 300 and 600 NOK, one at 100 SEK, one at 300 NOK that
// stops automatically, and one whose units may be 1 to 5.
type changeFixture struct {
	*billingFixture
	p100, p300, p600, sek100, stop300, units, ahead300 string
}

func newChangeFixture(t *testing.T, tn apitest.Tenant) *changeFixture {
	t.Helper()
	f := &changeFixture{billingFixture: &billingFixture{t: t, tn: tn}}
	sd := tn.Seed(t)
	f.org = sd.Organization(seed.Organization{Name: "Bygdeposten AS", OrganizationNumber: "923609016", Country: "NO",
		Currency: "NOK", TimeZone: "Europe/Oslo", PricesIncludeVAT: seed.Bool(true)})
	product := sd.Product(seed.Product{Name: "Avis", Category: "digital", VATRate: "25"})
	plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month", MinimumDueDays: seed.Days(0), PaymentTermsDays: seed.Days(10)})
	pkg := func(p seed.Package) string {
		p.Products, p.Plans = []string{product}, []string{plan}
		return sd.Package(p)
	}
	f.p100, f.p300, f.p600 = pkg(seed.Package{Name: "Digital 100", Price: "100.00"}), pkg(seed.Package{Name: "Digital 300", Price: "300.00"}),
		pkg(seed.Package{Name: "Digital 600", Price: "600.00"})
	f.sek100 = pkg(seed.Package{Name: "Digital SEK", Currency: "SEK", Price: "100.00"})
	f.stop300 = pkg(seed.Package{Name: "Trial 300", Price: "300.00", AutomaticStop: true})
	f.units = pkg(seed.Package{Name: "Family", Price: "100.00", MinUnits: 1, MaxUnits: 5})
	plan = sd.Plan(seed.Plan{Name: "Monthly ahead", Unit: "Month", MinimumDueDays: seed.Days(10), PaymentTermsDays: seed.Days(10)})
	f.ahead300 = pkg(seed.Package{Name: "Print 300", Price: "300.00"})
	f.subscriber = sd.Subscriber(seed.Subscriber{Name: "Ola Nordmann", Email: "ola@example.no", Country: "NO"})
	return f
}

// subscribe orders package pkg starting now and returns the subscription.
func (f *changeFixture) subscribe(pkg string) string {
	f.t.Helper()
	saved := f.pkg
	f.pkg = pkg
	defer func() { f.pkg = saved }()
	return f.order(nil)
}

// register posts a plan change and returns the response.
func (f *changeFixture) register(sub string, body map[string]any) *apitest.Response {
	f.t.Helper()
	return f.tn.Do("POST", "/subscription/"+sub+"/scheduledchange", body)
}

func (f *changeFixture) mustRegister(sub string, body map[string]any) string {
	f.t.Helper()
	r := f.register(sub, body)
	if r.Status != http.StatusCreated {
		f.t.Fatalf("register %v: %d %s", body, r.Status, r.Body)
	}
	return r.ID(f.t)
}

func (f *changeFixture) change(sub, id string) store.ScheduledChange {
	f.t.Helper()
	r := f.tn.Do("GET", "/subscription/"+sub+"/scheduledchange/"+id, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET change %s of %s: %d %s", id, sub, r.Status, r.Body)
	}
	var c store.ScheduledChange
	r.JSON(f.t, &c)
	return c
}

func (f *changeFixture) subscription(id string) store.Subscription {
	f.t.Helper()
	r := f.tn.Do("GET", "/subscription/"+id, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET subscription %s: %d %s", id, r.Status, r.Body)
	}
	var s store.Subscription
	r.JSON(f.t, &s)
	return s
}

// series returns the subscription periods linked forward from id.
func (f *changeFixture) series(id string) []store.Subscription {
	f.t.Helper()
	var out []store.Subscription
	for cur := &id; cur != nil; {
		s := f.subscription(*cur)
		out = append(out, s)
		cur = s.NextID
	}
	return out
}

func wantState(t *testing.T, c store.ScheduledChange, status, reason string) {
	t.Helper()
	got := ""
	if c.Reason != nil {
		got = *c.Reason
	}
	if c.Status != status || got != reason {
		t.Fatalf("change %s is %s (%s), want %s (%s)", c.ID, c.Status, got, status, reason)
	}
}

func onTime(at time.Time) map[string]any {
	return map[string]any{"processingType": "OnScheduledTime", "scheduledTime": at.UTC().Format(time.RFC3339)}
}

func with(body map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TestPlanChangeStateMachine walks every cell of the plan-change table in
// docs/ORDERS.md: states Registered → Executed | Revoked | Expired, against
// the events of plan changes themselves and of the features they cross
// (cancellation, renewal, automatic stop, template edits).
func TestPlanChangeStateMachine(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		jan := osloDay(2027, 1, 1)
		n := 0
		fixture := func(t *testing.T) *changeFixture {
			n++
			f := newChangeFixture(t, e.NewTenant(fmt.Sprintf("changes-%d", n), true))
			f.advance(jan)
			return f
		}
		onRenewal := map[string]any{"processingType": "OnRenewal"}
		immediately := map[string]any{"processingType": "Immediately"}

		t.Run("Registered + second OnRenewal: 400 naming the pending change", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			first := f.mustRegister(sub, with(onRenewal, "templatePackageId", f.p600))
			r := f.register(sub, with(onRenewal, "templatePackageId", f.p100))
			if fs := r.Fields(t); len(fs) != 1 || fs[0] != "processingType" || !strings.Contains(string(r.Body), first) {
				t.Fatalf("second change: %d %s", r.Status, r.Body)
			}
			wantState(t, f.change(sub, first), store.ChangeRegistered, "")
			// At the renewal only the first runs.
			f.advance(osloDay(2027, 3, 2))
			periods := f.series(sub)
			if len(periods) < 3 || periods[1].Package.Name != "Digital 600" || periods[2].Package.Name != "Digital 600" {
				t.Fatalf("periods: %v", names(periods))
			}
			c := f.change(sub, first)
			wantState(t, c, store.ChangeExecuted, "")
			if c.ResultSubscriptionID == nil || *c.ResultSubscriptionID != periods[1].ID || c.SubscriptionID != sub {
				t.Fatalf("executed change: registered on %s, result %v; want %s and %s", c.SubscriptionID, c.ResultSubscriptionID, sub, periods[1].ID)
			}
		})

		t.Run("Registered OnScheduledTime + OnRenewal: 400", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			f.mustRegister(sub, with(onTime(osloDay(2027, 1, 20)), "templatePackageId", f.p600))
			if fs := f.register(sub, with(onRenewal, "templatePackageId", f.p100)).Fields(t); len(fs) != 1 || fs[0] != "processingType" {
				t.Fatalf("fields %v", fs)
			}
		})

		t.Run("Registered + Immediately: superseded, and never runs later", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			pending := f.mustRegister(sub, with(onTime(osloDay(2027, 3, 15)), "templatePackageId", f.p600))
			f.advance(osloDay(2027, 1, 12).Add(10 * time.Hour))
			now := f.mustRegister(sub, with(immediately, "templatePackageId", f.p100))
			wantState(t, f.change(sub, pending), store.ChangeRevoked, store.ReasonSuperseded)
			wantState(t, f.change(sub, now), store.ChangeExecuted, "")
			f.advance(osloDay(2027, 5, 1))
			for _, p := range f.series(sub)[1:] {
				if p.Package.Name != "Digital 100" || p.Currency != "NOK" {
					t.Fatalf("after the Immediately change: %v", names(f.series(sub)))
				}
			}
		})

		t.Run("Registered + Immediately cancellation: revoked", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			id := f.mustRegister(sub, with(onTime(osloDay(2027, 1, 20)), "templatePackageId", f.p600))
			f.cancel(sub, "Immediately")
			wantState(t, f.change(sub, id), store.ChangeRevoked, store.ReasonSubscriptionCancelled)
			f.advance(osloDay(2027, 2, 1))
			if s := f.series(sub); len(s) != 1 {
				t.Fatalf("a revoked change ran: %v", names(s))
			}
		})

		t.Run("Registered + EndOfPeriod cancellation: revoked", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			id := f.mustRegister(sub, with(onRenewal, "templatePackageId", f.p600))
			f.cancel(sub, "EndOfPeriod")
			wantState(t, f.change(sub, id), store.ChangeRevoked, store.ReasonSubscriptionCancelled)
			f.advance(osloDay(2027, 3, 1))
			if s := f.series(sub); len(s) != 1 {
				t.Fatalf("a cancelled subscription renewed: %v", names(s))
			}
		})

		t.Run("Registered + cancellation after the renewal created the next period: revoked", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.ahead300)
			f.advance(osloDay(2027, 1, 25)) // the February period exists
			if s := f.series(sub); len(s) != 2 {
				t.Fatalf("series before: %v", names(s))
			}
			id := f.mustRegister(sub, with(onRenewal, "templatePackageId", f.p600))
			f.cancel(sub, "Immediately")
			wantState(t, f.change(sub, id), store.ChangeRevoked, store.ReasonSubscriptionCancelled)
			f.advance(osloDay(2027, 4, 1))
			if s := f.series(sub); len(s) != 2 || s[1].CancelledAt == nil {
				t.Fatalf("series after: %v", names(s))
			}
		})

		t.Run("Registered + client revokes; revoking again is 400", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			id := f.mustRegister(sub, with(onRenewal, "templatePackageId", f.p600))
			if r := f.tn.Do("DELETE", "/subscription/"+sub+"/scheduledchange/"+id, nil); r.Status != http.StatusNoContent {
				t.Fatalf("revoke: %d %s", r.Status, r.Body)
			}
			wantState(t, f.change(sub, id), store.ChangeRevoked, store.ReasonRevoked)
			if fs := f.tn.Do("DELETE", "/subscription/"+sub+"/scheduledchange/"+id, nil).Fields(t); len(fs) != 1 || fs[0] != "changeId" {
				t.Fatalf("second revoke: %v", fs)
			}
			// A revoked change frees the series for another.
			f.mustRegister(sub, with(onRenewal, "templatePackageId", f.p100))
		})

		t.Run("Registered OnScheduledTime + its time: executed; revoking it is 400", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			id := f.mustRegister(sub, with(onTime(osloDay(2027, 2, 20).Add(15*time.Hour)), "templatePackageId", f.p600))
			f.advance(osloDay(2027, 2, 21))
			c := f.change(sub, id)
			wantState(t, c, store.ChangeExecuted, "")
			// Registered on the January period, which the February renewal
			// followed: still found there, and from the period it produced.
			if c.SubscriptionID != sub || c.ResultSubscriptionID == nil {
				t.Fatalf("change: %+v", c)
			}
			f.change(*c.ResultSubscriptionID, id)
			var list []store.ScheduledChange
			f.tn.Do("GET", "/subscription/"+*c.ResultSubscriptionID+"/scheduledchange", nil).JSON(t, &list)
			if len(list) != 1 || list[0].ID != id {
				t.Fatalf("list from the result period: %+v", list)
			}
			if fs := f.tn.Do("DELETE", "/subscription/"+sub+"/scheduledchange/"+id, nil).Fields(t); len(fs) != 1 || fs[0] != "changeId" {
				t.Fatalf("revoking an executed change: %v", fs)
			}
		})

		t.Run("OnRenewal on an AutomaticStop subscription: 400", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.stop300)
			if fs := f.register(sub, with(onRenewal, "templatePackageId", f.p600)).Fields(t); len(fs) != 1 || fs[0] != "processingType" {
				t.Fatalf("fields %v", fs)
			}
		})

		t.Run("OnScheduledTime after an AutomaticStop subscription ends: 400; before: runs", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.stop300)
			if fs := f.register(sub, with(onTime(osloDay(2027, 2, 1)), "templatePackageId", f.p600)).Fields(t); len(fs) != 1 || fs[0] != "scheduledTime" {
				t.Fatalf("at the end: fields %v", fs)
			}
			id := f.mustRegister(sub, with(onTime(osloDay(2027, 1, 31)), "templatePackageId", f.p600))
			f.advance(osloDay(2027, 2, 2))
			wantState(t, f.change(sub, id), store.ChangeExecuted, "")
		})

		t.Run("another currency: 400, nothing changes", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			for _, body := range []map[string]any{immediately, onRenewal, onTime(osloDay(2027, 1, 20))} {
				if fs := f.register(sub, with(body, "templatePackageId", f.sek100)).Fields(t); len(fs) != 1 || fs[0] != "templatePackageId" {
					t.Fatalf("%v: fields %v", body, fs)
				}
			}
			if s := f.subscription(sub); s.CancelledAt != nil || s.NextID != nil {
				t.Fatalf("subscription changed: %+v", s)
			}
			if got := f.invoices("subscriberId=" + f.subscriber); len(got) != 1 {
				t.Fatalf("invoices: %d", len(got))
			}
		})

		t.Run("cancelled subscription: 400", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			f.cancel(sub, "EndOfPeriod")
			if fs := f.register(sub, with(immediately, "templatePackageId", f.p600)).Fields(t); len(fs) != 1 || fs[0] != "id" {
				t.Fatalf("fields %v", fs)
			}
		})

		t.Run("Registered + template edited so the choices no longer fit: expired, renewal goes on", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			id := f.mustRegister(sub, with(onRenewal, "templatePackageId", f.units, "templatePackageChoices", map[string]any{"units": 4}))
			var tmpl map[string]any
			f.tn.Do("GET", "/package/"+f.units, nil).JSON(t, &tmpl)
			r := f.tn.Do("PUT", "/package/"+f.units, map[string]any{"Name": "Family", "Currency": "NOK", "Price": 100,
				"products": tmpl["products"], "BillingPlans": tmpl["billingPlans"], "allowedChoices": map[string]any{"minUnits": 1, "maxUnits": 2}})
			if r.Status/100 != 2 {
				t.Fatalf("edit template: %d %s", r.Status, r.Body)
			}
			f.advance(osloDay(2027, 2, 2))
			wantState(t, f.change(sub, id), store.ChangeExpired, store.ReasonCannotRun)
			if s := f.series(sub); len(s) != 2 || s[1].Package.Name != "Digital 300" {
				t.Fatalf("renewal: %v", names(s))
			}
		})

		t.Run("changes of another tenant are not found", func(t *testing.T) {
			f := fixture(t)
			sub := f.subscribe(f.p300)
			id := f.mustRegister(sub, with(onRenewal, "templatePackageId", f.p600))
			other := e.NewTenant(fmt.Sprintf("changes-other-%d", n), true)
			for _, path := range []string{"/subscription/" + sub + "/scheduledchange/" + id, "/subscription/" + sub + "/scheduledchange"} {
				if r := other.Do("GET", path, nil); r.Status != http.StatusNotFound {
					t.Errorf("GET %s from another tenant: %d", path, r.Status)
				}
			}
			if r := other.Do("DELETE", "/subscription/"+sub+"/scheduledchange/"+id, nil); r.Status != http.StatusNotFound {
				t.Errorf("DELETE from another tenant: %d", r.Status)
			}
			// Nor through a subscription of the same tenant outside the series.
			stranger := f.subscribe(f.p100)
			if r := f.tn.Do("GET", "/subscription/"+stranger+"/scheduledchange/"+id, nil); r.Status != http.StatusNotFound {
				t.Errorf("GET through another series: %d", r.Status)
			}
		})
	})
}

// TestPlanChangeSeriesEndExpires: a change waiting on a series that ends
// by automatic stop before it runs expires. The series reaches its
// AutomaticStop package through an OnRenewal change... which cannot be
// registered together with a second change; so it gets there by a chain.
func TestPlanChangeSeriesEndExpires(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newChangeFixture(t, e.NewTenant("changes-end", true))
		f.advance(osloDay(2027, 1, 1))
		chain := create(t, f.tn, "/packagechain", map[string]any{"name": "Intro then trial end",
			"packageChain": map[string]any{"steps": []map[string]any{{"step": 1, "nextPackageId": f.p100, "periods": 1}, {"step": 2, "nextPackageId": f.stop300}}}})
		var tmpl map[string]any
		f.tn.Do("GET", "/package/"+f.p100, nil).JSON(t, &tmpl)
		tmpl["packageChainId"] = chain
		if r := f.tn.Do("PUT", "/package/"+f.p100, tmpl); r.Status/100 != 2 {
			t.Fatalf("attach chain: %d %s", r.Status, r.Body)
		}
		sub := f.subscribe(f.p100)
		// Registered while the series still renews; it would run after the
		// trial step ends on 1 March.
		id := f.mustRegister(sub, with(onTime(osloDay(2027, 3, 10)), "templatePackageId", f.p600))
		f.advance(osloDay(2027, 3, 20))
		s := f.series(sub)
		if len(s) != 2 || s[1].Package.Name != "Trial 300" || s[1].DeactivatedAt == nil {
			t.Fatalf("series: %v", names(s))
		}
		wantState(t, f.change(sub, id), store.ChangeExpired, store.ReasonSeriesEnded)
	})
}

// TestPlanChangeNoDoubleBilling: the scenario that billed one subscriber
// five invoices in two currencies ends with exactly what the client asked
// for: a pending change is superseded by an Immediately change, a switch
// of currency is refused, and the day of the change is billed once.
func TestPlanChangeNoDoubleBilling(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newChangeFixture(t, e.NewTenant("changes-five", true))
		f.advance(osloDay(2027, 1, 1))
		sub := f.subscribe(f.p300)
		f.mustRegister(sub, with(onTime(osloDay(2027, 3, 15)), "templatePackageId", f.p600))
		if r := f.register(sub, map[string]any{"processingType": "OnRenewal", "templatePackageId": f.p300}); r.Status != http.StatusBadRequest {
			t.Fatalf("second pending change: %d", r.Status)
		}
		f.advance(osloDay(2027, 1, 12).Add(10 * time.Hour))
		if r := f.register(sub, map[string]any{"processingType": "Immediately", "templatePackageId": f.sek100}); r.Status != http.StatusBadRequest {
			t.Fatalf("switch to SEK: %d", r.Status)
		}
		f.mustRegister(sub, map[string]any{"processingType": "Immediately", "templatePackageId": f.p100})
		f.advance(osloDay(2027, 5, 1))

		invs := f.invoices("subscriberId=" + f.subscriber)
		var got []string
		for _, inv := range invs {
			got = append(got, fmt.Sprintf("%s %s %s", inv.Currency, inv.Gross, inv.PeriodStart.In(osloZone).Format("2006-01-02")))
		}
		want := []string{"NOK 300.00 2027-01-01", "NOK 100.00 2027-01-12", "NOK 100.00 2027-02-12", "NOK 100.00 2027-03-12", "NOK 100.00 2027-04-12"}
		if !slices.Equal(got, want) {
			t.Fatalf("invoices:\n got %v\nwant %v", got, want)
		}
		// The January period is billed 1–11 January (11 of 31 days): its
		// unpaid 300.00 is credited down to 106.45 and 12 January is billed
		// once, on the new plan.
		cs := f.creditNotes("invoiceId=" + invs[0].ID)
		if len(cs) != 1 || cs[0].Gross.String() != "193.55" {
			t.Fatalf("credit of the old period: %+v", cs)
		}
		ledgerClean(t, e, f.tn)
	})
}

// TestPlanChangeMidnight: Immediately and OnScheduledTime changes start the
// new period at the local midnight of the day of the change, whatever the
// hour, on DST days and on the 31st; the old period is prorated to it.
func TestPlanChangeMidnight(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		for i, tc := range []struct {
			name               string
			start, at          time.Time
			scheduled          bool
			newStart, firstEnd time.Time
		}{
			{"Immediately at 13:00 on the 31st", osloDay(2027, 1, 1), osloDay(2027, 1, 31).Add(13 * time.Hour), false,
				osloDay(2027, 1, 31), osloDay(2027, 2, 28)},
			{"Immediately on the spring DST day (23 hours)", osloDay(2027, 3, 1), time.Date(2027, 3, 28, 15, 0, 0, 0, osloZone), false,
				osloDay(2027, 3, 28), osloDay(2027, 4, 28)},
			{"OnScheduledTime on the autumn DST day (25 hours), at 23:30", osloDay(2027, 10, 1), time.Date(2027, 10, 31, 23, 30, 0, 0, osloZone), true,
				osloDay(2027, 10, 31), osloDay(2027, 11, 30)},
			{"OnScheduledTime at 00:30 on 29 February", osloDay(2028, 2, 1), time.Date(2028, 2, 29, 0, 30, 0, 0, osloZone), true,
				osloDay(2028, 2, 29), osloDay(2028, 3, 29)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := newChangeFixture(t, e.NewTenant(fmt.Sprintf("midnight-%d", i), true))
				f.advance(tc.start)
				sub := f.subscribe(f.p300)
				if tc.scheduled {
					f.mustRegister(sub, with(onTime(tc.at), "templatePackageId", f.p600))
					f.advance(tc.at.Add(time.Minute))
				} else {
					f.advance(tc.at)
					f.mustRegister(sub, map[string]any{"processingType": "Immediately", "templatePackageId": f.p600})
				}
				old := f.subscription(sub)
				if old.NextID == nil || old.CancelEffectiveAt == nil || !old.CancelEffectiveAt.Equal(tc.newStart) {
					t.Fatalf("old period billed until %v, want %s", old.CancelEffectiveAt, tc.newStart)
				}
				n := f.subscription(*old.NextID)
				if !n.PeriodStart.Equal(tc.newStart) || !n.PeriodEnd.Equal(tc.firstEnd) {
					t.Fatalf("new period %s – %s, want %s – %s", n.PeriodStart.In(osloZone), n.PeriodEnd.In(osloZone),
						tc.newStart.In(osloZone), tc.firstEnd.In(osloZone))
				}
				// No day billed twice: what is left of the old invoice covers
				// the days before the new period exactly.
				invs := f.invoices("subscriptionId=" + sub)
				cs := f.creditNotes("invoiceId=" + invs[0].ID)
				total := days(old.PeriodStart, old.PeriodEnd)
				used := days(old.PeriodStart, tc.newStart)
				if want := roundDiv(30000*int64(total-used), int64(total)); len(cs) != 1 || cs[0].Gross.Minor != want {
					t.Fatalf("credit for %d unused of %d days: %+v, want %d øre", total-used, total, cs, want)
				}
				ledgerClean(t, e, f.tn)
			})
		}
	})
}

// TestProrationAtAnyHour: the worked examples hold whatever the hour of
// the cancellation: the day of a cancellation is not charged.
func TestProrationAtAnyHour(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		for i, hour := range []time.Duration{10 * time.Hour, 23*time.Hour + 30*time.Minute} {
			t.Run(fmt.Sprintf("paid, cancelled at %s on day 15: allowance 48.00", hour), func(t *testing.T) {
				f := newEuroFixture(t, e.NewTenant(fmt.Sprintf("hour-paid-%d", i), true))
				f.advance(osloDay(2027, 3, 1))
				sub, inv := f.orderOf(f.pkg30)
				f.payInvoice(inv, "90.00")
				f.advance(osloDay(2027, 3, 15).Add(hour))
				f.cancel(sub, "Immediately")
				if a := f.account(inv.SubscriberAccountID); a.AvailableAllowance.String() != "48.00" {
					t.Fatalf("allowance %s, want 48.00", a.AvailableAllowance)
				}
				// Access ends at the moment of the cancellation.
				if s := f.subscriptionAt(sub); !s.CancelEffectiveAt.Equal(osloDay(2027, 3, 15).Add(hour)) {
					t.Fatalf("effective %s", s.CancelEffectiveAt)
				}
			})
			t.Run(fmt.Sprintf("unpaid, cancelled at %s on day 10: 27.00 left", hour), func(t *testing.T) {
				f := newEuroFixture(t, e.NewTenant(fmt.Sprintf("hour-open-%d", i), true))
				f.advance(osloDay(2027, 3, 1))
				sub, inv := f.orderOf(f.pkg28)
				f.advance(osloDay(2027, 3, 10).Add(hour))
				f.cancel(sub, "Immediately")
				if a := f.account(inv.SubscriberAccountID); a.Balance.String() != "27.00" {
					t.Fatalf("balance %s, want 27.00", a.Balance)
				}
			})
		}
	})
}

func (f *billingFixture) subscriptionAt(id string) store.Subscription {
	f.t.Helper()
	var s store.Subscription
	f.tn.Do("GET", "/subscription/"+id, nil).JSON(f.t, &s)
	return s
}

// TestListFilters: list filters naming a parent that does not exist match
// nothing, unknown parameters a 400 naming them, and invoices are found by KID
// and number.
func TestListFilters(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newChangeFixture(t, e.NewTenant("filters", true))
		f.advance(osloDay(2027, 1, 1))
		f.subscribe(f.p300)
		f.subscribe(f.p600)
		all := f.invoices("")
		if len(all) != 2 {
			t.Fatalf("invoices: %d", len(all))
		}
		byKID := f.invoices("kid=" + all[1].KID)
		if len(byKID) != 1 || byKID[0].ID != all[1].ID {
			t.Fatalf("by KID: %+v", byKID)
		}
		byNumber := f.invoices(fmt.Sprintf("InvoiceNumber=%d", all[0].InvoiceNumber))
		if len(byNumber) != 1 || byNumber[0].ID != all[0].ID {
			t.Fatalf("by number: %+v", byNumber)
		}
		if got := f.invoices("kid=0000000000"); len(got) != 0 {
			t.Fatalf("by an unknown KID: %+v", got)
		}
		for _, tc := range []struct{ path, field string }{
			{"/invoice?kid=12ab", "kid"},
			{"/invoice?invoiceNumber=0", "invoiceNumber"},
			{"/invoice?kidd=1234", "kidd"},
			{"/subscription?subscriber=" + f.subscriber, "subscriber"},
			{"/order?colour=red", "colour"},
			{"/subscriber?limit=5&foo=1", "foo"},
			{"/subscription/" + *all[0].SubscriptionID + "?expand=package", "expand"},
		} {
			if fs := f.tn.Do("GET", tc.path, nil).Fields(t); len(fs) != 1 || fs[0] != tc.field {
				t.Errorf("GET %s: fields %v, want [%s]", tc.path, fs, tc.field)
			}
		}
		for _, path := range []string{"/subscription?subscriberId=" + store.NewID(), "/subscription?organizationId=" + store.NewID()} {
			wantEmpty(t, f.tn.Do("GET", path, nil), "GET "+path)
		}
		var subs []store.Subscription
		f.tn.Do("GET", "/subscription?OrganizationId="+f.org, nil).JSON(t, &subs)
		if len(subs) != 2 {
			t.Errorf("by organization, any case: %d", len(subs))
		}
	})
}

func names(s []store.Subscription) []string {
	out := make([]string, len(s))
	for i, p := range s {
		out[i] = fmt.Sprintf("%s %s–%s", p.Package.Name, p.PeriodStart.In(osloZone).Format("2006-01-02"), p.PeriodEnd.In(osloZone).Format("2006-01-02"))
	}
	return out
}

// days counts local calendar days in Oslo from a to b.
func days(a, b time.Time) int {
	ay, am, ad := a.In(osloZone).Date()
	by, bm, bd := b.In(osloZone).Date()
	return int(time.Date(by, bm, bd, 0, 0, 0, 0, time.UTC).Sub(time.Date(ay, am, ad, 0, 0, 0, 0, time.UTC)).Hours() / 24)
}

// roundDiv divides rounding half away from zero (positive inputs).
func roundDiv(a, b int64) int64 { return (2*a + b) / (2 * b) }

// TestPriceChange: a price change moves the running subscriptions of a
// template at their first renewal from its effective date, after notice;
// it is previewable and revocable until it starts.
func TestPriceChange(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newChangeFixture(t, e.NewTenant("pricechange", true))
		f.advance(osloDay(2027, 1, 1))
		a, b, own := f.subscribe(f.p300), f.subscribe(f.p300), f.subscribe(f.p300)
		other := f.subscribe(f.p100)
		f.mustRegister(own, with(onTime(osloDay(2027, 3, 20)), "templatePackageId", f.p100))
		path := "/package/" + f.p300 + "/pricechange"
		body := map[string]any{"targetTemplatePackageId": f.p600, "effectiveFrom": osloDay(2027, 3, 15).UTC().Format(time.RFC3339)}

		var preview struct {
			Subscriptions, Skipped                   int
			Currency                                 string
			CurrentMonthlyRevenue, NewMonthlyRevenue json.Number
		}
		r := f.tn.Do("POST", path+"/preview", body)
		r.JSON(t, &preview)
		if preview.Subscriptions != 2 || preview.Skipped != 1 || preview.Currency != "NOK" ||
			preview.CurrentMonthlyRevenue != "600.00" || preview.NewMonthlyRevenue != "1200.00" {
			t.Fatalf("preview: %d %s", r.Status, r.Body)
		}
		for _, tc := range []struct {
			body  map[string]any
			field string
		}{
			{with(body, "effectiveFrom", osloDay(2027, 1, 20).UTC().Format(time.RFC3339)), "effectiveFrom"},
			{with(body, "noticeDays", 0, "effectiveFrom", "2026-12-01T00:00:00Z"), "effectiveFrom"},
			{with(body, "targetTemplatePackageId", f.sek100), "targetTemplatePackageId"},
			{with(body, "targetTemplatePackageId", f.p300), "targetTemplatePackageId"},
			{with(body, "targetTemplatePackageId", store.NewID()), "targetTemplatePackageId"},
			{with(body, "noticeDays", -1), "noticeDays"},
		} {
			if fs := f.tn.Do("POST", path, tc.body).Fields(t); len(fs) != 1 || fs[0] != tc.field {
				t.Errorf("%v: fields %v, want [%s]", tc.body, fs, tc.field)
			}
		}
		if r := f.tn.Do("POST", "/package/"+store.NewID()+"/pricechange", body); r.Status != http.StatusNotFound {
			t.Errorf("unknown template: %d", r.Status)
		}

		// One revoked before it starts never runs.
		revoked := create(t, f.tn, path, with(body, "targetTemplatePackageId", f.p100))
		if r := f.tn.Do("DELETE", path+"/"+revoked, nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		id := create(t, f.tn, path, body)
		var pc store.PriceChange
		f.tn.Do("GET", path+"/"+id, nil).JSON(t, &pc)
		if pc.Status != store.PriceChangeScheduled || pc.NoticeDays != 30 || !pc.StartsAt.Equal(osloDay(2027, 2, 13)) {
			t.Fatalf("scheduled: %+v", pc)
		}
		if r := other2(e).Do("GET", path+"/"+id, nil); r.Status != http.StatusNotFound {
			t.Fatalf("another tenant: %d", r.Status)
		}

		// It starts 30 days before: changes registered, subscribers told.
		f.advance(osloDay(2027, 2, 14))
		f.tn.Do("GET", path+"/"+id, nil).JSON(t, &pc)
		if pc.Status != store.PriceChangeStarted || pc.RegisteredSubscriptions != 2 || pc.SkippedSubscriptions != 1 {
			t.Fatalf("started: %+v", pc)
		}
		var events []struct {
			Subject string
			Data    struct {
				NewPrice, CurrentPrice json.Number
				EffectiveFrom          time.Time
				PriceChangeID          string
			}
		}
		f.tn.Do("GET", "/events?eventType=PriceChangeNotified", nil).JSON(t, &events)
		if len(events) != 2 || events[0].Data.NewPrice != "600.00" || events[0].Data.CurrentPrice != "300.00" ||
			!events[0].Data.EffectiveFrom.Equal(osloDay(2027, 4, 1)) || events[0].Data.PriceChangeID != id {
			t.Fatalf("notices: %+v", events)
		}
		if fs := f.tn.Do("DELETE", path+"/"+id, nil).Fields(t); len(fs) != 1 || fs[0] != "priceChangeId" {
			t.Fatalf("revoking a started price change: %v", fs)
		}
		var list []store.PriceChange
		f.tn.Do("GET", path, nil).JSON(t, &list)
		if len(list) != 2 || list[0].Status != store.PriceChangeRevoked {
			t.Fatalf("list: %+v", list)
		}

		// 1 March renews at the old price; 1 April at the new one.
		f.advance(osloDay(2027, 5, 2))
		for _, sub := range []string{a, b} {
			var got []string
			for _, p := range f.series(sub) {
				got = append(got, p.Package.TotalPrice.String())
			}
			if want := []string{"300.00", "300.00", "300.00", "600.00", "600.00"}; !slices.Equal(got, want) {
				t.Errorf("series %s: %v, want %v", sub, got, want)
			}
		}
		if s := f.series(own); len(s) != 5 || s[3].Package.TotalPrice.String() != "100.00" || !s[3].PeriodStart.Equal(osloDay(2027, 3, 20)) {
			t.Errorf("the subscription with its own change: %v", names(s))
		}
		if s := f.series(other); s[len(s)-1].Package.TotalPrice.String() != "100.00" {
			t.Errorf("another template's subscription: %v", names(s))
		}
		// Templates a price change names are archived, not deleted.
		if r := f.tn.Do("DELETE", "/package/"+f.p100, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete the target of a revoked price change: %d %s", r.Status, r.Body)
		}
		if r := f.tn.Do("GET", path+"/"+revoked, nil); r.Status != http.StatusOK {
			t.Fatalf("the revoked price change after its target was deleted: %d", r.Status)
		}
		ledgerClean(t, e, f.tn)
	})
}

func other2(e *apitest.Env) apitest.Tenant { return e.NewTenant("pricechange-other", true) }

// TestPlanChangeRacesCancellation: registrations and cancellations of the
// same subscriptions at once never leave a change registered on a
// cancelled series, and every request gets a definite answer.
func TestPlanChangeRacesCancellation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newChangeFixture(t, e.NewTenant("changes-race", true))
		f.advance(osloDay(2027, 1, 1))
		subs := make([]string, 12)
		for i := range subs {
			subs[i] = f.subscribe(f.p300)
		}
		statuses := make(chan int, 2*len(subs))
		done := make(chan struct{})
		for _, sub := range subs {
			go func() {
				statuses <- f.tn.Do("POST", "/subscription/"+sub+"/cancel", map[string]any{"mode": "Immediately"}).Status
				done <- struct{}{}
			}()
			go func() {
				statuses <- f.tn.Do("POST", "/subscription/"+sub+"/scheduledchange", map[string]any{"processingType": "OnRenewal", "templatePackageId": f.p600}).Status
				done <- struct{}{}
			}()
		}
		for range 2 * len(subs) {
			<-done
		}
		close(statuses)
		for st := range statuses {
			if st != http.StatusOK && st != http.StatusCreated && st != http.StatusBadRequest {
				t.Errorf("a request answered %d", st)
			}
		}
		for _, sub := range subs {
			if s := f.subscription(sub); s.CancelledAt == nil {
				t.Fatalf("%s not cancelled", sub)
			}
			var list []store.ScheduledChange
			f.tn.Do("GET", "/subscription/"+sub+"/scheduledchange", nil).JSON(t, &list)
			for _, c := range list {
				if c.Status == store.ChangeRegistered {
					t.Fatalf("a change is registered on cancelled %s: %+v", sub, c)
				}
			}
		}
	})
}

// TestRequestedStartBound: an order cannot start beyond what the engine
// represents (the test clock's bound), so later lists and renewals never
// meet a year-9999 period.
func TestRequestedStartBound(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newChangeFixture(t, e.NewTenant("far-start", true))
		r := f.tn.Do("POST", "/order", map[string]any{"organizationId": f.org, "templatePackageId": f.p100, "subscriberId": f.subscriber,
			"requestedStart": "9999-12-01T00:00:00Z"})
		if fs := r.Fields(t); len(fs) != 1 || fs[0] != "requestedStart" {
			t.Fatalf("year 9999: %d %s", r.Status, r.Body)
		}
	})
}
