package money

import (
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestParseMinor(t *testing.T) {
	tests := []struct {
		in   string
		code string
		want int64
	}{
		{"199", "NOK", 19900},
		{"199.5", "NOK", 19950},
		{"199.00", "NOK", 19900},
		{"-12.30", "NOK", -1230},
		{"1.500", "NOK", 150}, // trailing zeros beyond the minor unit are fine
		{"0.01", "SEK", 1},
		{"-0.05", "DKK", -5},
		{"-0", "EUR", 0},
		{"007.10", "EUR", 710},
		{"12", "ISK", 12},
		{"12.000", "ISK", 12},
		{"-3", "JPY", -3},
		{"1.234", "KWD", 1234},
		{"1.2", "KWD", 1200},
		{"0.0001", "CLF", 1},
		{"92233720368547758.07", "NOK", math.MaxInt64},
		{"-92233720368547758.08", "NOK", math.MinInt64},
		{"9223372036854775807", "ISK", math.MaxInt64},
		{"-9223372036854775808", "JPY", math.MinInt64},
		{"0000000000000000000000000000001.00", "NOK", 100},
	}
	for _, tt := range tests {
		got, err := ParseMinor(tt.in, cur(t, tt.code))
		if err != nil || got != tt.want {
			t.Errorf("ParseMinor(%q, %s) = %d, %v; want %d", tt.in, tt.code, got, err, tt.want)
		}
	}
}

func TestParseMinorErrors(t *testing.T) {
	tests := []struct {
		in   string
		code string
		msg  string
	}{
		{"1.505", "NOK", `amount "1.505" has more than 2 decimals for NOK`},
		{"199.001", "SEK", `amount "199.001" has more than 2 decimals for SEK`},
		{"12.5", "ISK", `amount "12.5" must be a whole number for ISK`},
		{"1.2345", "KWD", `amount "1.2345" has more than 3 decimals for KWD`},
		{"92233720368547758.08", "NOK", `amount "92233720368547758.08" is too large`},
		{"-92233720368547758.09", "NOK", `amount "-92233720368547758.09" is too large`},
		{"9223372036854775808", "ISK", `amount "9223372036854775808" is too large`},
		{"100000000000000000000", "EUR", `amount "100000000000000000000" is too large`},
		{"", "NOK", `amount is empty`},
		{"-", "NOK", `amount "-" is not a decimal number like 199 or -12.50`},
		{"abc", "NOK", `amount "abc" is not a decimal number like 199 or -12.50`},
		{"1e3", "NOK", `amount "1e3" is not a decimal number like 199 or -12.50`},
		{"1E3", "NOK", `amount "1E3" is not a decimal number like 199 or -12.50`},
		{"+5", "NOK", `amount "+5" is not a decimal number like 199 or -12.50`},
		{".5", "NOK", `amount ".5" is not a decimal number like 199 or -12.50`},
		{"5.", "NOK", `amount "5." is not a decimal number like 199 or -12.50`},
		{"1,50", "NOK", `amount "1,50" is not a decimal number like 199 or -12.50`},
		{"1 000", "NOK", `amount "1 000" is not a decimal number like 199 or -12.50`},
		{" 1", "NOK", `amount " 1" is not a decimal number like 199 or -12.50`},
		{"1.2.3", "NOK", `amount "1.2.3" is not a decimal number like 199 or -12.50`},
		{"--1", "NOK", `amount "--1" is not a decimal number like 199 or -12.50`},
		{"NaN", "NOK", `amount "NaN" is not a decimal number like 199 or -12.50`},
		{"١٢", "NOK", `amount "١٢" is not a decimal number like 199 or -12.50`}, // non-ASCII digits
		{strings.Repeat("9", 100), "NOK", `amount "` + strings.Repeat("9", 40) + `…" is too large`},
	}
	for _, tt := range tests {
		got, err := ParseMinor(tt.in, cur(t, tt.code))
		if err == nil {
			t.Errorf("ParseMinor(%q, %s) = %d, want error %q", tt.in, tt.code, got, tt.msg)
			continue
		}
		if !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("ParseMinor(%q) error %v does not match ErrInvalidAmount", tt.in, err)
		}
		if err.Error() != tt.msg {
			t.Errorf("ParseMinor(%q, %s) error = %q, want %q", tt.in, tt.code, err.Error(), tt.msg)
		}
	}
}

func TestFormatMinor(t *testing.T) {
	tests := []struct {
		minor int64
		code  string
		want  string
	}{
		{19900, "NOK", "199.00"},
		{19950, "SEK", "199.50"},
		{-5, "DKK", "-0.05"},
		{0, "EUR", "0.00"},
		{7, "EUR", "0.07"},
		{-100, "EUR", "-1.00"},
		{12, "ISK", "12"},
		{-12, "JPY", "-12"},
		{0, "ISK", "0"},
		{1234, "KWD", "1.234"},
		{5, "KWD", "0.005"},
		{-5, "KWD", "-0.005"},
		{1, "CLF", "0.0001"},
		{math.MaxInt64, "NOK", "92233720368547758.07"},
		{math.MinInt64, "NOK", "-92233720368547758.08"},
		{math.MinInt64, "ISK", "-9223372036854775808"},
	}
	for _, tt := range tests {
		if got := FormatMinor(tt.minor, cur(t, tt.code)); got != tt.want {
			t.Errorf("FormatMinor(%d, %s) = %q, want %q", tt.minor, tt.code, got, tt.want)
		}
	}
}

// fuzzCurrencies covers every minor-unit size in the table.
var fuzzCurrencies = []string{"NOK", "ISK", "KWD", "CLF"}

// grammar is ParseMinor's documented syntax, written independently of it.
var grammar = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// FuzzParseMinor checks ParseMinor against an independent reference: for
// strings in the documented syntax it must succeed exactly when the value is
// a whole number of minor units within int64, and agree with shopspring's
// decimal parsing; anything it accepts must survive a FormatMinor round trip.
func FuzzParseMinor(f *testing.F) {
	for _, s := range []string{
		"199", "199.5", "199.00", "-12.30", "1.500", "1.505", "-0", "0.0001",
		"92233720368547758.07", "-92233720368547758.08", "92233720368547758.08",
		"9223372036854775807", "1e3", ".5", "5.", "+1", "", "-", "00.000",
	} {
		for i := range fuzzCurrencies {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, s string, ci uint8) {
		c := cur(t, fuzzCurrencies[int(ci)%len(fuzzCurrencies)])
		got, err := ParseMinor(s, c)

		if !grammar.MatchString(s) {
			if err == nil {
				t.Fatalf("ParseMinor(%q, %s) = %d, want syntax error", s, c.Code, got)
			}
			return
		}
		ref := decimal.RequireFromString(s).Shift(int32(c.Digits))
		exact := ref.IsInteger() && ref.BigInt().IsInt64()
		if exact != (err == nil) {
			t.Fatalf("ParseMinor(%q, %s) = %d, %v; reference %s (exact: %v)", s, c.Code, got, err, ref, exact)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidAmount) {
				t.Fatalf("error %v does not match ErrInvalidAmount", err)
			}
			return
		}
		if ref.BigInt().Int64() != got {
			t.Fatalf("ParseMinor(%q, %s) = %d, reference %s", s, c.Code, got, ref)
		}
		formatted := FormatMinor(got, c)
		back, err := ParseMinor(formatted, c)
		if err != nil || back != got {
			t.Fatalf("round trip %q -> %d -> %q -> %d, %v", s, got, formatted, back, err)
		}
	})
}

// FuzzFormatMinor checks that every int64 formats to a string ParseMinor
// reads back unchanged, with exactly the currency's number of decimals.
func FuzzFormatMinor(f *testing.F) {
	for _, m := range []int64{0, 1, -1, 5, -5, 100, 19900, math.MaxInt64, math.MinInt64} {
		f.Add(m, uint8(0))
		f.Add(m, uint8(2))
	}
	f.Fuzz(func(t *testing.T, m int64, ci uint8) {
		c := cur(t, fuzzCurrencies[int(ci)%len(fuzzCurrencies)])
		s := FormatMinor(m, c)
		_, frac, _ := strings.Cut(s, ".")
		if len(frac) != c.Digits {
			t.Fatalf("FormatMinor(%d, %s) = %q, want %d decimals", m, c.Code, s, c.Digits)
		}
		back, err := ParseMinor(s, c)
		if err != nil || back != m {
			t.Fatalf("FormatMinor(%d, %s) = %q, parsed back as %d, %v", m, c.Code, s, back, err)
		}
	})
}
