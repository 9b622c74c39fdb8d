// Package webuitest drives the server-rendered surfaces (the console, Min
// side) in headless Chromium for their browser tests: a phone-sized
// browser, moving with Tab alone, and axe-core on a page.
package webuitest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// axeScript is axe-core, installed by `npm ci` in
// internal/console/testdata/axe (.ci/run does it); one copy serves every
// surface's test.
func axeScript() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "console", "testdata", "axe", "node_modules", "axe-core", "axe.min.js")
}

// Browser is headless Chromium at a phone's size (390×844) with axe-core
// at hand.
type Browser struct {
	Ctx context.Context
	t   *testing.T
	axe []byte
}

// Start starts the browser, or skips t when Chromium or axe-core is
// missing (fails it when KADENS_TEST_REQUIRE_CHROMIUM or
// KADENS_TEST_REQUIRE_NODE say they must be there).
func Start(t *testing.T) *Browser {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("KADENS_TEST_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("chromium is required: %v", err)
		}
		t.Skip("chromium is not installed (apt-get install -y chromium)")
	}
	axe, err := os.ReadFile(axeScript())
	if err != nil {
		if os.Getenv("KADENS_TEST_REQUIRE_NODE") != "" {
			t.Fatalf("axe-core is required (npm ci in internal/console/testdata/axe): %v", err)
		}
		t.Skip("axe-core is not installed: (cd internal/console/testdata/axe && npm ci)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(390, 844))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// axe is injected by the test, so the page's own policy (no script at
	// all) is bypassed for it.
	if _, err := chromedp.Call(ctx, cdppage.SetBypassCSP, cdppage.SetBypassCSPParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	return &Browser{Ctx: ctx, t: t, axe: axe}
}

// TabTo presses Tab until the element matching sel has focus.
func TabTo(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for range 80 {
			ok, err := chromedp.Evaluate[bool](fmt.Sprintf(`!!document.activeElement && document.activeElement.matches(%q)`, sel))(ctx, tg)
			if err != nil {
				return err
			}
			if ok {
				return nil
			}
			if _, err := chromedp.KeyEvent(kb.Tab)(ctx, tg); err != nil {
				return err
			}
		}
		return fmt.Errorf("%s cannot be reached with Tab", sel)
	})
}

// TypeInto reaches sel with Tab and types text.
func TypeInto(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(TabTo(sel), chromedp.KeyEvent(text))
}

// Check runs axe-core (WCAG 2.1 A and AA, best practices) on the page and
// fails the test for each violation and for a page that scrolls sideways
// on the phone.
func (b *Browser) Check(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		script := string(b.axe) + `;
			axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})
				.then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.html).slice(0, 3)}))))`
		res, err := chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise)(ctx, tg)
		if err != nil {
			return fmt.Errorf("%s: axe: %w", name, err)
		}
		var violations []map[string]any
		if err := json.Unmarshal([]byte(res), &violations); err != nil {
			return err
		}
		for _, v := range violations {
			b.t.Errorf("%s: axe %v (%v): %v", name, v["id"], v["impact"], v["nodes"])
		}
		wide, err := chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)(ctx, tg)
		if err != nil {
			return err
		}
		if wide {
			b.t.Errorf("%s scrolls sideways on a phone", name)
		}
		return nil
	})
}
