// Package bankaccount validates and formats the bank accounts an invoice
// asks to be paid to: Norwegian account numbers (kontonummer), IBANs and
// BICs. It is pure: no I/O.
//
// Each Parse function takes the value as a person typed it (spaces, and
// for a kontonummer the dots of its printed form, are removed; letters are
// upper-cased) and returns the canonical form that is stored, or an error
// that says what is wrong with it. The Format functions print a canonical
// value the way people read it on an invoice.
package bankaccount

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kadens/kadens/internal/country"
)

// ErrCheckDigit: the value has the right shape but its check digits do not
// match the rest (a typing error).
var ErrCheckDigit = errors.New("the check digits do not match (a typing error?)")

// compact removes the separators people type inside account numbers.
func compact(s string, seps string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(seps, r) {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

var kontoWeights = [10]int{5, 4, 3, 2, 7, 6, 5, 4, 3, 2}

// ParseKontonummer validates a Norwegian bank account number: 11 digits
// (4 for the bank's registry number, 2 for the account group, 5 for the
// customer number, the last of which is the check digit), typed with or
// without the spaces or dots of 1234.56.78903. The check digit is MOD11
// over the first 10 digits with weights 5 4 3 2 7 6 5 4 3 2: 11 − (sum mod
// 11), where 11 means 0 and 10 means no account has those 10 digits.
func ParseKontonummer(s string) (string, error) {
	d := compact(s, " .\u00a0")
	if len(d) != 11 || !allDigits(d) {
		return "", errors.New("must be 11 digits, such as 8601.11.17947")
	}
	if !kontoCheck(d) {
		return "", ErrCheckDigit
	}
	return d, nil
}

// kontoCheck reports whether the 11 digits d end in their MOD11 digit.
func kontoCheck(d string) bool {
	sum := 0
	for i, w := range kontoWeights {
		sum += int(d[i]-'0') * w
	}
	check := (11 - sum%11) % 11
	return check != 10 && int(d[10]-'0') == check
}

// FormatKontonummer prints a canonical kontonummer in its groups of 4, 2
// and 5 digits (8601.11.17947); anything else is returned unchanged.
func FormatKontonummer(d string) string {
	if len(d) != 11 || !allDigits(d) {
		return d
	}
	return d[:4] + "." + d[4:6] + "." + d[6:]
}

// ibanLengths is the length of an IBAN per country (ISO 13616 registry),
// for the countries whose accounts Kadens' organizations use: the EEA,
// Switzerland, the United Kingdom and their neighbours. An IBAN of any
// other country is refused rather than accepted unchecked.
var ibanLengths = map[string]int{
	"AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18,
	"EE": 20, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GI": 23, "GL": 18, "GR": 27,
	"HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19,
	"SK": 24, "SM": 27, "VA": 22,
}

// ParseIBAN validates an International Bank Account Number (ISO 13616):
// a country code, two check digits and the country's basic account number
// (BBAN), in the length the country registered, typed in any case with or
// without spaces. The check digits make the number, with its first four
// characters moved to the end and letters read as 10..35, equal 1 modulo
// 97. A Norwegian IBAN's BBAN is a kontonummer, whose own check digit must
// match as well.
func ParseIBAN(s string) (string, error) {
	v := strings.ToUpper(compact(s, " \u00a0-"))
	if len(v) < 4 {
		return "", errors.New("must start with a country code and two check digits, such as NO93 8601 1117 947")
	}
	cc := v[:2]
	want, ok := ibanLengths[cc]
	if !ok {
		if !country.Valid(cc) {
			return "", errors.New("must start with an ISO 3166-1 country code, such as NO93 8601 1117 947")
		}
		return "", fmt.Errorf("IBANs of %s are not supported", cc)
	}
	if len(v) != want {
		return "", fmt.Errorf("an IBAN of %s has %d characters, not %d", cc, want, len(v))
	}
	if !allDigits(v[2:4]) {
		return "", errors.New("characters 3 and 4 must be the check digits")
	}
	for i := 4; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return "", errors.New("must hold only letters and digits after the country code")
		}
	}
	if mod97(v[4:]+v[:4]) != 1 {
		return "", ErrCheckDigit
	}
	if cc == "NO" && (!allDigits(v[4:]) || !kontoCheck(v[4:])) {
		return "", fmt.Errorf("the account number in it: %w", ErrCheckDigit)
	}
	return v, nil
}

// mod97 returns the number s (digits and upper-case letters, a letter
// standing for 10..35) modulo 97, one character at a time so that no
// number grows beyond 3 digits.
func mod97(s string) int {
	r := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			r = (r*100 + int(c-'A') + 10) % 97
		} else {
			r = (r*10 + int(c-'0')) % 97
		}
	}
	return r
}

// IBANAccount returns the domestic account number in a canonical IBAN
// (its BBAN) when the IBAN is of country cc, else "".
func IBANAccount(iban, cc string) string {
	if len(iban) > 4 && iban[:2] == cc {
		return iban[4:]
	}
	return ""
}

// FormatIBAN prints a canonical IBAN in groups of four characters
// (NO93 8601 1117 947), its printed form.
func FormatIBAN(iban string) string {
	var b strings.Builder
	for i := 0; i < len(iban); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(iban[i:min(i+4, len(iban))])
	}
	return b.String()
}

// ParseBIC validates a Business Identifier Code (ISO 9362, the SWIFT
// address of a bank): 4 letters for the bank, the 2-letter ISO 3166-1 code
// of its country, 2 letters or digits for its location and optionally 3
// for a branch (8 or 11 characters), typed in any case.
func ParseBIC(s string) (string, error) {
	v := strings.ToUpper(compact(s, " \u00a0"))
	if len(v) != 8 && len(v) != 11 {
		return "", errors.New("must be 8 or 11 characters, such as DNBANOKK or DNBANOKKXXX")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		letter, digit := c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		if i < 6 && !letter || !letter && !digit {
			return "", errors.New("must be 6 letters (bank and country) followed by 2 or 5 letters or digits, such as DNBANOKK")
		}
	}
	if !country.Valid(v[4:6]) {
		return "", fmt.Errorf("characters 5 and 6 (%s) must be an ISO 3166-1 country code", v[4:6])
	}
	return v, nil
}
