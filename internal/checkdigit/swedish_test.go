package checkdigit

import (
	"errors"
	"testing"
)

func TestSwedishOrgNumber(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		check    bool // want ErrCheckDigit
		format   bool // want *FormatError
	}{
		{in: "2120000787", want: "2120000787"},
		{in: "212000 0787", want: "2120000787"},
		{in: "5560360793", want: "5560360793"},
		{in: "2120000788", check: true},
		{in: "212000078", format: true},
		{in: "1120000787", check: true},
		{in: "2100000787", format: true}, // third digit 0: a person, not a company
		{in: "21200007a7", format: true},
	} {
		got, err := SwedishOrgNumber(tc.in)
		var fe *FormatError
		switch {
		case tc.check:
			if !errors.Is(err, ErrCheckDigit) {
				t.Errorf("%s: err %v, want ErrCheckDigit", tc.in, err)
			}
		case tc.format:
			if !errors.As(err, &fe) {
				t.Errorf("%s: err %v, want a FormatError", tc.in, err)
			}
		default:
			if err != nil || got != tc.want {
				t.Errorf("%s: %q, %v; want %q", tc.in, got, err, tc.want)
			}
		}
	}
}
