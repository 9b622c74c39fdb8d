package period

import "time"

// civil is a local calendar date with no zone. Period arithmetic happens on
// civil dates; a zone is applied only when a date is turned into an instant,
// so DST never shifts a boundary off midnight.
type civil struct {
	y int
	m time.Month
	d int
}

// addDays returns the date n calendar days later (earlier for negative n).
func (c civil) addDays(n int) civil {
	y, m, d := time.Date(c.y, c.m, c.d+n, 0, 0, 0, 0, time.UTC).Date()
	return civil{y, m, d}
}

// addMonths returns the date n calendar months later with the day clamped
// to the target month's length: 31 Jan + 1 month is 28 or 29 Feb.
func (c civil) addMonths(n int) civil {
	total := c.y*12 + int(c.m-1) + n
	y := floorDiv(total, 12)
	m := time.Month(total-y*12) + 1
	return civil{y, m, min(c.d, daysIn(y, m))}
}

// monthNumber counts months from year 0, for month differences.
func (c civil) monthNumber() int { return c.y*12 + int(c.m-1) }

// dayNumber counts days from 1970-01-01, for day differences.
func (c civil) dayNumber() int {
	return int(time.Date(c.y, c.m, c.d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

func (c civil) is(t time.Time) bool {
	y, m, d := t.Date()
	return y == c.y && m == c.m && d == c.d
}

// start returns the first instant of the date in loc, in UTC.
//
// time.Date leaves the result unspecified when local midnight is skipped or
// repeated by a zone transition, so both cases are resolved here from the
// transitions around its answer: a skipped midnight starts the day at the
// transition, and a repeated one at its earlier occurrence.
func (c civil) start(loc *time.Location) time.Time {
	t := time.Date(c.y, c.m, c.d, 0, 0, 0, 0, loc)
	if c.is(t) && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
		// If the zone period containing t began after an earlier 00:00 of
		// the same date (clocks fell back onto midnight), prefer that one.
		if from, _ := t.ZoneBounds(); !from.IsZero() {
			_, off := from.Add(-time.Nanosecond).Zone()
			wall := time.Date(c.y, c.m, c.d, 0, 0, 0, 0, time.UTC)
			if e := wall.Add(-time.Duration(off) * time.Second); e.Before(t) {
				if el := e.In(loc); c.is(el) && el.Hour() == 0 && el.Minute() == 0 && el.Second() == 0 {
					t = e
				}
			}
		}
		return t.UTC()
	}
	// Midnight does not exist: the date begins at the transition that
	// skipped it, which bounds the zone period time.Date landed in.
	from, to := t.ZoneBounds()
	for _, b := range []time.Time{from, to} {
		if !b.IsZero() && c.is(b.In(loc)) && !c.is(b.Add(-time.Nanosecond).In(loc)) {
			return b.UTC()
		}
	}
	return t.UTC() // not reached with real zone data
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// floorDiv divides rounding toward negative infinity, so that periods before
// the anchor get negative indexes instead of all collapsing onto period 0.
func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
