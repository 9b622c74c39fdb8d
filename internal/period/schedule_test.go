package period

import (
	"testing"
	"time"
)

func TestScheduleIndexExamples(t *testing.T) {
	oslo := zone(t, "Europe/Oslo")
	s, err := NewSchedule(local(oslo, 2025, 1, 31), Interval{Month, 1}, oslo)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at   string
		want int
	}{
		{"2025-01-30T23:00:00Z", 0},  // 31 Jan 00:00 Oslo, the anchor
		{"2025-01-30T22:59:59Z", -1}, // one second before
		{"2025-02-27T22:59:59Z", 0},  // 27 Feb 23:59:59
		{"2025-02-27T23:00:00Z", 1},  // 28 Feb 00:00 starts period 1
		{"2025-03-30T21:59:59Z", 1},  // 30 Mar 23:59:59 CEST
		{"2025-03-30T22:00:00Z", 2},  // 31 Mar 00:00 CEST
		{"2026-01-30T23:00:00Z", 12},
		{"2024-12-30T23:00:00Z", -1}, // 31 Dec 2024
		{"2024-12-30T22:59:59Z", -2},
		{"2125-06-01T00:00:00Z", 1204}, // a century on, without iterating
	}
	for _, tt := range tests {
		if got := s.Index(utc(t, tt.at)); got != tt.want {
			t.Errorf("Index(%s) = %d, want %d", tt.at, got, tt.want)
		}
	}

	start, end := s.Period(1)
	if !start.Equal(utc(t, "2025-02-27T23:00:00Z")) || !end.Equal(utc(t, "2025-03-30T22:00:00Z")) {
		t.Errorf("Period(1) = %v, %v", start, end)
	}
	for n, want := range []int{28, 31, 30, 31, 30} { // 31 Jan→28 Feb→31 Mar→30 Apr→31 May→30 Jun
		if start, end := s.Period(n); Days(start, end, oslo) != want {
			t.Errorf("period %d has %d days, want %d", n, Days(start, end, oslo), want)
		}
	}
}

func TestScheduleDaysAcrossDST(t *testing.T) {
	oslo := zone(t, "Europe/Oslo")
	s, err := NewSchedule(local(oslo, 2026, 3, 28), Interval{Day, 1}, oslo)
	if err != nil {
		t.Fatal(err)
	}
	for n, hours := range []float64{24, 23, 24} {
		start, end := s.Period(n)
		if end.Sub(start).Hours() != hours || Days(start, end, oslo) != 1 {
			t.Errorf("period %d: %v hours, %d days; want %v hours, 1 day", n, end.Sub(start).Hours(), Days(start, end, oslo), hours)
		}
	}
}

// TestScheduleIndexConsistent checks Index against the definition
// Start(n) ≤ t < Start(n+1) over a dense sweep of instants, for schedules
// whose estimate is most easily off by one: clamped month ends, leap days,
// multi-unit counts and DST zones.
func TestScheduleIndexConsistent(t *testing.T) {
	cases := []struct {
		zone   string
		anchor [3]int
		iv     Interval
	}{
		{"Europe/Oslo", [3]int{2025, 1, 31}, Interval{Month, 1}},
		{"Europe/Oslo", [3]int{2025, 1, 30}, Interval{Month, 1}},
		{"Europe/Oslo", [3]int{2025, 3, 15}, Interval{Month, 1}},
		{"Europe/Stockholm", [3]int{2025, 1, 31}, Interval{Month, 3}},
		{"Europe/Oslo", [3]int{2024, 2, 29}, Interval{Year, 1}},
		{"Europe/Oslo", [3]int{2026, 3, 27}, Interval{Day, 1}},
		{"Europe/Oslo", [3]int{2026, 3, 27}, Interval{Day, 3}},
		{"America/New_York", [3]int{2026, 1, 1}, Interval{Week, 1}},
		{"America/New_York", [3]int{2026, 1, 1}, Interval{Week, 2}},
		{"America/Santiago", [3]int{2026, 8, 31}, Interval{Day, 1}},
		{"UTC", [3]int{2025, 12, 31}, Interval{Month, 2}},
	}
	for _, c := range cases {
		loc := zone(t, c.zone)
		s, err := NewSchedule(local(loc, c.anchor[0], time.Month(c.anchor[1]), c.anchor[2]), c.iv, loc)
		if err != nil {
			t.Fatal(err)
		}
		first := s.Start(0).AddDate(-2, 0, 0)
		last := s.Start(0).AddDate(3, 0, 0)
		// 5h59m walks through every hour of the day and every boundary region.
		for at := first; at.Before(last); at = at.Add(5*time.Hour + 59*time.Minute) {
			n := s.Index(at)
			if start, end := s.Period(n); at.Before(start) || !at.Before(end) {
				t.Fatalf("%s %v: Index(%v) = %d but period is [%v, %v)", c.zone, c.iv, at, n, start, end)
			}
		}
		for n := -30; n <= 30; n++ {
			b := s.Start(n)
			if got := s.Index(b); got != n {
				t.Errorf("%s %v: Index(Start(%d)) = %d", c.zone, c.iv, n, got)
			}
			if got := s.Index(b.Add(-time.Nanosecond)); got != n-1 {
				t.Errorf("%s %v: Index(Start(%d) - 1ns) = %d", c.zone, c.iv, n, got)
			}
			if !s.Start(n).Equal(Boundary(s.Start(0), c.iv, n, loc)) {
				t.Errorf("%s %v: Start(%d) differs from Boundary", c.zone, c.iv, n)
			}
		}
	}
}

func TestNewScheduleErrors(t *testing.T) {
	if _, err := NewSchedule(time.Now(), Interval{Month, 0}, time.UTC); err == nil {
		t.Error("count 0 accepted")
	}
	if _, err := NewSchedule(time.Now(), Interval{"Fortnight", 1}, time.UTC); err == nil {
		t.Error("unknown unit accepted")
	}
	if _, err := NewSchedule(time.Now(), Interval{Month, 1}, nil); err == nil {
		t.Error("nil location accepted")
	}
}

func BenchmarkIndexDailyCenturyAway(b *testing.B) {
	oslo := zone(b, "Europe/Oslo")
	s, err := NewSchedule(local(oslo, 2025, 1, 1), Interval{Day, 1}, oslo)
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2125, 6, 1, 12, 0, 0, 0, time.UTC)
	for b.Loop() {
		s.Index(at)
	}
}
