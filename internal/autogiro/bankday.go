package autogiro

import "time"

// Bankgirot works on Swedish banking days: Monday to Friday except the
// public holidays and the days Swedish banks keep closed (midsummer eve,
// Christmas eve, New Year's eve). A payment date that is not a banking day
// is moved by Bankgirot to the next one.

// LeadDays is how many banking days before the payment date a payment
// order must reach Bankgirot. The manual's deadline is the banking day
// before the payment date; Kadens keeps one more day for the file to be
// sealed and sent, so an export run on day D can carry payments of D+2.
const LeadDays = 2

// easter returns Easter Sunday of year y (the anonymous Gregorian algorithm).
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

// IsBankingDay reports whether the calendar day of t (its Y-M-D, whatever
// its location) is a Swedish banking day.
func IsBankingDay(t time.Time) bool {
	y, m, d := t.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	switch {
	case m == time.January && (d == 1 || d == 6), // New Year's Day, Epiphany
		m == time.May && d == 1,  // May Day
		m == time.June && d == 6, // National Day
		m == time.December && (d == 24 || d == 25 || d == 26 || d == 31):
		return false
	case m == time.June && d >= 19 && d <= 25 && day.Weekday() == time.Friday:
		return false // midsummer eve: the Friday between 19 and 25 June
	}
	e := easter(y)
	for _, off := range []int{-2, 1, 39} { // Good Friday, Easter Monday, Ascension Day
		if day.Equal(e.AddDate(0, 0, off)) {
			return false
		}
	}
	return true
}

// date drops t's clock: the calendar day of t in UTC form.
func date(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// NextBankingDay returns the day of t if it is a banking day, else the
// next one.
func NextBankingDay(t time.Time) time.Time {
	t = date(t)
	for !IsBankingDay(t) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// AddBankingDays returns the n-th banking day after the day of t.
func AddBankingDays(t time.Time, n int) time.Time {
	t = date(t)
	for n > 0 {
		t = t.AddDate(0, 0, 1)
		if IsBankingDay(t) {
			n--
		}
	}
	return t
}

// PaymentDate is the date a debit due on due is sent for, when it is
// ordered on today: the due date, moved to the next banking day if it is
// not one (Bankgirot would move it anyway, and a file should say what will
// happen), but never earlier than LeadDays banking days after today.
func PaymentDate(due, today time.Time) time.Time {
	d := NextBankingDay(due)
	if earliest := AddBankingDays(today, LeadDays); d.Before(earliest) {
		return earliest
	}
	return d
}
