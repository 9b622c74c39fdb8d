package catalog

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/money"
)

func TestAmountJSON(t *testing.T) {
	tests := []struct {
		a    Amount
		want string
	}{
		{Amount{19900, 2}, "199.00"},
		{Amount{19950, 2}, "199.50"},
		{Amount{5, 2}, "0.05"},
		{Amount{0, 2}, "0.00"},
		{Amount{-1230, 2}, "-12.30"},
		{Amount{1990, 0}, "1990"},
		{Amount{1005, 3}, "1.005"},
		{Amount{math.MaxInt64, 2}, "92233720368547758.07"},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.a)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.a, b, err, tt.want)
		}
		// The canonical formatting of the money package, exactly.
		c := money.Currency{Code: "TST", Digits: tt.a.Digits}
		if f := money.FormatMinor(tt.a.Minor, c); f != tt.want {
			t.Errorf("money.FormatMinor = %s, Amount prints %s", f, tt.want)
		}
		var back Amount
		if err := json.Unmarshal(b, &back); err != nil || back != tt.a {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", b, back, err, tt.a)
		}
	}
	for _, bad := range []string{`"199.00"`, `1e3`, `true`, `{}`, `92233720368547758.08`} {
		var a Amount
		if err := json.Unmarshal([]byte(bad), &a); err == nil {
			t.Errorf("Unmarshal(%s) accepted: %+v", bad, a)
		}
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in, code string
		want     int64
		ok       bool
	}{
		{"199", "NOK", 19900, true},
		{"199.5", "NOK", 19950, true},
		{"199.500", "NOK", 19950, true}, // trailing zeros are exact
		{"0", "SEK", 0, true},
		{"199.505", "NOK", 0, false}, // never rounded
		{"-1", "NOK", 0, false},
		{"1990", "ISK", 1990, true},
		{"1990.5", "ISK", 0, false},
		{"10000000000", "EUR", MaxAmountMinor, true},
		{"10000000000.01", "EUR", 0, false},
	}
	for _, tt := range tests {
		c, _ := money.LookupCurrency(tt.code)
		got, err := ParseAmount(decimal.RequireFromString(tt.in), c)
		if (err == nil) != tt.ok || (tt.ok && (got.Minor != tt.want || got.Digits != c.Digits)) {
			t.Errorf("ParseAmount(%s %s) = %+v, %v; want %d ok=%v", tt.in, tt.code, got, err, tt.want, tt.ok)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"25", "25", true},
		{"12.50", "12.5", true},
		{"0", "0", true},
		{"100", "100", true},
		{"33.3333", "33.3333", true},
		{"33.33333", "", false},
		{"-0.01", "", false},
		{"100.0001", "", false},
	} {
		p, err := ParsePercent(decimal.RequireFromString(tt.in))
		if (err == nil) != tt.ok {
			t.Errorf("ParsePercent(%s) error %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if !tt.ok {
			continue
		}
		b, _ := json.Marshal(p)
		if string(b) != tt.want || p.String() != tt.want {
			t.Errorf("percent %s marshals as %s", tt.in, b)
		}
		var back Percent
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(p) {
			t.Errorf("round trip of %s: %v, %v", b, back, err)
		}
		text, err := ParsePercentText(p.String())
		if err != nil || !text.Equal(p) {
			t.Errorf("text round trip of %s: %v, %v", p, text, err)
		}
	}
	var p Percent
	if err := json.Unmarshal([]byte(`"25"`), &p); err == nil {
		t.Error("a string was accepted as a percentage")
	}
}
