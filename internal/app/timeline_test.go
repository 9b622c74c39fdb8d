package app_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestTimeline orders a monthly subscription in a test tenant, lets its
// clock run across two renewals, pays the first invoice, credits the
// second and cancels; the timeline then holds each of those, oldest
// first, pointing at the records they made, and another tenant cannot
// see it.
func TestTimeline(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, first, _ := timelineSetup(t, s)
		bg := context.Background()

		// About two months on: the first period renews, and so does the
		// second (each renews 14 days before its end).
		now, err := a.TestClock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.AdvanceTestClock(ctx, now.AddDate(0, 0, 50)); err != nil {
			t.Fatal(err)
		}
		invs, _, err := a.Invoices(ctx, store.DocumentFilter{}, store.Page{Limit: 10}, store.InvoiceParts{})
		if err != nil {
			t.Fatal(err)
		}
		if len(invs) < 3 {
			t.Fatalf("%d invoices after 50 days, want 3 or more (the order's and two renewals')", len(invs))
		}
		pay, _, err := a.RecordPayment(ctx, app.NewPayment{InvoiceID: invs[0].ID, Status: store.PaymentSucceeded, Amount: 19900,
			Currency: "NOK", Provider: "Bank", ProviderReference: "ref-timeline"})
		if err != nil {
			t.Fatal(err)
		}
		note, err := a.CreditInvoice(ctx, app.NewCredit{InvoiceID: invs[1].ID, Reason: "goodwill"})
		if err != nil {
			t.Fatal(err)
		}
		last := *invs[len(invs)-1].SubscriptionID
		if _, _, err := a.CancelSubscription(ctx, last, app.Cancellation{Mode: engine.CancelEndOfPeriod, Reason: "moving"}); err != nil {
			t.Fatal(err)
		}

		got, err := a.Timeline(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		// Any period of the series answers the same timeline.
		if again, err := a.Timeline(ctx, last); err != nil || len(again) != len(got) {
			t.Errorf("timeline of the last period: %d entries, %v; want %d", len(again), err, len(got))
		}
		for i := 1; i < len(got); i++ {
			if got[i].At.Before(got[i-1].At) {
				t.Errorf("entry %d (%s %s) at %s is before entry %d at %s", i, got[i].Kind, got[i].ID, got[i].At, i-1, got[i-1].At)
			}
		}
		for _, e := range got {
			t.Logf("%s %-12s %-12q %s %s", e.At.Format(time.RFC3339), e.Kind, e.Cause, e.Label, e.Path)
		}
		find := func(kind, id string) int {
			i := slices.IndexFunc(got, func(e app.TimelineEntry) bool { return e.Kind == kind && e.ID == id })
			if i < 0 {
				t.Fatalf("no %s entry for %s in %+v", kind, id, got)
			}
			return i
		}
		if got[0].Kind != app.TimelinePeriod || got[0].ID != first || got[0].Cause != "order" {
			t.Errorf("first entry %+v, want the ordered period %s", got[0], first)
		}
		inv0, inv1 := find(app.TimelineInvoice, invs[0].ID), find(app.TimelineInvoice, invs[1].ID)
		if got[inv0].Cause != "order" || got[inv1].Cause != "renewal" {
			t.Errorf("invoice causes %q, %q; want order, renewal", got[inv0].Cause, got[inv1].Cause)
		}
		// A renewal's period comes right before the invoice issued for it.
		if p := find(app.TimelinePeriod, *invs[1].SubscriptionID); got[p].Cause != "renewal" || p+1 != inv1 {
			t.Errorf("second period at %d with cause %q, its invoice at %d; want renewal, right before", p, got[p].Cause, inv1)
		}
		paid := find(app.TimelinePayment, pay.ID)
		credited := find(app.TimelineCreditNote, note.ID)
		cancelled := find(app.TimelineCancellation, last)
		if !(inv0 < paid && inv1 < credited && paid < cancelled && credited < cancelled) {
			t.Errorf("order of invoice %d, payment %d, invoice %d, credit note %d, cancellation %d", inv0, paid, inv1, credited, cancelled)
		}
		if got[credited].Cause != "goodwill" || got[cancelled].Cause != "moving" || got[paid].Path != "/payment/"+pay.ID {
			t.Errorf("credit note %+v, cancellation %+v, payment %+v", got[credited], got[cancelled], got[paid])
		}
		var created, cancelEvent bool
		for _, e := range got {
			if e.Kind == app.TimelineEvent && e.Path == "/subscription/"+first && e.Cause == store.EventSubscriptionCreated {
				created = true
			}
			if e.Kind == app.TimelineEvent && e.Path == "/subscription/"+last && e.Cause == store.EventSubscriptionCancelled {
				cancelEvent = true
			}
		}
		if !created || !cancelEvent {
			t.Errorf("events: created %v, cancelled %v; want both in %+v", created, cancelEvent, got)
		}

		other, err := s.CreateTenant(bg, "other", true, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Timeline(tenancy.With(bg, other.ID), first); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's timeline: %v, want ErrNotFound", err)
		}
		if _, err := a.Timeline(ctx, store.NewID()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an unknown subscription's timeline: %v, want ErrNotFound", err)
		}
	})
}

// timelineSetup is a test tenant billing as the server wires it, with one
// monthly subscription ordered from a 199.00 NOK package: the app, the
// tenant's context, the ordered period and the tenant's billing plan.
func timelineSetup(t *testing.T, s *store.Store) (*app.App, context.Context, string, catalog.BillingPlan) {
	t.Helper()
	a, ctx := billingApp(t, s, "timeline", time.Now())

	org, plan, pkg := digitalCatalog(t, a, ctx)
	o, err := a.PlaceOrder(ctx, app.NewOrder{OrganizationID: org.ID, TemplatePackageID: pkg.ID,
		NewSubscriber: &app.OrderSubscriber{Subscriber: store.Subscriber{Name: "Kari Nordmann", Country: "NO", Contacts: []store.Contact{}}}})
	if err != nil {
		t.Fatal(err)
	}
	if o, err = a.CompleteOrder(ctx, o.ID); err != nil || o.SubscriptionID == nil {
		t.Fatalf("complete: %+v, %v", o, err)
	}
	return a, ctx, *o.SubscriptionID, plan
}

// TestTimelinePlanChange: a plan change that runs at once shows as a
// planChange entry followed by the period it produced, caused by it.
func TestTimelinePlanChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, first, plan := timelineSetup(t, s)
		pkg, err := a.CreatePackage(ctx, app.TemplateInput{Package: catalog.TemplatePackage{Name: "Digital 299", Currency: "NOK", Price: nok(29900), Units: 1,
			PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: mustFirstProduct(t, a, ctx)}},
			BillingPlans: []string{plan.ID}, AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := a.RegisterChange(ctx, first, engine.ChangeRequest{ProcessingType: store.ChangeImmediately, TemplatePackageID: pkg.ID})
		if err != nil {
			t.Fatal(err)
		}
		if c, err = a.Change(ctx, first, c.ID); err != nil || c.ResultSubscriptionID == nil {
			t.Fatalf("the change after it ran: %+v, %v", c, err)
		}
		got, err := a.Timeline(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		ch := slices.IndexFunc(got, func(e app.TimelineEntry) bool { return e.Kind == app.TimelinePlanChange && e.ID == c.ID })
		per := slices.IndexFunc(got, func(e app.TimelineEntry) bool { return e.Kind == app.TimelinePeriod && e.ID == *c.ResultSubscriptionID })
		if ch < 0 || per < 0 || ch > per || got[per].Cause != "plan change" || got[ch].Cause != "plan change" {
			for _, e := range got {
				t.Logf("%s %-12s %-12q %s %s", e.At.Format(time.RFC3339), e.Kind, e.Cause, e.Label, e.ID)
			}
			t.Fatalf("plan change %s at %d, its period %s at %d; want the change first, both caused by the plan change", c.ID, ch, *c.ResultSubscriptionID, per)
		}
	})
}

func mustFirstProduct(t *testing.T, a *app.App, ctx context.Context) string {
	t.Helper()
	ps, _, err := a.Products(ctx, catalogdb.ProductFilter{}, store.Page{Limit: 1})
	if err != nil || len(ps) != 1 {
		t.Fatalf("products: %v, %v", ps, err)
	}
	return ps[0].ID
}

// TestTimelineOneSeries: a subscriber with two subscriptions has two
// timelines; each shows its own series' periods, invoices and events and
// none of the other's, though both are read from the subscriber's lists.
func TestTimelineOneSeries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, first, _ := timelineSetup(t, s)
		sub, err := a.Subscription(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		o, err := a.PlaceOrder(ctx, app.NewOrder{OrganizationID: sub.OrganizationID, TemplatePackageID: *sub.TemplatePackageID, SubscriberID: sub.SubscriberID})
		if err != nil {
			t.Fatal(err)
		}
		if o, err = a.CompleteOrder(ctx, o.ID); err != nil || o.SubscriptionID == nil {
			t.Fatalf("complete the second order: %+v, %v", o, err)
		}
		second := *o.SubscriptionID
		now, err := a.TestClock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.AdvanceTestClock(ctx, now.AddDate(0, 0, 50)); err != nil {
			t.Fatal(err)
		}
		periodsOf := func(id string) map[string]bool {
			t.Helper()
			got, err := a.Timeline(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			periods := map[string]bool{}
			for _, e := range got {
				if e.Kind == app.TimelinePeriod {
					periods[e.ID] = true
				}
			}
			invoices := 0
			for _, e := range got {
				if !periods[e.PeriodID] {
					t.Errorf("timeline of %s: %s %s belongs to period %s, not of this series", id, e.Kind, e.ID, e.PeriodID)
				}
				if e.Kind == app.TimelineInvoice {
					invoices++
				}
			}
			if len(periods) < 3 || invoices != len(periods) {
				t.Errorf("timeline of %s: %d periods and %d invoices, want 3 or more and one invoice each", id, len(periods), invoices)
			}
			return periods
		}
		one, two := periodsOf(first), periodsOf(second)
		for p := range one {
			if two[p] {
				t.Errorf("period %s is in both timelines", p)
			}
		}
	})
}
