package subscriberuser_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
)

// accessFixture is a user linked to a subscriber with an agreement, to
// which periods are added.
type accessFixture struct {
	ctx context.Context
	seed.Parties
	user, agreementID string
}

func newAccessFixture(t *testing.T, s *store.Store, ctx context.Context) accessFixture {
	t.Helper()
	sd := seed.NewStore(t, s, ctx, catalogNow)
	f := accessFixture{ctx: ctx, Parties: sd.Parties()}
	f.agreementID = sd.Agreement(f.Sub.ID, store.ProviderInvoice, "", "").ID
	u, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "u@example.no", SubscriberID: f.Sub.ID}, t0, t0)
	if err != nil {
		t.Fatal(err)
	}
	f.user = u.ID
	return f
}

// period inserts, through s, a period of one product named product from
// start to end, with an optional cancellation taking effect at cancel.
func (f accessFixture) period(t *testing.T, s *store.Store, product string, start, end time.Time, cancel *time.Time) {
	t.Helper()
	agreement := f.agreementID
	p := store.Subscription{ID: store.NewID(), SubscriberID: f.Sub.ID, OrganizationID: f.Org.ID, PaymentAgreementID: &agreement,
		Currency: "NOK", Package: catalog.SubscriptionPackage{Name: product, Products: []catalog.Line{{ProductID: product, Name: product, Category: "digital"}}},
		TimeZone: "Europe/Oslo", StepPeriod: 1, Anchor: start, PeriodStart: start, PeriodEnd: end, CreatedAt: catalogNow,
		CancelEffectiveAt: cancel}
	if cancel != nil {
		p.CancelledAt = &start
	}
	if err := s.InTx(f.ctx, func(tx *store.Tx) error { return tx.InsertSubscription(f.ctx, p) }); err != nil {
		t.Fatal(err)
	}
}

// products returns the product ids user may use at at, asked of s.
func products(t *testing.T, s *store.Store, ctx context.Context, user string, at time.Time) []string {
	t.Helper()
	a, err := subscriberuser.AccessOf(ctx, s, user, at)
	if err != nil {
		t.Fatal(err)
	}
	if !a.At.Equal(at) {
		t.Errorf("access at %s says it is of %s", at, a.At)
	}
	ids := []string{}
	for _, p := range a.Products {
		ids = append(ids, p.ProductID)
	}
	return ids
}

// TestAccessCacheFollowsTime: with no write in between, answers asked at
// successive times change exactly when a period starts, when one ends and
// when a cancellation takes effect — the moments the answer cache keeps
// an answer until — and asking an earlier time again answers for it.
func TestAccessCacheFollowsTime(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		f := newAccessFixture(t, s, ctx)
		jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		feb, mar := jan.AddDate(0, 1, 0), jan.AddDate(0, 2, 0)
		cancel := jan.AddDate(0, 0, 20)
		f.period(t, s, "paper", jan, feb, nil)
		f.period(t, s, "paper-next", feb, mar, nil) // the renewal, made ahead of its start
		f.period(t, s, "app", jan, mar, &cancel)
		f.period(t, s, "future", mar.AddDate(0, 0, 5), mar.AddDate(0, 1, 0), nil)
		steps := []struct {
			at   time.Time
			want []string
		}{
			{jan.Add(-time.Second), []string{}},
			{jan, []string{"app", "paper"}},
			{jan.AddDate(0, 0, 3), []string{"app", "paper"}},
			{cancel.Add(-time.Microsecond), []string{"app", "paper"}},
			{cancel, []string{"paper"}},
			{feb.Add(-time.Microsecond), []string{"paper"}},
			{feb, []string{"paper-next"}},
			{mar, []string{}},
			{mar.AddDate(0, 0, 5), []string{"future"}},
			{jan.AddDate(0, 0, 3), []string{"app", "paper"}}, // back in time
			{mar.AddDate(0, 2, 0), []string{}},
		}
		for round := range 2 { // the second round may be answered from the cache
			for _, st := range steps {
				if got := products(t, s, ctx, f.user, st.at); !slices.Equal(got, st.want) {
					t.Errorf("round %d, at %s: products %v, want %v", round, st.at, got, st.want)
				}
			}
		}
		// Asked twice at the same moment with nothing written, the second
		// answer comes from the cache (SQLite; PostgreSQL has no change
		// signal and caches nothing).
		at := jan.AddDate(0, 0, 4)
		products(t, s, ctx, f.user, at)
		hits, _ := subscriberuser.AccessCacheStats(s)
		products(t, s, ctx, f.user, at.Add(time.Hour))
		after, _ := subscriberuser.AccessCacheStats(s)
		if want := s.Engine() == store.SQLite; (after > hits) != want {
			t.Errorf("served from the cache: %t, want %t", after > hits, want)
		}
	})
}

// TestAccessCacheSeesWrites: an answer changes with the next question
// after a write, whoever wrote: this store, or a second store on the same
// database (its own connections, like another process: an operator
// command or another server). Each write comes after the same question
// was answered (and cached) once.
func TestAccessCacheSeesWrites(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			opts := storetest.Options(t, e)
			open := func() *store.Store {
				s, err := store.Open(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			s := open()
			if err := s.Migrate(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
				t.Fatal(err)
			}
			other := open()
			ctx := newTenant(t, s, "a")
			f := newAccessFixture(t, s, ctx)
			jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			at := jan.AddDate(0, 0, 10)
			ask := func(step string, want ...string) {
				t.Helper()
				for range 2 {
					if got := products(t, s, ctx, f.user, at); !slices.Equal(got, append([]string{}, want...)) {
						t.Fatalf("%s: products %v, want %v", step, got, want)
					}
				}
			}
			ask("no periods")
			f.period(t, s, "paper", jan, jan.AddDate(0, 1, 0), nil)
			ask("a period written here", "paper")
			f.period(t, other, "app", jan, jan.AddDate(0, 1, 0), nil)
			ask("a period written by the other store", "app", "paper")
			if _, err := subscriberuser.SetSubscriberUserDisabled(ctx, other, f.user, true, at); err != nil {
				t.Fatal(err)
			}
			ask("disabled by the other store")
			if _, err := subscriberuser.SetSubscriberUserDisabled(ctx, s, f.user, false, at); err != nil {
				t.Fatal(err)
			}
			ask("enabled here", "app", "paper")
		})
	}
}

// TestAccessCacheTenants: two tenants' users with the same question get
// their own answers, cached side by side.
func TestAccessCacheTenants(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		at := jan.AddDate(0, 0, 10)
		ctxA, ctxB := newTenant(t, s, "a"), newTenant(t, s, "b")
		a, b := newAccessFixture(t, s, ctxA), newAccessFixture(t, s, ctxB)
		a.period(t, s, "paper", jan, jan.AddDate(0, 1, 0), nil)
		b.period(t, s, "app", jan, jan.AddDate(0, 1, 0), nil)
		for range 2 {
			if got := products(t, s, ctxA, a.user, at); !slices.Equal(got, []string{"paper"}) {
				t.Errorf("tenant a: %v", got)
			}
			if got := products(t, s, ctxB, b.user, at); !slices.Equal(got, []string{"app"}) {
				t.Errorf("tenant b: %v", got)
			}
			if _, err := subscriberuser.AccessOf(ctxB, s, a.user, at); err == nil {
				t.Error("tenant b sees tenant a's user")
			}
		}
	})
}
