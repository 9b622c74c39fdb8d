package billing

import (
	"fmt"
	"strings"
)

// KID algorithms: the check digit of a Norwegian payment reference (KID,
// also used as OCR reference) is computed with MOD10 (Luhn) or MOD11.
// Kadens issues MOD10 references; MOD11 is here for validating references
// given on input (payments, AvtaleGiro).
const (
	KIDMod10 = "MOD10"
	KIDMod11 = "MOD11"
)

// kidDigits is how many digits of the invoice number a KID carries; with
// the check digit a KID is 11 digits, well inside the 25 banks accept.
const kidDigits = 10

// KID returns the payment reference of invoice number n of an organization:
// n zero-padded to ten digits and a MOD10 check digit. Invoice numbers are
// unique per organization, and so is the KID (each organization has its own
// bank account and KID agreement). Numbers above ten digits keep all their
// digits.
func KID(n int64) string {
	body := fmt.Sprintf("%0*d", kidDigits, n)
	d, _ := CheckDigit(body, KIDMod10)
	return body + string(d)
}

// CheckDigit returns the check digit of the digit string body under
// algorithm (KIDMod10 or KIDMod11). ok is false when body is empty or not
// all digits, the algorithm is unknown, or MOD11 yields 10 (such a body
// cannot carry a MOD11 check digit; some banks print '-', Kadens refuses).
func CheckDigit(body, algorithm string) (digit byte, ok bool) {
	if body == "" || strings.Trim(body, "0123456789") != "" {
		return 0, false
	}
	switch algorithm {
	case KIDMod10:
		// Luhn: from the rightmost digit, double every other digit
		// (starting with the rightmost) and add the digits of the products.
		sum := 0
		for i := 0; i < len(body); i++ {
			d := int(body[len(body)-1-i] - '0')
			if i%2 == 0 {
				d *= 2
				if d > 9 {
					d -= 9
				}
			}
			sum += d
		}
		return byte('0' + (10-sum%10)%10), true
	case KIDMod11:
		// Weights 2, 3, 4, 5, 6, 7, 2, 3 … from the rightmost digit.
		sum := 0
		for i := 0; i < len(body); i++ {
			sum += int(body[len(body)-1-i]-'0') * (2 + i%6)
		}
		switch c := 11 - sum%11; c {
		case 11:
			return '0', true
		case 10:
			return 0, false
		default:
			return byte('0' + c), true
		}
	}
	return 0, false
}

// ValidKID reports whether kid (2 to 25 digits) ends in the right check
// digit under algorithm.
func ValidKID(kid, algorithm string) bool {
	if len(kid) < 2 || len(kid) > 25 {
		return false
	}
	d, ok := CheckDigit(kid[:len(kid)-1], algorithm)
	return ok && d == kid[len(kid)-1]
}
