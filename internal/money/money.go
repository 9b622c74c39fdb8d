// Package money does exact arithmetic on amounts held as int64 minor units
// (øre, cents, fils) of an ISO 4217 currency.
//
// Amounts are stored as integers so that sums over invoice lines are exact
// and the database column type is obvious. Intermediate results (discounts,
// proration, VAT) are computed exactly with rationals and rounded once, half
// away from zero, to the currency's minor unit. float64 is never used: it
// cannot represent 0.1 and its rounding errors would surface as one-øre
// differences between an invoice and its lines.
package money

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/shopspring/decimal"
)

// ErrInvalidAmount is matched (via errors.Is) by every error this package
// returns for bad input, so API handlers can map all of them to a 400 while
// still showing the specific message to the user.
var ErrInvalidAmount = errors.New("invalid amount")

// amountError carries a message written for API users; it matches
// ErrInvalidAmount without prefixing the message with it.
type amountError struct{ msg string }

func (e *amountError) Error() string        { return e.msg }
func (e *amountError) Is(target error) bool { return target == ErrInvalidAmount }

func errorf(format string, args ...any) error {
	return &amountError{msg: fmt.Sprintf(format, args...)}
}

var (
	bigMinInt64 = big.NewInt(-1 << 63)
	bigMaxInt64 = big.NewInt(1<<63 - 1)
	hundred     = decimal.NewFromInt(100)
)

// checkDigits panics on a Currency no conversion can honour: the zero
// Currency (a lookup that was skipped, which would otherwise silently treat
// 19900 øre as 19900 kroner) or out-of-range Digits. Currencies from
// LookupCurrency always pass; a failure is a programming error, not bad
// input.
func checkDigits(c Currency) {
	if c.Code == "" {
		panic("money: zero Currency; obtain one from LookupCurrency")
	}
	if c.Digits < 0 || c.Digits > maxDigits {
		panic(fmt.Sprintf("money: currency %q has invalid minor-unit digits %d", c.Code, c.Digits))
	}
}

// RoundToMinor converts a decimal amount in major units of c to minor units,
// rounding half away from zero (199.995 NOK is 20000, -0.005 NOK is -1). It
// fails if the result does not fit in int64.
func RoundToMinor(d decimal.Decimal, c Currency) (int64, error) {
	checkDigits(c)
	return roundRat(d.Shift(int32(c.Digits)).Rat())
}

// ApplyDiscount returns minor reduced by percent (0..100) of itself, rounded
// half away from zero: 9999 with 12.5% off is 8749.125, so 8749.
//
// The discounted amount, not the discount, is what gets rounded, so the
// price on the invoice line is the nearest minor unit to the exact price;
// the discount shown to the customer should be minor minus the result.
func ApplyDiscount(minor int64, percent decimal.Decimal) (int64, error) {
	if percent.Sign() < 0 || percent.GreaterThan(hundred) {
		return 0, errorf("discount %s%% is outside 0..100", percent.String())
	}
	// minor × (100 − percent) / 100, exactly; |result| ≤ |minor|, so it
	// always fits.
	r := new(big.Rat).SetInt64(minor)
	r.Mul(r, hundred.Sub(percent).Rat())
	r.Quo(r, big.NewRat(100, 1))
	return roundRat(r)
}

// Prorate returns minor × num / den rounded half away from zero, the share
// of a period's price for num of its den days (9000 × 16/30 = 4800).
//
// It requires den > 0 and 0 ≤ num ≤ den, so the result never exceeds minor
// in magnitude; the product is formed in big.Int and cannot overflow.
//
// Prorating the used and the unused part separately can round both up on a
// half (1 × 1/2 and 1 × 1/2 are both 1): compute one part with Prorate and
// derive the other by subtraction when the two must add up to minor.
func Prorate(minor int64, num, den int64) (int64, error) {
	if den <= 0 {
		return 0, errorf("proration denominator %d must be positive", den)
	}
	if num < 0 || num > den {
		return 0, errorf("proration numerator %d is outside 0..%d", num, den)
	}
	r := new(big.Rat).SetFrac(
		new(big.Int).Mul(big.NewInt(minor), big.NewInt(num)),
		big.NewInt(den),
	)
	return roundRat(r)
}

// roundRat rounds r to the nearest integer, halves away from zero, and
// checks that the result fits in int64. Every rounding in the package goes
// through here so that there is a single rounding rule.
func roundRat(r *big.Rat) (int64, error) {
	num, den := r.Num(), r.Denom() // den > 0
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	// QuoRem truncates toward zero; step away from zero when the
	// remainder is at least half of den.
	if m.Sign() != 0 {
		twice := new(big.Int).Abs(m)
		twice.Lsh(twice, 1)
		if twice.Cmp(den) >= 0 {
			if num.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	if q.Cmp(bigMinInt64) < 0 || q.Cmp(bigMaxInt64) > 0 {
		return 0, errorf("amount is too large")
	}
	return q.Int64(), nil
}
