package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// scheduleFixture stores n monthly subscriptions of one subscriber in the
// tenant of ctx and returns them as read back.
func scheduleFixture(t *testing.T, s *store.Store, ctx context.Context, n int) []store.Subscription {
	t.Helper()
	sd := seed.NewStore(t, s, ctx, t0)
	org := sd.Organization(seed.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo",
		PricesIncludeVAT: seed.Bool(false)})
	subscriber := sd.Subscriber(seed.Subscriber{Name: "Kari Nordmann"})
	var err error
	subs := make([]store.Subscription, n)
	for i := range subs {
		start := t0.AddDate(0, 0, i%28)
		renew := start.AddDate(0, 1, -1)
		subs[i] = store.Subscription{ID: store.NewID(), SubscriberID: subscriber.ID, OrganizationID: org.ID, Currency: "NOK",
			Package: catalog.SubscriptionPackage{Name: "Digital", Currency: "NOK"}, TimeZone: "Europe/Oslo", StepPeriod: 1,
			Anchor: start, PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0), RenewAt: &renew, NextActionAt: &renew,
			CancelReason: "kept", CreatedAt: t0}
	}
	if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.InsertSubscriptions(ctx, subs) }); err != nil {
		t.Fatal(err)
	}
	for i := range subs {
		if subs[i], err = s.Subscription(ctx, subs[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	return subs
}

func TestUpdateSubscriptionSchedules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		// More rows than one statement takes on either engine's smallest
		// chunk, and a count that is not a power of two.
		subs := scheduleFixture(t, s, ctx, 300)
		want := make([]store.Subscription, len(subs))
		for i, sub := range subs {
			if sub.Version != 1 {
				t.Fatalf("version after insert %d", sub.Version)
			}
			next := store.NewID()
			sub.NextID = &next
			switch i % 3 {
			case 0: // renewed: nothing more to do
				sub.RenewAt, sub.NextActionAt = nil, nil
			case 1: // deactivated, and an action moved
				d := sub.PeriodEnd
				later := d.Add(time.Hour)
				sub.DeactivatedAt, sub.NextActionAt = &d, &later
			case 2: // only the next action moved
				later := sub.NextActionAt.Add(36 * time.Hour)
				sub.NextID, sub.NextActionAt = nil, &later
			}
			// Fields the method must not write.
			sub.CancelReason = "changed"
			sub.Package.Name = "changed"
			want[i] = sub
		}
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSubscriptionSchedules(ctx, want) }); err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			got, err := s.Subscription(ctx, w.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != 2 || !eqTime(got.RenewAt, w.RenewAt) || !eqTime(got.NextActionAt, w.NextActionAt) ||
				!eqTime(got.DeactivatedAt, w.DeactivatedAt) || !eqString(got.NextID, w.NextID) {
				t.Fatalf("row %d: got %+v, want %+v", i, got, w)
			}
			if got.CancelReason != "kept" || got.Package.Name != "Digital" || !got.PeriodEnd.Equal(subs[i].PeriodEnd) {
				t.Fatalf("row %d: wrote more than the schedule: %+v", i, got)
			}
		}
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSubscriptionSchedules(ctx, nil) }); err != nil {
			t.Fatalf("no rows: %v", err)
		}
	})
}

func TestUpdateSubscriptionSchedulesConflicts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		other := newTenant(t, s, "b")
		subs := scheduleFixture(t, s, ctx, 70)
		later := t0.AddDate(1, 0, 0)
		moved := func(in []store.Subscription) []store.Subscription {
			out := append([]store.Subscription(nil), in...)
			for i := range out {
				out[i].NextActionAt = &later
			}
			return out
		}
		// One row changed since it was read (by anyone): the batch fails
		// and, its transaction rolled back, writes nothing.
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSubscription(ctx, subs[41]) }); err != nil {
			t.Fatal(err)
		}
		err := s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSubscriptionSchedules(ctx, moved(subs)) })
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("stale version: want ErrConflict, got %v", err)
		}
		subs[41].Version = 2
		for _, sub := range subs {
			got, err := s.Subscription(ctx, sub.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != sub.Version || got.NextActionAt.Equal(later) {
				t.Fatalf("stale version: subscription %s was written", sub.ID)
			}
		}

		// A row that does not exist, or belongs to another tenant, is a
		// conflict too, and the other tenant's rows are not touched.
		missing := moved(subs[:3])
		missing[1].ID = store.NewID()
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSubscriptionSchedules(ctx, missing) }); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("missing row: want ErrConflict, got %v", err)
		}
		err = s.InTx(other, func(tx *store.Tx) error { return tx.UpdateSubscriptionSchedules(other, moved(subs)) })
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("other tenant: want ErrConflict, got %v", err)
		}
		for _, sub := range subs {
			got, err := s.Subscription(ctx, sub.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != sub.Version || got.NextActionAt.Equal(later) {
				t.Fatalf("subscription %s was written by a failed batch", sub.ID)
			}
		}

		// The same batch at the current versions goes through once; again
		// (the versions it read are now stale) it conflicts.
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSubscriptionSchedules(ctx, moved(subs)) }); err != nil {
			t.Fatal(err)
		}
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSubscriptionSchedules(ctx, moved(subs)) }); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("applied twice: want ErrConflict, got %v", err)
		}
		for _, sub := range subs {
			got, err := s.Subscription(ctx, sub.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != sub.Version+1 || !got.NextActionAt.Equal(later) {
				t.Fatalf("subscription %s: version %d, next action %v", sub.ID, got.Version, got.NextActionAt)
			}
		}
	})
}

func eqTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

func eqString(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// TestInsertSubscriptionsMatchesInsertSubscription checks the set-based
// insert (multi-row INSERT on SQLite, COPY on PostgreSQL for sets this
// large) against the single-row INSERT: every column reads back the same,
// optional ones set and unset, timestamps to the microsecond, and a row
// that breaks a foreign key fails the whole set.
func TestInsertSubscriptionsMatchesInsertSubscription(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		base := scheduleFixture(t, s, ctx, 1)[0]
		oslo, err := time.LoadLocation("Europe/Oslo")
		if err != nil {
			t.Fatal(err)
		}
		const n = 70 // above the COPY threshold, not a power of two
		one, many := make([]store.Subscription, n), make([]store.Subscription, n)
		for i := range n {
			sub := base
			sub.Version = 0
			at := time.Date(2027, 2, 1+i%28, 10, 30, 15, 123456000+i*1000, oslo)
			sub.Anchor, sub.PeriodStart, sub.PeriodEnd, sub.CreatedAt = at, at, at.AddDate(0, 1, 0), at
			prev, step := base.ID, i%3+1
			if i%2 == 0 {
				renew := at.AddDate(0, 1, -14)
				sub.RenewAt, sub.NextActionAt, sub.PreviousID, sub.ChainStep = &renew, &renew, &prev, &step
				sub.CancelReason = "tab\there, newline\nhere, backslash \\ and æøå"
			} else {
				cancelled := at.Add(time.Hour)
				sub.RenewAt, sub.NextActionAt, sub.PreviousID, sub.ChainStep = nil, nil, nil, nil
				sub.CancelledAt, sub.CancelEffectiveAt, sub.DeactivatedAt = &cancelled, &cancelled, &cancelled
				sub.CancelReason = ""
			}
			sub.PeriodIndex = i
			sub.ID = store.NewID()
			one[i] = sub
			sub.ID = store.NewID()
			many[i] = sub
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			for _, sub := range one {
				if err := tx.InsertSubscription(ctx, sub); err != nil {
					return err
				}
			}
			return tx.InsertSubscriptions(ctx, many)
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			a, err := s.Subscription(ctx, one[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Subscription(ctx, many[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			if !a.PeriodStart.Equal(one[i].PeriodStart) || !b.PeriodStart.Equal(one[i].PeriodStart) {
				t.Fatalf("row %d: period start %s / %s, want %s", i, a.PeriodStart, b.PeriodStart, one[i].PeriodStart)
			}
			b.ID = a.ID
			if ja, jb := mustJSON(t, a), mustJSON(t, b); ja != jb {
				t.Fatalf("row %d differs:\n single %s\n   set  %s", i, ja, jb)
			}
			if a.Version != b.Version || !a.Anchor.Equal(b.Anchor) || a.PeriodIndex != b.PeriodIndex ||
				!equalTimes(a.NextActionAt, b.NextActionAt) {
				t.Fatalf("row %d: internal fields differ: %+v / %+v", i, a, b)
			}
		}

		// One bad row (a subscriber of no one) fails the set, and nothing
		// of it is left.
		bad := make([]store.Subscription, n)
		for i := range bad {
			bad[i] = many[i]
			bad[i].ID = store.NewID()
		}
		bad[n/2].SubscriberID = store.NewID()
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.InsertSubscriptions(ctx, bad) }); err == nil {
			t.Fatal("a set with a missing subscriber was inserted")
		}
		if _, err := s.Subscription(ctx, bad[0].ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("first row of the failed set: %v, want ErrNotFound", err)
		}
	})
}

func equalTimes(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
