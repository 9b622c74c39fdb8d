package app

import (
	"net/mail"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/country"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// IsEmailAddress accepts a bare address (no display name, no angle
// brackets), as net/mail parses it.
func IsEmailAddress(v string) bool {
	a, err := mail.ParseAddress(v)
	return err == nil && a.Address == v && a.Name == ""
}

// IsPhoneNumber is deliberately lenient: digits, spaces, +, - and
// parentheses, holding 5 to 20 digits.
func IsPhoneNumber(v string) bool {
	digits := 0
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ' ' || r == '+' || r == '-' || r == '(' || r == ')':
		default:
			return false
		}
	}
	return digits >= 5 && digits <= 20
}

// CheckContactDetails records the problems of the details a subscriber
// keeps themselves (Min side's contact form): the name (required, at most
// 200 characters), the e-mail address and phone number (optional, valid
// when given) and the address (its lines' lengths, an ISO country code),
// by the API's rules and field names (name, email, phone, address.line1,
// …). Text rules (one line, no control characters) are the surface's.
func CheckContactDetails(sub store.Subscriber) validation.Errors {
	var errs validation.Errors
	if n := utf8.RuneCountInString(sub.Name); n == 0 || n > 200 {
		errs.Add("name", "is required (at most 200 characters)")
	}
	if sub.Email != "" && (len(sub.Email) > 254 || !IsEmailAddress(sub.Email)) {
		errs.Add("email", "%q is not an email address such as name@example.com", sub.Email)
	}
	if sub.Phone != "" && !IsPhoneNumber(sub.Phone) {
		errs.Add("phone", "must hold 5 to 20 digits and only digits, spaces, +, - and parentheses")
	}
	a := sub.Address
	for field, l := range map[string]struct {
		v string
		n int
	}{"address.line1": {a.Line1, 200}, "address.line2": {a.Line2, 200}, "address.postalCode": {a.PostalCode, 20}, "address.city": {a.City, 100}} {
		if utf8.RuneCountInString(l.v) > l.n {
			errs.Add(field, "must be at most %d characters", l.n)
		}
	}
	if a.Country != "" && !country.Valid(a.Country) {
		errs.Add("address.country", "%q is not an ISO 3166-1 alpha-2 country code", a.Country)
	}
	return errs
}
