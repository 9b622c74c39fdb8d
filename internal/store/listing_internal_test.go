package store

import (
	"testing"
	"time"
)

// TestParseDBTime: the hand-written reader of SQLite's stored timestamps
// agrees with time.Parse on the layout Kadens writes, takes the layouts
// older rows may have, and refuses what is not a time.
func TestParseDBTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2027-01-31T23:00:00.000000Z", time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC), true},
		{"2026-11-24T08:44:44.335659Z", time.Date(2026, 11, 24, 8, 44, 44, 335659000, time.UTC), true},
		{"2028-02-29T00:00:00.000001Z", time.Date(2028, 2, 29, 0, 0, 0, 1000, time.UTC), true},
		{"2027-01-31T23:00:00Z", time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC), true},
		{"2027-02-01T00:00:00+01:00", time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC), true},
		{"2027-01-31 23:00:00.5+00:00", time.Date(2027, 1, 31, 23, 0, 0, 5e8, time.UTC), true},
		{"2027-02-31T00:00:00.000000Z", time.Time{}, false}, // no 31 February
		{"2027-13-01T00:00:00.000000Z", time.Time{}, false},
		{"2027-01-01T24:00:00.000000Z", time.Time{}, false},
		{"2027-01-0xT00:00:00.000000Z", time.Time{}, false},
		{"", time.Time{}, false},
		{"yesterday", time.Time{}, false},
	} {
		got, err := parseDBTime(tc.in)
		if (err == nil) != tc.ok || (tc.ok && !got.Equal(tc.want)) || (tc.ok && got.Location() != time.UTC) {
			t.Errorf("parseDBTime(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzParseDBTime: whatever the text, parseDBTime agrees with time.Parse
// of RFC 3339 where that succeeds on a 27-character stored value, and
// never panics.
func FuzzParseDBTime(f *testing.F) {
	for _, s := range []string{"2027-01-31T23:00:00.000000Z", "2026-11-24T08:44:44.335659Z", "0000-01-01T00:00:00.000000Z",
		"9999-12-31T23:59:59.999999Z", "2027-02-31T00:00:00.000000Z", "2027-01-31T23:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseDBTime(s)
		want, werr := time.Parse(time.RFC3339Nano, s)
		if len(s) == len(dbTimeLayout) && werr == nil {
			if err != nil || !got.Equal(want) {
				t.Fatalf("parseDBTime(%q) = %v, %v; time.Parse: %v", s, got, err, want)
			}
		}
		if err == nil && got.Location() != time.UTC {
			t.Fatalf("parseDBTime(%q) is in %v", s, got.Location())
		}
	})
}
