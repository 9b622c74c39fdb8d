package money

import (
	"errors"
	"math"
	"testing"

	"github.com/shopspring/decimal"
)

func cur(t testing.TB, code string) Currency {
	t.Helper()
	c, ok := LookupCurrency(code)
	if !ok {
		t.Fatalf("currency %s missing", code)
	}
	return c
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestRoundToMinor(t *testing.T) {
	tests := []struct {
		in      string
		code    string
		want    int64
		wantErr bool
	}{
		{"199.5", "NOK", 19950, false},
		{"199.995", "NOK", 20000, false}, // half rounds up
		{"199.994999", "NOK", 19999, false},
		{"-199.995", "NOK", -20000, false}, // half rounds away from zero
		{"-0.005", "DKK", -1, false},
		{"-0.0049", "DKK", 0, false},
		{"0.005", "EUR", 1, false},
		{"0.5", "ISK", 1, false},
		{"-0.5", "ISK", -1, false},
		{"1.4999", "JPY", 1, false},
		{"1.0005", "KWD", 1001, false},
		{"-1.0005", "KWD", -1001, false},
		{"1.00049", "KWD", 1000, false},
		{"0.00005", "CLF", 1, false},
		{"92233720368547758.07", "NOK", math.MaxInt64, false},
		{"-92233720368547758.08", "NOK", math.MinInt64, false},
		{"92233720368547758.08", "NOK", 0, true},
		{"92233720368547758.075", "NOK", 0, true}, // rounds up past MaxInt64
		{"-92233720368547758.085", "NOK", 0, true},
		{"1e30", "SEK", 0, true},
	}
	for _, tt := range tests {
		got, err := RoundToMinor(dec(tt.in), cur(t, tt.code))
		if tt.wantErr {
			if !errors.Is(err, ErrInvalidAmount) {
				t.Errorf("RoundToMinor(%s, %s) = %d, %v; want ErrInvalidAmount", tt.in, tt.code, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("RoundToMinor(%s, %s) = %d, %v; want %d", tt.in, tt.code, got, err, tt.want)
		}
	}
}

func TestApplyDiscount(t *testing.T) {
	tests := []struct {
		minor   int64
		percent string
		want    int64
		wantErr bool
	}{
		{19900, "15", 16915, false},
		{9999, "12.5", 8749, false}, // 8749.125
		{-9999, "12.5", -8749, false},
		{19900, "0", 19900, false},
		{19900, "100", 0, false},
		{1, "50", 1, false}, // 0.5 rounds away from zero
		{-1, "50", -1, false},
		{3, "50", 2, false}, // 1.5
		{-3, "50", -2, false},
		{1000, "33.333", 667, false}, // 666.67
		{0, "20", 0, false},
		{math.MaxInt64, "50", 4611686018427387904, false}, // .5 up, still in range
		{math.MinInt64, "50", -4611686018427387904, false},
		{100, "-1", 0, true},
		{100, "100.01", 0, true},
	}
	for _, tt := range tests {
		got, err := ApplyDiscount(tt.minor, dec(tt.percent))
		if tt.wantErr {
			if !errors.Is(err, ErrInvalidAmount) {
				t.Errorf("ApplyDiscount(%d, %s) = %d, %v; want error", tt.minor, tt.percent, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ApplyDiscount(%d, %s) = %d, %v; want %d", tt.minor, tt.percent, got, err, tt.want)
		}
	}
}

func TestProrate(t *testing.T) {
	tests := []struct {
		name     string
		minor    int64
		num, den int64
		want     int64
		wantErr  bool
	}{
		{"€90/30 days, 16 days left", 9000, 16, 30, 4800, false},
		{"€90/30 days, 14 days used", 9000, 14, 30, 4200, false},
		{"€84/28 days, 9 days used", 8400, 9, 28, 2700, false},
		{"€84/28 days, 19 days left", 8400, 19, 28, 5700, false},
		{"whole period", 8400, 28, 28, 8400, false},
		{"nothing", 8400, 0, 28, 0, false},
		{"third rounds down", 100, 1, 3, 33, false},
		{"two thirds rounds up", 200, 1, 3, 67, false},
		{"half rounds away from zero", 1, 1, 2, 1, false},
		{"negative half", -1, 1, 2, -1, false},
		{"negative symmetric", -9000, 16, 30, -4800, false},
		{"ISK 12 over 31 days", 1290, 17, 31, 707, false}, // 707.42
		{"product beyond int64", math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64 - 1, false},
		{"min int64", math.MinInt64, 1, 2, math.MinInt64 / 2, false},
		{"zero denominator", 100, 0, 0, 0, true},
		{"negative denominator", 100, -1, -2, 0, true},
		{"negative numerator", 100, -1, 2, 0, true},
		{"numerator above denominator", 100, 3, 2, 0, true},
	}
	for _, tt := range tests {
		got, err := Prorate(tt.minor, tt.num, tt.den)
		if tt.wantErr {
			if !errors.Is(err, ErrInvalidAmount) {
				t.Errorf("%s: Prorate(%d, %d, %d) = %d, %v; want error", tt.name, tt.minor, tt.num, tt.den, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: Prorate(%d, %d, %d) = %d, %v; want %d", tt.name, tt.minor, tt.num, tt.den, got, err, tt.want)
		}
	}
}

// TestProrationWorkedExamples pins the two examples product uses to explain
// credits for a plan change, end to end through formatting.
func TestProrationWorkedExamples(t *testing.T) {
	eur := cur(t, "EUR")
	paid, err := ParseMinor("90", eur)
	if err != nil {
		t.Fatal(err)
	}
	credit, err := Prorate(paid, 30-14, 30)
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatMinor(credit, eur); got != "48.00" {
		t.Errorf("€90 for 30 days, 14 used: allowance %s, want 48.00", got)
	}

	paid, err = ParseMinor("84", eur)
	if err != nil {
		t.Fatal(err)
	}
	used, err := Prorate(paid, 9, 28)
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatMinor(used, eur); got != "27.00" {
		t.Errorf("€84 for 28 days, 9 used: value of used days %s, want 27.00", got)
	}
	if got := FormatMinor(paid-used, eur); got != "57.00" {
		t.Errorf("€84 for 28 days, 9 used: remaining %s, want 57.00", got)
	}
}

func TestErrorIsInvalidAmount(t *testing.T) {
	_, err := Prorate(1, 2, 1)
	if !errors.Is(err, ErrInvalidAmount) {
		t.Fatalf("errors.Is(%v, ErrInvalidAmount) = false", err)
	}
	if err.Error() != "proration numerator 2 is outside 0..1" {
		t.Errorf("message = %q", err.Error())
	}
}

func TestInvalidCurrencyPanics(t *testing.T) {
	for _, c := range []Currency{{}, {Code: "BAD", Digits: 19}, {Code: "BAD", Digits: -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("FormatMinor with %+v did not panic", c)
				}
			}()
			FormatMinor(1, c)
		}()
	}
}
