package period

import (
	"strings"
	"testing"
	"time"
)

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

// local is midnight of a date in loc as time.Date would build it; tests use
// it only for dates whose midnight is unambiguous.
func local(loc *time.Location, y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

func utc(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func dates(ts []time.Time, loc *time.Location) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.In(loc).Format("2006-01-02"))
	}
	return b.String()
}

func TestParseUnit(t *testing.T) {
	tests := []struct {
		in   string
		want Unit
		ok   bool
	}{
		{"Day", Day, true},
		{"day", Day, true},
		{"WEEK", Week, true},
		{"month", Month, true},
		{"mOnTh", Month, true},
		{"Year", Year, true},
		{"Months", "", false},
		{"", "", false},
		{" Day", "", false},
		{"Quarter", "", false},
	}
	for _, tt := range tests {
		got, ok := ParseUnit(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseUnit(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if string(Day) != "Day" || string(Week) != "Week" || string(Month) != "Month" || string(Year) != "Year" {
		t.Error("unit string values changed; they are stored and sent over the API")
	}
}

func TestIntervalValidate(t *testing.T) {
	tests := []struct {
		iv Interval
		ok bool
	}{
		{Interval{Month, 1}, true},
		{Interval{Day, 1}, true},
		{Interval{Week, 2}, true},
		{Interval{Year, 1}, true},
		{Interval{Month, 1200}, true},
		{Interval{Month, 0}, false},
		{Interval{Month, -1}, false},
		{Interval{Month, 1201}, false},
		{Interval{"month", 1}, false}, // units are canonical; ParseUnit normalises
		{Interval{"", 1}, false},
	}
	for _, tt := range tests {
		if err := tt.iv.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v.Validate() = %v, want ok %v", tt.iv, err, tt.ok)
		}
	}
	if s := (Interval{Month, 3}).String(); s != "3 Months" {
		t.Errorf("String() = %q", s)
	}
	if s := (Interval{Week, 1}).String(); s != "1 Week" {
		t.Errorf("String() = %q", s)
	}
}

func TestLoadZone(t *testing.T) {
	loc, err := LoadZone("")
	if err != nil || loc.String() != "Europe/Oslo" {
		t.Errorf(`LoadZone("") = %v, %v; want Europe/Oslo`, loc, err)
	}
	for _, name := range []string{"Europe/Stockholm", "America/New_York", "UTC"} {
		if loc, err := LoadZone(name); err != nil || loc.String() != name {
			t.Errorf("LoadZone(%q) = %v, %v", name, loc, err)
		}
	}
	for _, name := range []string{"Local", "Europe/Atlantis", "../../etc/passwd", "oslo"} {
		if _, err := LoadZone(name); err == nil {
			t.Errorf("LoadZone(%q) succeeded, want error", name)
		}
	}
}

// TestBoundaryCalendar checks the anchor-day rule across month ends, leap
// years and interval counts: each row lists the local dates of periods
// 0..len-1.
func TestBoundaryCalendar(t *testing.T) {
	oslo := zone(t, "Europe/Oslo")
	tests := []struct {
		name   string
		anchor time.Time
		iv     Interval
		want   string
	}{
		{"31 Jan monthly across 2025", local(oslo, 2025, 1, 31), Interval{Month, 1},
			"2025-01-31 2025-02-28 2025-03-31 2025-04-30 2025-05-31 2025-06-30 2025-07-31 2025-08-31 2025-09-30 2025-10-31 2025-11-30 2025-12-31 2026-01-31"},
		{"31 Jan monthly in a leap year", local(oslo, 2024, 1, 31), Interval{Month, 1},
			"2024-01-31 2024-02-29 2024-03-31 2024-04-30 2024-05-31"},
		{"30 Jan monthly", local(oslo, 2025, 1, 30), Interval{Month, 1},
			"2025-01-30 2025-02-28 2025-03-30 2025-04-30 2025-05-30"},
		{"29 Feb monthly keeps the 29th", local(oslo, 2024, 2, 29), Interval{Month, 1},
			"2024-02-29 2024-03-29 2024-04-29 2024-05-29"},
		{"28 Feb monthly keeps the 28th", local(oslo, 2025, 2, 28), Interval{Month, 1},
			"2025-02-28 2025-03-28 2025-04-28"},
		{"29 Feb yearly", local(oslo, 2024, 2, 29), Interval{Year, 1},
			"2024-02-29 2025-02-28 2026-02-28 2027-02-28 2028-02-29 2029-02-28"},
		{"29 Feb every 4 years", local(oslo, 2024, 2, 29), Interval{Year, 4},
			"2024-02-29 2028-02-29 2032-02-29"},
		{"yearly mid-month", local(oslo, 2025, 6, 15), Interval{Year, 1},
			"2025-06-15 2026-06-15 2027-06-15"},
		{"31 Jan quarterly", local(oslo, 2025, 1, 31), Interval{Month, 3},
			"2025-01-31 2025-04-30 2025-07-31 2025-10-31 2026-01-31"},
		{"30 Nov every 3 months", local(oslo, 2023, 11, 30), Interval{Month, 3},
			"2023-11-30 2024-02-29 2024-05-30 2024-08-30 2024-11-30"},
		{"31 Aug every 6 months", local(oslo, 2025, 8, 31), Interval{Month, 6},
			"2025-08-31 2026-02-28 2026-08-31"},
		{"weekly", local(oslo, 2025, 12, 24), Interval{Week, 1},
			"2025-12-24 2025-12-31 2026-01-07 2026-01-14"},
		{"fortnightly", local(oslo, 2024, 2, 22), Interval{Week, 2},
			"2024-02-22 2024-03-07 2024-03-21 2024-04-04"},
		{"daily over a leap day", local(oslo, 2024, 2, 27), Interval{Day, 1},
			"2024-02-27 2024-02-28 2024-02-29 2024-03-01"},
		{"every 10 days", local(oslo, 2025, 12, 25), Interval{Day, 10},
			"2025-12-25 2026-01-04 2026-01-14"},
		{"anchor time of day is ignored", time.Date(2025, 1, 31, 17, 45, 0, 0, oslo), Interval{Month, 1},
			"2025-01-31 2025-02-28"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := strings.Count(tt.want, " ") + 1
			var got []time.Time
			for i := range n {
				b := Boundary(tt.anchor, tt.iv, i, oslo)
				if b.Location() != time.UTC {
					t.Fatalf("Boundary returned %v, want a UTC time", b)
				}
				if l := b.In(oslo); l.Hour() != 0 || l.Minute() != 0 || l.Second() != 0 || l.Nanosecond() != 0 {
					t.Fatalf("period %d starts at %v, not local midnight", i, l)
				}
				got = append(got, b)
			}
			if s := dates(got, oslo); s != tt.want {
				t.Errorf("boundaries\n got %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestBoundaryNegative(t *testing.T) {
	oslo := zone(t, "Europe/Oslo")
	anchor := local(oslo, 2025, 3, 31)
	var got []time.Time
	for n := -3; n <= 0; n++ {
		got = append(got, Boundary(anchor, Interval{Month, 1}, n, oslo))
	}
	if s := dates(got, oslo); s != "2024-12-31 2025-01-31 2025-02-28 2025-03-31" {
		t.Errorf("periods before the anchor: %s", s)
	}
}

// TestBoundaryInstants pins exact UTC instants, including across the DST
// changes in the Nordics (last Sunday of March and October) and elsewhere.
func TestBoundaryInstants(t *testing.T) {
	tests := []struct {
		zone   string
		anchor string // local date
		iv     Interval
		n      int
		want   string // UTC
	}{
		// Monthly from 15 March 2026: CET (+1) at the anchor, CEST (+2) after.
		{"Europe/Oslo", "2026-03-15", Interval{Month, 1}, 0, "2026-03-14T23:00:00Z"},
		{"Europe/Oslo", "2026-03-15", Interval{Month, 1}, 1, "2026-04-14T22:00:00Z"},
		{"Europe/Oslo", "2026-03-15", Interval{Month, 1}, 7, "2026-10-14T22:00:00Z"},
		{"Europe/Oslo", "2026-03-15", Interval{Month, 1}, 8, "2026-11-14T23:00:00Z"},
		// Daily across the spring and autumn changes.
		{"Europe/Oslo", "2026-03-28", Interval{Day, 1}, 1, "2026-03-28T23:00:00Z"}, // 29 Mar 00:00 CET
		{"Europe/Oslo", "2026-03-28", Interval{Day, 1}, 2, "2026-03-29T22:00:00Z"}, // 30 Mar 00:00 CEST
		{"Europe/Oslo", "2026-10-24", Interval{Day, 1}, 1, "2026-10-24T22:00:00Z"}, // 25 Oct 00:00 CEST
		{"Europe/Oslo", "2026-10-24", Interval{Day, 1}, 2, "2026-10-25T23:00:00Z"}, // 26 Oct 00:00 CET
		{"Europe/Stockholm", "2026-03-22", Interval{Week, 1}, 1, "2026-03-28T23:00:00Z"},
		{"Europe/Stockholm", "2026-03-22", Interval{Week, 1}, 2, "2026-04-04T22:00:00Z"},
		{"Europe/Stockholm", "2026-10-20", Interval{Week, 1}, 1, "2026-10-26T23:00:00Z"},
		// New York changes on 8 March and 1 November 2026.
		{"America/New_York", "2026-01-31", Interval{Month, 1}, 0, "2026-01-31T05:00:00Z"},
		{"America/New_York", "2026-01-31", Interval{Month, 1}, 1, "2026-02-28T05:00:00Z"},
		{"America/New_York", "2026-01-31", Interval{Month, 1}, 2, "2026-03-31T04:00:00Z"},
		{"America/New_York", "2026-03-07", Interval{Day, 1}, 2, "2026-03-09T04:00:00Z"},
		{"America/New_York", "2026-10-31", Interval{Day, 1}, 2, "2026-11-02T05:00:00Z"},
		{"UTC", "2024-02-29", Interval{Year, 1}, 1, "2025-02-28T00:00:00Z"},
		{"UTC", "2024-02-29", Interval{Year, 1}, 4, "2028-02-29T00:00:00Z"},
		{"UTC", "2025-01-31", Interval{Month, 1}, 1, "2025-02-28T00:00:00Z"},
		// Zones where midnight is skipped: the day starts at the jump.
		{"America/Santiago", "2026-09-05", Interval{Day, 1}, 1, "2026-09-06T04:00:00Z"},
		{"America/Havana", "2026-03-07", Interval{Day, 1}, 1, "2026-03-08T05:00:00Z"},
	}
	for _, tt := range tests {
		loc := zone(t, tt.zone)
		a, err := time.ParseInLocation("2006-01-02", tt.anchor, loc)
		if err != nil {
			t.Fatal(err)
		}
		got := Boundary(a, tt.iv, tt.n, loc)
		if want := utc(t, tt.want); !got.Equal(want) {
			t.Errorf("%s from %s, %v, n=%d: got %v (%v), want %v", tt.zone, tt.anchor, tt.iv, tt.n, got, got.In(loc), want)
		}
	}
}

func TestDaysAcrossDST(t *testing.T) {
	tests := []struct {
		zone     string
		from, to string // UTC boundaries
		days     int
		hours    float64
	}{
		{"Europe/Oslo", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", 1, 23},
		{"Europe/Oslo", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", 1, 25},
		{"Europe/Oslo", "2026-03-14T23:00:00Z", "2026-04-14T22:00:00Z", 31, 31*24 - 1},
		{"Europe/Stockholm", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", 1, 23},
		{"Europe/Stockholm", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", 1, 25},
		{"America/New_York", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", 1, 23},
		{"America/Santiago", "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z", 1, 23}, // starts at the 01:00 jump
		{"Europe/Oslo", "2026-04-14T22:00:00Z", "2026-03-14T23:00:00Z", -31, -(31*24 - 1)},
		{"Europe/Oslo", "2024-01-31T23:00:00Z", "2025-01-31T23:00:00Z", 366, 366 * 24},
	}
	for _, tt := range tests {
		loc := zone(t, tt.zone)
		from, to := utc(t, tt.from), utc(t, tt.to)
		if h := to.Sub(from).Hours(); h != tt.hours {
			t.Fatalf("test data: %s→%s is %v hours, not %v", tt.from, tt.to, h, tt.hours)
		}
		if got := Days(from, to, loc); got != tt.days {
			t.Errorf("Days(%s, %s, %s) = %d, want %d", tt.from, tt.to, tt.zone, got, tt.days)
		}
	}
}

func TestStartOfDay(t *testing.T) {
	tests := []struct {
		zone string
		t    string
		want string
	}{
		{"Europe/Oslo", "2026-06-15T12:34:56Z", "2026-06-14T22:00:00Z"},
		{"Europe/Oslo", "2026-06-14T22:00:00Z", "2026-06-14T22:00:00Z"}, // already midnight
		{"Europe/Oslo", "2026-06-14T21:59:59Z", "2026-06-13T22:00:00Z"}, // still the 14th locally
		{"Europe/Oslo", "2026-03-29T12:00:00Z", "2026-03-28T23:00:00Z"},
		{"Europe/Oslo", "2026-10-25T12:00:00Z", "2026-10-24T22:00:00Z"},
		{"America/New_York", "2026-07-04T03:00:00Z", "2026-07-03T04:00:00Z"},
		{"UTC", "2026-07-04T03:00:00Z", "2026-07-04T00:00:00Z"},
		// Midnight skipped (00:00 → 01:00): the first instant is the jump.
		// time.Date alone would return 23:00 of the previous day here.
		{"America/Santiago", "2026-09-06T12:00:00Z", "2026-09-06T04:00:00Z"},
		{"America/Havana", "2026-03-08T12:00:00Z", "2026-03-08T05:00:00Z"},
		{"Africa/Cairo", "2026-04-24T12:00:00Z", "2026-04-23T22:00:00Z"},
		// Midnight repeated (01:00 → 00:00): the earlier 00:00 is the start.
		{"America/Havana", "2026-11-01T12:00:00Z", "2026-11-01T04:00:00Z"},
		{"Asia/Amman", "2021-10-29T12:00:00Z", "2021-10-28T21:00:00Z"}, // time.Date picks the later one
	}
	for _, tt := range tests {
		loc := zone(t, tt.zone)
		got := StartOfDay(utc(t, tt.t), loc)
		if want := utc(t, tt.want); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("StartOfDay(%s, %s) = %v (%v), want %v", tt.t, tt.zone, got, got.In(loc), want)
		}
	}
}

func TestBoundaryPanicsOnInvalidInterval(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Boundary with Count 0 did not panic")
		}
	}()
	Boundary(time.Now(), Interval{Month, 0}, 1, time.UTC)
}
