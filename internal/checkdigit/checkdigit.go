// Package checkdigit validates the identifiers payment agreements name:
// Norwegian organization numbers (EHF), Danish CVR numbers and GS1 GLNs
// (OIO). It is pure: no I/O, no allocation beyond the normalized result.
//
// Each function takes the identifier as a client typed it, removes the
// spaces people write inside numbers ("923 609 016"), and returns the
// canonical all-digit form, or an error saying what is wrong with it.
package checkdigit

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCheckDigit: the identifier has the right shape but its check digit
// does not match the other digits (a typing error).
var ErrCheckDigit = errors.New("the check digit does not match")

// FormatError: the identifier is not the expected number of digits.
type FormatError struct {
	// Want describes the expected shape, e.g. "9 digits".
	Want string
}

func (e *FormatError) Error() string { return "must be " + e.Want }

// digits removes spaces and returns the digits of s, or false when s
// holds anything else.
func digits(s string) (string, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if s == "" {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", false
		}
	}
	return s, true
}

// weighted returns Σ d[i]·w[i] over the first len(w) digits of d.
func weighted(d string, w []int) int {
	sum := 0
	for i, weight := range w {
		sum += int(d[i]-'0') * weight
	}
	return sum
}

var orgWeights = []int{3, 2, 7, 6, 5, 4, 3, 2}

// NorwegianOrgNumber validates a Norwegian organization number
// (organisasjonsnummer, Brønnøysundregistrene): 9 digits whose last is a
// MOD11 check digit over the first 8 with weights 3 2 7 6 5 4 3 2. The
// check digit is 11 − (sum mod 11); a remainder of 0 gives 0, and a result
// of 10 means no valid number has those first 8 digits.
func NorwegianOrgNumber(s string) (string, error) {
	d, ok := digits(s)
	if !ok || len(d) != 9 {
		return "", &FormatError{Want: "9 digits"}
	}
	r := weighted(d, orgWeights) % 11
	check := 0
	if r != 0 {
		check = 11 - r
	}
	if check == 10 || int(d[8]-'0') != check {
		return "", ErrCheckDigit
	}
	return d, nil
}

var cvrWeights = []int{2, 7, 6, 5, 4, 3, 2, 1}

// CVR validates a Danish CVR number (Det Centrale Virksomhedsregister):
// 8 digits whose weighted sum with weights 2 7 6 5 4 3 2 1 is divisible
// by 11. A leading zero is not issued.
func CVR(s string) (string, error) {
	d, ok := digits(s)
	if !ok || len(d) != 8 {
		return "", &FormatError{Want: "8 digits"}
	}
	if d[0] == '0' {
		return "", &FormatError{Want: "8 digits not starting with 0"}
	}
	if weighted(d, cvrWeights)%11 != 0 {
		return "", ErrCheckDigit
	}
	return d, nil
}

// GLN validates a GS1 Global Location Number: 13 digits whose last is the
// GS1 check digit. Weights alternate 3 and 1 from the right, starting with
// 3 on the digit next to the check digit; the check digit brings the sum
// to a multiple of 10.
func GLN(s string) (string, error) {
	d, ok := digits(s)
	if !ok || len(d) != 13 {
		return "", &FormatError{Want: "13 digits"}
	}
	if GS1CheckDigit(d[:12]) != d[12] {
		return "", ErrCheckDigit
	}
	return d, nil
}

// GS1CheckDigit returns the GS1 check digit of the all-digit string body
// (the identifier without its check digit). It panics on a non-digit, so
// callers pass validated input.
func GS1CheckDigit(body string) byte {
	sum := 0
	for i := 0; i < len(body); i++ {
		c := body[len(body)-1-i]
		if c < '0' || c > '9' {
			panic(fmt.Sprintf("checkdigit: %q is not all digits", body))
		}
		w := 1
		if i%2 == 0 {
			w = 3
		}
		sum += int(c-'0') * w
	}
	return byte('0' + (10-sum%10)%10)
}
