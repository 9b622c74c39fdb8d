package console

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/webui/webuitest"
)

// TestConsoleInBrowser drives the console in headless Chromium the way a
// customer-service agent without a mouse would: log in, search, open the
// subscriber and the subscription, cancel it, read the audit log. Every
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
			typeInto(`#reason`, "moving"),
			tabTo(`button.danger`),
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
		if err := chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/console/users?lang=en"),
			chromedp.WaitVisible(`#new-email`),
			check("users"),
			chromedp.Navigate(f.srv.URL+"/console/account"),
			chromedp.WaitVisible(`main h1`),
			check("account"),
		); err != nil {
			t.Fatal(err)
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

func mustSubscriberName(t *testing.T, f *fixture, id string) string {
	t.Helper()
	s, err := f.app.Subscriber(tenancy.With(context.Background(), f.tenant.ID), id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Name
}
