// Package period computes billing period boundaries.
//
// Every boundary is a local midnight in the organization's IANA time zone,
// returned as a UTC time.Time for storage and comparison. Periods are
// measured in calendar units, not durations: a daily period across the
// spring DST change is 23 hours long, and a monthly plan anchored on
// 31 January renews on 28/29 February, 31 March, 30 April — the anchor day
// is kept and clamped to each month's length, never drifting to the 28th.
//
// To keep that true, period n is always computed from the anchor directly
// (anchor + n intervals) rather than by adding one interval to the previous
// boundary, which would lose the anchor day after the first short month.
// The same closed form makes finding the period containing a time O(1); see
// Schedule.
package period

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	// Embed the IANA database so zones load identically on every host,
	// including minimal containers without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// DefaultZone is the time zone of an organization that has not chosen one.
const DefaultZone = "Europe/Oslo"

// LoadZone loads an organization's IANA time zone; "" means DefaultZone.
//
// Unlike time.LoadLocation it maps "" to DefaultZone rather than UTC, so an
// organization without a zone is never silently billed in UTC, and it
// rejects "Local", the server's own zone, which must never leak into
// billing. "UTC" itself is accepted.
//
// Zones are cached: time.LoadLocation parses the zone's tzdata on every
// call, and the engine and billing need one per subscription they act on.
// A *time.Location is immutable, and only valid names are cached.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		name = DefaultZone
	}
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	if name == "Local" {
		return nil, errors.New(`time zone "Local" is not allowed; use an IANA name such as Europe/Oslo`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	zones.Store(name, loc)
	return loc, nil
}

var zones sync.Map // name → *time.Location

// Unit is the calendar unit of a plan's billing interval. Its string values
// are the ones stored and sent over the API.
type Unit string

// The billing interval units.
const (
	Day   Unit = "Day"
	Week  Unit = "Week"
	Month Unit = "Month"
	Year  Unit = "Year"
)

// ParseUnit returns the Unit named by s, ignoring case ("month", "MONTH").
func ParseUnit(s string) (Unit, bool) {
	for _, u := range []Unit{Day, Week, Month, Year} {
		if strings.EqualFold(s, string(u)) {
			return u, true
		}
	}
	return "", false
}

// Interval is a plan's billing interval: Count units, e.g. 3 Months.
type Interval struct {
	Unit  Unit
	Count int
}

// maxCount bounds Interval.Count. It is generous (100 years of months) but
// keeps n × Count far from int overflow for any realistic period index.
const maxCount = 1200

// Validate reports whether iv can be billed: a known unit and
// 1 ≤ Count ≤ 1200.
func (iv Interval) Validate() error {
	switch iv.Unit {
	case Day, Week, Month, Year:
	default:
		return fmt.Errorf("unknown interval unit %q; use Day, Week, Month or Year", iv.Unit)
	}
	if iv.Count < 1 || iv.Count > maxCount {
		return fmt.Errorf("interval count %d must be between 1 and %d", iv.Count, maxCount)
	}
	return nil
}

// String renders iv as "1 Month", "3 Months", "2 Weeks".
func (iv Interval) String() string {
	if iv.Count == 1 {
		return "1 " + string(iv.Unit)
	}
	return fmt.Sprintf("%d %ss", iv.Count, iv.Unit)
}

// Boundary returns the start of period n of a schedule anchored at anchor:
// n = 0 is the local midnight of the anchor's date in loc, n = 1 the end of
// the first period, and negative n counts backwards. The result is in UTC
// and is the first instant of a local date in loc.
//
// Month and Year add calendar months to the anchor date and clamp the
// anchor's day to the target month's length (29 Feb 2024 + 1 Year is
// 28 Feb 2025, + 4 Years is 29 Feb 2028). Day and Week add local calendar
// days.
//
// iv must be valid (see Interval.Validate); Boundary panics otherwise,
// because a zero Count would make every period empty and loop a caller
// forever. Use NewSchedule to validate once and then query cheaply.
func Boundary(anchor time.Time, iv Interval, n int, loc *time.Location) time.Time {
	if err := iv.Validate(); err != nil {
		panic("period: " + err.Error())
	}
	y, m, d := anchor.In(loc).Date()
	return boundary(civil{y, m, d}, iv, n, loc)
}

// boundary is Boundary for a validated interval and an anchor date.
func boundary(a civil, iv Interval, n int, loc *time.Location) time.Time {
	switch iv.Unit {
	case Day:
		return a.addDays(n * iv.Count).start(loc)
	case Week:
		return a.addDays(7 * n * iv.Count).start(loc)
	case Month:
		return a.addMonths(n * iv.Count).start(loc)
	default: // Year
		return a.addMonths(12 * n * iv.Count).start(loc)
	}
}

// StartOfDay returns the first instant of t's local date in loc, in UTC.
// That is local midnight, except in zones that skip midnight on a DST day
// (clocks jump from 00:00 to 01:00, as in Chile or Cuba), where it is the
// instant of the jump; where midnight occurs twice, it is the earlier one.
func StartOfDay(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return civil{y, m, d}.start(loc)
}

// Days returns the number of local calendar days from from's date to to's
// date in loc, negative if to is earlier. A 23- or 25-hour DST day counts as
// one day, which is what day-based proration needs; the times of day are
// ignored, so pass period boundaries.
func Days(from, to time.Time, loc *time.Location) int {
	fy, fm, fd := from.In(loc).Date()
	ty, tm, td := to.In(loc).Date()
	return civil{ty, tm, td}.dayNumber() - civil{fy, fm, fd}.dayNumber()
}
