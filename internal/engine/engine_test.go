package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kadens/kadens/internal/ledger"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/substatus"
	"github.com/kadens/kadens/internal/tenancy"
)

var oslo, _ = time.LoadLocation("Europe/Oslo")

// world is a test tenant with an organization, a subscriber and helpers to
// build catalog entries and subscriptions.
type world struct {
	t          *testing.T
	e          *apitest.Env
	tn         apitest.Tenant
	ctx        context.Context
	org        string
	digital    string
	plans      map[string]string
	subscriber string
}

func newWorld(t *testing.T, e *apitest.Env, tn apitest.Tenant) *world {
	t.Helper()
	w := &world{t: t, e: e, tn: tn, ctx: tenancy.With(context.Background(), tn.ID), plans: map[string]string{}}
	sd := tn.Seed(t)
	w.org = sd.Organization(seed.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo"})
	w.subscriber = sd.Subscriber(seed.Kari)
	w.digital = sd.Product(seed.Product{Name: "Nordavis Digital", Category: "digital", VATRate: "0"})
	return w
}

func (w *world) create(path string, body any) string {
	w.t.Helper()
	r := w.tn.Do("POST", path, body)
	if r.Status != http.StatusCreated {
		w.t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	return r.ID(w.t)
}

// plan returns a billing plan with the interval and due days.
func (w *world) plan(unit string, dueDays int) string {
	key := fmt.Sprintf("%s/%d", unit, dueDays)
	if id, ok := w.plans[key]; ok {
		return id
	}
	id := w.tn.Seed(w.t).Plan(seed.Plan{Name: key, Unit: unit, Count: 1, MinimumDueDays: seed.Days(dueDays)})
	w.plans[key] = id
	return id
}

func (w *world) pkg(name, price, plan string, automaticStop bool) string {
	return w.tn.Seed(w.t).Package(seed.Package{Name: name, Price: price, Units: 1, AutomaticStop: automaticStop,
		Products: []string{w.digital}, Plans: []string{plan}})
}

type jsonNumber string

func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// begin starts a subscription on template at start, as an order would
// (a chained template gets its chain instance).
func (w *world) begin(template string, start time.Time) store.Subscription {
	w.t.Helper()
	return w.start(start, func(tx *store.Tx) (catalog.SubscriptionPackage, error) {
		return w.e.Server.Engine.InstancePackage(w.ctx, tx, template, catalog.Choices{}, start)
	})
}

// beginLegacy starts a subscription on template as orders did before
// chain instances: a chained template's package names the chain
// definition.
func (w *world) beginLegacy(template string, start time.Time) store.Subscription {
	w.t.Helper()
	return w.start(start, func(*store.Tx) (catalog.SubscriptionPackage, error) {
		in, err := catalogdb.PackageForMerge(w.ctx, w.e.Store, template)
		if err != nil {
			return catalog.SubscriptionPackage{}, err
		}
		return catalog.Merge(in)
	})
}

func (w *world) start(start time.Time, pkg func(*store.Tx) (catalog.SubscriptionPackage, error)) store.Subscription {
	w.t.Helper()
	var sub store.Subscription
	err := w.e.Store.InTx(w.ctx, func(tx *store.Tx) error {
		p, err := pkg(tx)
		if err != nil {
			return err
		}
		sub, err = w.e.Server.Engine.Start(w.ctx, tx, engine.NewSeries{SubscriberID: w.subscriber, OrganizationID: w.org,
			TimeZone: "Europe/Oslo", Package: p, Start: start}, start)
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return sub
}

// advance moves the tenant's test clock to the local time given.
func (w *world) advance(to time.Time) engine.Stats {
	w.t.Helper()
	r := w.tn.Do("POST", "/testclock/advance", map[string]any{"to": to.UTC().Format(time.RFC3339Nano)})
	if r.Status != http.StatusOK {
		w.t.Fatalf("advance to %s: %d %s", to, r.Status, r.Body)
	}
	var res struct{ Performed engine.Stats }
	r.JSON(w.t, &res)
	return res.Performed
}

type subView struct {
	store.Subscription
	Status string `json:"status"`
}

func (w *world) get(id string) subView {
	w.t.Helper()
	var v subView
	r := w.tn.Do("GET", "/subscription/"+id, nil)
	if r.Status != 200 {
		w.t.Fatalf("GET subscription %s: %d", id, r.Status)
	}
	r.JSON(w.t, &v)
	return v
}

// series follows next links from id and returns every period.
func (w *world) series(id string) []subView {
	w.t.Helper()
	var out []subView
	for cur := &id; cur != nil; {
		v := w.get(*cur)
		out = append(out, v)
		cur = v.NextID
	}
	return out
}

func (w *world) events(kind string) []store.Event {
	w.t.Helper()
	all, _, err := w.e.Store.ListEvents(w.ctx, store.EventFilter{EventType: kind}, store.Page{Limit: 1000})
	if err != nil {
		w.t.Fatal(err)
	}
	return all
}

func local(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, oslo) }

func TestMonthlyFrom31JanuaryAcrossDST(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		start := local(2027, 1, 31)
		w.advance(start)
		first := w.begin(w.pkg("Digital", "199", w.plan("Month", 0), false), start)
		w.advance(local(2028, 1, 31))
		periods := w.series(first.ID)
		if len(periods) != 13 {
			t.Fatalf("%d periods, want 13 (12 renewals)", len(periods))
		}
		wantDays := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31}
		for i, p := range periods {
			s := p.PeriodStart.In(oslo)
			if s.Hour() != 0 || s.Minute() != 0 || s.Day() != wantDays[i] {
				t.Errorf("period %d starts %s, want local midnight on day %d", i, s, wantDays[i])
			}
			if i > 0 && !p.PeriodStart.Equal(periods[i-1].PeriodEnd) {
				t.Errorf("period %d does not start where %d ends", i, i-1)
			}
			if i > 0 && (p.PreviousID == nil || *p.PreviousID != periods[i-1].ID) {
				t.Errorf("period %d is not linked to its predecessor", i)
			}
		}
		// Summer time: the April period starts at 22:00 UTC, winter ones at 23:00.
		if h := periods[3].PeriodStart.UTC().Hour(); h != 22 {
			t.Errorf("30 April local midnight is %d:00 UTC, want 22", h)
		}
		if h := periods[10].PeriodStart.UTC().Hour(); h != 23 {
			t.Errorf("30 November local midnight is %d:00 UTC, want 23", h)
		}
		if got := w.get(first.ID).Status; got != substatus.Completed {
			t.Errorf("first period is %s, want Completed", got)
		}
		if last := periods[12]; last.Status != substatus.Active {
			t.Errorf("current period is %s, want Active", last.Status)
		}
		if n := len(w.events(store.EventSubscriptionCreated)); n != 13 {
			t.Errorf("%d SubscriptionCreated events, want 13", n)
		}
	})
}

func TestYearlyFrom29February(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		start := local(2028, 2, 29)
		w.advance(start)
		first := w.begin(w.pkg("Yearly", "1990", w.plan("Year", 0), false), start)
		w.advance(local(2032, 3, 1))
		var got []string
		for _, p := range w.series(first.ID) {
			got = append(got, p.PeriodStart.In(oslo).Format("2006-01-02 15:04"))
		}
		want := []string{"2028-02-29 00:00", "2029-02-28 00:00", "2030-02-28 00:00", "2031-02-28 00:00", "2032-02-29 00:00"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("periods %v, want %v", got, want)
		}
	})
}

func TestRenewalIsCreatedMinimumDueDaysAhead(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		start := local(2027, 3, 1)
		w.advance(start)
		first := w.begin(w.pkg("Due14", "199", w.plan("Month", 14), false), start)
		w.advance(local(2027, 3, 17)) // period ends 1 April; renewal due 18 March
		if v := w.get(first.ID); v.NextID != nil {
			t.Fatal("renewed before minimumDueDays ahead of the period end")
		}
		w.advance(local(2027, 3, 18))
		v := w.get(first.ID)
		if v.NextID == nil {
			t.Fatal("not renewed 14 days ahead of the period end")
		}
		next := w.get(*v.NextID)
		if next.Status != substatus.Pending || !next.PeriodStart.Equal(local(2027, 4, 1)) {
			t.Fatalf("next period %s from %s, want Pending from 1 April", next.Status, next.PeriodStart.In(oslo))
		}
		ev := w.events(store.EventSubscriptionCreated)
		if last := ev[len(ev)-1]; !last.EventTime.Equal(local(2027, 3, 18)) {
			t.Errorf("SubscriptionCreated at %s, want the renewal time", last.EventTime.In(oslo))
		}
	})
}

// TestIntroChain: a subscription walks its chain instance (99, 3 × 149,
// then 199), and edits of the chain and of its step templates after the
// order do not reach it. A series ordered before chain instances existed
// (its period names the chain definition) is frozen at its first step
// change and is then just as immune.
func TestIntroChain(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		monthly := w.plan("Month", 0)
		p99, p149, p199 := w.pkg("Intro 99", "99", monthly, false), w.pkg("Intro 149", "149", monthly, false), w.pkg("Full 199", "199", monthly, false)
		chain := w.create("/packagechain", fmt.Sprintf(`{"name": "Intro", "packageChain": {"steps": [
			{"step": 1, "nextPackageId": %q}, {"step": 2, "nextPackageId": %q, "periods": 3}, {"step": 3, "nextPackageId": %q}]}}`, p99, p149, p199))
		// Link the entry template to its chain.
		var tmpl map[string]any
		w.tn.Do("GET", "/package/"+p99, nil).JSON(t, &tmpl)
		tmpl["packageChainId"] = chain
		if r := w.tn.Do("PUT", "/package/"+p99, tmpl); r.Status != http.StatusNoContent {
			t.Fatalf("link template: %d %s", r.Status, r.Body)
		}
		start := local(2027, 1, 1)
		w.advance(start)
		first := w.begin(p99, start)
		if first.ChainStep == nil || *first.ChainStep != 1 || first.ChainID == nil || *first.ChainID == chain ||
			first.Package.SubscriptionPackageChainID == nil || *first.Package.SubscriptionPackageChainID != *first.ChainID {
			t.Fatalf("order starts on step %v of chain %v (package: %v), want step 1 of an instance of %s",
				first.ChainStep, first.ChainID, first.Package.SubscriptionPackageChainID, chain)
		}
		legacy := w.beginLegacy(p99, start)
		if legacy.ChainID == nil || *legacy.ChainID != chain {
			t.Fatalf("legacy series on chain %v, want the definition %s", legacy.ChainID, chain)
		}
		// The legacy period shows the definition's steps, not yet frozen.
		for _, tt := range []struct {
			sub    string
			frozen bool
		}{{first.ID, true}, {legacy.ID, false}} {
			var v struct {
				ID     string `json:"id"`
				Frozen bool   `json:"frozen"`
				Steps  []any  `json:"steps"`
			}
			if r := w.tn.Do("GET", "/subscription/"+tt.sub+"/packagechain", nil); r.Status != http.StatusOK {
				t.Fatalf("GET packagechain: %d %s", r.Status, r.Body)
			} else {
				r.JSON(t, &v)
			}
			if v.Frozen != tt.frozen || len(v.Steps) != 3 || (v.ID == chain) == tt.frozen {
				t.Errorf("packagechain of %s: %+v, want frozen %v", tt.sub, v, tt.frozen)
			}
		}
		w.advance(local(2027, 2, 10))

		// The merchant reprices step 2's template and points step 3 at a
		// dearer one: running subscriptions do not notice.
		var t149 map[string]any
		w.tn.Do("GET", "/package/"+p149, nil).JSON(t, &t149)
		t149["Price"] = jsonNumber("155")
		if r := w.tn.Do("PUT", "/package/"+p149, t149); r.Status != http.StatusNoContent {
			t.Fatalf("edit step 2: %d %s", r.Status, r.Body)
		}
		p299 := w.pkg("Full 299", "299", monthly, false)
		if r := w.tn.Do("PUT", "/packagechain/"+chain, json.RawMessage(fmt.Sprintf(`{"name": "Intro", "packageChain": {"steps": [
			{"step": 1, "nextPackageId": %q}, {"step": 2, "nextPackageId": %q, "periods": 1}, {"step": 3, "nextPackageId": %q}]}}`, p99, p149, p299))); r.Status != http.StatusNoContent && r.Status != http.StatusOK {
			t.Fatalf("edit chain: %d %s", r.Status, r.Body)
		}
		w.advance(local(2027, 8, 1))
		want := "Jan:1:99.00 Feb:2:149.00 Mar:2:149.00 Apr:2:149.00 May:3:199.00 Jun:3:199.00 Jul:3:199.00 Aug:3:199.00"
		for name, sub := range map[string]store.Subscription{"instance": first, "legacy": legacy} {
			var got []string
			series := w.series(sub.ID)
			for _, p := range series {
				got = append(got, fmt.Sprintf("%s:%d:%s", p.PeriodStart.In(oslo).Format("Jan"), *p.ChainStep, p.Package.TotalPrice))
			}
			if strings.Join(got, " ") != want {
				t.Errorf("%s chain periods\n got %s\nwant %s", name, strings.Join(got, " "), want)
			}
			// From the first step change on, every period names one instance.
			inst := *series[1].ChainID
			for _, p := range series[1:] {
				if *p.ChainID != inst || p.Package.SubscriptionPackageChainID == nil || *p.Package.SubscriptionPackageChainID != inst {
					t.Errorf("%s: period %s on chain %s (package %v), want instance %s", name, p.ID, *p.ChainID, p.Package.SubscriptionPackageChainID, inst)
				}
			}
			if inst == chain {
				t.Errorf("%s: renewals follow the chain definition", name)
			}
		}
	})
}

func TestAutomaticStop(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		start := local(2027, 5, 1)
		w.advance(start)
		first := w.begin(w.pkg("One month", "99", w.plan("Month", 0), true), start)
		if first.RenewAt != nil {
			t.Fatal("an automatic-stop subscription is scheduled to renew")
		}
		st := w.advance(local(2027, 9, 1))
		v := w.get(first.ID)
		if v.NextID != nil || st.Renewals != 0 {
			t.Fatal("an automatic-stop subscription renewed")
		}
		if v.Status != substatus.Completed || v.DeactivatedAt == nil || !v.DeactivatedAt.Equal(local(2027, 6, 1)) {
			t.Fatalf("status %s deactivated %v, want Completed and deactivated at the period end", v.Status, v.DeactivatedAt)
		}
		if ev := w.events(store.EventSubscriptionDeactivated); len(ev) != 1 || !ev[0].EventTime.Equal(local(2027, 6, 1)) {
			t.Fatalf("deactivation events %+v", ev)
		}
	})
}

func change(t *testing.T, w *world, subID string, body map[string]any) (string, int) {
	t.Helper()
	r := w.tn.Do("POST", "/subscription/"+subID+"/scheduledchange", body)
	if r.Status != http.StatusCreated {
		return "", r.Status
	}
	return r.ID(t), r.Status
}

func TestPlanChanges(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		monthly := w.plan("Month", 0)
		basic, premium := w.pkg("Basic", "149", monthly, false), w.pkg("Premium", "299", monthly, false)
		start := local(2027, 1, 1)
		w.advance(start)

		t.Run("OnRenewal", func(t *testing.T) {
			first := w.begin(basic, start)
			w.advance(local(2027, 1, 10))
			if _, st := change(t, w, first.ID, map[string]any{"processingType": "OnRenewal", "templatePackageId": premium}); st != 201 {
				t.Fatalf("register: %d", st)
			}
			w.advance(local(2027, 2, 1))
			v := w.get(first.ID)
			if v.CancelledAt != nil || v.Status != substatus.Completed || v.NextID == nil {
				t.Fatalf("current subscription after OnRenewal: %s cancelled=%v", v.Status, v.CancelledAt)
			}
			if next := w.get(*v.NextID); next.Package.TotalPrice.String() != "299.00" || next.Package.Name != "Premium" {
				t.Fatalf("renewal did not take the new plan: %s %s", next.Package.Name, next.Package.TotalPrice)
			}
		})

		t.Run("Immediately", func(t *testing.T) {
			first := w.begin(basic, local(2027, 2, 1))
			at := local(2027, 2, 10).Add(13 * time.Hour)
			w.advance(at)
			if _, st := change(t, w, first.ID, map[string]any{"processingType": "Immediately", "templatePackageId": premium}); st != 201 {
				t.Fatalf("register: %d", st)
			}
			v := w.get(first.ID)
			if v.Status != substatus.Cancelled || v.CancelledAt == nil || !v.CancelledAt.Equal(at) || v.NextID == nil {
				t.Fatalf("current after Immediately: %s at %v", v.Status, v.CancelledAt)
			}
			// For billing the change takes effect at the start of the local
			// day: the old period ends and the new one starts at midnight.
			if !v.CancelEffectiveAt.Equal(local(2027, 2, 10)) {
				t.Errorf("old period billed until %s, want 10 February local midnight", v.CancelEffectiveAt.In(oslo))
			}
			n := w.get(*v.NextID)
			if n.Package.Name != "Premium" || !n.PeriodStart.Equal(local(2027, 2, 10)) || n.PreviousID == nil || *n.PreviousID != first.ID || n.Status != substatus.Active {
				t.Fatalf("new subscription: %s from %s, previous %v, %s", n.Package.Name, n.PeriodStart, n.PreviousID, n.Status)
			}
			if !n.PeriodEnd.Equal(local(2027, 3, 10)) {
				t.Errorf("new series ends its first period %s, want 10 March local midnight", n.PeriodEnd.In(oslo))
			}
		})

		t.Run("OnScheduledTime", func(t *testing.T) {
			first := w.begin(basic, local(2027, 3, 10))
			w.advance(local(2027, 3, 11))
			when := local(2027, 4, 20)
			id, st := change(t, w, first.ID, map[string]any{"processingType": "OnScheduledTime", "scheduledTime": when.UTC().Format(time.RFC3339), "templatePackageId": premium})
			if st != 201 {
				t.Fatalf("register: %d", st)
			}
			w.advance(local(2027, 4, 19))
			// The renewal on 10 April carried the plan on; the change waits.
			var list []store.ScheduledChange
			w.tn.Do("GET", "/subscription/"+first.ID+"/scheduledchange", nil).JSON(t, &list)
			if len(list) != 1 || list[0].ID != id || list[0].Status != store.ChangeRegistered {
				t.Fatalf("changes before their time: %+v", list)
			}
			w.advance(local(2027, 4, 21))
			w.tn.Do("GET", "/subscription/"+first.ID+"/scheduledchange", nil).JSON(t, &list)
			if list[0].Status != store.ChangeExecuted || list[0].ResultSubscriptionID == nil {
				t.Fatalf("change after its time: %+v", list[0])
			}
			n := w.get(*list[0].ResultSubscriptionID)
			if n.Package.Name != "Premium" || !n.PeriodStart.Equal(when) {
				t.Fatalf("changed subscription %s from %s", n.Package.Name, n.PeriodStart.In(oslo))
			}
			prev := w.get(*n.PreviousID)
			if prev.Status != substatus.Cancelled || !prev.CancelEffectiveAt.Equal(when) || !prev.PeriodStart.Equal(local(2027, 4, 10)) {
				t.Fatalf("period running at the change: %s effective %v from %s", prev.Status, prev.CancelEffectiveAt, prev.PeriodStart.In(oslo))
			}
			if r := w.tn.Do("DELETE", "/subscription/"+first.ID+"/scheduledchange/"+id, nil); r.Status != http.StatusBadRequest {
				t.Fatalf("revoking an executed change: %d", r.Status)
			}
		})

		t.Run("revoked before its time never runs", func(t *testing.T) {
			first := w.begin(basic, local(2027, 5, 1))
			w.advance(local(2027, 5, 2))
			id, _ := change(t, w, first.ID, map[string]any{"processingType": "OnScheduledTime", "scheduledTime": local(2027, 5, 15).UTC().Format(time.RFC3339), "templatePackageId": premium})
			if r := w.tn.Do("DELETE", "/subscription/"+first.ID+"/scheduledchange/"+id, nil); r.Status != http.StatusNoContent {
				t.Fatalf("revoke: %d %s", r.Status, r.Body)
			}
			w.advance(local(2027, 5, 20))
			if v := w.get(first.ID); v.CancelledAt != nil || v.Package.Name != "Basic" {
				t.Fatalf("a revoked change ran: %+v", v.CancelledAt)
			}
		})

		t.Run("bad requests", func(t *testing.T) {
			first := w.begin(basic, local(2027, 5, 20))
			cases := []struct {
				body  map[string]any
				field string
			}{
				{map[string]any{"processingType": "Sometime", "templatePackageId": premium}, "processingType"},
				{map[string]any{"processingType": "OnScheduledTime", "templatePackageId": premium}, "scheduledTime"},
				{map[string]any{"processingType": "OnScheduledTime", "scheduledTime": "2020-01-01T00:00:00Z", "templatePackageId": premium}, "scheduledTime"},
				{map[string]any{"processingType": "OnRenewal", "templatePackageId": store.NewID()}, "templatePackageId"},
				{map[string]any{"processingType": "OnRenewal", "templatePackageId": premium, "templatePackageChoices": map[string]any{"units": 0}}, "templatePackageChoices.units"},
			}
			for _, c := range cases {
				r := w.tn.Do("POST", "/subscription/"+first.ID+"/scheduledchange", c.body)
				if f := r.Fields(t); len(f) != 1 || f[0] != c.field {
					t.Errorf("%v: fields %v, want %s", c.body, f, c.field)
				}
			}
		})
	})
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		basic := w.pkg("Basic", "149", w.plan("Month", 0), false)
		start := local(2027, 1, 1)
		w.advance(start)
		endOfPeriod := w.begin(basic, start)
		immediately := w.begin(basic, start)
		at := local(2027, 1, 15)
		w.advance(at)
		for id, mode := range map[string]string{endOfPeriod.ID: "EndOfPeriod", immediately.ID: "Immediately"} {
			if r := w.tn.Do("POST", "/subscription/"+id+"/cancel", map[string]any{"mode": mode, "reason": "moving abroad"}); r.Status != 200 {
				t.Fatalf("cancel %s: %d %s", mode, r.Status, r.Body)
			}
		}
		if v := w.get(endOfPeriod.ID); v.Status != substatus.Active || v.DeactivatedAt != nil || !v.CancelEffectiveAt.Equal(local(2027, 2, 1)) {
			t.Fatalf("end-of-period cancel right after: %s %v", v.Status, v.CancelEffectiveAt)
		}
		if v := w.get(immediately.ID); v.Status != substatus.Cancelled || v.DeactivatedAt == nil || !v.DeactivatedAt.Equal(at) {
			t.Fatalf("immediate cancel: %s %v", v.Status, v.DeactivatedAt)
		}
		if r := w.tn.Do("POST", "/subscription/"+immediately.ID+"/cancel", map[string]any{"mode": "Immediately"}); r.Status != 400 {
			t.Fatalf("cancelling twice: %d", r.Status)
		}
		w.advance(local(2027, 4, 1))
		v := w.get(endOfPeriod.ID)
		if v.Status != substatus.Cancelled || v.NextID != nil || !v.DeactivatedAt.Equal(local(2027, 2, 1)) {
			t.Fatalf("end-of-period cancel after the period: %s next=%v deactivated=%v", v.Status, v.NextID, v.DeactivatedAt)
		}
		times := map[string][]time.Time{}
		for _, kind := range []string{store.EventSubscriptionCancelled, store.EventSubscriptionDeactivated} {
			for _, ev := range w.events(kind) {
				times[kind+" "+ev.Subject] = append(times[kind+" "+ev.Subject], ev.EventTime)
			}
		}
		check := func(kind, id string, want time.Time) {
			got := times[kind+" /subscription/"+id]
			if len(got) != 1 || !got[0].Equal(want) {
				t.Errorf("%s of %s at %v, want once at %s", kind, id, got, want)
			}
		}
		check(store.EventSubscriptionCancelled, endOfPeriod.ID, at)
		check(store.EventSubscriptionDeactivated, endOfPeriod.ID, local(2027, 2, 1))
		check(store.EventSubscriptionCancelled, immediately.ID, at)
		check(store.EventSubscriptionDeactivated, immediately.ID, at)
	})
}

func TestCancellingAPeriodCreatedAheadCancelsItToo(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		start := local(2027, 1, 1)
		w.advance(start)
		first := w.begin(w.pkg("Due14", "199", w.plan("Month", 14), false), start)
		w.advance(local(2027, 1, 20)) // renewed on 18 January
		ahead := *w.get(first.ID).NextID
		if r := w.tn.Do("POST", "/subscription/"+first.ID+"/cancel", map[string]any{"mode": "EndOfPeriod"}); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		if v := w.get(ahead); v.Status != substatus.Cancelled {
			t.Fatalf("period created ahead is %s, want Cancelled", v.Status)
		}
		w.advance(local(2027, 3, 1))
		if v := w.get(ahead); v.NextID != nil {
			t.Fatal("a cancelled period renewed")
		}
	})
}

// snapshot describes a tenant's subscriptions without ids or wall times,
// so two runs can be compared.
func snapshot(t *testing.T, e *apitest.Env, tn apitest.Tenant) string {
	t.Helper()
	ctx := tenancy.With(context.Background(), tn.ID)
	subs, _, err := e.Store.ListSubscriptions(ctx, store.SubscriptionFilter{}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, s := range subs {
		lines = append(lines, fmt.Sprintf("%s %s %s next=%v renew=%v deact=%v", s.Package.Name, s.PeriodStart.Format(time.RFC3339),
			s.PeriodEnd.Format(time.RFC3339), s.NextID != nil, s.RenewAt, s.DeactivatedAt))
	}
	evs, _, err := e.Store.ListEvents(ctx, store.EventFilter{}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		// Subscribers are made before the tenant's clock is first set, at
		// its creation time: not the engine's, and not the same in two
		// tenants.
		if strings.HasPrefix(ev.EventType, "Subscriber") {
			continue
		}
		lines = append(lines, ev.EventType+" "+ev.EventTime.Format(time.RFC3339))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestAdvanceIsIdempotentAndResumable(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		run := func(tn apitest.Tenant, interrupt bool) string {
			w := newWorld(t, e, tn)
			monthly, yearly := w.plan("Month", 7), w.plan("Year", 30)
			pkgs := []string{w.pkg("M", "199", monthly, false), w.pkg("Y", "1990", yearly, false), w.pkg("Stop", "99", monthly, true)}
			start := local(2027, 1, 1)
			w.advance(start)
			for i := range 12 {
				w.begin(pkgs[i%3], start.AddDate(0, 0, i*5))
			}
			to := local(2027, 12, 31)
			if interrupt {
				// Stop the run part-way (a batch fails after 9 renewals),
				// then advance again.
				ctx, cancel := context.WithCancel(context.Background())
				count := 0
				stopper := engine.New(e.Store, slog.New(slog.DiscardHandler), "stopper")
				stopper.Batch = 4
				stopper.Hooks.PeriodsCreated = func(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error {
					before := count
					if count += len(periods); before < 9 && count >= 9 {
						cancel()
						return context.Canceled
					}
					return invoicing.IssuePeriods(ctx, tx, periods) // billing, as the server wires it
				}
				if _, err := stopper.Advance(ctx, tn.ID, to); err == nil {
					t.Fatal("the interrupted run did not stop")
				}
			}
			w.advance(to)
			first := snapshot(t, e, tn)
			w.advance(to) // the same time again changes nothing
			if again := snapshot(t, e, tn); again != first {
				t.Fatalf("advancing to the same time again changed the state:\n%s\n---\n%s", first, again)
			}
			return first
		}
		whole := run(e.Tenant, false)
		resumed := run(e.NewTenant("interrupted", true), true)
		if whole != resumed {
			t.Fatalf("an interrupted and resumed run differs from an uninterrupted one:\n%s\n---\n%s", whole, resumed)
		}
	})
}

// monthlySeries starts a server on eng whose test tenant has n monthly
// series (renewed 3 days ahead) begun over the first 20 days of January
// 2027, its clock at 1 January; it returns the series' first periods.
func monthlySeries(t *testing.T, eng store.Engine, n int) (*apitest.Env, *world, []string) {
	t.Helper()
	e := apitest.Start(t, eng, nil)
	w := newWorld(t, e, e.Tenant)
	p := w.pkg("M", "199", w.plan("Month", 3), false)
	start := local(2027, 1, 1)
	w.advance(start)
	ids := make([]string, n)
	for i := range n {
		ids[i] = w.begin(p, start.AddDate(0, 0, i%20)).ID
	}
	return e, w, ids
}

func TestTwoWorkersDoEveryActionOnce(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e, w, _ := monthlySeries(t, eng, 40)
			to := local(2027, 7, 1)
			var wg sync.WaitGroup
			for i := range 2 {
				worker := engine.New(e.Store, slog.New(slog.DiscardHandler), fmt.Sprintf("worker-%d", i))
				worker.Batch = 7
				worker.Lease = time.Nanosecond // leases lapse at once: both really run
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						_, err := worker.Advance(context.Background(), e.Tenant.ID, to)
						if err == nil {
							return
						}
						if err != engine.ErrBusy {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			subs, _, err := e.Store.ListSubscriptions(w.ctx, store.SubscriptionFilter{}, store.Page{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			created := w.events(store.EventSubscriptionCreated)
			if len(created) != len(subs) {
				t.Fatalf("%d SubscriptionCreated events for %d subscriptions", len(created), len(subs))
			}
			// Each of the 40 series renews exactly once per month it ran into.
			perSeries := map[string]int{}
			for _, s := range subs {
				if s.PreviousID == nil {
					perSeries[s.ID] = 0
				}
			}
			if len(perSeries) != 40 {
				t.Fatalf("%d series, want 40", len(perSeries))
			}
			for id := range perSeries {
				n := len(w.series(id))
				first := w.get(id).PeriodStart.In(oslo)
				want := 7 // Jan..Jul periods
				if first.Day() > 4 {
					want = 6 // renewal for July not yet due on 1 July (3 due days)
				}
				if n != want {
					t.Errorf("series from %s has %d periods, want %d", first.Format("Jan 2"), n, want)
				}
			}
		})
	}
}

// Payment agreements changed while a worker renews the same subscriptions
// end up on every period that has not ended, whichever transaction commits
// first: the engine's batch and the change both write with a version
// check, and the loser reads again. The changes toggle each series between
// two agreements for as long as the advance runs; afterwards every period
// of a series has the agreement of the last change to it. (A race test:
// with the version check of the engine's update removed it failed in about
// half of the runs on PostgreSQL; SQLite serializes writers, so there the
// batches and changes only interleave whole.)
func TestAgreementChangeDuringAdvance(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e, w, series := monthlySeries(t, eng, 32)
			start := local(2027, 1, 1)
			var agreements [2]string
			for i := range agreements {
				agreements[i] = w.create("/paymentagreement", map[string]any{"subscriberId": w.subscriber, "providerType": "External",
					"providerAgreementReference": fmt.Sprintf("psp-%d", i)})
			}

			worker := engine.New(e.Store, slog.New(slog.DiscardHandler), "racer")
			worker.Batch = 5
			worker.Hooks = e.Server.Engine.Hooks // billing, as served
			done := make(chan error, 1)
			go func() {
				_, err := worker.Advance(context.Background(), e.Tenant.ID, local(2027, 6, 1))
				done <- err
			}()
			// Four clients change agreements at once, each on its own series,
			// so that changes commit while the worker's batches are open.
			const clients = 4
			var (
				mu                 sync.Mutex
				last               = map[string]string{}
				changes, conflicts int
				stop               = make(chan struct{})
				wg                 sync.WaitGroup
			)
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						i := c + clients*(n%(len(series)/clients))
						to := agreements[n/(len(series)/clients)%2]
						// The tenant's clock stays at start, so every period of
						// the series is unended and takes the agreement.
						_, err := e.Store.ChangePaymentAgreement(w.ctx, series[i], to, start)
						mu.Lock()
						switch {
						case errors.Is(err, store.ErrConflict):
							conflicts++ // the API answers 409; a client tries again
						case err != nil:
							t.Error(err)
						default:
							last[series[i]] = to
							changes++
						}
						mu.Unlock()
						if err != nil && !errors.Is(err, store.ErrConflict) {
							return
						}
					}
				}()
			}
			err := <-done
			close(stop)
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if changes == 0 {
				t.Fatal("the advance finished before the first change")
			}
			t.Logf("%d changes during the advance (%d gave up after repeated conflicts)", changes, conflicts)

			periods := 0
			for _, id := range series {
				ps := w.series(id)
				if len(ps) < 5 {
					t.Fatalf("series %s has %d periods after five months", id, len(ps))
				}
				for _, p := range ps {
					if got := deref(p.PaymentAgreementID); got != last[id] {
						t.Errorf("period %s (%s) has agreement %q, want %q (the last change to its series)", p.ID,
							p.PeriodStart.In(oslo).Format(time.DateOnly), got, last[id])
					}
				}
				periods += len(ps)
			}
			// Each period was invoiced once, with an agreement it had.
			invoices, _, err := e.Store.ListInvoices(w.ctx, store.DocumentFilter{Now: start}, store.Page{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(invoices) != periods {
				t.Fatalf("%d invoices for %d periods", len(invoices), periods)
			}
			for _, inv := range invoices {
				if a := deref(inv.PaymentAgreementID); a != "" && a != agreements[0] && a != agreements[1] {
					t.Errorf("invoice %d has agreement %s", inv.InvoiceNumber, a)
				}
			}
			report, err := ledger.Check(context.Background(), e.Store, ledger.Options{TenantID: e.Tenant.ID})
			if err != nil || !report.Clean() {
				t.Fatalf("ledger check: %v %+v", err, report.Problems)
			}
		})
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
