package apikit

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/shopspring/decimal"
)

// Number is a JSON number kept as its literal, so that money and
// percentages are parsed exactly, never through float64, once the currency
// is known. Anything but a number is a 400 naming the field.
type Number string

// maxNumberLen bounds a number literal; no price or percentage needs more.
const maxNumberLen = 40

func (n *Number) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s != "" && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
		*n = Number(s)
		return nil
	}
	kind := "string"
	switch {
	case s == "true" || s == "false":
		kind = "bool"
	case strings.HasPrefix(s, "{"):
		kind = "object"
	case strings.HasPrefix(s, "["):
		kind = "array"
	}
	return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[json.Number]()}
}

// MarshalJSON writes the literal back as a JSON number (an order shows its
// choices as they were sent).
func (n Number) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// JSONSchemaBytes documents Number as a JSON number.
func (Number) JSONSchemaBytes() ([]byte, error) { return []byte(`{"type":"number"}`), nil }

// Decimal returns the exact value. Exponents (1e3) are refused: prices are
// written out, and a huge exponent would make exact arithmetic expensive.
func (n Number) Decimal() (decimal.Decimal, error) {
	s := string(n)
	if len(s) > maxNumberLen || strings.ContainsAny(s, "eE") {
		return decimal.Decimal{}, errors.New("must be a plain decimal number such as 199.00")
	}
	return decimal.NewFromString(s)
}
