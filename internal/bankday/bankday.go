// Package bankday is the Nordic banks' calendar: which days a bank
// collection can be settled on, in Sweden (Bankgirot's Autogiro) and in
// Norway (Nets' AvtaleGiro). A banking day is Monday to Friday except the
// country's public holidays and the days its banks keep closed. Pure: the
// calendar day of a time is its year, month and day, whatever its
// location.
package bankday

import "time"

// Calendar is one country's banking days.
type Calendar struct {
	// fixed are the closed days of a fixed date, as month*100 + day.
	fixed []int
	// easter are the closed days relative to Easter Sunday.
	easter []int
	// midsummerEve closes the Friday between 19 and 25 June.
	midsummerEve bool
}

// Sweden: New Year's Day, Epiphany, Good Friday, Easter Monday, May Day,
// Ascension Day, National Day, midsummer eve, and Christmas Eve, Christmas
// Day, Boxing Day and New Year's Eve. (Midsummer Day, All Saints' Day and
// Whitsun fall on weekends.)
var Sweden = Calendar{fixed: []int{101, 106, 501, 606, 1224, 1225, 1226, 1231}, easter: []int{-2, 1, 39}, midsummerEve: true}

// Norway: New Year's Day, Maundy Thursday, Good Friday, Easter Monday,
// 1 May, 17 May, Ascension Day, Whit Monday, and Christmas Eve, Christmas
// Day, Boxing Day and New Year's Eve (the last two are bank holidays).
var Norway = Calendar{fixed: []int{101, 501, 517, 1224, 1225, 1226, 1231}, easter: []int{-3, -2, 1, 39, 50}}

// Date is the calendar day of t, at midnight in UTC form.
func Date(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// IsBankingDay reports whether the calendar day of t is a banking day.
func (c Calendar) IsBankingDay(t time.Time) bool {
	day := Date(t)
	if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	_, m, d := day.Date()
	for _, f := range c.fixed {
		if int(m)*100+d == f {
			return false
		}
	}
	if c.midsummerEve && m == time.June && d >= 19 && d <= 25 && day.Weekday() == time.Friday {
		return false
	}
	e := Easter(day.Year())
	for _, off := range c.easter {
		if day.Equal(e.AddDate(0, 0, off)) {
			return false
		}
	}
	return true
}

// Next is the calendar day of t if it is a banking day, else the next
// banking day.
func (c Calendar) Next(t time.Time) time.Time {
	t = Date(t)
	for !c.IsBankingDay(t) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// After is the n-th banking day after the calendar day of t (the day of t
// itself for n ≤ 0).
func (c Calendar) After(t time.Time, n int) time.Time {
	t = Date(t)
	for n > 0 {
		t = t.AddDate(0, 0, 1)
		if c.IsBankingDay(t) {
			n--
		}
	}
	return t
}

// Easter is Easter Sunday of year y in the Gregorian calendar (the
// anonymous algorithm published by Butcher and Meeus).
func Easter(y int) time.Time {
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
