package checkdigit

import (
	"errors"
	"strings"
	"testing"
)

type checkCase struct {
	in, want string
	// err: "" valid, "format" a *FormatError, "check" ErrCheckDigit.
	err string
}

func run(t *testing.T, fn func(string) (string, error), cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		got, err := fn(c.in)
		var fe *FormatError
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, c.want)
		case c.err == "format" && !errors.As(err, &fe):
			t.Errorf("%q: got %q, %v; want a format error", c.in, got, err)
		case c.err == "check" && !errors.Is(err, ErrCheckDigit):
			t.Errorf("%q: got %q, %v; want ErrCheckDigit", c.in, got, err)
		}
	}
}

func TestNorwegianOrgNumber(t *testing.T) {
	run(t, NorwegianOrgNumber, []checkCase{
		{in: "923609016", want: "923609016"},   // Equinor ASA
		{in: "984851006", want: "984851006"},   // DNB Bank ASA
		{in: "974760673", want: "974760673"},   // Brønnøysundregistrene
		{in: "923 609 016", want: "923609016"}, // as printed
		{in: " 923609016 ", want: "923609016"},
		{in: "910010220", want: "910010220"}, // remainder 0 → check digit 0
		{in: "923609017", err: "check"},
		{in: "984851007", err: "check"},
		{in: "910000420", err: "check"}, // sum mod 11 = 1: the check digit would be 10, no valid number
		{in: "910000421", err: "check"},
		{in: "910000429", err: "check"},
		{in: "92360901", err: "format"},
		{in: "9236090160", err: "format"},
		{in: "NO923609016MVA", err: "format"},
		{in: "923-609-016", err: "format"},
		{in: "", err: "format"},
		{in: "９２３６０９０１６", err: "format"}, // full-width digits are not digits here
	})
}

func TestCVR(t *testing.T) {
	run(t, CVR, []checkCase{
		{in: "24256790", want: "24256790"}, // Novo Nordisk A/S
		{in: "61056416", want: "61056416"}, // Carlsberg A/S
		{in: "22756214", want: "22756214"}, // A.P. Møller - Mærsk A/S
		{in: "2425 6790", want: "24256790"},
		{in: "24256791", err: "check"},
		{in: "61056415", err: "check"},
		{in: "01234567", err: "format"},
		{in: "2425679", err: "format"},
		{in: "242567900", err: "format"},
		{in: "DK24256790", err: "format"},
		{in: "", err: "format"},
	})
}

func TestGLN(t *testing.T) {
	run(t, GLN, []checkCase{
		{in: "5790000000012", want: "5790000000012"},
		{in: "5798000416604", want: "5798000416604"},
		{in: "7300009000012", want: "7300009000012"},
		{in: "4000001000005", want: "4000001000005"},
		{in: "579 0000 000012", want: "5790000000012"},
		{in: "5790000000013", err: "check"},
		{in: "5798000416605", err: "check"},
		{in: "579000000001", err: "format"},
		{in: "57900000000123", err: "format"},
		{in: "579000000001X", err: "format"},
	})
}

func TestGS1CheckDigit(t *testing.T) {
	// GTIN-13 and GTIN-8 examples from the GS1 check digit calculator.
	for body, want := range map[string]byte{"629104150021": '3', "400638133393": '1', "9638507": '4', "": '0'} {
		if got := GS1CheckDigit(body); got != want {
			t.Errorf("GS1CheckDigit(%q) = %c, want %c", body, got, want)
		}
	}
}

// fuzzValid checks the properties every validator must have: it never
// panics, and what it accepts is all digits of the right length and is
// accepted again unchanged.
func fuzzValid(f *testing.F, fn func(string) (string, error), n int, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := fn(s)
		if err != nil {
			if got != "" {
				t.Fatalf("%q: error %v with output %q", s, err, got)
			}
			return
		}
		if len(got) != n || strings.Trim(got, "0123456789") != "" {
			t.Fatalf("%q: accepted as %q", s, got)
		}
		if again, err := fn(got); err != nil || again != got {
			t.Fatalf("%q: canonical %q not accepted again: %q, %v", s, got, again, err)
		}
	})
}

func FuzzNorwegianOrgNumber(f *testing.F) {
	fuzzValid(f, NorwegianOrgNumber, 9, "923609016", "923 609 016", "910000420", "", "abc", "9236090160")
}

func FuzzCVR(f *testing.F) {
	fuzzValid(f, CVR, 8, "24256790", "0", "2425 6790", "99999999")
}

func FuzzGLN(f *testing.F) {
	fuzzValid(f, GLN, 13, "5790000000012", "579000000001", "5790000000012 ", "x")
}
