package billing

import "testing"

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
		{"123456789", KIDMod11, '2', true}, // weights 2..7 from the right: sum 174, 174 % 11 = 9, 11 - 9 = 2
		{"12345678", KIDMod11, '5', true},  // sum 138, 138 % 11 = 6
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

func TestKID(t *testing.T) {
	k := KID(1)
	if k != "00000000018" || len(k) != 11 {
		t.Fatalf("KID(1) = %s", k)
	}
	for _, n := range []int64{1, 42, 999, 1234567890, 98765432101} {
		if !ValidKID(KID(n), KIDMod10) {
			t.Errorf("KID(%d) = %s does not validate", n, KID(n))
		}
	}
	if ValidKID("00000000019", KIDMod10) || ValidKID("1", KIDMod10) {
		t.Fatal("a wrong KID validated")
	}
	if !ValidKID("123456785", KIDMod11) {
		t.Fatal("MOD11 KID did not validate")
	}
}
