package minside_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kadens/kadens/internal/demo"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/webui/webuitest"
)

// TestMinSideInBrowser logs in as the demo subscriber in headless
// Chromium with the keyboard alone, through Min side's organisation form
// and the identity provider's real login page, then walks every page
// (overview with the next invoice, invoices, contact details, the error
// page), cancels with the keyboard, and runs axe-core on each page at a
// phone's size (webuitest). The pages do not depend on the engine (the
// other tests walk both), so this runs on SQLite only.
func TestMinSideInBrowser(t *testing.T) {
	t.Parallel()
	br := webuitest.Start(t)
	e := start(t, store.SQLite)
	ctx := br.Ctx
	check, tabTo, typeInto := br.Check, webuitest.TabTo, webuitest.TypeInto
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.base+"/my/"),
		chromedp.WaitVisible(`#tenant`),
		check("login"),
		typeInto(`#tenant`, demo.TenantName),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`#password`),
		check("the identity provider's login page"),
		typeInto(`#email`, e.creds.MyEmail),
		typeInto(`#password`, e.creds.MyPassword),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`section h2`),
		check("overview"),
		tabTo(`a[href="/my/invoices"]`),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`#cnh`),
		check("invoices"),
		tabTo(`a[href="/my/profile"]`),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`#line1`),
		check("profile"),
		typeInto(`#city`, " sentrum"),
		tabTo(`main button[type=submit]`),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`.notice`),
		check("profile saved"),
		tabTo(`a[href="/my/"]:not(.brand)`),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`button.danger`),
		tabTo(`button.danger`),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`.notice`),
		check("overview after cancelling"),
	)
	if err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "The subscription is cancelled") {
		t.Errorf("after cancelling with the keyboard the page says %q", body)
	}
	for _, l := range []string{"nn", "sv", "da", "fi", "en"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(e.base+"/my/?lang="+l), chromedp.WaitVisible(`main h1`), check("overview ("+l+")")); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(e.base+"/my/invoice/nothing"), chromedp.WaitVisible(`main h1`), check("error")); err != nil {
		t.Fatal(err)
	}
}
