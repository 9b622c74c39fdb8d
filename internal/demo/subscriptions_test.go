package demo_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/demo"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestDemoYear runs the demo tenant a year ahead, as the README shows, and
// checks the renewals it promises: monthly plans renew every month, the
// yearly one once, and the intro offer ends on its 199 step.
func TestDemoYear(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		eng := engine.New(s, slog.New(slog.DiscardHandler), "demo-test")
		now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		creds, _, err := demo.Ensure(context.Background(), s, eng, t.TempDir(), now)
		if err != nil {
			t.Fatal(err)
		}
		ctx := tenancy.With(context.Background(), creds.TenantID)
		subs, _, err := s.ListSubscriptions(ctx, store.SubscriptionFilter{}, store.Page{Limit: 100})
		if err != nil || len(subs) != 4 {
			t.Fatalf("demo subscriptions: %d, %v", len(subs), err)
		}
		if _, err := eng.Advance(context.Background(), creds.TenantID, now.AddDate(1, 0, 0)); err != nil {
			t.Fatal(err)
		}
		subs, _, err = s.ListSubscriptions(ctx, store.SubscriptionFilter{}, store.Page{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		periods := map[string]int{}
		last := map[string]store.Subscription{}
		for _, sub := range subs {
			periods[sub.Package.Name]++
			if l, ok := last[sub.SubscriberID]; !ok || sub.PeriodStart.After(l.PeriodStart) {
				last[sub.SubscriberID] = sub
			}
		}
		// A year from 22 November is 13 monthly period starts (the renewal
		// 14 days before 22 December is not due yet). The intro subscriber
		// has 1 period at 99, 3 at 149 and then 9 on the 199 template, which
		// is also Kari's plain monthly one: 13 + 9.
		want := map[string]int{"Digital – månedlig": 22, "Papir + digital": 13, "Digital – årlig": 2,
			"Digital – intro 99": 1, "Digital – intro 149": 3}
		for name, n := range want {
			if periods[name] != n {
				t.Errorf("%s: %d periods, want %d (all: %v)", name, periods[name], n, periods)
			}
		}
		for _, l := range last {
			if l.ChainStep != nil && (*l.ChainStep != 3 || l.Package.TotalPrice.String() != "199.00") {
				t.Errorf("intro chain ends on step %d at %s, want step 3 at 199.00", *l.ChainStep, l.Package.TotalPrice)
			}
		}
	})
}
