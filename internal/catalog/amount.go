package catalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/money"
)

// MaxAmountMinor bounds every price a merchant can set, in minor units
// (10 000 000 000.00 in a two-decimal currency). It is far above any real
// subscription price and keeps price × units plus every additional product
// well inside int64, so the merge never overflows.
const MaxAmountMinor int64 = 1_000_000_000_000

// Amount is an amount of money in minor units together with the number of
// decimals of its currency's minor unit. It marshals to JSON as an exact
// number with exactly that many decimals: Amount{19900, 2} is 199.00, and
// Amount{500, 0} (ISK) is 500. float64 is never involved.
//
// Build amounts with NewAmount or ParseAmount. UnmarshalJSON exists so that
// values this service wrote can be read back (it takes the number of
// decimals from the literal); client input goes through ParseAmount, which
// checks the literal against the currency.
type Amount struct {
	Minor  int64
	Digits int
}

// NewAmount returns minor units of c as an Amount.
func NewAmount(minor int64, c money.Currency) Amount {
	return Amount{Minor: minor, Digits: c.Digits}
}

// Decimal returns the amount in major units, exactly.
func (a Amount) Decimal() decimal.Decimal { return decimal.New(a.Minor, -int32(a.Digits)) }

// String renders the amount with exactly its currency's decimals ("199.00").
func (a Amount) String() string {
	return a.Decimal().StringFixed(int32(a.Digits))
}

// MarshalJSON writes the amount as a JSON number such as 199.00.
func (a Amount) MarshalJSON() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalJSON reads a JSON number written by MarshalJSON: "199.00"
// becomes Amount{19900, 2}.
func (a *Amount) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if strings.ContainsAny(s, "eE") || s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return fmt.Errorf("catalog: amount %s is not a plain decimal number", s)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return fmt.Errorf("catalog: amount %s: %w", s, err)
	}
	digits := 0
	if _, frac, ok := strings.Cut(s, "."); ok {
		digits = len(frac)
	}
	m := d.Shift(int32(digits)).BigInt()
	if !m.IsInt64() {
		return fmt.Errorf("catalog: amount %s is too large", s)
	}
	*a = Amount{Minor: m.Int64(), Digits: digits}
	return nil
}

// JSONSchemaBytes describes Amount in the OpenAPI document: a JSON number,
// not the Go struct it is held in.
func (Amount) JSONSchemaBytes() ([]byte, error) {
	return []byte(`{"type":"number","description":"Money in the package currency, with up to the currency's minor-unit decimals.","examples":[199.00]}`), nil
}

// ParseAmount converts a price a client sent, in major units of c, to an
// Amount. It accepts 0 ≤ d ≤ MaxAmountMinor minor units with no more
// decimals than c has ("199.5" and "199.50" NOK are fine, "199.505" is
// not, and nothing is rounded).
func ParseAmount(d decimal.Decimal, c money.Currency) (Amount, error) {
	if d.Sign() < 0 {
		return Amount{}, errors.New("must not be negative")
	}
	shifted := d.Shift(int32(c.Digits))
	if !shifted.IsInteger() {
		if c.Digits == 0 {
			return Amount{}, fmt.Errorf("must be a whole number for %s", c.Code)
		}
		return Amount{}, fmt.Errorf("must have at most %d decimals for %s", c.Digits, c.Code)
	}
	if shifted.GreaterThan(decimal.NewFromInt(MaxAmountMinor)) {
		return Amount{}, fmt.Errorf("must be at most %s", NewAmount(MaxAmountMinor, c))
	}
	return NewAmount(shifted.IntPart(), c), nil
}

// Percent is a percentage such as a VAT rate (25) or a discount (12.5),
// held as an exact decimal. It marshals to JSON as a number (25, 12.5) and
// is stored as its decimal text.
type Percent struct{ d decimal.Decimal }

// NewPercent returns d as a Percent without checking its range; use
// ParsePercent for input.
func NewPercent(d decimal.Decimal) Percent { return Percent{d: d} }

// PercentOf is NewPercent for a whole percentage, for code and tests.
func PercentOf(n int64) Percent { return Percent{d: decimal.NewFromInt(n)} }

// percentDecimals is the precision a percentage may have: 12.5 and 33.3333
// are fine, 33.33333 is not.
const percentDecimals = 4

var hundred = decimal.NewFromInt(100)

// ParsePercent checks that d is a percentage from 0 to 100 with at most
// four decimals and returns it.
func ParsePercent(d decimal.Decimal) (Percent, error) {
	if d.Sign() < 0 || d.GreaterThan(hundred) {
		return Percent{}, errors.New("must be from 0 to 100")
	}
	if !d.Equal(d.Round(percentDecimals)) {
		return Percent{}, fmt.Errorf("must have at most %d decimals", percentDecimals)
	}
	return Percent{d: d}, nil
}

// ParsePercentText reads a percentage stored as text by String.
func ParsePercentText(s string) (Percent, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Percent{}, fmt.Errorf("catalog: percentage %q: %w", s, err)
	}
	return Percent{d: d}, nil
}

// Decimal returns the percentage as a decimal (25 for 25 %).
func (p Percent) Decimal() decimal.Decimal { return p.d }

// IsZero reports whether the percentage is 0.
func (p Percent) IsZero() bool { return p.d.IsZero() }

// Equal reports whether p and q are the same percentage (12.5 equals 12.50).
func (p Percent) Equal(q Percent) bool { return p.d.Equal(q.d) }

// String renders the percentage in its shortest exact form ("25", "12.5").
func (p Percent) String() string { return p.d.String() }

// MarshalJSON writes the percentage as a JSON number.
func (p Percent) MarshalJSON() ([]byte, error) { return []byte(p.d.String()), nil }

// UnmarshalJSON reads a JSON number.
func (p *Percent) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return fmt.Errorf("catalog: percentage %s is not a number", s)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return fmt.Errorf("catalog: percentage %s: %w", s, err)
	}
	p.d = d
	return nil
}

// JSONSchemaBytes describes Percent in the OpenAPI document.
func (Percent) JSONSchemaBytes() ([]byte, error) {
	return []byte(`{"type":"number","minimum":0,"maximum":100,"description":"A percentage from 0 to 100 with at most four decimals.","examples":[25]}`), nil
}
