package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/webhook"
	"github.com/kadens/kadens/internal/webui/webuitest"
)

// TestConsoleInBrowser drives the console in headless Chromium the way a
// customer-service agent without a mouse would: log in, search, open the
// subscriber and the subscription, cancel it through the confirmation
// page that shows what the cancellation credits, read the audit log,
// redeliver the webhook delivery the cancellation's refused event made,
// and move the test clock. Every
// field and button is reached with Tab and used with the keyboard. Each
// page is checked by axe-core (WCAG 2.1 A and AA, best practices) at a
// phone's size and must not scroll sideways.
//
// The pages do not depend on the engine, so the test runs on SQLite only.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if st.Engine() != store.SQLite {
			t.Skip("the pages do not depend on the engine; SQLite is enough")
		}
		f := newFixture(t, st)
		sub := f.demoSubscription(t)
		admin := f.users[staff.RoleAdmin]
		hooks := newFlakyHook(t, f)
		// An open deletion request, for its page's check.
		if _, _, err := f.app.RequestDeletion(tenancy.With(context.Background(), f.tenant.ID), sub.SubscriberID, "Slett meg"); err != nil {
			t.Fatal(err)
		}

		br := webuitest.Start(t)
		ctx := br.Ctx
		check, tabTo, typeInto := br.Check, webuitest.TabTo, webuitest.TypeInto
		err := chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/console/"),
			chromedp.WaitVisible(`#tenant`),
			check("login"),
			typeInto(`#tenant`, f.tenant.Name),
			typeInto(`#email`, admin.Email),
			typeInto(`#password`, password),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`#q`),
			check("home"),
			typeInto(`#q`, strings.Fields(mustSubscriberName(t, f, sub.SubscriberID))[0]),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`#results`),
			check("search"),
			tabTo(`a[href="/console/subscriber/`+sub.SubscriberID+`"]`),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`#subs`),
			check("subscriber"),
			tabTo(`a[href="/console/subscription/`+sub.ID+`"]`),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`.timeline`),
			check("subscription"),
			// A radio group is one Tab stop; the arrow key chooses in it.
			tabTo(`input[name="mode"][value="EndOfPeriod"]`),
			chromedp.KeyEvent(kb.ArrowDown),
			typeInto(`#reason`, "moving"),
			tabTo(`#preview-cancel`),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`#confirm-cancel`),
			check("cancel preview"),
		)
		if err != nil {
			t.Fatal(err)
		}
		mode, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#main input[name="mode"]').value`))
		if err != nil {
			t.Fatal(err)
		}
		if mode != "Immediately" {
			t.Errorf("the confirmation page confirms mode %q, want the Immediately chosen with the arrow key", mode)
		}
		err = chromedp.Do(ctx,
			tabTo(`#confirm-cancel`),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`.notice`),
		)
		if err != nil {
			t.Fatal(err)
		}
		body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/console/audit?actorKind=staff&lang=nb"),
			chromedp.WaitVisible(`#actorKind`),
			check("audit (nb)"),
		); err != nil {
			t.Fatal(err)
		}
		shot, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
		if err != nil {
			t.Fatal(err)
		}
		invs, _, err := f.app.Invoices(tenancy.With(context.Background(), f.tenant.ID), store.DocumentFilter{SubscriberID: sub.SubscriberID},
			store.Page{Limit: 1}, store.InvoiceParts{})
		if err != nil || len(invs) == 0 {
			t.Fatalf("the subscriber's invoices: %v %v", invs, err)
		}
		// chartsFit checks every chart of the page: an image with a title
		// and a description, its text and bars inside its drawing.
		chartsFit := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			res, err := chromedp.Evaluate[string](`JSON.stringify([...document.querySelectorAll('svg.chart')].map(s => {
					const vb = s.viewBox.baseVal, r = s.getBoundingClientRect();
					const out = [...s.querySelectorAll('text, rect')].filter(e => { const b = e.getBBox(); return b.x < -0.5 || b.x + b.width > vb.width + 0.5 || b.y + b.height > vb.height + 0.5; }).map(e => e.textContent);
					return {id: s.querySelector('title') && s.querySelector('title').id, role: s.getAttribute('role'), desc: !!s.querySelector('desc'), right: r.right, width: window.innerWidth, out: out};
				}))`)(ctx, tg)
			if err != nil {
				return err
			}
			var charts []struct {
				ID, Role     string
				Desc         bool
				Right, Width float64
				Out          []string
			}
			if err := json.Unmarshal([]byte(res), &charts); err != nil {
				return err
			}
			if len(charts) < 4 {
				t.Errorf("the dashboard draws %d charts, want MRR, packages, ages, payments and the funnel: %s", len(charts), res)
			}
			for _, c := range charts {
				if c.Role != "img" || c.ID == "" || !c.Desc {
					t.Errorf("chart %+v: want role img with a title and a description", c)
				}
				if c.Right > c.Width+1 || len(c.Out) > 0 {
					t.Errorf("chart %s overflows at %v px: right edge %v, outside its drawing: %q", c.ID, c.Width, c.Right, c.Out)
				}
			}
			return nil
		})
		// dashboard opens the dashboard and checks it and its charts.
		dashboard := func(name string) chromedp.Action[chromedp.Void] {
			return chromedp.Steps(chromedp.Navigate(f.srv.URL+"/console/?lang=nb"), chromedp.WaitVisible(`svg.chart`), check(name), chartsFit)
		}
		// The invoice, user and account pages; the dashboard, every chart
		// an image with its title and description whose text stays inside
		// its drawing at a phone's width; the rows behind an age bucket.
		if err := chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/console/invoice/"+invs[0].ID),
			chromedp.WaitVisible(`#lines`),
			check("invoice"),
			chromedp.Navigate(f.srv.URL+"/console/users?lang=en"),
			chromedp.WaitVisible(`#new-email`),
			check("users"),
			chromedp.Navigate(f.srv.URL+"/console/account"),
			chromedp.WaitVisible(`main h1`),
			check("account"),
			chromedp.Navigate(f.srv.URL+"/console/deletions?lang=nb"),
			chromedp.WaitVisible(`main form textarea`),
			check("deletion requests (nb)"),
			dashboard("dashboard (nb)"),
			chromedp.Navigate(f.srv.URL+"/console/invoices?overdueFrom=0&overdueTo=0&lang=en"),
			chromedp.WaitVisible(`main h1`),
			check("outstanding invoices"),
		); err != nil {
			t.Fatal(err)
		}
		// The cancellation's event reached the webhook, whose receiver
		// refused it: the admin sends it again from the delivery log.
		failed := hooks.wait(t, webhook.DeliveryFailed)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/console/webhooks"),
			chromedp.WaitVisible(`#delivery-`+failed.ID),
			check("webhooks"),
			tabTo(`#delivery-`+failed.ID+` button.redeliver`),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`.notice`),
		); err != nil {
			t.Fatal(err)
		}
		if done := hooks.wait(t, webhook.DeliveryDelivered); done.ID != failed.ID {
			t.Errorf("delivered %s, redelivered %s", done.ID, failed.ID)
		}
		// The test clock: the form offers tomorrow; Enter moves it there.
		if err := chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/console/clock"),
			chromedp.WaitVisible(`#to`),
			check("clock"),
			tabTo(`#advance`),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(`#done`),
			check("clock moved"),
		); err != nil {
			t.Fatal(err)
		}
		if now, err := f.app.Now(tenancy.With(context.Background(), f.tenant.ID)); err != nil || !now.After(f.clock()) {
			t.Errorf("after moving the clock it is %s (%v)", now, err)
		}
		// A hundred days on, with renewals, payments by two providers and
		// unpaid invoices with reminders, the fuller dashboard holds too
		// (this is the reviewed image).
		tctx := tenancy.With(context.Background(), f.tenant.ID)
		clock, err := f.app.TestClock(tctx)
		if err != nil {
			t.Fatal(err)
		}
		for step, provider := range []string{"Manual", "Bank", "Manual", "Bank"} {
			if _, err := f.app.AdvanceTestClock(tctx, clock.AddDate(0, 0, 25*(step+1))); err != nil {
				t.Fatal(err)
			}
			open, _, err := f.app.Invoices(tctx, store.DocumentFilter{Status: "Issued"}, store.Page{Limit: 100}, store.InvoiceParts{})
			if err != nil {
				t.Fatal(err)
			}
			for i, inv := range open {
				if i%2 == 0 {
					if _, _, err := f.app.RecordPayment(tctx, app.NewPayment{InvoiceID: inv.ID, Status: store.PaymentSucceeded, Amount: inv.Gross.Minor,
						Currency: inv.Currency, Provider: provider, ProviderReference: "shot-" + inv.ID}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if err := chromedp.Do(ctx,
			dashboard("dashboard after 100 days"),
			chromedp.Navigate(f.srv.URL+"/console/subscriptions"),
			chromedp.WaitVisible(`#list`),
			check("active subscriptions"),
			chromedp.Navigate(f.srv.URL+"/console/payments?lang=nb"),
			chromedp.WaitVisible(`#list`),
			check("payments (nb)"),
		); err != nil {
			t.Fatal(err)
		}
		if dir := os.Getenv("KADENS_CONSOLESHOT_DIR"); dir != "" { // the reviewed image, docs/console-dashboard.png
			if err := chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+"/console/?lang=nb"), chromedp.WaitVisible(`svg.chart`)); err == nil {
				if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil { // 100: PNG
					_ = os.WriteFile(filepath.Join(dir, "console-dashboard.png"), png, 0o644)
				}
			}
		}
		if !strings.Contains(body, "cancelled") {
			t.Errorf("after cancelling with the keyboard the page says %q", body)
		}
		if !strings.Contains(shot, admin.Email) || !strings.Contains(shot, "Ansatt") {
			t.Errorf("the audit log in Norwegian lacks the admin's cancellation: %q", shot)
		}
		if dir := os.Getenv("KADENS_CONSOLESHOT_DIR"); dir != "" { // to look at
			if err := chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+"/console/subscription/"+sub.ID)); err == nil {
				if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90)); err == nil {
					_ = os.WriteFile(filepath.Join(dir, "console-subscription.png"), png, 0o644)
				}
			}
		}
	})
}

// flakyHook is a webhook of the fixture's tenant whose receiver refuses
// the first delivery and takes the rest, with a dispatcher that does not
// retry (the first refusal fails the delivery).
type flakyHook struct {
	f    *fixture
	hook webhook.Webhook
}

func newFlakyHook(t *testing.T, f *fixture) *flakyHook {
	t.Helper()
	var calls atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rcv.Close)
	ctx := tenancy.With(context.Background(), f.tenant.ID)
	hook, err := webhook.Create(ctx, f.st, webhook.Webhook{URL: rcv.URL + "/hook", EventTypes: []string{store.EventSubscriptionCancelled},
		Format: webhook.FormatCloudEvents, Secret: webhook.NewSecret(), DisableValidation: true}, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	d := webhook.New(webhook.Options{Store: f.st, Schedule: []time.Duration{}, Timeout: 2 * time.Second, Egress: egress.Policy{Private: true},
		Poll: 50 * time.Millisecond})
	d.Start()
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	return &flakyHook{f: f, hook: hook}
}

// wait is the hook's first delivery with status, waiting for it.
func (h *flakyHook) wait(t *testing.T, status string) webhook.WebhookDelivery {
	t.Helper()
	ctx := tenancy.With(context.Background(), h.f.tenant.ID)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ds, _, err := h.f.app.WebhookDeliveries(ctx, h.hook.ID, webhook.DeliveryFilter{Status: status}, store.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) > 0 {
			return ds[0]
		}
	}
	t.Fatalf("no %s delivery", status)
	return webhook.WebhookDelivery{}
}

func mustSubscriberName(t *testing.T, f *fixture, id string) string {
	t.Helper()
	s, err := f.app.Subscriber(tenancy.With(context.Background(), f.tenant.ID), id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Name
}
