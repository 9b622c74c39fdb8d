package billing

import (
	"fmt"
	"testing"
)

func TestCheckDigit(t *testing.T) {
	for _, tc := range []struct {
		body, alg string
		want      byte
		ok        bool
	}{
		{"7992739871", KIDMod10, '3', true}, // the classic Luhn example
		{"1234567890", KIDMod10, '3', true},
		{"0000000001", KIDMod10, '8', true},
		{"0", KIDMod10, '0', true},
		{"123456789", KIDMod11, '2', true},  // weights 2..7 from the right: sum 174, 174 % 11 = 9, 11 - 9 = 2
		{"12345678", KIDMod11, '5', true},   // sum 138, 138 % 11 = 6
		{"00000000040", KIDMod11, 0, false}, // 4 × 3 = 12, 12 % 11 = 1: check digit 10
		{"", KIDMod10, 0, false},
		{"12a4", KIDMod10, 0, false},
		{"1234", "MOD97", 0, false},
	} {
		got, ok := CheckDigit(tc.body, tc.alg)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("CheckDigit(%q, %s) = %q, %v; want %q, %v", tc.body, tc.alg, got, ok, tc.want, tc.ok)
		}
	}
}

// TestKID is the rule of issued references, per algorithm.
func TestKID(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		alg  string
		want string
	}{
		{1, KIDMod10, "00000000018"},
		{42, KIDMod10, "00000000422"},
		{1, "", "00000000018"},        // no choice: MOD10
		{1, KIDMod11, "000000000108"}, // 1×3 = 3, 11 − 3 = 8, variant 0
		{2, KIDMod11, "000000000205"},
		{16, KIDMod11, "000000001600"}, // sum 6×3 + 1×4 = 22 ≡ 0: check digit 0
		// Body …040 would need check digit 10: variant 1 (weight 2) gives
		// sum 14 ≡ 3, check digit 8.
		{4, KIDMod11, "000000000418"},
		{25, KIDMod11, "000000002518"},
		{98765432101, KIDMod10, "987654321015"}, // above ten digits: all digits kept
	} {
		if got := KID(tc.n, tc.alg); got != tc.want {
			t.Errorf("KID(%d, %q) = %s, want %s", tc.n, tc.alg, got, tc.want)
		}
	}
	if ValidKID("00000000019", KIDMod10) || ValidKID("1", KIDMod10) || ValidKID("000000000410", KIDMod11) {
		t.Fatal("a wrong KID validated")
	}
	if !ValidKID("123456785", KIDMod11) {
		t.Fatal("MOD11 KID did not validate")
	}
}

// TestKIDUniqueAndValid checks the properties the rule promises over many
// numbers: every KID validates under its algorithm, starts with the
// invoice number, has the algorithm's fixed length, and no two numbers (of
// either algorithm) share a KID.
func TestKIDUniqueAndValid(t *testing.T) {
	seen := map[string]string{}
	variants := 0
	for n := int64(1); n <= 20000; n++ {
		for alg, length := range map[string]int{KIDMod10: 11, KIDMod11: 12} {
			k := KID(n, alg)
			if !ValidKID(k, alg) || len(k) != length || k[:10] != fmt.Sprintf("%010d", n) {
				t.Fatalf("KID(%d, %s) = %s: invalid, wrong length or prefix", n, alg, k)
			}
			if alg == KIDMod11 && k[10] == '1' {
				variants++
			}
			key := fmt.Sprintf("%s %d", alg, n)
			if other, dup := seen[k]; dup {
				t.Fatalf("KID %s of %s repeats %s", k, key, other)
			}
			seen[k] = key
		}
	}
	// About one body in eleven needs the variant; the test must cover it.
	if variants < 1000 {
		t.Fatalf("only %d MOD11 KIDs used variant 1", variants)
	}
}

func TestParseKIDAlgorithm(t *testing.T) {
	for in, want := range map[string]string{"MOD10": KIDMod10, "mod11": KIDMod11, " Mod11 ": KIDMod11, "MOD97": "", "": ""} {
		got, ok := ParseKIDAlgorithm(in)
		if got != want || ok != (want != "") {
			t.Errorf("ParseKIDAlgorithm(%q) = %q, %v", in, got, ok)
		}
	}
}
