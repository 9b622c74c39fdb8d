package bankday_test

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/bankday"
)

func day(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSweden(t *testing.T) {
	for _, tc := range []struct {
		d    string
		bank bool
	}{
		{"2026-01-01", false}, {"2026-01-06", false}, {"2026-04-03", false}, {"2026-04-06", false},
		{"2026-04-07", true}, {"2026-05-01", false}, {"2026-05-14", false}, {"2026-06-06", false},
		{"2026-06-19", false}, {"2026-06-22", true}, {"2026-12-24", false}, {"2026-12-25", false},
		{"2026-12-28", true}, {"2026-12-31", false}, {"2026-11-28", false}, {"2026-11-27", true},
		{"2027-03-26", false}, {"2027-03-29", false}, {"2027-05-06", false}, {"2027-06-25", false},
		{"2026-05-25", true},                        // Whit Monday is no holiday in Sweden
		{"2026-05-17", false}, {"2027-05-17", true}, // a Sunday; Norway's day, not Sweden's
	} {
		if got := bankday.Sweden.IsBankingDay(day(t, tc.d)); got != tc.bank {
			t.Errorf("Sweden %s: banking day %v, want %v", tc.d, got, tc.bank)
		}
	}
}

func TestNorway(t *testing.T) {
	for d, want := range map[string]bool{
		"2027-01-01": false, // New Year's Day
		"2027-01-04": true,  // Monday
		"2027-01-06": true,  // Epiphany is Sweden's
		"2027-01-09": false, // Saturday
		"2027-03-25": false, // Maundy Thursday (Easter 2027-03-28)
		"2027-03-26": false, // Good Friday
		"2027-03-29": false, // Easter Monday
		"2027-03-30": true,
		"2027-05-06": false, // Ascension Day
		"2027-05-17": false, // Constitution Day
		"2027-05-18": true,  // Whit Monday is 2027-05-17 too
		"2026-05-25": false, // Whit Monday 2026
		"2026-06-19": true,  // midsummer eve is Sweden's
		"2026-12-24": false, // Christmas Eve (bank holiday)
		"2026-12-31": false, // New Year's Eve (bank holiday)
		"2026-12-28": true,
	} {
		if got := bankday.Norway.IsBankingDay(day(t, d)); got != want {
			t.Errorf("Norway %s: banking day %v, want %v", d, got, want)
		}
	}
}

func TestNextAndAfter(t *testing.T) {
	for _, c := range []struct {
		cal        bankday.Calendar
		from       string
		n          int
		next, want string
	}{
		{bankday.Norway, "2027-01-04", 4, "2027-01-04", "2027-01-08"},
		{bankday.Norway, "2027-01-08", 1, "2027-01-08", "2027-01-11"}, // over the weekend
		{bankday.Norway, "2027-03-24", 1, "2027-03-24", "2027-03-30"}, // over Easter
		{bankday.Norway, "2027-01-02", 0, "2027-01-04", "2027-01-02"}, // a Saturday
		{bankday.Norway, "2026-12-23", 1, "2026-12-23", "2026-12-28"}, // over Christmas
		{bankday.Sweden, "2026-12-24", 1, "2026-12-28", "2026-12-28"},
		{bankday.Sweden, "2026-06-18", 1, "2026-06-18", "2026-06-22"}, // over midsummer
		{bankday.Sweden, "2026-12-22", 2, "2026-12-22", "2026-12-28"},
	} {
		from := day(t, c.from).Add(23 * time.Hour) // the calendar day counts, not the clock
		if got := c.cal.Next(from).Format(time.DateOnly); got != c.next {
			t.Errorf("Next(%s) = %s, want %s", c.from, got, c.next)
		}
		if got := c.cal.After(from, c.n).Format(time.DateOnly); got != c.want {
			t.Errorf("After(%s, %d) = %s, want %s", c.from, c.n, got, c.want)
		}
	}
}

func TestEaster(t *testing.T) {
	for y, want := range map[int]string{2024: "2024-03-31", 2025: "2025-04-20", 2026: "2026-04-05", 2027: "2027-03-28", 2038: "2038-04-25"} {
		if got := bankday.Easter(y).Format(time.DateOnly); got != want {
			t.Errorf("Easter %d = %s, want %s", y, got, want)
		}
	}
}
