package money

import (
	"math"
	"math/big"
	"testing"

	"github.com/shopspring/decimal"
)

// nordicRates are the VAT rates in use in Norway, Sweden and Denmark.
var nordicRates = []string{"25", "15", "12", "6", "0"}

func TestVATFromNet(t *testing.T) {
	tests := []struct {
		net  int64
		rate string
		want int64
	}{
		{10000, "25", 2500},
		{19900, "25", 4975},
		{199, "25", 50}, // 49.75
		{2, "25", 1},    // 0.5 rounds away from zero
		{-2, "25", -1},
		{50, "15", 8}, // 7.5
		{-50, "15", -8},
		{1, "12", 0},       // 0.12
		{9999, "12", 1200}, // 1199.88
		{9999, "6", 600},   // 599.94
		{9999, "0", 0},
		{10000, "25.0", 2500},
		{1000, "12.5", 125},
		{math.MaxInt64, "100", math.MaxInt64},
		{math.MinInt64, "25", math.MinInt64 / 4},
	}
	for _, tt := range tests {
		if got := VATFromNet(tt.net, dec(tt.rate)); got != tt.want {
			t.Errorf("VATFromNet(%d, %s) = %d, want %d", tt.net, tt.rate, got, tt.want)
		}
	}
}

func TestSplitGross(t *testing.T) {
	tests := []struct {
		gross          int64
		rate           string
		wantNet, wantV int64
	}{
		{12500, "25", 10000, 2500},
		{9900, "25", 7920, 1980},
		{19900, "25", 15920, 3980},
		{100, "25", 80, 20},
		{3, "25", 2, 1}, // 0.6
		{1, "25", 1, 0}, // 0.2
		{11500, "15", 10000, 1500},
		{11200, "12", 10000, 1200},
		{14, "12", 12, 2}, // 1.5 rounds away from zero
		{-14, "12", -12, -2},
		{10600, "6", 10000, 600},
		{9999, "0", 9999, 0},
		{0, "25", 0, 0},
		{-12500, "25", -10000, -2500},
		{math.MaxInt64, "25", 7378697629483820646, 1844674407370955161},
		{math.MinInt64, "100", math.MinInt64 / 2, math.MinInt64 / 2},
	}
	for _, tt := range tests {
		net, vat := SplitGross(tt.gross, dec(tt.rate))
		if net != tt.wantNet || vat != tt.wantV {
			t.Errorf("SplitGross(%d, %s) = %d, %d; want %d, %d", tt.gross, tt.rate, net, vat, tt.wantNet, tt.wantV)
		}
	}
}

// checkSplit asserts the properties SplitGross promises: the parts add up
// to gross, the VAT is the nearest minor unit to the exact VAT (halves away
// from zero), and recomputing VAT from the net differs by at most one unit.
func checkSplit(t *testing.T, gross int64, rate decimal.Decimal) {
	t.Helper()
	net, vat := SplitGross(gross, rate)
	if net+vat != gross {
		t.Fatalf("SplitGross(%d, %s) = %d + %d != gross", gross, rate, net, vat)
	}
	// err = gross×rate − vat×(100+rate) is (100+rate) × (exact − vat); it
	// must be under half a unit, or exactly half with vat further from zero.
	r := rate.Rat()
	div := new(big.Rat).Add(big.NewRat(100, 1), r)
	exact := new(big.Rat).Mul(new(big.Rat).SetInt64(gross), r)
	diff := new(big.Rat).Sub(exact, new(big.Rat).Mul(new(big.Rat).SetInt64(vat), div))
	twice := new(big.Rat).Mul(new(big.Rat).Abs(diff), big.NewRat(2, 1))
	switch c := twice.Cmp(div); {
	case c > 0:
		t.Fatalf("SplitGross(%d, %s): vat %d is not the nearest unit", gross, rate, vat)
	case c == 0 && diff.Sign() == vatSign(gross):
		t.Fatalf("SplitGross(%d, %s): half rounded toward zero to %d", gross, rate, vat)
	}
	if d := VATFromNet(net, rate) - vat; d < -1 || d > 1 {
		t.Fatalf("SplitGross(%d, %s) = %d, %d but VATFromNet(net) = %d", gross, rate, net, vat, vat+d)
	}
}

func vatSign(gross int64) int {
	switch {
	case gross > 0:
		return 1
	case gross < 0:
		return -1
	}
	return 0
}

func TestSplitGrossProperties(t *testing.T) {
	rates := append([]string{"12.5", "0.01", "99.99", "100"}, nordicRates...)
	for _, rs := range rates {
		rate := dec(rs)
		for gross := int64(-5000); gross <= 5000; gross++ {
			checkSplit(t, gross, rate)
		}
		for _, gross := range []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1 << 53, -(1 << 53) - 1} {
			checkSplit(t, gross, rate)
		}
	}
}

func FuzzSplitGross(f *testing.F) {
	for _, g := range []int64{0, 1, -1, 14, -14, 12500, 19900, math.MaxInt64, math.MinInt64} {
		for _, r := range []uint16{2500, 1500, 1200, 600, 0, 1250, 10000} {
			f.Add(g, r)
		}
	}
	f.Fuzz(func(t *testing.T, gross int64, hundredths uint16) {
		// Rates from 0.00 to 100.00 in steps of 0.01.
		rate := decimal.New(int64(hundredths%10001), -2)
		checkSplit(t, gross, rate)
	})
}

func TestRateOutOfRangePanics(t *testing.T) {
	for _, rate := range []string{"-1", "100.5"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SplitGross with rate %s did not panic", rate)
				}
			}()
			SplitGross(100, dec(rate))
		}()
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("VATFromNet with rate %s did not panic", rate)
				}
			}()
			VATFromNet(100, dec(rate))
		}()
	}
}
