package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
)

// TestChainStepCalendar walks a series through a chain's steps the way
// renewals do (Begin, then successor once per period) and checks when each
// step starts: periods count on the series' own schedule, anchored on its
// first day, for as long as consecutive steps share an interval, so an
// intro from 31 January is on step 2 from 28 February and on step 3 from
// 31 May, not 28 May; a step with another interval starts a new schedule
// where the previous step ended. Month ends, leap days and both summer-time
// changes in Oslo and Stockholm, as docs/CATALOG.md promises.
func TestChainStepCalendar(t *testing.T) {
	type step struct {
		iv      period.Interval
		periods int
	}
	month := period.Interval{Unit: period.Month, Count: 1}
	week := period.Interval{Unit: period.Week, Count: 1}
	year := period.Interval{Unit: period.Year, Count: 1}
	intro := []step{{month, 1}, {month, 3}, {month, 1}}
	tests := []struct {
		name   string
		zone   string
		anchor string // local date
		steps  []step
		want   []string // UTC instants
	}{
		{"intro chain from 31 January keeps the month end (Oslo, into summer time)", "Europe/Oslo", "2026-01-31", intro,
			[]string{"2026-01-30T23:00:00Z", "2026-02-27T23:00:00Z", "2026-05-30T22:00:00Z"}},
		{"intro chain in a leap year", "Europe/Oslo", "2028-01-31", intro,
			[]string{"2028-01-30T23:00:00Z", "2028-02-28T23:00:00Z", "2028-05-30T22:00:00Z"}},
		{"intro chain across the spring change (Stockholm)", "Europe/Stockholm", "2026-03-15", intro,
			[]string{"2026-03-14T23:00:00Z", "2026-04-14T22:00:00Z", "2026-07-14T22:00:00Z"}},
		{"intro chain across the autumn change (Stockholm)", "Europe/Stockholm", "2026-09-30", intro,
			[]string{"2026-09-29T22:00:00Z", "2026-10-29T23:00:00Z", "2027-01-29T23:00:00Z"}},
		{"weekly trial then monthly, across the spring change (Oslo)", "Europe/Oslo", "2026-03-22",
			[]step{{week, 2}, {month, 1}},
			[]string{"2026-03-21T23:00:00Z", "2026-04-04T22:00:00Z"}},
		{"yearly from a leap day, then monthly from the clamped day", "Europe/Oslo", "2024-02-29",
			[]step{{year, 1}, {month, 1}},
			[]string{"2024-02-28T23:00:00Z", "2025-02-27T23:00:00Z"}},
		{"two yearly steps keep the leap-day anchor", "Europe/Stockholm", "2024-02-29",
			[]step{{year, 4}, {year, 1}},
			[]string{"2024-02-28T23:00:00Z", "2028-02-28T23:00:00Z"}},
	}
	pkg := func(iv period.Interval) catalog.SubscriptionPackage {
		return catalog.SubscriptionPackage{Currency: "NOK", BillingPlan: catalog.PlanCopy{IntervalUnit: iv.Unit, IntervalCount: iv.Count}}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := period.LoadZone(tt.zone)
			if err != nil {
				t.Fatal(err)
			}
			start, err := time.ParseInLocation("2006-01-02", tt.anchor, loc)
			if err != nil {
				t.Fatal(err)
			}
			sub, err := Begin(NewSeries{TimeZone: tt.zone, Package: pkg(tt.steps[0].iv), Start: start}, start)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, s := range tt.steps {
				if i > 0 {
					sub = successor(sub, pkg(s.iv), catalog.Choices{}, loc, sub.PeriodEnd)
				}
				got = append(got, sub.PeriodStart.Format(time.RFC3339))
				for range s.periods - 1 {
					sub = successor(sub, pkg(s.iv), catalog.Choices{}, loc, sub.PeriodEnd)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("step starts\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}
