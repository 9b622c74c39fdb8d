package avtalegiro

import "time"

// Norwegian banking days: Monday to Friday except the days Norwegian banks
// are closed: the public holidays (New Year's Day, Maundy Thursday, Good
// Friday, Easter Monday, 1 May, 17 May, Ascension Day, Whit Monday,
// Christmas Day, Boxing Day) and the bank holidays Christmas Eve and New
// Year's Eve. Easter Sunday and Whit Sunday are Sundays anyway.

// easter returns Easter Sunday of year y (Gregorian; the anonymous
// algorithm published by Butcher/Meeus).
func easter(y int) time.Time {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Date(y, time.Month(month), day, 0, 0, 0, 0, time.UTC)
}

// IsBankingDay reports whether the date of d (its year, month and day) is
// a Norwegian banking day.
func IsBankingDay(d time.Time) bool {
	y, m, day := d.Date()
	t := time.Date(y, m, day, 0, 0, 0, 0, time.UTC)
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	switch {
	case m == time.January && day == 1, m == time.May && (day == 1 || day == 17),
		m == time.December && (day == 24 || day == 25 || day == 26 || day == 31):
		return false
	}
	e := easter(y)
	for _, off := range []int{-3, -2, 1, 39, 50} { // Maundy Thursday, Good Friday, Easter Monday, Ascension, Whit Monday
		if t.Equal(e.AddDate(0, 0, off)) {
			return false
		}
	}
	return true
}

// AddBankingDays returns the date n banking days after d (n ≥ 0); with 0,
// d itself when it is a banking day, else the next one.
func AddBankingDays(d time.Time, n int) time.Time {
	y, m, day := d.Date()
	t := time.Date(y, m, day, 0, 0, 0, 0, time.UTC)
	for !IsBankingDay(t) {
		t = t.AddDate(0, 0, 1)
	}
	for n > 0 {
		t = t.AddDate(0, 0, 1)
		if IsBankingDay(t) {
			n--
		}
	}
	return t
}
