package billing

import (
	"fmt"
	"strings"
)

// KID algorithms: the check digit of a Norwegian payment reference (KID,
// also used as OCR reference) is computed with MOD10 (Luhn) or MOD11. An
// organization chooses the one its bank agreement uses (its kidAlgorithm;
// MOD10 by default); both also validate references given on input.
const (
	KIDMod10 = "MOD10"
	KIDMod11 = "MOD11"
)

// KIDAlgorithms lists the algorithms an organization can issue with.
var KIDAlgorithms = []string{KIDMod10, KIDMod11}

// kidDigits is how many digits of the invoice number a KID carries; with
// the check digit a KID is 11 digits (12 under MOD11), well inside the 25
// banks accept.
const kidDigits = 10

// KID returns the payment reference of invoice number n of an organization
// that issues with algorithm (KIDMod11, or MOD10 for anything else: the
// organization's column only holds the two).
//
//   - MOD10: n zero-padded to ten digits and a Luhn check digit (11 digits).
//   - MOD11: n zero-padded to ten digits, a variant digit and a MOD11 check
//     digit (12 digits). The variant digit is 0, or 1 when the body ending
//     in 0 would need check digit 10, which MOD11 cannot carry. The variant
//     digit has weight 2, so 1 changes the weighted sum by 2 (mod 11) and
//     always yields a valid digit: every invoice number gets a MOD11 KID,
//     without skipping numbers.
//
// The KID starts with the invoice number, which is unique per organization,
// so KIDs are unique too (each organization has its own bank account and
// KID agreement). MOD10 and MOD11 KIDs differ in length, so an organization
// that switches algorithm never issues a reference it issued before.
// Numbers above ten digits keep all their digits.
func KID(n int64, algorithm string) string {
	body := fmt.Sprintf("%0*d", kidDigits, n)
	if algorithm != KIDMod11 {
		d, _ := CheckDigit(body, KIDMod10)
		return body + string(d)
	}
	for _, variant := range []string{"0", "1"} {
		if d, ok := CheckDigit(body+variant, KIDMod11); ok {
			return body + variant + string(d)
		}
	}
	panic("billing: no MOD11 variant for " + body) // unreachable: see above
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

// ParseKIDAlgorithm returns the canonical name of a KID algorithm given in
// any case ("mod11" → MOD11), or false.
func ParseKIDAlgorithm(s string) (string, bool) {
	for _, a := range KIDAlgorithms {
		if strings.EqualFold(strings.TrimSpace(s), a) {
			return a, true
		}
	}
	return "", false
}
