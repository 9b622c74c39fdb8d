// Package delivery is the print wing (docs/PRINT.md): which days a print
// product is delivered, the tenant's publishing calendar, and the number
// of editions a period holds. Its records and SQL (sql_schedule.go) run on
// the store's query kit; its API file is api.go.
package delivery

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Weekdays is a set of weekdays, bit d set for time.Weekday d (Sunday 0).
// The zero value delivers on no day: a product without a schedule is not
// delivered at all (digital).
type Weekdays uint8

// AllWeekdays is the seven-day pattern of a daily title.
const AllWeekdays Weekdays = 0x7f

// weekdayNames are the contract's names, Monday first (ISO order), which is
// also the order Names lists them in.
var weekdayNames = []struct {
	name string
	day  time.Weekday
}{
	{"Mon", time.Monday}, {"Tue", time.Tuesday}, {"Wed", time.Wednesday}, {"Thu", time.Thursday},
	{"Fri", time.Friday}, {"Sat", time.Saturday}, {"Sun", time.Sunday},
}

// Has reports whether d is in the set.
func (w Weekdays) Has(d time.Weekday) bool { return w&(1<<uint(d)) != 0 }

// With returns the set with d added.
func (w Weekdays) With(d time.Weekday) Weekdays { return w | 1<<uint(d) }

// Names returns the set's day names, Monday first.
func (w Weekdays) Names() []string {
	names := []string{}
	for _, n := range weekdayNames {
		if w.Has(n.day) {
			names = append(names, n.name)
		}
	}
	return names
}

// ParseWeekdays reads day names (Mon … Sun, any case). An unknown name or
// a day named twice is an error naming it: a doubled day is most likely a
// typo for another one.
func ParseWeekdays(names []string) (Weekdays, error) {
	var w Weekdays
	for _, raw := range names {
		n := strings.TrimSpace(raw)
		found := false
		for _, wn := range weekdayNames {
			if strings.EqualFold(n, wn.name) {
				if w.Has(wn.day) {
					return 0, fmt.Errorf("%s is named twice", wn.name)
				}
				w, found = w.With(wn.day), true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("%q is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun)", raw)
		}
	}
	return w, nil
}

// Date is a calendar day without a time or zone: publishing is decided per
// local day, so day arithmetic never meets a DST shift (a 23- or 25-hour
// day is still one day).
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf is the day t falls on in loc.
func DateOf(t time.Time, loc *time.Location) Date {
	y, m, d := t.In(loc).Date()
	return Date{y, m, d}
}

// ParseDate reads YYYY-MM-DD, refusing days that do not exist (2026-02-30).
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
	}
	return DateOf(t, time.UTC), nil
}

// String is YYYY-MM-DD.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// utc is the day's midnight in UTC, the form days are counted in.
func (d Date) utc() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// AddDays is the day n days later (earlier for negative n).
func (d Date) AddDays(n int) Date { return DateOf(d.utc().AddDate(0, 0, n), time.UTC) }

// Weekday is the day's weekday.
func (d Date) Weekday() time.Weekday { return d.utc().Weekday() }

// Before reports whether d is earlier than e.
func (d Date) Before(e Date) bool { return d.utc().Before(e.utc()) }

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// DaysUntil is the number of days from d to e (negative when e is earlier).
func (d Date) DaysUntil(e Date) int { return int(e.utc().Sub(d.utc()).Hours() / 24) }

// Calendar is a tenant's publishing calendar: the days on which no paper
// is published although the product's pattern would deliver (public
// holidays). The zero value publishes every day.
type Calendar struct{ closed map[Date]bool }

// NewCalendar is the calendar without the given days.
func NewCalendar(noPaper ...Date) Calendar {
	c := Calendar{closed: make(map[Date]bool, len(noPaper))}
	for _, d := range noPaper {
		c.closed[d] = true
	}
	return c
}

// Publishes reports whether paper is published on d.
func (c Calendar) Publishes(d Date) bool { return !c.closed[d] }

// Schedule is when one print product is delivered: its weekdays under the
// tenant's calendar.
type Schedule struct {
	Weekdays Weekdays
	Calendar Calendar
}

// Delivers reports whether the product is delivered on d.
func (s Schedule) Delivers(d Date) bool {
	return s.Weekdays.Has(d.Weekday()) && s.Calendar.Publishes(d)
}

// Editions counts the delivery days in [from, to): periods are half-open
// (a monthly period ends where the next starts), so consecutive periods
// never count a day twice. An empty or reversed range holds none.
func (s Schedule) Editions(from, to Date) int {
	if s.Weekdays == 0 || !from.Before(to) {
		return 0
	}
	days := from.DaysUntil(to)
	// Whole weeks first: every week holds each pattern day once, then the
	// remainder day by day; the holidays are subtracted after, so a long
	// range costs its holidays, not its days.
	n := days / 7 * popcount(s.Weekdays)
	for d := from.AddDays(days / 7 * 7); d.Before(to); d = d.AddDays(1) {
		if s.Weekdays.Has(d.Weekday()) {
			n++
		}
	}
	for d := range s.Calendar.closed {
		if !d.Before(from) && d.Before(to) && s.Weekdays.Has(d.Weekday()) {
			n--
		}
	}
	return n
}

// EditionsBetween counts the delivery days of the period [start, end) of
// instants, read as days in loc (the organization's time zone, where
// periods start at midnight): a period across a DST change holds the same
// days as any other.
func (s Schedule) EditionsBetween(start, end time.Time, loc *time.Location) int {
	return s.Editions(DateOf(start, loc), DateOf(end, loc))
}

// DeliveryDays lists the delivery days in [from, to) in order.
func (s Schedule) DeliveryDays(from, to Date) []Date {
	var out []Date
	for d := from; d.Before(to); d = d.AddDays(1) {
		if s.Delivers(d) {
			out = append(out, d)
		}
	}
	return out
}

// NextDelivery is the first delivery day on or after d, and false when the
// product delivers on none of the next 366 days (no weekdays, or a
// calendar closed for a year).
func (s Schedule) NextDelivery(d Date) (Date, bool) {
	for i := 0; i <= 366; i++ {
		if s.Delivers(d) {
			return d, true
		}
		d = d.AddDays(1)
	}
	return Date{}, false
}

func popcount(w Weekdays) int {
	n := 0
	for ; w != 0; w &= w - 1 {
		n++
	}
	return n
}

// SortDates orders days ascending.
func SortDates(ds []Date) {
	sort.Slice(ds, func(i, j int) bool { return ds[i].Before(ds[j]) })
}
