package money

import (
	"fmt"
	"math/big"

	"github.com/shopspring/decimal"
)

// VAT is computed and rounded per invoice line, not on the invoice total:
// each line's net and VAT are whole minor units, and the invoice totals are
// plain sums of those. This keeps every printed line internally consistent
// (net + VAT = gross on each line) at the cost of totals possibly differing
// by a few minor units from VAT computed on the summed net.

// VATFromNet returns the VAT on a net (VAT-exclusive) line amount at rate
// percent (25, 15, 12, 6, 0 …): net × rate / 100, rounded half away from
// zero.
//
// rate must be within 0..100. Rates come from the application's own tax
// table, not from users, so an out-of-range rate is a programming error and
// panics; within range |vat| ≤ |net|, so the result cannot overflow.
func VATFromNet(net int64, rate decimal.Decimal) (vat int64) {
	checkRate(rate)
	r := new(big.Rat).SetInt64(net)
	r.Mul(r, rate.Rat())
	r.Quo(r, big.NewRat(100, 1))
	vat, err := roundRat(r)
	if err != nil {
		panic("money: VAT out of range: " + err.Error()) // unreachable for rate ≤ 100
	}
	return vat
}

// SplitGross splits a VAT-inclusive line amount into net and VAT at rate
// percent: vat = gross × rate / (100 + rate), rounded half away from zero,
// and net = gross − vat. Deriving net by subtraction guarantees
// net + vat == gross, so a price advertised including VAT is exactly what
// the customer pays.
//
// rate must be within 0..100 and panics otherwise, as for VATFromNet.
func SplitGross(gross int64, rate decimal.Decimal) (net, vat int64) {
	checkRate(rate)
	r := new(big.Rat).SetInt64(gross)
	r.Mul(r, rate.Rat())
	r.Quo(r, hundred.Add(rate).Rat())
	vat, err := roundRat(r)
	if err != nil {
		panic("money: VAT out of range: " + err.Error()) // unreachable: |vat| ≤ |gross|/2
	}
	return gross - vat, vat
}

func checkRate(rate decimal.Decimal) {
	if rate.Sign() < 0 || rate.GreaterThan(hundred) {
		panic(fmt.Sprintf("money: VAT rate %s%% is outside 0..100", rate.String()))
	}
}
