package money

import "testing"

func TestLookupCurrency(t *testing.T) {
	tests := []struct {
		code   string
		digits int
		ok     bool
	}{
		{"NOK", 2, true},
		{"SEK", 2, true},
		{"DKK", 2, true},
		{"EUR", 2, true},
		{"USD", 2, true},
		{"GBP", 2, true},
		{"ISK", 0, true},
		{"JPY", 0, true},
		{"KRW", 0, true},
		{"XOF", 0, true},
		{"KWD", 3, true},
		{"BHD", 3, true},
		{"OMR", 3, true},
		{"JOD", 3, true},
		{"TND", 3, true},
		{"LYD", 3, true},
		{"IQD", 3, true},
		{"CLF", 4, true},
		{"UYW", 4, true},
		{"XCG", 2, true},
		{"ZWG", 2, true},
		// Exact upper-case only: callers normalise.
		{"nok", 0, false},
		{"Nok", 0, false},
		{" NOK", 0, false},
		{"", 0, false},
		// Withdrawn codes.
		{"HRK", 0, false},
		{"ANG", 0, false},
		{"BGN", 0, false},
		{"ZWL", 0, false},
		// ISO codes without a minor unit cannot be invoiced.
		{"XAU", 0, false},
		{"XDR", 0, false},
		{"XTS", 0, false},
		{"XXX", 0, false},
	}
	for _, tt := range tests {
		c, ok := LookupCurrency(tt.code)
		if ok != tt.ok {
			t.Errorf("LookupCurrency(%q) ok = %v, want %v", tt.code, ok, tt.ok)
			continue
		}
		if !ok {
			if c != (Currency{}) {
				t.Errorf("LookupCurrency(%q) = %+v, want zero Currency", tt.code, c)
			}
			continue
		}
		if c.Code != tt.code || c.Digits != tt.digits {
			t.Errorf("LookupCurrency(%q) = %+v, want digits %d", tt.code, c, tt.digits)
		}
	}
}

func TestCurrencyTableShape(t *testing.T) {
	// The 165 codes of ISO 4217 list one (2025) that have a numeric minor
	// unit, less BGN (withdrawn when Bulgaria adopted the euro in 2026).
	const want = 164
	if len(minorUnits) != want {
		t.Errorf("table has %d currencies, want %d; update the count with the table", len(minorUnits), want)
	}
	for code, d := range minorUnits {
		if len(code) != 3 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' || code[2] < 'A' || code[2] > 'Z' {
			t.Errorf("malformed code %q", code)
		}
		switch d {
		case 0, 2, 3, 4:
		default:
			t.Errorf("%s has %d digits; ISO 4217 uses only 0, 2, 3 or 4", code, d)
		}
	}
}
