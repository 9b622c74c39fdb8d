package app_test

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/reporting"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/substatus"
)

// TestDashboardFigures builds a known history on a test tenant's clock
// (orders on three packages, monthly and yearly, prices with 25 % VAT;
// renewals; a plan change up and one down; a cancellation; a subscriber
// who returns; payments by two providers; overdue invoices with
// reminders and a payment stop) and checks every dashboard figure, computed in SQL, against
// the same figure computed in Go from the API-level lists
// (App.Subscriptions, App.Subscription, App.PaymentDemands,
// App.Payments, App.Reminders), to the øre, at several times.
func TestDashboardFigures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx := billingApp(t, s, "dashboard", time.Now())
		oslo, _ := time.LoadLocation("Europe/Oslo")

		org, err := a.CreateOrganization(ctx, store.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo",
			KIDAlgorithm: "MOD10", PricesIncludeVAT: true})
		if err != nil {
			t.Fatal(err)
		}
		prod, err := a.CreateProduct(ctx, catalog.Product{Name: "Avis", VATRate: catalog.PercentOf(25), Active: true})
		if err != nil {
			t.Fatal(err)
		}
		stop := 40
		dun, err := a.CreateDunningProcess(ctx, invoicing.DunningProcess{Name: "Purring", ReminderDays: []int{5, 15}, ReminderFee: "0", PaymentStopDays: &stop})
		if err != nil {
			t.Fatal(err)
		}
		monthly, err := a.CreateBillingPlan(ctx, catalog.BillingPlan{Name: "Monthly", IntervalUnit: period.Month, IntervalCount: 1,
			MinimumDueDays: 14, PaymentTermsDays: 14, DunningProcessID: &dun.ID})
		if err != nil {
			t.Fatal(err)
		}
		yearly, err := a.CreateBillingPlan(ctx, catalog.BillingPlan{Name: "Yearly", IntervalUnit: period.Year, IntervalCount: 1,
			MinimumDueDays: 14, PaymentTermsDays: 14, DunningProcessID: &dun.ID})
		if err != nil {
			t.Fatal(err)
		}
		pkg := func(name string, price int64, plan string) catalog.TemplatePackage {
			p, err := a.CreatePackage(ctx, app.TemplateInput{Package: catalog.TemplatePackage{Name: name, Currency: "NOK", Price: nok(price), Units: 1,
				PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: prod.ID}},
				BillingPlans: []string{plan}, AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		basic, plus, annual := pkg("Basis", 19900, monthly.ID), pkg("Pluss", 34900, monthly.ID), pkg("År", 199000, yearly.ID)

		seller := org
		order := func(p catalog.TemplatePackage, subscriber, name string) store.Order {
			t.Helper()
			in := app.NewOrder{OrganizationID: seller.ID, TemplatePackageID: p.ID, SubscriberID: subscriber}
			if subscriber == "" {
				in.NewSubscriber = &app.OrderSubscriber{Subscriber: store.Subscriber{Name: name, Country: "NO", Contacts: []store.Contact{}}}
			}
			o, err := a.PlaceOrder(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if o, err = a.CompleteOrder(ctx, o.ID); err != nil || o.SubscriptionID == nil {
				t.Fatalf("complete: %+v, %v", o, err)
			}
			return o
		}
		advance := func(days int) time.Time {
			t.Helper()
			now, err := a.TestClock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.AdvanceTestClock(ctx, now.AddDate(0, 0, days)); err != nil {
				t.Fatal(err)
			}
			now, _ = a.TestClock(ctx)
			return now
		}
		change := func(sub string, to catalog.TemplatePackage) {
			t.Helper()
			c, err := a.RegisterChange(ctx, sub, engine.ChangeRequest{ProcessingType: store.ChangeImmediately, TemplatePackageID: to.ID})
			if err != nil {
				t.Fatal(err)
			}
			if c, err = a.Change(ctx, sub, c.ID); err != nil || c.ResultSubscriptionID == nil {
				t.Fatalf("change: %+v, %v", c, err)
			}
		}
		current := func(subscriber string) string {
			t.Helper()
			now, _ := a.Now(ctx)
			subs, _, err := a.Subscriptions(ctx, store.SubscriptionFilter{SubscriberID: subscriber, Status: substatus.Active, Now: now}, store.Page{Limit: 10}, false)
			if err != nil || len(subs) == 0 {
				t.Fatalf("active subscription of %s: %v, %v", subscriber, subs, err)
			}
			return subs[len(subs)-1].ID
		}
		pay := func(provider string, paidNth int) {
			t.Helper()
			invs, _, err := a.Invoices(ctx, store.DocumentFilter{}, store.Page{Limit: 500}, store.InvoiceParts{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, inv := range invs {
				if inv.Status != "Issued" && inv.Status != "Overdue" {
					continue
				}
				if n%paidNth == 0 {
					if _, _, err := a.RecordPayment(ctx, app.NewPayment{InvoiceID: inv.ID, Status: store.PaymentSucceeded, Amount: inv.Gross.Minor,
						Currency: "NOK", Provider: provider, ProviderReference: provider + "-" + inv.ID}); err != nil {
						t.Fatal(err)
					}
				}
				n++
			}
		}

		ka := order(basic, "", "Kari")
		ola := order(plus, "", "Ola")
		order(annual, "", "Per")
		lise := order(basic, "", "Lise")
		pay("Bank", 1)
		advance(40)
		change(current(*ka.SubscriberID), plus)   // up
		change(current(*ola.SubscriberID), basic) // down
		pay("Card", 2)
		advance(35)
		if _, _, err := a.CancelSubscription(ctx, current(*lise.SubscriberID), app.Cancellation{Mode: engine.CancelImmediately, Reason: "moving"}); err != nil {
			t.Fatal(err)
		}
		pay("Bank", 2)
		advance(40)
		order(basic, *lise.SubscriberID, "") // Lise returns
		order(plus, "", "Nils")
		// A second seller whose prices are net: its MRR is the price.
		if seller, err = a.CreateOrganization(ctx, store.Organization{Name: "Nordavis Bedrift AS", Country: "NO", Currency: "NOK",
			TimeZone: "Europe/Oslo", KIDAlgorithm: "MOD10"}); err != nil {
			t.Fatal(err)
		}
		order(annual, "", "Bedrift AS")
		check(t, a, ctx, oslo)
		advance(45) // invoices go unpaid and get their reminders
		check(t, a, ctx, oslo)
		pay("Card", 3)
		advance(3)
		if d := check(t, a, ctx, oslo); d.Funnel.PaymentStopped == 0 {
			t.Error("no payment stop in the funnel; the history should have one")
		}
	})
}

// check compares the dashboard at the tenant's time with the figures
// computed in Go from the API's lists, and returns the dashboard.
func check(t *testing.T, a *app.App, ctx context.Context, zone *time.Location) reporting.Dashboard {
	t.Helper()
	now, err := a.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Dashboard(ctx, now, zone)
	if err != nil {
		t.Fatal(err)
	}
	want := expectedDashboard(t, a, ctx, now, zone)
	if len(got.Months) != len(want.Months) {
		t.Fatalf("%d months, want %d: %+v", len(got.Months), len(want.Months), got.Months)
	}
	var total reporting.Month
	for i := range want.Months {
		g, w := got.Months[i], want.Months[i]
		if !g.Start.Equal(w.Start) || g != (reporting.Month{Start: g.Start, Currency: w.Currency, MRRStart: w.MRRStart, MRREnd: w.MRREnd, New: w.New,
			Expansion: w.Expansion, Contraction: w.Contraction, Churn: w.Churn, Reactivation: w.Reactivation, SubscribersStart: w.SubscribersStart,
			SubscribersEnd: w.SubscribersEnd, ChurnedSubscribers: w.ChurnedSubscribers}) {
			t.Errorf("month %s:\n got %+v\nwant %+v", w.Start.In(zone).Format("2006-01"), g, w)
		}
		if g.MRREnd != g.MRRStart+g.New+g.Expansion+g.Reactivation-g.Contraction-g.Churn {
			t.Errorf("month %s does not add up: %+v", w.Start.Format("2006-01"), g)
		}
		total.New += g.New
		total.Expansion += g.Expansion
		total.Contraction += g.Contraction
		total.Churn += g.Churn
		total.Reactivation += g.Reactivation
	}
	// The history has each kind of movement (a wrong rule could hide
	// behind zeros on both sides).
	if total.New == 0 || total.Expansion == 0 || total.Contraction == 0 || total.Churn == 0 || total.Reactivation == 0 {
		t.Errorf("movements over the year: %+v; want each of new, expansion, contraction, churn and reactivation", total)
	}
	if !slices.Equal(got.Packages, want.Packages) {
		t.Errorf("packages:\n got %+v\nwant %+v", got.Packages, want.Packages)
	}
	if !slices.Equal(got.Ages, want.Ages) {
		t.Errorf("ages:\n got %+v\nwant %+v", got.Ages, want.Ages)
	}
	if len(got.Payments) != len(want.Payments) {
		t.Errorf("payments:\n got %+v\nwant %+v", got.Payments, want.Payments)
	} else {
		for i := range want.Payments {
			if g, w := got.Payments[i], want.Payments[i]; !g.Start.Equal(w.Start) || g.Provider != w.Provider || g.Count != w.Count || g.Amount != w.Amount || g.Currency != w.Currency {
				t.Errorf("payments %d: got %+v, want %+v", i, g, w)
			}
		}
	}
	if g, w := got.Funnel, want.Funnel; g.Overdue != w.Overdue || g.PaidAfterReminder != w.PaidAfterReminder || g.PaymentStopped != w.PaymentStopped || !slices.Equal(g.Reminders, w.Reminders) {
		t.Errorf("funnel: got %+v, want %+v", g, w)
	}
	// The list behind each age bucket holds what the bucket counts.
	for _, b := range got.Ages {
		rows, err := a.OutstandingInvoices(ctx, now, b.From, b.To, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, r := range rows {
			sum += r.Amount
		}
		if int64(len(rows)) != b.Count || sum != b.Amount {
			t.Errorf("bucket %d..%d lists %d rows of %d, the chart %d of %d", b.From, b.To, len(rows), sum, b.Count, b.Amount)
		}
	}
	// The lists behind the MRR, package and payments charts hold what
	// the charts sum.
	act, err := a.ActiveSubscriptions(ctx, now, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var actMRR, pkgMRR, pkgCount int64
	for _, p := range act {
		actMRR += p.MRR
	}
	for _, p := range got.Packages {
		pkgMRR += p.MRR
		pkgCount += p.Count
		one, err := a.ActiveSubscriptions(ctx, now, p.Package, 1000)
		if err != nil || int64(len(one)) != p.Count {
			t.Errorf("active of %s: %d rows (%v), the chart %d", p.Package, len(one), err, p.Count)
		}
	}
	last := got.Months[len(got.Months)-1]
	if int64(len(act)) != pkgCount || actMRR != pkgMRR || actMRR != last.MRREnd {
		t.Errorf("active list: %d rows of MRR %d; packages %d of %d; MRR now %d", len(act), actMRR, pkgCount, pkgMRR, last.MRREnd)
	}
	for _, p := range got.Payments {
		rows, err := a.SucceededPayments(ctx, p.Start, reporting.Points(now, zone)[monthIndex(got, p.Start)+1], p.Provider, 1000)
		var sum int64
		for _, r := range rows {
			sum += r.Amount
		}
		if err != nil || int64(len(rows)) != p.Count || sum != p.Amount {
			t.Errorf("payments of %s in %s: %d rows of %d (%v), the chart %d of %d", p.Provider, p.Start, len(rows), sum, err, p.Count, p.Amount)
		}
	}
	t.Logf("at %s: %d months, packages %+v, ages %+v, payments %d, funnel %+v", now.Format(time.DateOnly), len(got.Months), got.Packages, got.Ages, len(got.Payments), got.Funnel)
	return got
}

// expectedDashboard computes the dashboard in Go from the API's lists,
// by the definitions in docs/CONSOLE.md ("The dashboard").
func expectedDashboard(t *testing.T, a *app.App, ctx context.Context, now time.Time, zone *time.Location) reporting.Dashboard {
	t.Helper()
	pts := reporting.Points(now, zone)
	orgs, _, err := a.Organizations(ctx, store.OrganizationFilter{}, store.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	gross := map[string]bool{}
	for _, o := range orgs {
		gross[o.ID] = o.PricesIncludeVAT
	}
	var subs []store.Subscription
	for cursor := ""; ; {
		page, next, err := a.Subscriptions(ctx, store.SubscriptionFilter{}, store.Page{Limit: 100, After: cursor}, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range page {
			sub, err := a.Subscription(ctx, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	mrr := func(s store.Subscription) int64 {
		var net int64
		for _, l := range append(slices.Clone(s.Package.Products), s.Package.AdditionalProducts...) {
			if gross[s.OrganizationID] {
				n, _ := money.SplitGross(l.Amount.Minor, l.VATRate.Decimal())
				net += n
			} else {
				net += l.Amount.Minor
			}
		}
		num, den := int64(1), int64(1)
		switch s.Package.BillingPlan.IntervalUnit {
		case period.Year:
			den = 12
		case period.Week:
			num, den = 13, 3
		case period.Day:
			num, den = 365, 12
		}
		den *= int64(s.Package.BillingPlan.IntervalCount)
		return (2*net*num + den) / (2 * den)
	}
	activeAt := func(s store.Subscription, at time.Time) bool {
		return substatus.At(s.PeriodStart, s.PeriodEnd, s.CancelEffectiveAt, at) == substatus.Active
	}
	type key struct{ subscriber, currency string }
	snap := func(at time.Time) map[key]int64 {
		out := map[key]int64{}
		for _, s := range subs {
			if activeAt(s, at) {
				out[key{s.SubscriberID, s.Currency}] += mrr(s)
			}
		}
		return out
	}
	var want reporting.Dashboard
	for k := 0; k+1 < len(pts); k++ {
		before, after := snap(pts[k]), snap(pts[k+1])
		m := reporting.Month{Start: pts[k], Currency: "NOK"}
		for c, v := range before {
			m.MRRStart += v
			m.SubscribersStart++
			if w, ok := after[c]; !ok {
				m.Churn += v
				m.ChurnedSubscribers++
			} else if w > v {
				m.Expansion += w - v
			} else {
				m.Contraction += v - w
			}
		}
		for c, w := range after {
			m.MRREnd += w
			m.SubscribersEnd++
			if _, ok := before[c]; ok {
				continue
			}
			seen := slices.ContainsFunc(subs, func(s store.Subscription) bool {
				return s.SubscriberID == c.subscriber && s.Currency == c.currency && s.PeriodStart.Before(pts[k])
			})
			if seen {
				m.Reactivation += w
			} else {
				m.New += w
			}
		}
		want.Months = append(want.Months, m)
	}
	type pk struct{ name, currency string }
	counts := map[pk]*reporting.PackageCount{}
	for _, s := range subs {
		if activeAt(s, now) {
			k := pk{s.Package.Name, s.Currency}
			if counts[k] == nil {
				counts[k] = &reporting.PackageCount{Package: k.name, Currency: k.currency}
			}
			counts[k].Count++
			counts[k].MRR += mrr(s)
		}
	}
	for _, c := range counts {
		want.Packages = append(want.Packages, *c)
	}
	slices.SortFunc(want.Packages, func(x, y reporting.PackageCount) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Package, y.Package), cmp.Compare(x.Currency, y.Currency))
	})

	demands, _, err := a.PaymentDemands(ctx, store.DocumentFilter{}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	reminders, _, err := a.Reminders(ctx, invoicing.ReminderFilter{}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]int{}
	for _, r := range reminders {
		sent[r.PaymentDemandID] = max(sent[r.PaymentDemandID], r.Number)
	}
	byID := map[string]store.Subscription{}
	for _, s := range subs {
		byID[s.ID] = s
	}
	ages := make([]reporting.AgeBucket, len(reporting.Buckets))
	for i, b := range reporting.Buckets {
		ages[i] = reporting.AgeBucket{From: b[0], To: b[1], Currency: "NOK"}
	}
	anyAge := false
	for _, d := range demands {
		left := d.Amount.Minor - d.PaidAmount.Minor - d.CreditedAmount.Minor
		open := d.Status != "Paid" && d.Status != "Credited" && left > 0
		if open {
			days := 0
			if d.DueAt.Before(now) {
				days = int((now.Sub(d.DueAt) + 24*time.Hour - 1) / (24 * time.Hour))
			}
			for i, b := range reporting.Buckets {
				if days >= b[0] && (b[1] < 0 || days <= b[1]) {
					ages[i].Count++
					ages[i].Amount += left
					anyAge = true
				}
			}
		}
		if !d.DueAt.Before(pts[0]) && d.DueAt.Before(now) && (sent[d.ID] > 0 || open) {
			want.Funnel.Overdue++
			for n := 1; n <= sent[d.ID]; n++ {
				if len(want.Funnel.Reminders) < n {
					want.Funnel.Reminders = append(want.Funnel.Reminders, 0)
				}
				want.Funnel.Reminders[n-1]++
			}
			if sent[d.ID] > 0 && d.Status == "Paid" {
				want.Funnel.PaidAfterReminder++
			}
			if d.SubscriptionID != nil && byID[*d.SubscriptionID].CancelReason == engine.CancelReasonPaymentStop {
				want.Funnel.PaymentStopped++
			}
		}
	}
	if anyAge {
		want.Ages = ages
	}

	payments, _, err := a.Payments(ctx, store.PaymentFilter{Status: store.PaymentSucceeded}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	type mk struct {
		provider, currency string
		k                  int
	}
	byMonth := map[mk]*reporting.ProviderMonth{}
	for _, p := range payments {
		for k := 0; k+1 < len(pts); k++ {
			if !p.PaidAt.Before(pts[k]) && p.PaidAt.Before(pts[k+1]) {
				key := mk{p.Provider, p.Currency, k}
				if byMonth[key] == nil {
					byMonth[key] = &reporting.ProviderMonth{Start: pts[k], Provider: p.Provider, Currency: p.Currency}
				}
				byMonth[key].Count++
				byMonth[key].Amount += p.Amount.Minor
			}
		}
	}
	for _, v := range byMonth {
		want.Payments = append(want.Payments, *v)
	}
	slices.SortFunc(want.Payments, func(x, y reporting.ProviderMonth) int {
		return cmp.Or(cmp.Compare(x.Currency, y.Currency), cmp.Compare(x.Provider, y.Provider), x.Start.Compare(y.Start))
	})
	return want
}

// monthIndex is the index of the month starting at start.
func monthIndex(d reporting.Dashboard, start time.Time) int {
	for i, m := range d.Months {
		if m.Start.Equal(start) {
			return i
		}
	}
	return -1
}
