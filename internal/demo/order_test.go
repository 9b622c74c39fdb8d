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

// TestDemoSubscriptionsComeFromOrders: the demo's subscriptions are made as
// the API makes them, by completing orders (engine.CompleteOrder), so each
// has its completed order and OrderProcessed event.
func TestDemoSubscriptionsComeFromOrders(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		eng := engine.New(s, slog.New(slog.DiscardHandler), "demo-test")
		now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		creds, _, err := demo.Ensure(context.Background(), s, eng, t.TempDir(), now)
		if err != nil {
			t.Fatal(err)
		}
		ctx := tenancy.With(context.Background(), creds.TenantID)
		orders, _, err := s.ListOrders(ctx, store.OrderFilter{}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		subs, _, err := s.ListSubscriptions(ctx, store.SubscriptionFilter{}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(orders) != 4 || len(subs) != 4 {
			t.Fatalf("%d orders, %d subscriptions; want 4 of each", len(orders), len(subs))
		}
		first := map[string]bool{}
		for _, o := range orders {
			if o.Status != store.OrderCompleted || o.SubscriptionID == nil {
				t.Fatalf("order %s: %s, subscription %v", o.ID, o.Status, o.SubscriptionID)
			}
			first[*o.SubscriptionID] = true
		}
		for _, sub := range subs {
			if !first[sub.ID] {
				t.Errorf("subscription %s (%s) has no order", sub.ID, sub.Package.Name)
			}
		}
		events, _, err := s.ListEvents(ctx, store.EventFilter{EventType: store.EventOrderProcessed}, store.Page{Limit: 100})
		if err != nil || len(events) != 4 {
			t.Errorf("%d OrderProcessed events (%v), want 4", len(events), err)
		}
	})
}
