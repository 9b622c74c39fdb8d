package delivery

import (
	"strings"
	"testing"
)

// The parsers of client input never panic, and what they accept prints
// back to what they read.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-12-25", "2028-02-29", "2026-02-30", "", "0000-01-01", "9999-12-31", "2026-1-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate(s)
		if err != nil {
			return
		}
		if d.String() != s {
			t.Fatalf("%q read as %s", s, d)
		}
		if back, err := ParseDate(d.AddDays(1).AddDays(-1).String()); err != nil || back != d {
			t.Fatalf("%s ± 1 day: %s %v", d, back, err)
		}
	})
}

func FuzzParseWeekdays(f *testing.F) {
	for _, s := range []string{"Fri,Sat", "tue,thu,sat", "Mon,Mon", "", "Sun,Mon,Tue,Wed,Thu,Fri,Sat", "Freitag"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWeekdays(strings.Split(s, ","))
		if err != nil {
			return
		}
		if w&^AllWeekdays != 0 {
			t.Fatalf("%q: bits outside the week: %b", s, w)
		}
		back, err := ParseWeekdays(w.Names())
		if err != nil || back != w {
			t.Fatalf("%q: names %v read back as %b %v", s, w.Names(), back, err)
		}
	})
}
