package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/webhook"
)

// eachDemo runs fn in parallel on both engines with a fixture, its demo
// subscription and a context in the demo tenant.
func eachDemo(t *testing.T, fn func(t *testing.T, f *fixture, sub store.Subscription, ctx context.Context)) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		fn(t, f, f.demoSubscription(t), tenancy.With(context.Background(), f.tenant.ID))
	})
}

// otherAdmin is a browser logged in as an administrator of the fixture's
// second tenant (on real time, without webhooks).
func (f *fixture) otherAdmin(t *testing.T) *browser {
	t.Helper()
	if _, err := f.staff.CreateUser(context.Background(), f.other.ID, staff.NewUser{Email: "boss@annen.no", Role: staff.RoleAdmin, Password: password}); err != nil {
		t.Fatal(err)
	}
	ob := f.browser(t)
	if a := ob.login(f.other.Name, "boss@annen.no", password); a.status != http.StatusSeeOther {
		t.Fatalf("the other tenant's admin logs in: %d", a.status)
	}
	return ob
}

// TestCancelWithPreview: the cancel form leads to a confirmation page
// showing the cancellation's own preview (the credit note's lines, or the
// allowance), which changes nothing; confirming cancels, and what it
// credits or gives back is what the page showed. A refused choice (a day
// in the past) is a 400 on the subscription page; another tenant's admin
// gets a 404.
func TestCancelWithPreview(t *testing.T) {
	eachDemo(t, func(t *testing.T, f *fixture, sub store.Subscription, ctx context.Context) {
		b := f.as(t, staff.RoleSupport)
		path := "/console/subscription/" + sub.ID + "/cancel/preview"
		if a := b.post(path, url.Values{"mode": {"OnDate"}, "at": {"2001-01-01"}}); a.status != http.StatusBadRequest || !strings.Contains(a.body, texts["en"]["cancelDateRefused"]) {
			t.Errorf("a day in the past: %d %.300s", a.status, a.body)
		}
		if a := b.post(path, url.Values{"mode": {"OnDate"}, "at": {"soon"}}); a.status != http.StatusBadRequest {
			t.Errorf("no date: %d", a.status)
		}
		want, err := f.app.CancellationPreview(ctx, sub.ID, app.Cancellation{Mode: engine.CancelImmediately})
		if err != nil {
			t.Fatal(err)
		}
		a := b.post(path, url.Values{"mode": {"Immediately"}, "reason": {"moving"}})
		if a.status != http.StatusOK || !strings.Contains(a.body, `id="confirm-cancel"`) || !strings.Contains(a.body, `name="mode" value="Immediately"`) {
			t.Fatalf("preview page: %d %.500s", a.status, a.body)
		}
		var shown string
		for _, p := range want.Periods {
			if set := p.Settlement; set != nil && set.Note != nil {
				shown = formatMoney(catalogMinor(set.Note.Gross), set.Currency)
			} else if set != nil && len(set.Allowances) > 0 {
				shown = formatMoney(catalogMinor(set.Allowances[0].Gross), set.Currency)
			}
		}
		if shown == "" || !strings.Contains(a.body, shown) {
			t.Errorf("the preview page lacks the amount %q: %.2000s", shown, a.body)
		}
		if got, err := f.app.Subscription(ctx, sub.ID); err != nil || got.CancelledAt != nil {
			t.Fatalf("the preview cancelled: %+v %v", got.CancelledAt, err)
		}
		if a := f.otherAdmin(t).post(path, url.Values{"mode": {"Immediately"}}); a.status != http.StatusNotFound {
			t.Errorf("another tenant's admin previews: %d, want 404", a.status)
		}
		if a := b.post("/console/subscription/"+sub.ID+"/cancel", url.Values{"mode": {"Immediately"}, "reason": {"moving"}}); a.status != http.StatusSeeOther {
			t.Fatalf("confirm: %d %.300s", a.status, a.body)
		}
		got, err := f.app.Subscription(ctx, sub.ID)
		if err != nil || got.CancelledAt == nil || got.DeactivatedAt == nil {
			t.Fatalf("after confirming: %+v %v", got, err)
		}
		notes, _, err := f.app.CreditNotes(ctx, store.CreditNoteFilter{SubscriberID: sub.SubscriberID}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range want.Periods {
			if set := p.Settlement; set != nil && set.Note != nil {
				found := false
				for _, n := range notes {
					found = found || (n.InvoiceID == set.InvoiceID && n.Gross.Minor == set.Note.Gross && n.Reason == set.Reason)
				}
				if !found {
					t.Errorf("no credit note of %d on invoice %s as previewed; notes %+v", set.Note.Gross, set.InvoiceID, notes)
				}
			}
		}
	})
}

// TestWebhookPage: an admin sees the tenant's webhooks with their delivery
// log; a delivery a real receiver refused is Failed with the receiver's
// answer, the redeliver button sends it again (App.RedeliverWebhook, the
// API's function) and the receiver, now answering, gets it: Delivered.
// Support and finance get 403, another tenant's admin 404.
func TestWebhookPage(t *testing.T) {
	eachDemo(t, func(t *testing.T, f *fixture, sub store.Subscription, ctx context.Context) {
		h := newFlakyHook(t, f)
		hook := h.hook
		if _, _, err := f.app.CancelSubscription(actor.With(ctx, actor.Actor{Kind: actor.System}), sub.ID, app.Cancellation{Mode: engine.CancelEndOfPeriod}); err != nil {
			t.Fatal(err)
		}
		wait := func(status string) webhook.WebhookDelivery { t.Helper(); return h.wait(t, status) }
		failed := wait(webhook.DeliveryFailed)
		admin := f.as(t, staff.RoleAdmin)
		a := admin.get("/console/webhooks")
		if a.status != http.StatusOK || !strings.Contains(a.body, hook.URL) || !strings.Contains(a.body, "HTTP 503") ||
			!strings.Contains(a.body, texts["en"]["delivery.Failed"]) || !strings.Contains(a.body, `id="delivery-`+failed.ID+`"`) {
			t.Fatalf("webhook page: %d %.3000s", a.status, a.body)
		}
		redeliver := "/console/webhooks/" + hook.ID + "/deliveries/" + failed.ID + "/redeliver"
		for _, r := range []staff.Role{staff.RoleSupport, staff.RoleFinance} {
			b := f.as(t, r)
			if a := b.get("/console/webhooks"); a.status != http.StatusForbidden {
				t.Errorf("%s reads the webhooks: %d, want 403", r, a.status)
			}
			if a := b.post(redeliver, nil); a.status != http.StatusForbidden {
				t.Errorf("%s redelivers: %d, want 403", r, a.status)
			}
		}
		other := f.otherAdmin(t)
		if a := other.post(redeliver, nil); a.status != http.StatusNotFound {
			t.Errorf("another tenant's admin redelivers: %d, want 404", a.status)
		}
		if a := other.get("/console/webhooks"); a.status != http.StatusOK || strings.Contains(a.body, hook.URL) {
			t.Errorf("another tenant's admin sees this tenant's webhooks: %d", a.status)
		}
		if a := admin.post("/console/webhooks/"+hook.ID+"/deliveries/"+store.NewID()+"/redeliver", nil); a.status != http.StatusNotFound {
			t.Errorf("an unknown delivery: %d, want 404", a.status)
		}
		if a := admin.post(redeliver, nil); a.status != http.StatusSeeOther {
			t.Fatalf("redeliver: %d %.300s", a.status, a.body)
		}
		done := wait(webhook.DeliveryDelivered)
		if done.ID != failed.ID || len(done.Attempts) != 2 {
			t.Errorf("delivered %s after %d attempts; want %s after 2", done.ID, len(done.Attempts), failed.ID)
		}
		if a := admin.get("/console/webhooks"); !strings.Contains(a.body, texts["en"]["delivery.Delivered"]) || !strings.Contains(a.body, "HTTP 200") {
			t.Errorf("after the redelivery the page lacks Delivered: %.3000s", a.body)
		}
	})
}

// TestTestClock: a test tenant's admin moves its clock from the console
// (App.AdvanceTestClock) and sees what was done; a day before the clock is
// a 400, support gets 403, and a tenant on real time has no clock: its
// admin gets 404 on the page and the form, and no link to it.
func TestTestClock(t *testing.T) {
	eachDemo(t, func(t *testing.T, f *fixture, sub store.Subscription, ctx context.Context) {
		admin := f.as(t, staff.RoleAdmin)
		a := admin.get("/console/clock")
		if a.status != http.StatusOK || !strings.Contains(a.body, `id="advance"`) || !strings.Contains(admin.get("/console/account").body, `href="/console/clock"`) {
			t.Fatalf("clock page: %d %.300s", a.status, a.body)
		}
		before, err := f.app.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if a := admin.post("/console/clock", url.Values{"to": {"2001-01-01"}}); a.status != http.StatusBadRequest {
			t.Errorf("a day in the past: %d", a.status)
		}
		if a := admin.post("/console/clock", url.Values{"to": {"tomorrow"}}); a.status != http.StatusBadRequest {
			t.Errorf("no date: %d", a.status)
		}
		to := before.In(f.console.zone).AddDate(0, 0, 40).Format(time.DateOnly)
		a = admin.post("/console/clock", url.Values{"to": {to}})
		if a.status != http.StatusOK || !strings.Contains(a.body, texts["en"]["clockAdvanced"]) || !strings.Contains(a.body, texts["en"]["clock.renewals"]) {
			t.Fatalf("advance: %d %.500s", a.status, a.body)
		}
		after, err := f.app.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := after.In(f.console.zone).Format(time.DateOnly); got != to {
			t.Errorf("the clock is at %s, want %s", after, to)
		}
		if a := f.as(t, staff.RoleSupport).get("/console/clock"); a.status != http.StatusForbidden {
			t.Errorf("support: %d, want 403", a.status)
		}
		other := f.otherAdmin(t)
		if a := other.get("/console/clock"); a.status != http.StatusNotFound {
			t.Errorf("a tenant on real time: %d, want 404", a.status)
		}
		if a := other.post("/console/clock", url.Values{"to": {to}}); a.status != http.StatusNotFound {
			t.Errorf("a tenant on real time moves its clock: %d, want 404", a.status)
		}
		if strings.Contains(other.get("/console/account").body, `href="/console/clock"`) {
			t.Error("a tenant on real time is shown the clock link")
		}
	})
}

func catalogMinor(m int64) catalog.Amount { return catalog.Amount{Minor: m, Digits: 2} }

// TestPartialCredit: finance credits part of one line of an invoice from
// its page (App.CreditInvoice with the line and the amount), and the credit
// note takes that amount off that line; more than is left, or an amount
// that is no amount, is a 400 with the problem beside the line's field.
func TestPartialCredit(t *testing.T) {
	eachDemo(t, func(t *testing.T, f *fixture, sub store.Subscription, ctx context.Context) {
		invs, _, err := f.app.Invoices(ctx, store.DocumentFilter{}, store.Page{Limit: 100}, store.InvoiceParts{})
		if err != nil {
			t.Fatal(err)
		}
		var inv store.Invoice
		for _, i := range invs {
			if full, err := f.app.Invoice(ctx, i.ID); err == nil && full.Status != "Credited" && len(full.Lines) > 0 && full.Lines[0].Gross.Minor > 1000 {
				inv = full
				break
			}
		}
		if inv.ID == "" {
			t.Fatal("no demo invoice to credit")
		}
		b := f.as(t, staff.RoleFinance)
		path := "/console/invoice/" + inv.ID + "/credit"
		n := strconv.Itoa(inv.Lines[0].LineNumber)
		if a := b.get("/console/invoice/" + inv.ID); !strings.Contains(a.body, `id="amount-`+n+`"`) || !strings.Contains(a.body, `name="line" value="`+n+`"`) {
			t.Fatalf("the invoice page lacks the per-line credit fields: %.2000s", a.body)
		}
		a := b.post(path, url.Values{"reason": {"goodwill"}, "line": {n}, "amount-" + n: {"999 999,00"}})
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, `id="amount-`+n+`-error"`) || !strings.Contains(a.body, texts["en"]["creditLineAmount"][:40]) ||
			!strings.Contains(a.body, `aria-invalid="true"`) || !strings.Contains(a.body, `value="999 999,00"`) {
			t.Errorf("more than is left: %d %.3000s", a.status, a.body)
		}
		if a := b.post(path, url.Values{"reason": {"goodwill"}, "amount-" + n: {"ten"}}); a.status != http.StatusBadRequest || !strings.Contains(a.body, `id="amount-`+n+`-error"`) {
			t.Errorf("an amount that is no amount: %d", a.status)
		}
		if a := b.post(path, url.Values{"reason": {"goodwill"}, "line": {n}, "amount-" + n: {"10,00"}}); a.status != http.StatusSeeOther {
			t.Fatalf("credit 10,00 of line %s: %d %.500s", n, a.status, a.body)
		}
		notes, _, err := f.app.CreditNotes(ctx, store.CreditNoteFilter{InvoiceID: inv.ID}, store.Page{Limit: 10})
		if err != nil || len(notes) != 1 || notes[0].Gross.Minor != 1000 || len(notes[0].Lines) != 1 || notes[0].Lines[0].InvoiceLineNumber != inv.Lines[0].LineNumber {
			t.Fatalf("credit notes %+v %v; want one of 10,00 on line %s", notes, err, n)
		}
		if a := b.get("/console/invoice/" + inv.ID); !strings.Contains(a.body, formatMoney(catalogMinor(1000), inv.Currency)) {
			t.Errorf("the invoice page does not show the 10,00 credited")
		}
	})
}

// TestSubscriberDetails: the subscriber page shows the contacts, the
// account's balance and open items (an allowance booked through the API's
// function appears), payment agreements, payments, credit notes,
// reminders and the subscriber's users with their entitlements.
func TestSubscriberDetails(t *testing.T) {
	eachDemo(t, func(t *testing.T, f *fixture, sub store.Subscription, ctx context.Context) {
		accounts, _, err := f.app.SubscriberAccounts(ctx, store.AccountFilter{SubscriberID: sub.SubscriberID}, store.Page{Limit: 10})
		if err != nil || len(accounts) == 0 {
			t.Fatalf("the demo subscriber's accounts: %v %v", accounts, err)
		}
		rate := catalog.PercentOf(0)
		if _, err := f.app.AddAccountItem(ctx, app.NewAccountItem{AccountID: accounts[0].ID, Kind: "Allowance", Amount: 4200,
			Description: "Goodwill for a late paper", VATRate: &rate}); err != nil {
			t.Fatal(err)
		}
		a := f.as(t, staff.RoleSupport).get("/console/subscriber/" + sub.SubscriberID)
		if a.status != http.StatusOK {
			t.Fatalf("subscriber page: %d %.300s", a.status, a.body)
		}
		for _, want := range []string{`id="contacts"`, `id="accounts"`, `id="agreements"`, `id="payments"`, `id="notes"`, `id="reminders"`,
			`id="users"`, "Goodwill for a late paper", formatMoney(catalogMinor(4200), ""), texts["en"]["balance"]} {
			if !strings.Contains(a.body, want) {
				t.Errorf("the subscriber page lacks %q", want)
			}
		}
		if a := f.otherAdmin(t).get("/console/subscriber/" + sub.SubscriberID); a.status != http.StatusNotFound {
			t.Errorf("another tenant's admin: %d, want 404", a.status)
		}
	})
}
