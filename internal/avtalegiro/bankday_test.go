package avtalegiro_test

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro"
)

func TestBankingDays(t *testing.T) {
	d := func(s string) time.Time {
		v, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for day, want := range map[string]bool{
		"2027-01-01": false, // New Year's Day
		"2027-01-04": true,  // Monday
		"2027-01-09": false, // Saturday
		"2027-03-25": false, // Maundy Thursday (Easter 2027-03-28)
		"2027-03-26": false, // Good Friday
		"2027-03-29": false, // Easter Monday
		"2027-03-30": true,
		"2027-05-06": false, // Ascension Day
		"2027-05-17": false, // Constitution Day
		"2027-05-18": true,  // Whit Monday is 2027-05-17 too
		"2026-05-25": false, // Whit Monday 2026
		"2026-12-24": false, // Christmas Eve (bank holiday)
		"2026-12-31": false, // New Year's Eve (bank holiday)
		"2026-12-28": true,
	} {
		if got := avtalegiro.IsBankingDay(d(day)); got != want {
			t.Errorf("%s: banking day %v, want %v", day, got, want)
		}
	}
	for _, c := range []struct {
		from string
		n    int
		want string
	}{
		{"2027-01-04", 4, "2027-01-08"},
		{"2027-01-08", 1, "2027-01-11"}, // over the weekend
		{"2027-03-24", 1, "2027-03-30"}, // over Easter
		{"2027-01-02", 0, "2027-01-04"}, // a Saturday: the next banking day
		{"2026-12-23", 1, "2026-12-28"}, // over Christmas
	} {
		if got := avtalegiro.AddBankingDays(d(c.from), c.n).Format(time.DateOnly); got != c.want {
			t.Errorf("%s + %d = %s, want %s", c.from, c.n, got, c.want)
		}
	}
}
