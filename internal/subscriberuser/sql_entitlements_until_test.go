package subscriberuser_test

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestUserAccessUntil: a live period grants its products until the
// earliest of its end, its cancellation and its deactivation (the
// statement computes it: MIN on SQLite's texts, LEAST on PostgreSQL); a
// cancellation or deactivation in effect at the moment grants nothing.
func TestUserAccessUntil(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 1, 0)
	at := start.AddDate(0, 0, 10)
	ptr := func(t time.Time) *time.Time { return &t }
	cases := []struct {
		name                string
		cancel, deactivated *time.Time
		live                bool
		until               time.Time
	}{
		{"neither", nil, nil, true, end},
		{"cancelled at the end", ptr(end), nil, true, end},
		{"cancelled after the end", ptr(end.Add(time.Hour)), nil, true, end},
		{"cancelled within the period", ptr(at.Add(90 * time.Minute)), nil, true, at.Add(90 * time.Minute)},
		{"deactivated within, cancelled later", ptr(end), ptr(at.Add(time.Microsecond)), true, at.Add(time.Microsecond)},
		{"cancelled before the deactivation", ptr(at.Add(time.Hour)), ptr(at.Add(2 * time.Hour)), true, at.Add(time.Hour)},
		{"deactivated only", nil, ptr(end.Add(-time.Second)), true, end.Add(-time.Second)},
		{"cancellation in effect", ptr(at), nil, false, time.Time{}},
		{"deactivation in effect", nil, ptr(at.Add(-time.Hour)), false, time.Time{}},
	}
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		sd := seed.NewStore(t, s, ctx, catalogNow)
		f := sd.Parties()
		agreement := sd.Agreement(f.Sub.ID, store.ProviderInvoice, "", "").ID
		u, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "u@example.no", SubscriberID: f.Sub.ID}, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		product := map[string]string{} // product id → case
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			for _, c := range cases {
				id := store.NewID()
				product[id] = c.name
				p := store.Subscription{ID: store.NewID(), SubscriberID: f.Sub.ID, OrganizationID: f.Org.ID, PaymentAgreementID: &agreement,
					Currency: "NOK", Package: catalog.SubscriptionPackage{Name: c.name, Products: []catalog.Line{{ProductID: id, Name: c.name, Category: "digital"}}},
					TimeZone: "Europe/Oslo", StepPeriod: 1, Anchor: start, PeriodStart: start, PeriodEnd: end, CreatedAt: catalogNow,
					CancelEffectiveAt: c.cancel, DeactivatedAt: c.deactivated}
				if c.cancel != nil {
					p.CancelledAt = ptr(start)
				}
				if err := tx.InsertSubscription(ctx, p); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		a, err := subscriberuser.AccessOf(ctx, s, u.ID, at)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]time.Time{}
		for _, p := range a.Products {
			got[product[p.ProductID]] = p.Until
		}
		for _, c := range cases {
			until, ok := got[c.name]
			switch {
			case ok != c.live:
				t.Errorf("%s: granted %t, want %t", c.name, ok, c.live)
			case ok && !until.Equal(c.until):
				t.Errorf("%s: until %s, want %s", c.name, until, c.until)
			}
		}
	})
}

// BenchmarkUserAccess: the entitlement answer for a user whose subscriber
// has four live periods of two packages (bench/api.sh's access route), on
// SQLite: from the answer cache (cached) and read from the database
// (read). Reports the process CPU per read (cpu-ns/op), which a busy
// machine disturbs less than the wall time.
func BenchmarkUserAccess(b *testing.B) {
	s := storetest.Open(b, store.SQLite)
	ctx := seed.Tenant(b, s, "a", t0)
	sd := seed.NewStore(b, s, ctx, catalogNow)
	f := sd.Parties()
	agreement := sd.Agreement(f.Sub.ID, store.ProviderInvoice, "", "").ID
	u, err := subscriberuser.CreateSubscriberUser(ctx, s, subscriberuser.SubscriberUser{Email: "u@example.no", SubscriberID: f.Sub.ID}, t0, t0)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	pkgs := []catalog.SubscriptionPackage{
		{Name: "Digital", Products: []catalog.Line{{ProductID: store.NewID(), Name: "Digital", Category: "digital"}}},
		{Name: "Both", Products: []catalog.Line{{ProductID: store.NewID(), Name: "Paper", Category: "paper"}, {ProductID: store.NewID(), Name: "App", Category: "digital"}}},
	}
	if err := s.InTx(ctx, func(tx *store.Tx) error {
		for i := range 4 {
			if err := tx.InsertSubscription(ctx, store.Subscription{ID: store.NewID(), SubscriberID: f.Sub.ID, OrganizationID: f.Org.ID,
				PaymentAgreementID: &agreement, Currency: "NOK", Package: pkgs[i%2], TimeZone: "Europe/Oslo", StepPeriod: 1,
				Anchor: start, PeriodStart: start, PeriodEnd: start.AddDate(0, 1+i, 0), CreatedAt: catalogNow}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	at := start.AddDate(0, 0, 10)
	if a, err := subscriberuser.AccessOf(ctx, s, u.ID, at); err != nil || len(a.Products) != 3 {
		b.Fatalf("access %+v %v", a, err)
	}
	tenant, err := tenancy.From(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		read func() (subscriberuser.UserAccess, error)
	}{
		{"cached", func() (subscriberuser.UserAccess, error) { return subscriberuser.AccessOf(ctx, s, u.ID, at) }},
		{"read", func() (subscriberuser.UserAccess, error) {
			return subscriberuser.ReadUserAccess(ctx, s, tenant, u.ID, at)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if a, err := c.read(); err != nil || len(a.Products) != 3 {
					b.Fatalf("access %+v %v", a, err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
