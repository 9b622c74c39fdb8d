package delivery

import (
	"testing"
	"time"
)

func d(s string) Date {
	v, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return v
}

func days(t *testing.T, names ...string) Weekdays {
	t.Helper()
	w, err := ParseWeekdays(names)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestParseWeekdays(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
		err  bool
	}{
		{in: []string{"Fri", "Sat"}, want: []string{"Fri", "Sat"}},
		{in: []string{"sat", "TUE", " thu "}, want: []string{"Tue", "Thu", "Sat"}},
		{in: []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}, want: []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}},
		{in: nil, want: []string{}},
		{in: []string{"Fri", "Fri"}, err: true},
		{in: []string{"Friday"}, err: true},
		{in: []string{""}, err: true},
	} {
		w, err := ParseWeekdays(c.in)
		if (err != nil) != c.err {
			t.Fatalf("%v: err %v", c.in, err)
		}
		if c.err {
			continue
		}
		if got := w.Names(); len(got) != len(c.want) || (len(got) > 0 && fmtList(got) != fmtList(c.want)) {
			t.Errorf("%v: %v, want %v", c.in, got, c.want)
		}
	}
}

func fmtList(s []string) string {
	out := ""
	for _, v := range s {
		out += v + ","
	}
	return out
}

func TestParseDate(t *testing.T) {
	for _, bad := range []string{"2026-02-30", "2026-13-01", "26-01-01", "", "2026-1-1"} {
		if _, err := ParseDate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if got := d("2028-02-29").AddDays(1).String(); got != "2028-03-01" {
		t.Errorf("leap day + 1 = %s", got)
	}
}

// The editions of a period: month ends (28, 29, 30, 31 days), periods that
// do not start on the first, DST, and holidays on and off the pattern.
func TestEditions(t *testing.T) {
	tts := days(t, "Tue", "Thu", "Sat")
	helg := days(t, "Fri", "Sat")
	christmas := NewCalendar(d("2026-12-25"), d("2026-12-26"))
	easter := NewCalendar(d("2026-04-02"), d("2026-04-03"), d("2026-04-05"), d("2026-04-06"))
	for _, c := range []struct {
		name     string
		s        Schedule
		from, to string
		want     int
	}{
		{"february, 28 days", Schedule{Weekdays: tts}, "2026-02-01", "2026-03-01", 12},
		{"february of a leap year", Schedule{Weekdays: tts}, "2028-02-01", "2028-03-01", 13},
		{"anchored on the 31st, ending at the month end", Schedule{Weekdays: tts}, "2026-01-31", "2026-02-28", 12},
		{"october, 31 days", Schedule{Weekdays: tts}, "2026-10-01", "2026-11-01", 14},
		{"weekend title in december", Schedule{Weekdays: helg}, "2026-12-01", "2027-01-01", 8},
		{"weekend title, christmas closed (Fri 25, Sat 26)", Schedule{Weekdays: helg, Calendar: christmas}, "2026-12-01", "2027-01-01", 6},
		{"daily title, christmas closed", Schedule{Weekdays: AllWeekdays, Calendar: christmas}, "2026-12-01", "2027-01-01", 29},
		{"easter: only Thursday 2 April is a pattern day", Schedule{Weekdays: tts, Calendar: easter}, "2026-04-01", "2026-05-01", 12},
		{"a holiday outside the range", Schedule{Weekdays: AllWeekdays, Calendar: christmas}, "2026-11-01", "2026-12-01", 30},
		{"a whole year", Schedule{Weekdays: AllWeekdays}, "2027-01-01", "2028-01-01", 365},
		{"one day, on the pattern", Schedule{Weekdays: tts}, "2026-12-01", "2026-12-02", 1},
		{"one day, off the pattern", Schedule{Weekdays: tts}, "2026-12-02", "2026-12-03", 0},
		{"empty range", Schedule{Weekdays: tts}, "2026-12-01", "2026-12-01", 0},
		{"reversed range", Schedule{Weekdays: tts}, "2026-12-31", "2026-12-01", 0},
		{"no weekdays (digital)", Schedule{}, "2026-12-01", "2027-01-01", 0},
	} {
		if got := c.s.Editions(d(c.from), d(c.to)); got != c.want {
			t.Errorf("%s: %d editions, want %d", c.name, got, c.want)
		}
		// The fast count agrees with the day-by-day list.
		if got := len(c.s.DeliveryDays(d(c.from), d(c.to))); got != c.want {
			t.Errorf("%s: %d delivery days listed, want %d", c.name, got, c.want)
		}
	}
}

// A monthly period in Europe/Oslo starts at local midnight; across the
// spring (29 March) and autumn (25 October) changes it still holds the
// days of the month, not 30.96 or 31.04 days' worth.
func TestEditionsAcrossDST(t *testing.T) {
	oslo, err := time.LoadLocation("Europe/Oslo")
	if err != nil {
		t.Fatal("no tzdata (Debian: apt-get install tzdata):", err)
	}
	tts := Schedule{Weekdays: days(t, "Tue", "Thu", "Sat")}
	daily := Schedule{Weekdays: AllWeekdays}
	for _, c := range []struct {
		name   string
		s      Schedule
		y      int
		m      time.Month
		want   int
		wantTZ int // hours in the period, to show it crosses a change
	}{
		{"march (23-hour day)", tts, 2026, time.March, 13, 31*24 - 1},
		{"october (25-hour day)", tts, 2026, time.October, 14, 31*24 + 1},
		{"march daily", daily, 2026, time.March, 31, 31*24 - 1},
		{"october daily", daily, 2026, time.October, 31, 31*24 + 1},
	} {
		start := time.Date(c.y, c.m, 1, 0, 0, 0, 0, oslo)
		end := start.AddDate(0, 1, 0)
		if h := int(end.Sub(start).Hours()); h != c.wantTZ {
			t.Fatalf("%s: period of %d hours, want %d", c.name, h, c.wantTZ)
		}
		if got := c.s.EditionsBetween(start.UTC(), end.UTC(), oslo); got != c.want {
			t.Errorf("%s: %d editions, want %d", c.name, got, c.want)
		}
	}
}

// Consecutive periods split the editions of their union: no day is
// counted twice or lost at a boundary.
func TestEditionsAdditive(t *testing.T) {
	s := Schedule{Weekdays: days(t, "Tue", "Thu", "Sat"), Calendar: NewCalendar(d("2026-05-17"), d("2026-05-19"))}
	from := d("2026-01-01")
	for a := 0; a < 120; a += 7 {
		for b := a; b < 130; b += 11 {
			x, y, z := from.AddDays(a), from.AddDays(b), from.AddDays(140)
			if s.Editions(x, y)+s.Editions(y, z) != s.Editions(x, z) {
				t.Fatalf("[%s,%s)+[%s,%s) != [%s,%s)", x, y, y, z, x, z)
			}
		}
	}
}

func TestNextDelivery(t *testing.T) {
	s := Schedule{Weekdays: days(t, "Fri", "Sat"), Calendar: NewCalendar(d("2026-12-25"))}
	for _, c := range []struct{ from, want string }{
		{"2026-12-21", "2026-12-26"}, // Friday the 25th is closed
		{"2026-12-26", "2026-12-26"},
		{"2026-12-27", "2027-01-01"},
	} {
		got, ok := s.NextDelivery(d(c.from))
		if !ok || got.String() != c.want {
			t.Errorf("from %s: %s %v, want %s", c.from, got, ok, c.want)
		}
	}
	if _, ok := (Schedule{}).NextDelivery(d("2026-12-01")); ok {
		t.Error("a product without weekdays delivers")
	}
}
