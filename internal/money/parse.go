package money

import (
	"math"
	"strconv"
	"strings"
)

// ParseMinor parses a decimal amount in major units of c, such as "199",
// "199.5", "199.00" or "-12.30", into minor units (19900, 19950, 19900,
// -1230 for NOK).
//
// The accepted syntax is deliberately narrow so that what a user typed is
// exactly what is stored: an optional leading '-', at least one digit, and
// optionally a '.' followed by at least one digit. Leading '+', spaces,
// thousands separators, a decimal comma, ".5", "5." and exponents ("1e3")
// are rejected rather than guessed at.
//
// Decimals beyond the currency's minor unit are accepted only if they are
// zeros ("1.500" NOK is 150); "1.505" NOK is an error, never silently
// rounded. Values outside the int64 range of minor units are an error. All
// errors match ErrInvalidAmount and have messages fit for an API response.
func ParseMinor(s string, c Currency) (int64, error) {
	checkDigits(c)
	if s == "" {
		return 0, errorf("amount is empty")
	}
	body, neg := strings.CutPrefix(s, "-")
	whole, frac, hasDot := strings.Cut(body, ".")
	if !isDigits(whole) || (hasDot && !isDigits(frac)) {
		return 0, errorf("amount %s is not a decimal number like 199 or -12.50", quote(s))
	}
	if len(frac) > c.Digits {
		if strings.Trim(frac[c.Digits:], "0") != "" {
			if c.Digits == 0 {
				return 0, errorf("amount %s must be a whole number for %s", quote(s), c.Code)
			}
			return 0, errorf("amount %s has more than %d decimals for %s", quote(s), c.Digits, c.Code)
		}
		frac = frac[:c.Digits]
	}

	// Accumulate the magnitude in uint64 so that the most negative int64
	// (whose magnitude exceeds MaxInt64 by one) is still representable.
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var mag uint64
	push := func(digit uint64) bool {
		if mag > (limit-digit)/10 {
			return false
		}
		mag = mag*10 + digit
		return true
	}
	for _, r := range whole + frac {
		if !push(uint64(r - '0')) {
			return 0, errorf("amount %s is too large", quote(s))
		}
	}
	for range c.Digits - len(frac) {
		if !push(0) {
			return 0, errorf("amount %s is too large", quote(s))
		}
	}
	if neg {
		return int64(-mag), nil // wraps correctly for mag == 1<<63
	}
	return int64(mag), nil
}

// FormatMinor renders minor units of c as a plain decimal string with
// exactly c.Digits decimals ("199.00", "-0.05", "12" for ISK). It is the
// inverse of ParseMinor and uses the same syntax, so its output is what API
// responses and CSV exports carry; localised display (decimal comma,
// grouping) belongs to the presentation layer.
func FormatMinor(minor int64, c Currency) string {
	checkDigits(c)
	mag := uint64(minor)
	if minor < 0 {
		mag = -mag // two's complement: correct even for math.MinInt64
	}
	digits := strconv.FormatUint(mag, 10)
	if c.Digits > 0 {
		if pad := c.Digits + 1 - len(digits); pad > 0 {
			digits = strings.Repeat("0", pad) + digits
		}
		cut := len(digits) - c.Digits
		digits = digits[:cut] + "." + digits[cut:]
	}
	if minor < 0 {
		return "-" + digits
	}
	return digits
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// quote quotes user input for an error message, shortened so that a huge
// request body is not echoed back in full.
func quote(s string) string {
	const keep = 40
	if len(s) > keep {
		s = s[:keep] + "…"
	}
	return strconv.Quote(s)
}
