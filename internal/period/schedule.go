package period

import (
	"errors"
	"time"
)

// Schedule is the sequence of billing periods of one subscription: period
// n runs from Start(n) inclusive to Start(n+1) exclusive, with period 0
// starting at the anchor date's local midnight. Negative n are the periods
// before the anchor.
//
// Every query is computed in O(1) from the anchor, so an engine can ask
// which period contains a time, or where period n starts and ends, without
// walking the periods since the anchor. A Schedule is a small immutable
// value, safe to copy and to share between goroutines.
type Schedule struct {
	anchor civil
	iv     Interval
	loc    *time.Location
}

// NewSchedule returns the schedule anchored on anchor's local date in loc.
// Only the date of anchor matters: a subscription started at 14:37 bills
// from that day's midnight.
func NewSchedule(anchor time.Time, iv Interval, loc *time.Location) (Schedule, error) {
	if err := iv.Validate(); err != nil {
		return Schedule{}, err
	}
	if loc == nil {
		return Schedule{}, errors.New("period: nil time zone")
	}
	y, m, d := anchor.In(loc).Date()
	return Schedule{anchor: civil{y, m, d}, iv: iv, loc: loc}, nil
}

// Start returns the first instant of period n, in UTC; see Boundary.
func (s Schedule) Start(n int) time.Time { return boundary(s.anchor, s.iv, n, s.loc) }

// Period returns the half-open range [start, end) of period n, in UTC.
func (s Schedule) Period(n int) (start, end time.Time) {
	return s.Start(n), s.Start(n + 1)
}

// Index returns the n whose period contains t, i.e. Start(n) ≤ t < Start(n+1).
// Times before the anchor give negative n.
func (s Schedule) Index(t time.Time) int {
	y, m, d := t.In(s.loc).Date()
	date := civil{y, m, d}

	// Estimate from the calendar distance; clamping of month-end days can
	// put the estimate one period off, which the checks below correct.
	var n int
	switch s.iv.Unit {
	case Day:
		n = floorDiv(date.dayNumber()-s.anchor.dayNumber(), s.iv.Count)
	case Week:
		n = floorDiv(date.dayNumber()-s.anchor.dayNumber(), 7*s.iv.Count)
	case Month:
		n = floorDiv(date.monthNumber()-s.anchor.monthNumber(), s.iv.Count)
	default: // Year
		n = floorDiv(date.monthNumber()-s.anchor.monthNumber(), 12*s.iv.Count)
	}
	for t.Before(s.Start(n)) {
		n--
	}
	for !t.Before(s.Start(n + 1)) {
		n++
	}
	return n
}
