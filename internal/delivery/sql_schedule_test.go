package delivery_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/delivery"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

var now = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func date(t *testing.T, s string) delivery.Date {
	t.Helper()
	d, err := delivery.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Schedules and the calendar as stored, on both engines: set, replace,
// remove, the editions they give, and neither seen from another tenant.
func TestScheduleStore(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := seed.Tenant(t, s, "print", now)
		other := seed.Tenant(t, s, "other", now)
		p := seed.NewStore(t, s, ctx, now).Product(seed.Product{Name: "Avisa", Category: "print", VATRate: "0"})

		got, err := delivery.GetSchedule(ctx, s, p.ID)
		if err != nil || got.Weekdays != 0 {
			t.Fatalf("unset schedule: %+v %v", got, err)
		}
		tts, _ := delivery.ParseWeekdays([]string{"Tue", "Thu", "Sat"})
		if err := delivery.SetSchedule(ctx, s, p.ID, tts, now); err != nil {
			t.Fatal(err)
		}
		helg, _ := delivery.ParseWeekdays([]string{"Fri", "Sat"})
		if err := delivery.SetSchedule(ctx, s, p.ID, helg, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err = delivery.GetSchedule(ctx, s, p.ID)
		if err != nil || got.Weekdays != helg || !got.UpdatedAt.Equal(now.Add(time.Hour)) {
			t.Fatalf("replaced schedule: %+v %v", got, err)
		}
		for _, c := range []struct{ day, name string }{{"2026-12-25", "Juledag"}, {"2026-12-26", "2. juledag"}, {"2027-01-01", "Nyttårsdag"}} {
			if err := delivery.SetNonPublishingDay(ctx, s, date(t, c.day), c.name, now); err != nil {
				t.Fatal(err)
			}
		}
		// Setting a day again renames it.
		if err := delivery.SetNonPublishingDay(ctx, s, date(t, "2026-12-26"), "Andre juledag", now); err != nil {
			t.Fatal(err)
		}
		days, err := delivery.NonPublishingDays(ctx, s, date(t, "2026-12-01"), date(t, "2027-01-01"))
		if err != nil || len(days) != 2 || days[0].Date.String() != "2026-12-25" || days[1].Name != "Andre juledag" {
			t.Fatalf("december's days: %+v %v", days, err)
		}
		sch, err := delivery.LoadSchedule(ctx, s, p.ID, date(t, "2026-12-01"), date(t, "2027-01-01"))
		if err != nil {
			t.Fatal(err)
		}
		if n := sch.Editions(date(t, "2026-12-01"), date(t, "2027-01-01")); n != 6 {
			t.Errorf("a weekend title in december with christmas closed: %d editions, want 6", n)
		}

		// The other tenant sees neither the product's schedule nor the calendar.
		if _, err := delivery.GetSchedule(other, s, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("other tenant's schedule read: %v", err)
		}
		if err := delivery.SetSchedule(other, s, p.ID, tts, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("other tenant's schedule set: %v", err)
		}
		if d, err := delivery.NonPublishingDays(other, s, date(t, "2026-01-01"), date(t, "2028-01-01")); err != nil || len(d) != 0 {
			t.Errorf("other tenant's calendar: %+v %v", d, err)
		}
		if err := delivery.DeleteNonPublishingDay(other, s, date(t, "2026-12-25")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("other tenant deleted a day: %v", err)
		}

		if err := delivery.DeleteNonPublishingDay(ctx, s, date(t, "2026-12-25")); err != nil {
			t.Fatal(err)
		}
		if err := delivery.DeleteNonPublishingDay(ctx, s, date(t, "2026-12-25")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted twice: %v", err)
		}
		if err := delivery.SetSchedule(ctx, s, p.ID, 0, now); err != nil {
			t.Fatal(err)
		}
		if got, err := delivery.GetSchedule(ctx, s, p.ID); err != nil || got.Weekdays != 0 {
			t.Errorf("removed schedule: %+v %v", got, err)
		}
		if _, err := delivery.GetSchedule(ctx, s, store.NewID()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown product: %v", err)
		}
	})
}

// An organization's stop rules: the defaults until set, replaced whole,
// refused when they do not validate, and another tenant's organization
// neither read nor written.
func TestStopRulesStore(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := seed.Tenant(t, s, "print", now)
		other := seed.Tenant(t, s, "other", now)
		org := seed.NewStore(t, s, ctx, now).Organization(seed.Organization{})
		r, own, err := delivery.GetStopRules(ctx, s, org.ID)
		if err != nil || own || r != delivery.DefaultStopRules {
			t.Fatalf("unset: %+v %v %v", r, own, err)
		}
		want := delivery.StopRules{MinDays: 2, MaxDays: 30, CutoffHour: 10, NoticeDeliveryDays: 1, Credit: delivery.CreditNone,
			MaxCreditedPerYear: 20, AlignToDeliveryDays: false, AllowDuringBinding: true}
		if err := delivery.SetStopRules(ctx, s, org.ID, want, now); err != nil {
			t.Fatal(err)
		}
		if r, own, err = delivery.GetStopRules(ctx, s, org.ID); err != nil || !own || r != want {
			t.Fatalf("set: %+v %v %v", r, own, err)
		}
		bad := want
		bad.MaxDays = 1
		if err := delivery.SetStopRules(ctx, s, org.ID, bad, now); err == nil {
			t.Error("invalid rules stored")
		}
		if r, _, _ = delivery.GetStopRules(ctx, s, org.ID); r != want {
			t.Errorf("after a refused set: %+v", r)
		}
		if _, _, err := delivery.GetStopRules(other, s, org.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("other tenant read: %v", err)
		}
		if err := delivery.SetStopRules(other, s, org.ID, want, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("other tenant wrote: %v", err)
		}
	})
}
