package bankaccount

import (
	"errors"
	"strings"
	"testing"
)

func TestParseKontonummer(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		check    bool // a check digit error rather than a shape error
	}{
		{"86011117947", "86011117947", false},
		{"8601.11.17947", "86011117947", false},
		{" 8601 11 17947 ", "86011117947", false},
		{"1503.38.95213", "15033895213", false},
		// Sum ≡ 0 (mod 11): the check digit is 0, not 11.
		{"0000.00.00000", "00000000000", false},
		{"86011117948", "", true}, // last digit changed
		{"86011117974", "", true}, // two digits swapped
		// 1000.00.0000x: sum 5, check 11 − 5 = 6; and a body whose check
		// would be 10 is no account at all.
		{"10000000006", "10000000006", false},
		{"10000000016", "", true},
		{"00000000100", "", true}, // sum 3 → 8, not 0
		{"0000000001", "", false},
		{"860111179470", "", false},
		{"8601-11-17947", "", false},
		{"8601.11.1794A", "", false},
		{"", "", false},
	} {
		got, err := ParseKontonummer(tc.in)
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("ParseKontonummer(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseKontonummer(%q) = %q, want an error", tc.in, got)
		} else if errors.Is(err, ErrCheckDigit) != tc.check {
			t.Errorf("ParseKontonummer(%q): %v; check digit error = %v, want %v", tc.in, err, !tc.check, tc.check)
		}
	}
}

// TestKontonummerCheckDigitFindsEverySingleDigitError: MOD11 with these
// weights catches every changed digit of a valid number.
func TestKontonummerCheckDigitFindsEverySingleDigitError(t *testing.T) {
	const valid = "86011117947"
	for i := range valid {
		for d := byte('0'); d <= '9'; d++ {
			if d == valid[i] {
				continue
			}
			typo := valid[:i] + string(d) + valid[i+1:]
			if _, err := ParseKontonummer(typo); !errors.Is(err, ErrCheckDigit) {
				t.Errorf("%s (digit %d changed) passed: %v", typo, i+1, err)
			}
		}
	}
}

func TestParseIBAN(t *testing.T) {
	for _, tc := range []struct {
		in, want, errHas string
	}{
		// The registry's example IBANs of the Nordic countries, Germany and
		// the United Kingdom, as printed and compact, in any case.
		{"NO93 8601 1117 947", "NO9386011117947", ""},
		{"SE45 5000 0000 0583 9825 7466", "SE4550000000058398257466", ""},
		{"DK50 0040 0440 1162 43", "DK5000400440116243", ""},
		{"FI21 1234 5600 0007 85", "FI2112345600000785", ""},
		{"DE89 3704 0044 0532 0130 00", "DE89370400440532013000", ""},
		{"gb82 west 1234 5698 7654 32", "GB82WEST12345698765432", ""},
		{"GB82WEST12345698765432", "GB82WEST12345698765432", ""},
		// Wrong check digits, a changed character, swapped characters.
		{"NO94 8601 1117 947", "", "check digits"},
		{"GB82 WEST 1234 5698 7654 33", "", "check digits"},
		{"DE89 3704 0044 0532 0130 00"[:5] + "7304 0044 0532 0130 00", "", "check digits"},
		// A Norwegian IBAN whose mod-97 digits were recomputed for an
		// account number with a wrong MOD11 digit.
		{"NO66 8601 1117 948", "", "account number"},
		// Per-country lengths.
		{"NO93 8601 1117 9470", "", "15 characters"},
		{"SE45 5000 0000 0583 9825 746", "", "24 characters"},
		{"DK50 0040 0440 1162 4", "", "18 characters"},
		{"FI21 1234 5600 0007 8", "", "18 characters"},
		{"DE89 3704 0044 0532 0130 0", "", "22 characters"},
		{"GB82 WEST 1234 5698 7654 3", "", "22 characters"},
		// Shapes.
		{"", "", "country code"},
		{"NO", "", "country code"},
		{"XX93 8601 1117 947", "", "ISO 3166-1"},
		{"US12 3456 7890 1234", "", "not supported"},
		{"NOAB 8601 1117 947", "", "check digits"},
		{"GB82 WEST 1234 5698 7654 3!", "", "letters and digits"},
	} {
		got, err := ParseIBAN(tc.in)
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("ParseIBAN(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("ParseIBAN(%q) = %q, %v; want an error about %q", tc.in, got, err, tc.errHas)
		}
	}
}

// TestIBANLengths pins the registry lengths of the countries the invoices
// of Kadens' first organizations use.
func TestIBANLengths(t *testing.T) {
	for cc, n := range map[string]int{"NO": 15, "SE": 24, "DK": 18, "FI": 18, "DE": 22, "GB": 22, "IS": 26, "FR": 27, "NL": 18, "MT": 31, "BE": 16} {
		if got := ibanLengths[cc]; got != n {
			t.Errorf("IBAN length of %s = %d, want %d", cc, got, n)
		}
	}
	if _, ok := ibanLengths["US"]; ok {
		t.Error("US has no IBAN")
	}
}

func TestParseBIC(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"DNBANOKK", "DNBANOKK"},
		{"dnbanokkxxx", "DNBANOKKXXX"},
		{"NDEA FI HH", "NDEAFIHH"},
		{"DEUTDEFF500", "DEUTDEFF500"},
		{"HANDSESS", "HANDSESS"},
		{"BARCGB22", "BARCGB22"},
		{"DNBANOK", ""},      // 7
		{"DNBANOKKXX", ""},   // 10
		{"DNBANOKKXXXX", ""}, // 12
		{"DNB1NOKK", ""},     // digit in the bank code
		{"DNBAN0KK", ""},     // digit in the country
		{"DNBAXXKK", ""},     // no such country
		{"DNBANOK-", ""},     // not alphanumeric
		{"DNBANOKKXX!", ""},  // not alphanumeric
		{"", ""},
	} {
		got, err := ParseBIC(tc.in)
		if tc.want == "" && err == nil {
			t.Errorf("ParseBIC(%q) = %q, want an error", tc.in, got)
		}
		if tc.want != "" && (err != nil || got != tc.want) {
			t.Errorf("ParseBIC(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{FormatKontonummer("86011117947"), "8601.11.17947"},
		{FormatKontonummer("8601"), "8601"},
		{FormatIBAN("NO9386011117947"), "NO93 8601 1117 947"},
		{FormatIBAN("GB82WEST12345698765432"), "GB82 WEST 1234 5698 7654 32"},
		{FormatIBAN("DE89370400440532013000"), "DE89 3704 0044 0532 0130 00"},
		{IBANAccount("NO9386011117947", "NO"), "86011117947"},
		{IBANAccount("SE4550000000058398257466", "NO"), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// Parsers take what people type: they must never panic, and what they
// accept must be canonical (parsing it again gives it back unchanged) and
// print in a form they accept.
func FuzzParseIBAN(f *testing.F) {
	for _, s := range []string{"NO93 8601 1117 947", "GB82WEST12345698765432", "", "NO", "XX00", "de89 3704 0044 0532 0130 00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseIBAN(s)
		if err != nil {
			return
		}
		if again, err := ParseIBAN(FormatIBAN(v)); err != nil || again != v {
			t.Fatalf("%q → %q, whose printed form parses as %q, %v", s, v, again, err)
		}
		if len(v) != ibanLengths[v[:2]] || mod97(v[4:]+v[:4]) != 1 {
			t.Fatalf("accepted %q", v)
		}
	})
}

func FuzzParseKontonummer(f *testing.F) {
	for _, s := range []string{"8601.11.17947", "86011117947", "", "0000.00.00000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseKontonummer(s)
		if err != nil {
			return
		}
		if again, err := ParseKontonummer(FormatKontonummer(v)); err != nil || again != v {
			t.Fatalf("%q → %q, whose printed form parses as %q, %v", s, v, again, err)
		}
	})
}

func FuzzParseBIC(f *testing.F) {
	for _, s := range []string{"DNBANOKK", "dnbanokkxxx", "", "DNBAXXKK"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseBIC(s)
		if err != nil {
			return
		}
		if again, err := ParseBIC(v); err != nil || again != v {
			t.Fatalf("%q → %q, which parses as %q, %v", s, v, again, err)
		}
	})
}
