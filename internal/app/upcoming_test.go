package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// upcomingApp is a test tenant whose clock starts at clock, billing as the
// server wires it, with digitalCatalog's organization, monthly plan and
// 199.00 NOK package.
func upcomingApp(t *testing.T, s *store.Store, clock time.Time) (*app.App, context.Context, store.Organization, catalog.BillingPlan, catalog.TemplatePackage) {
	t.Helper()
	a, ctx := billingApp(t, s, "upcoming", clock)
	org, plan, pkg := digitalCatalog(t, a, ctx)
	return a, ctx, org, plan, pkg
}

// orderOf orders template pkgID for a new subscriber, starting at start
// (nil: today), completes it and returns the first period.
func orderOf(t *testing.T, a *app.App, ctx context.Context, orgID, pkgID string, start *time.Time) store.Subscription {
	t.Helper()
	o, err := a.PlaceOrder(ctx, app.NewOrder{OrganizationID: orgID, TemplatePackageID: pkgID, RequestedStart: start,
		NewSubscriber: &app.OrderSubscriber{Subscriber: store.Subscriber{Name: "Kari Nordmann", Country: "NO", Contacts: []store.Contact{}}}})
	if err != nil {
		t.Fatal(err)
	}
	if o, err = a.CompleteOrder(ctx, o.ID); err != nil || o.SubscriptionID == nil {
		t.Fatalf("complete: %+v, %v", o, err)
	}
	sub, err := a.Subscription(ctx, *o.SubscriptionID)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// upcoming previews subscription id's next invoice and checks that it
// renews and that previewing wrote nothing (no invoice, no period).
func upcoming(t *testing.T, a *app.App, ctx context.Context, id string) app.UpcomingInvoice {
	t.Helper()
	before := invoiceCount(t, a, ctx)
	up, err := a.UpcomingInvoice(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !up.WillRenew || up.Reason != "" {
		t.Fatalf("upcoming invoice of %s: willRenew %v, reason %q; want a renewal", id, up.WillRenew, up.Reason)
	}
	if after := invoiceCount(t, a, ctx); after != before {
		t.Fatalf("previewing wrote invoices: %d before, %d after", before, after)
	}
	if last, err := a.Subscription(ctx, up.RenewingID); err != nil || last.NextID != nil {
		t.Fatalf("the renewing period after the preview: %+v, %v; want it not renewed", last, err)
	}
	return up
}

func invoiceCount(t *testing.T, a *app.App, ctx context.Context) int {
	t.Helper()
	invs, _, err := a.Invoices(ctx, store.DocumentFilter{}, store.Page{Limit: 100}, store.InvoiceParts{})
	if err != nil {
		t.Fatal(err)
	}
	return len(invs)
}

// renewsAsPreviewed advances the tenant's clock just past the renewal up
// previews and checks that the invoice the renewal wrote equals the
// preview: the period, the dates, every line and the totals.
func renewsAsPreviewed(t *testing.T, a *app.App, ctx context.Context, up app.UpcomingInvoice) store.Invoice {
	t.Helper()
	if _, err := a.AdvanceTestClock(ctx, up.IssuedAt.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	last, err := a.Subscription(ctx, up.RenewingID)
	if err != nil {
		t.Fatal(err)
	}
	if last.NextID == nil {
		t.Fatalf("period %s did not renew by %s", last.ID, up.IssuedAt)
	}
	next, err := a.Subscription(ctx, *last.NextID)
	if err != nil {
		t.Fatal(err)
	}
	invs, _, err := a.Invoices(ctx, store.DocumentFilter{SubscriptionID: next.ID}, store.Page{Limit: 10}, store.InvoiceParts{})
	if err != nil || len(invs) != 1 {
		t.Fatalf("invoices of the renewal's period: %d, %v; want 1", len(invs), err)
	}
	inv, err := a.Invoice(ctx, invs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !next.PeriodStart.Equal(up.PeriodStart) || !next.PeriodEnd.Equal(up.PeriodEnd) ||
		inv.PeriodStart == nil || !inv.PeriodStart.Equal(up.PeriodStart) || inv.PeriodEnd == nil || !inv.PeriodEnd.Equal(up.PeriodEnd) {
		t.Errorf("period %s – %s (invoice %v – %v), previewed %s – %s", next.PeriodStart, next.PeriodEnd, inv.PeriodStart, inv.PeriodEnd, up.PeriodStart, up.PeriodEnd)
	}
	if !inv.IssuedAt.Equal(up.IssuedAt) || !inv.DueAt.Equal(up.DueAt) || inv.IssueDate != up.IssueDate || inv.DueDate != up.DueDate {
		t.Errorf("issued %s (%s), due %s (%s); previewed %s (%s), %s (%s)", inv.IssuedAt, inv.IssueDate, inv.DueAt, inv.DueDate,
			up.IssuedAt, up.IssueDate, up.DueAt, up.DueDate)
	}
	if inv.Currency != up.Currency || inv.PricesIncludeVAT != up.PricesIncludeVAT {
		t.Errorf("currency %s, pricesIncludeVat %v; previewed %s, %v", inv.Currency, inv.PricesIncludeVAT, up.Currency, up.PricesIncludeVAT)
	}
	if len(inv.Lines) != len(up.Lines) {
		t.Errorf("%d lines, previewed %d:\n%s\n%s", len(inv.Lines), len(up.Lines), jsonOf(t, inv.Lines), jsonOf(t, up.Lines))
	}
	for i := range min(len(inv.Lines), len(up.Lines)) {
		if got, want := jsonOf(t, inv.Lines[i]), jsonOf(t, up.Lines[i]); got != want {
			t.Errorf("line %d:\n  billed    %s\n  previewed %s", i+1, got, want)
		}
	}
	if got, want := jsonOf(t, inv.VATTotals), jsonOf(t, up.VATTotals); got != want {
		t.Errorf("VAT totals %s, previewed %s", got, want)
	}
	if inv.Net != up.Net || inv.VAT != up.VAT || inv.Gross != up.Gross {
		t.Errorf("totals net %s vat %s gross %s; previewed %s, %s, %s", inv.Net, inv.VAT, inv.Gross, up.Net, up.VAT, up.Gross)
	}
	return inv
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lineKinds(lines []billing.Line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Kind
	}
	return out
}

// TestUpcomingInvoiceMonthly: a monthly subscription's preview is the next
// month at the same price, issued when the engine renews (14 days before
// the period ends) and due at the new period's start; the renewal then
// writes exactly that invoice, and afterwards the first period's id
// previews the renewal after it.
func TestUpcomingInvoiceMonthly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, org, _, pkg := upcomingApp(t, s, time.Now())
		first := orderOf(t, a, ctx, org.ID, pkg.ID, nil)
		up := upcoming(t, a, ctx, first.ID)
		if up.RenewingID != first.ID || !up.PeriodStart.Equal(first.PeriodEnd) || first.RenewAt == nil || !up.IssuedAt.Equal(*first.RenewAt) {
			t.Errorf("preview of %s: renewing %s, period from %s issued %s; want the first period's end %s, renewal %v",
				first.ID, up.RenewingID, up.PeriodStart, up.IssuedAt, first.PeriodEnd, first.RenewAt)
		}
		if !up.DueAt.Equal(up.PeriodStart) || up.Gross != nok(19900) || len(up.Lines) != 1 || up.Lines[0].Description != "Digital" ||
			up.Lines[0].Quantity != 1 || up.Lines[0].UnitPrice != nok(19900) || up.Currency != "NOK" || len(up.PendingChanges) != 0 {
			t.Errorf("preview: due %s, gross %s, lines %s, currency %s, pending %+v", up.DueAt, up.Gross, jsonOf(t, up.Lines), up.Currency, up.PendingChanges)
		}
		renewsAsPreviewed(t, a, ctx, up)

		again, err := a.UpcomingInvoice(ctx, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		if again.RenewingID == first.ID || !again.WillRenew || !again.PeriodStart.Equal(up.PeriodEnd) {
			t.Errorf("after the renewal the first period previews renewing %s from %s; want the next period's renewal from %s",
				again.RenewingID, again.PeriodStart, up.PeriodEnd)
		}
	})
}

// TestUpcomingInvoicePlanChange: an OnRenewal plan change shows in the
// preview as the new package's lines and as a pending change acting at the
// renewal, and the renewal bills the new package as previewed.
func TestUpcomingInvoicePlanChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, org, plan, pkg := upcomingApp(t, s, time.Now())
		first := orderOf(t, a, ctx, org.ID, pkg.ID, nil)
		bigger, err := a.CreatePackage(ctx, app.TemplateInput{Package: catalog.TemplatePackage{Name: "Digital 299", Currency: "NOK", Price: nok(29900), Units: 1,
			PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: mustFirstProduct(t, a, ctx)}},
			BillingPlans: []string{plan.ID}, AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := a.RegisterChange(ctx, first.ID, engine.ChangeRequest{ProcessingType: store.ChangeOnRenewal, TemplatePackageID: bigger.ID})
		if err != nil {
			t.Fatal(err)
		}
		up := upcoming(t, a, ctx, first.ID)
		if up.PlanChangeID != c.ID || up.Package.Name != "Digital 299" || up.Gross != nok(29900) {
			t.Errorf("preview: change %q, package %q, gross %s; want change %s, Digital 299, 299.00", up.PlanChangeID, up.Package.Name, up.Gross, c.ID)
		}
		if len(up.PendingChanges) != 1 || up.PendingChanges[0].Kind != app.UpcomingPlanChange || up.PendingChanges[0].ID != c.ID ||
			!up.PendingChanges[0].AtRenewal || up.PendingChanges[0].At == nil || !up.PendingChanges[0].At.Equal(up.IssuedAt) {
			t.Errorf("pending changes %+v; want the plan change %s at the renewal", up.PendingChanges, c.ID)
		}
		renewsAsPreviewed(t, a, ctx, up)
		if c, err = a.Change(ctx, first.ID, c.ID); err != nil || c.Status != store.ChangeExecuted {
			t.Errorf("the change after the renewal: %+v, %v; want Executed", c, err)
		}
	})
}

// TestUpcomingInvoiceChainStep: a subscription on an intro step of one
// period previews the chain's next step (199.00 after 99.00), and the
// renewal moves it there at the previewed price.
func TestUpcomingInvoiceChainStep(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, org, plan, pkg := upcomingApp(t, s, time.Now())
		intro, err := a.CreatePackage(ctx, app.TemplateInput{Package: catalog.TemplatePackage{Name: "Intro 99", Currency: "NOK", Price: nok(9900), Units: 1,
			PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: mustFirstProduct(t, a, ctx)}},
			BillingPlans: []string{plan.ID}, AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		chain, err := a.CreatePackageChain(ctx, app.ChainInput{Chain: catalog.Chain{Name: "Intro", PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
			{Step: 1, NextPackageID: intro.ID, Periods: 1}, {Step: 2, NextPackageID: pkg.ID, Periods: 1}}}}})
		if err != nil {
			t.Fatal(err)
		}
		intro.PackageChainID = &chain.ID
		if _, err := a.UpdatePackage(ctx, intro.ID, app.TemplateInput{Package: intro}); err != nil {
			t.Fatal(err)
		}
		first := orderOf(t, a, ctx, org.ID, intro.ID, nil)
		if first.ChainStep == nil || *first.ChainStep != 1 {
			t.Fatalf("the intro order's period is on chain step %v, want 1", first.ChainStep)
		}
		up := upcoming(t, a, ctx, first.ID)
		if !up.ChainStep || up.Package.Name != "Digital 199" || up.Gross != nok(19900) || up.Package.ChainStepOrder == nil || *up.Package.ChainStepOrder != 2 {
			t.Errorf("preview: chain step %v, package %q (step %v), gross %s; want step 2, Digital 199 at 199.00",
				up.ChainStep, up.Package.Name, up.Package.ChainStepOrder, up.Gross)
		}
		renewsAsPreviewed(t, a, ctx, up)
	})
}

// TestUpcomingInvoiceAccountItems: the account's open charge and allowance
// are on the preview (a charge line with its VAT, an allowance line taking
// the total down), and the renewal bills and applies them as previewed.
func TestUpcomingInvoiceAccountItems(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, org, _, pkg := upcomingApp(t, s, time.Now())
		first := orderOf(t, a, ctx, org.ID, pkg.ID, nil)
		accounts, _, err := a.SubscriberAccounts(ctx, store.AccountFilter{SubscriberID: first.SubscriberID, Currency: "NOK"}, store.Page{Limit: 1})
		if err != nil || len(accounts) != 1 {
			t.Fatalf("accounts: %+v, %v", accounts, err)
		}
		vat25, vat0 := catalog.PercentOf(25), catalog.PercentOf(0)
		if _, err := a.AddAccountItem(ctx, app.NewAccountItem{AccountID: accounts[0].ID, Kind: billing.ItemCharge, Amount: 5000,
			Description: "Paper copy", VATRate: &vat25}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.AddAccountItem(ctx, app.NewAccountItem{AccountID: accounts[0].ID, Kind: billing.ItemAllowance, Amount: 3000,
			Description: "Missed delivery", VATRate: &vat0}); err != nil {
			t.Fatal(err)
		}
		up := upcoming(t, a, ctx, first.ID)
		kinds := lineKinds(up.Lines)
		if jsonOf(t, kinds) != `["Product","Charge","Allowance"]` || up.Gross != nok(19900+5000-3000) || up.VAT != nok(1000) || len(up.VATTotals) != 2 {
			t.Errorf("preview: kinds %v, gross %s, vat %s, VAT totals %s; want product, charge, allowance, 219.00, 10.00, two rates",
				kinds, up.Gross, up.VAT, jsonOf(t, up.VATTotals))
		}
		renewsAsPreviewed(t, a, ctx, up)
		acc, err := a.SubscriberAccount(ctx, accounts[0].ID)
		if err != nil || acc.OutstandingCharges.Minor != 0 || acc.AvailableAllowance.Minor != 0 {
			t.Errorf("account after the renewal: charges %s, allowance %s, %v; want both billed", acc.OutstandingCharges, acc.AvailableAllowance, err)
		}
	})
}

// TestUpcomingInvoiceYearly: a yearly plan previews the next year, due at
// its start, and renews as previewed.
func TestUpcomingInvoiceYearly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, org, _, _ := upcomingApp(t, s, time.Now())
		yearly, err := a.CreateBillingPlan(ctx, catalog.BillingPlan{Name: "Yearly", IntervalUnit: period.Year, IntervalCount: 1, MinimumDueDays: 30, PaymentTermsDays: 14})
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := a.CreatePackage(ctx, app.TemplateInput{Package: catalog.TemplatePackage{Name: "Digital year", Currency: "NOK", Price: nok(199000), Units: 1,
			PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: mustFirstProduct(t, a, ctx)}},
			BillingPlans: []string{yearly.ID}, AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		first := orderOf(t, a, ctx, org.ID, pkg.ID, nil)
		up := upcoming(t, a, ctx, first.ID)
		oslo, err := time.LoadLocation("Europe/Oslo")
		if err != nil {
			t.Fatal(err)
		}
		if want := first.PeriodEnd.In(oslo).AddDate(1, 0, 0); !up.PeriodStart.Equal(first.PeriodEnd) || !up.PeriodEnd.Equal(want) || up.Gross != nok(199000) {
			t.Errorf("preview: %s – %s at %s; want %s – %s at 1990.00", up.PeriodStart, up.PeriodEnd, up.Gross, first.PeriodEnd, want)
		}
		renewsAsPreviewed(t, a, ctx, up)
	})
}

// TestUpcomingInvoiceMonthEnd: a series anchored on 31 January renews on
// 28 February for a period that ends on 31 March (the anchor's day, not
// the 28th), and the renewal bills that period.
func TestUpcomingInvoiceMonthEnd(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		oslo, err := time.LoadLocation("Europe/Oslo")
		if err != nil {
			t.Fatal(err)
		}
		a, ctx, org, _, pkg := upcomingApp(t, s, time.Date(2027, 1, 20, 10, 0, 0, 0, time.UTC))
		start := time.Date(2027, 1, 31, 0, 0, 0, 0, oslo)
		first := orderOf(t, a, ctx, org.ID, pkg.ID, &start)
		if want := time.Date(2027, 2, 28, 0, 0, 0, 0, oslo); !first.PeriodEnd.Equal(want) {
			t.Fatalf("first period ends %s, want %s", first.PeriodEnd, want)
		}
		up := upcoming(t, a, ctx, first.ID)
		if want := time.Date(2027, 3, 31, 0, 0, 0, 0, oslo); !up.PeriodStart.Equal(first.PeriodEnd) || !up.PeriodEnd.Equal(want) {
			t.Errorf("preview: %s – %s, want %s – %s", up.PeriodStart, up.PeriodEnd, first.PeriodEnd, want)
		}
		if want := time.Date(2027, 2, 14, 0, 0, 0, 0, oslo); !up.IssuedAt.Equal(want) || up.IssueDate != "2027-02-14" || up.DueDate != "2027-02-28" {
			t.Errorf("preview issued %s (%s), due %s; want %s, due 2027-02-28", up.IssuedAt, up.IssueDate, up.DueDate, want)
		}
		renewsAsPreviewed(t, a, ctx, up)
	})
}

// TestUpcomingInvoiceCancelled: a subscription cancelled at the end of its
// period answers willRenew false with its reason, no period and no lines,
// and the cancellation among the pending changes; the clock then passes
// the renewal time and nothing is billed, after which it has ended.
func TestUpcomingInvoiceCancelled(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, org, _, pkg := upcomingApp(t, s, time.Now())
		first := orderOf(t, a, ctx, org.ID, pkg.ID, nil)
		if _, _, err := a.CancelSubscription(ctx, first.ID, app.Cancellation{Mode: engine.CancelEndOfPeriod, Reason: "moving"}); err != nil {
			t.Fatal(err)
		}
		up, err := a.UpcomingInvoice(ctx, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		if up.WillRenew || up.Reason != app.NoRenewalCancelled || len(up.Lines) != 0 || !up.PeriodStart.IsZero() || up.Gross.Minor != 0 {
			t.Errorf("cancelled: willRenew %v, reason %q, %d lines, period %s, gross %s; want no renewal (Cancelled) and nothing else",
				up.WillRenew, up.Reason, len(up.Lines), up.PeriodStart, up.Gross)
		}
		if len(up.PendingChanges) != 1 || up.PendingChanges[0].Kind != app.UpcomingCancellation || up.PendingChanges[0].At == nil ||
			!up.PendingChanges[0].At.Equal(first.PeriodEnd) || up.PendingChanges[0].Reason != "moving" {
			t.Errorf("pending changes %+v; want the cancellation at %s", up.PendingChanges, first.PeriodEnd)
		}
		before := invoiceCount(t, a, ctx)
		if _, err := a.AdvanceTestClock(ctx, first.PeriodEnd.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if after := invoiceCount(t, a, ctx); after != before {
			t.Errorf("%d invoices after the period ended, %d before; the cancelled subscription was billed again", after, before)
		}
		if up, err = a.UpcomingInvoice(ctx, first.ID); err != nil || up.WillRenew || up.Reason != app.NoRenewalEnded || len(up.PendingChanges) != 0 {
			t.Errorf("after the end: %+v, %v; want Ended", up, err)
		}
	})
}

// TestUpcomingInvoiceTenants: another tenant's subscription, and an
// unknown one, are not found.
func TestUpcomingInvoiceTenants(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, org, _, pkg := upcomingApp(t, s, time.Now())
		first := orderOf(t, a, ctx, org.ID, pkg.ID, nil)
		other, err := s.CreateTenant(context.Background(), "other", true, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.UpcomingInvoice(tenancy.With(context.Background(), other.ID), first.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's subscription: %v, want ErrNotFound", err)
		}
		if _, err := a.UpcomingInvoice(ctx, store.NewID()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an unknown subscription: %v, want ErrNotFound", err)
		}
	})
}

// TestUpcomingInvoiceNoRenewal: a package that stops automatically answers
// AutomaticStop, and Ended once its period is over; an OnScheduledTime plan
// change due before the renewal answers PlanChange (the change ends the
// period first) and is listed; one due after the renewal leaves the
// renewal's preview as it was and is listed, not acting at it.
func TestUpcomingInvoiceNoRenewal(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, org, plan, pkg := upcomingApp(t, s, time.Now())
		trial, err := a.CreatePackage(ctx, app.TemplateInput{Package: catalog.TemplatePackage{Name: "Trial", Currency: "NOK", Price: nok(4900), Units: 1,
			AutomaticStop: true, PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: mustFirstProduct(t, a, ctx)}},
			BillingPlans: []string{plan.ID}, AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		stops := orderOf(t, a, ctx, org.ID, trial.ID, nil)
		up, err := a.UpcomingInvoice(ctx, stops.ID)
		if err != nil || up.WillRenew || up.Reason != app.NoRenewalAutomaticStop || len(up.Lines) != 0 {
			t.Errorf("automatic stop: %+v, %v; want AutomaticStop without lines", up, err)
		}

		monthly := orderOf(t, a, ctx, org.ID, pkg.ID, nil)
		renewal := upcoming(t, a, ctx, monthly.ID)
		before := renewal.IssuedAt.Add(-24 * time.Hour)
		c, err := a.RegisterChange(ctx, monthly.ID, engine.ChangeRequest{ProcessingType: store.ChangeOnScheduledTime, ScheduledAt: &before, TemplatePackageID: pkg.ID})
		if err != nil {
			t.Fatal(err)
		}
		up, err = a.UpcomingInvoice(ctx, monthly.ID)
		if err != nil || up.WillRenew || up.Reason != app.NoRenewalPlanChange || len(up.PendingChanges) != 1 || up.PendingChanges[0].ID != c.ID ||
			up.PendingChanges[0].AtRenewal || up.PendingChanges[0].At == nil || !up.PendingChanges[0].At.Equal(before) {
			t.Errorf("a change before the renewal: %+v, %v; want PlanChange listing change %s at %s", up, err, c.ID, before)
		}
		if err := a.RevokeChange(ctx, monthly.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		after := renewal.IssuedAt.Add(24 * time.Hour)
		if c, err = a.RegisterChange(ctx, monthly.ID, engine.ChangeRequest{ProcessingType: store.ChangeOnScheduledTime, ScheduledAt: &after, TemplatePackageID: pkg.ID}); err != nil {
			t.Fatal(err)
		}
		up = upcoming(t, a, ctx, monthly.ID)
		if jsonOf(t, up.Lines) != jsonOf(t, renewal.Lines) || len(up.PendingChanges) != 1 || up.PendingChanges[0].ID != c.ID || up.PendingChanges[0].AtRenewal {
			t.Errorf("a change after the renewal: lines %s, pending %+v; want the renewal as before and the change listed", jsonOf(t, up.Lines), up.PendingChanges)
		}
		renewsAsPreviewed(t, a, ctx, up)

		if _, err := a.AdvanceTestClock(ctx, stops.PeriodEnd.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if up, err = a.UpcomingInvoice(ctx, stops.ID); err != nil || up.WillRenew || up.Reason != app.NoRenewalEnded {
			t.Errorf("automatic stop after the period: %+v, %v; want Ended", up, err)
		}
	})
}
