package analytics

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/money"
)

// moneyScale is the number of decimal digits of every amount inside SQL:
// amounts in minor units are multiplied up to it per their currency (no
// ISO 4217 currency has more than 4 minor digits), so sums, comparisons
// and groupings across rows are exact integer arithmetic.
const moneyScale = 4

// dialect holds every difference between SQLite and PostgreSQL SQL that the
// translator needs; nothing else in the package branches on the engine.
type dialect struct {
	postgres bool
	// scaleCase multiplies a minor-unit amount to moneyScale by currency.
	scaleCase string
}

func newDialect(postgres bool) *dialect {
	d := &dialect{postgres: postgres}
	by := money.CodesByDigits()
	var digits []int
	for n := range by {
		digits = append(digits, n)
	}
	sort.Ints(digits)
	var b strings.Builder
	b.WriteString("CASE")
	for _, n := range digits {
		if n == 2 || n > moneyScale {
			continue // 2 is the ELSE branch; none has more than moneyScale
		}
		fmt.Fprintf(&b, " WHEN CURRENCY IN ('%s') THEN AMOUNT * %d", strings.Join(by[n], "','"), pow10(moneyScale-n))
	}
	fmt.Fprintf(&b, " ELSE AMOUNT * %d END", pow10(moneyScale-2))
	d.scaleCase = b.String()
	return d
}

func pow10(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}

// money brings minor units of the row's currency to moneyScale.
func (d *dialect) money(amount, currency string) string {
	return "(" + strings.NewReplacer("AMOUNT", amount, "CURRENCY", currency).Replace(d.scaleCase) + ")"
}

// jsonText reads a string member (path of keys) of a JSON text column.
func (d *dialect) jsonText(doc string, keys ...string) string {
	if d.postgres {
		return "(CAST(" + doc + " AS jsonb) #>> '{" + strings.Join(keys, ",") + "}')"
	}
	return "json_extract(" + doc + ", '$." + strings.Join(keys, ".") + "')"
}

// jsonScaled reads a decimal number in major units (catalog.Amount's JSON)
// at moneyScale, exactly: PostgreSQL reads it as numeric; SQLite as a
// double, which holds every amount below 10^11 with four decimals exactly
// enough for ROUND to recover it.
func (d *dialect) jsonScaled(doc string, keys ...string) string {
	if d.postgres {
		return fmt.Sprintf("CAST(ROUND(CAST(%s AS numeric) * %d) AS BIGINT)", d.jsonText(doc, keys...), pow10(moneyScale))
	}
	return fmt.Sprintf("CAST(ROUND(json_extract(%s, '$.%s') * %d) AS INTEGER)", doc, strings.Join(keys, "."), pow10(moneyScale))
}

// jsonInt reads an integer member.
func (d *dialect) jsonInt(doc, key string) string {
	if d.postgres {
		return "CAST(" + d.jsonText(doc, key) + " AS BIGINT)"
	}
	return "json_extract(" + doc + ", '$." + key + "')"
}

// decimalText reads a decimal stored as text (SQLite) or numeric (PostgreSQL) as text.
func (d *dialect) decimalText(c string) string {
	if d.postgres {
		return "CAST(" + c + " AS TEXT)"
	}
	return c
}

// invoiceLines unnests invoices.lines into one row per line.
func (d *dialect) invoiceLines() string {
	scaled := func(k string) string { return d.jsonScaled("l.value", k) }
	text := func(k string) string { return d.jsonText("l.value", k) }
	from := "invoices i, json_each(i.lines) l"
	lineNo := "CAST(l.key AS INTEGER) + 1"
	if d.postgres {
		from = "invoices i CROSS JOIN LATERAL jsonb_array_elements(CAST(i.lines AS jsonb)) WITH ORDINALITY AS l(value, n)"
		lineNo = "l.n"
	}
	return "(SELECT i.tenant_id, " + d.concat(d.guidText("i.id"), "'-'", "CAST("+lineNo+" AS TEXT)") + " AS id, i.id AS invoice_id, " +
		"CAST(" + lineNo + " AS BIGINT) AS line_number, " + text("kind") + " AS kind, " + d.guidFromText(text("productId")) + " AS product_id, " +
		text("description") + " AS description, " + d.jsonInt("l.value", "quantity") + " AS quantity, i.currency, " +
		text("vatRate") + " AS vat_rate, " + scaled("unitPrice") + " AS unit_price, " + scaled("discount") + " AS discount, " +
		scaled("net") + " AS net, " + scaled("vat") + " AS vat, " + scaled("gross") + " AS gross, i.issued_at, i.issue_date, i.subscriber_id" +
		" FROM " + from + ")"
}

func (d *dialect) concat(parts ...string) string { return "(" + strings.Join(parts, " || ") + ")" }

func (d *dialect) guidText(c string) string {
	if d.postgres {
		return "CAST(" + c + " AS TEXT)"
	}
	return c
}

func (d *dialect) guidFromText(c string) string {
	if d.postgres {
		return "CAST(" + c + " AS uuid)"
	}
	return c
}

// timeParam is a DateTimeOffset parameter as the engine compares it.
func (d *dialect) timeParam(ph string) string {
	if d.postgres {
		return "CAST(" + ph + " AS timestamptz)"
	}
	return ph
}

// param types a placeholder for its use in an expression.
func (d *dialect) param(ph string, t Edm) string {
	switch t {
	case Guid:
		if d.postgres {
			return "CAST(" + ph + " AS uuid)"
		}
		return ph
	case Time:
		return d.timeParam(ph)
	case Int, Money:
		return "CAST(" + ph + " AS BIGINT)"
	case Bool:
		if d.postgres {
			return "CAST(" + ph + " AS BOOLEAN)"
		}
		return ph
	}
	return "CAST(" + ph + " AS TEXT)"
}

// value converts a Go value to what the driver binds for type t.
func (d *dialect) value(v any, t Edm) any {
	switch x := v.(type) {
	case time.Time:
		if d.postgres {
			return x.UTC()
		}
		return x.UTC().Format("2006-01-02T15:04:05.000000Z")
	case bool:
		if d.postgres {
			return x
		}
		if x {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

// part extracts year, month or day of a Date or DateTimeOffset as an integer.
func (d *dialect) part(fn, x string, t Edm) string {
	if d.postgres && t == Time {
		// date_part (double) rather than EXTRACT (numeric since
		// PostgreSQL 14, slower per row); both are exact for these parts.
		return "CAST(date_part('" + fn + "', " + x + " AT TIME ZONE 'UTC') AS BIGINT)"
	}
	// 'YYYY-MM-DD...' text: Date on both engines, times on SQLite.
	start := map[string]string{"year": "1, 4", "month": "6, 2", "day": "9, 2"}[fn]
	return "CAST(substr(" + x + ", " + start + ") AS INTEGER)"
}

// date is the UTC date of a DateTimeOffset as 'YYYY-MM-DD' text.
func (d *dialect) date(x string) string {
	if d.postgres {
		return "to_char(" + x + " AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	return "substr(" + x + ", 1, 10)"
}

// output wraps a column for reading it back.
func (d *dialect) output(x string, t Edm) string {
	if d.postgres && t == Guid {
		return "CAST(" + x + " AS TEXT)"
	}
	if !d.postgres && t == Time {
		return "CAST(" + x + " AS TEXT)"
	}
	return x
}

// contains, startswith and endswith are case-sensitive on both engines
// (SQLite's LIKE is not), written without LIKE so no escaping is needed.
func (d *dialect) strfn(fn, x, arg string) string {
	switch fn {
	case "contains":
		if d.postgres {
			return "(strpos(" + x + ", " + arg + ") > 0)"
		}
		return "(instr(" + x + ", " + arg + ") > 0)"
	case "startswith":
		return "(substr(" + x + ", 1, length(" + arg + ")) = " + arg + ")"
	default: // endswith
		return "(length(" + x + ") >= length(" + arg + ") AND substr(" + x + ", length(" + x + ") - length(" + arg + ") + 1) = " + arg + ")"
	}
}
