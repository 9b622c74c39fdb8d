package analytics

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/odata"
)

// badRequest is a query the model refuses: answered 400 with the OData
// error body, target naming the option.
type badRequest struct{ target, msg string }

func (e *badRequest) Error() string { return e.target + ": " + e.msg }

func bad(format string, a ...any) error { return &badRequest{msg: fmt.Sprintf(format, a...)} }

// builder collects one statement's parameters. Every statement's source is
// reached through from, which adds the tenant condition; no other code
// names a table.
type builder struct {
	d      *dialect
	m      *Model
	tenant string
	at     time.Time
	args   []any
	tenPH  string
	nowPH  string
	alias  int
}

func (b *builder) arg(v any, t Edm) string {
	b.args = append(b.args, b.d.value(v, t))
	return b.d.param("$"+strconv.Itoa(len(b.args)), t)
}

// now is the request's time, one parameter per statement.
func (b *builder) now() string {
	if b.nowPH == "" {
		b.nowPH = b.arg(b.at, Time)
	}
	return b.nowPH
}

func (b *builder) tenantPH() string {
	if b.tenPH == "" {
		b.tenPH = b.arg(b.tenant, Guid)
	}
	return b.tenPH
}

// from returns the FROM item of set s under alias a and the condition
// that keeps it to the authenticated tenant: callers put both into the
// statement, always together.
func (b *builder) from(s *Set, a string) (item, cond string) {
	return s.source(b.d) + " " + a, a + ".tenant_id = " + b.tenantPH()
}

func (b *builder) newAlias() string { b.alias++; return "n" + strconv.Itoa(b.alias) }

// scope is what names in an expression refer to: a set under an alias,
// and the aliases of $apply's compute.
type scope struct {
	set      *Set
	alias    string
	computed map[string]typed
}

// typed is a translated expression: SQL text and its type, or a literal
// not yet bound (it takes the type of what it is compared with).
type typed struct {
	sql      string
	t        Edm
	nullable bool
	enum     []string
	lit      *odata.Literal
	// is is the property's index-friendly equality (Prop.is), nil when it
	// has none or is reached through a navigation path.
	is func(value string) string
	// minor and currency are a Money amount's columns (Prop.minor), empty
	// for anything else.
	minor, currency string
}

func (b *builder) path(sc *scope, segs []string) (typed, error) {
	name := segs[0]
	if len(segs) == 1 {
		if c, ok := sc.computed[name]; ok {
			return c, nil
		}
		p, ok := sc.set.Prop(name)
		if !ok {
			if _, isNav := sc.set.Nav(name); isNav {
				return typed{}, bad("%s is a navigation property of %s, not a value", name, sc.set.Name)
			}
			return typed{}, bad("%s is not a property of %s", name, sc.set.Name)
		}
		if p.Type == Decimal {
			return typed{}, bad("%s cannot be used in expressions", name)
		}
		v := typed{sql: p.sql(b, sc.alias), t: p.Type, nullable: p.Nullable, enum: p.Enum}
		if p.minor != "" {
			v.minor, v.currency = sc.alias+"."+p.minor, sc.alias+"."+p.currency
		}
		if p.is != nil {
			a := sc.alias
			v.is = func(value string) string { return p.is(b, a, value) }
		}
		return v, nil
	}
	n, ok := sc.set.Nav(name)
	if !ok {
		return typed{}, bad("%s is not a navigation property of %s", name, sc.set.Name)
	}
	if n.Many {
		return typed{}, bad("%s is a collection; paths may only follow single-valued navigation properties", name)
	}
	target, _ := b.m.Set(n.Target)
	a := b.newAlias()
	inner := &scope{set: target, alias: a}
	v, err := b.path(inner, segs[1:])
	if err != nil {
		return typed{}, err
	}
	item, cond := b.from(target, a)
	v.sql = "(SELECT " + v.sql + " FROM " + item + " WHERE " + cond + " AND " + a + "." + n.To + " = " + sc.alias + "." + n.From + ")"
	v.nullable = true
	v.is, v.minor, v.currency = nil, "", ""
	return v, nil
}

// bind turns literal l into a parameter of type t.
func (b *builder) bind(l *odata.Literal, t Edm, enum []string) (string, error) {
	v, err := literalValue(l, t, enum)
	if err != nil {
		return "", err
	}
	return b.arg(v, t), nil
}

// literalValue converts a literal to the Go value of type t.
func literalValue(l *odata.Literal, t Edm, enum []string) (any, error) {
	kinds := map[Edm]odata.LitKind{Guid: odata.LitGuid, String: odata.LitString, Int: odata.LitNumber, Money: odata.LitNumber,
		Double: odata.LitNumber, Bool: odata.LitBool, Date: odata.LitDate, Time: odata.LitDateTime}
	if l.Kind != kinds[t] {
		return nil, bad("%s is not a literal of type %s", litText(l), t.name())
	}
	switch t {
	case Guid:
		return strings.ToLower(l.Text), nil
	case String:
		if len(enum) > 0 && !contains(enum, l.Text) {
			return nil, bad("'%s' is not one of %s", l.Text, strings.Join(enum, ", "))
		}
		return l.Text, nil
	case Int:
		n, err := strconv.ParseInt(l.Text, 10, 64)
		if err != nil {
			return nil, bad("%s is not an integer in range", l.Text)
		}
		return n, nil
	case Money:
		d, err := decimal.NewFromString(l.Text)
		if err != nil {
			return nil, bad("%s is not a decimal number", l.Text)
		}
		if d.Exponent() < -moneyScale && !d.Equal(d.Truncate(moneyScale)) {
			return nil, bad("%s has more than %d decimals", l.Text, moneyScale)
		}
		scaled := d.Shift(moneyScale).BigInt()
		if !scaled.IsInt64() || scaled.CmpAbs(big.NewInt(1e17)) > 0 {
			return nil, bad("%s is out of range", l.Text)
		}
		return scaled.Int64(), nil
	case Double:
		f, err := strconv.ParseFloat(l.Text, 64)
		if err != nil {
			return nil, bad("%s is not a number", l.Text)
		}
		return f, nil
	case Bool:
		return l.Text == "true", nil
	case Date:
		if _, err := time.Parse(time.DateOnly, l.Text); err != nil {
			return nil, bad("%s is not a date (YYYY-MM-DD)", l.Text)
		}
		return l.Text, nil
	case Time:
		tm, err := time.Parse(time.RFC3339Nano, l.Text)
		if err != nil || tm.Year() < 1 || tm.Year() > 9999 {
			return nil, bad("%s is not a date and time (RFC 3339)", l.Text)
		}
		return tm, nil
	}
	return nil, bad("%s cannot be compared", litText(l))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func litText(l *odata.Literal) string {
	switch l.Kind {
	case odata.LitNull:
		return "null"
	case odata.LitString:
		return "'" + strings.ReplaceAll(l.Text, "'", "''") + "'"
	}
	return l.Text
}

// cond translates a boolean expression.
func (b *builder) cond(sc *scope, e odata.Expr) (string, error) {
	v, err := b.expr(sc, e)
	if err != nil {
		return "", err
	}
	if v.lit != nil || v.t != Bool {
		return "", bad("the expression is not a condition")
	}
	if v.nullable {
		return "COALESCE(" + v.sql + ", " + b.d.falseLit() + ")", nil
	}
	return v.sql, nil
}

func (d *dialect) falseLit() string {
	if d.postgres {
		return "FALSE"
	}
	return "0"
}

var sqlOps = map[string]string{"eq": "=", "ne": "<>", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}

func (b *builder) expr(sc *scope, e odata.Expr) (typed, error) {
	switch x := e.(type) {
	case *odata.Literal:
		return typed{lit: x}, nil
	case *odata.Path:
		return b.path(sc, x.Segments)
	case *odata.Not:
		c, err := b.cond(sc, x.X)
		if err != nil {
			return typed{}, err
		}
		return typed{sql: "(NOT " + c + ")", t: Bool}, nil
	case *odata.Binary:
		if x.Op == "and" || x.Op == "or" {
			l, err := b.cond(sc, x.L)
			if err != nil {
				return typed{}, err
			}
			r, err := b.cond(sc, x.R)
			if err != nil {
				return typed{}, err
			}
			return typed{sql: "(" + l + " " + strings.ToUpper(x.Op) + " " + r + ")", t: Bool}, nil
		}
		return b.compare(sc, x)
	case *odata.In:
		v, err := b.expr(sc, x.X)
		if err != nil {
			return typed{}, err
		}
		if v.lit != nil {
			return typed{}, bad("the left side of in must be a property")
		}
		var ps, ors []string
		for _, item := range x.List {
			l, ok := item.(*odata.Literal)
			if !ok || l.Kind == odata.LitNull {
				return typed{}, bad("in takes a list of literals")
			}
			if v.is != nil {
				if _, err := literalValue(l, v.t, v.enum); err != nil {
					return typed{}, err
				}
				ors = append(ors, v.is(l.Text))
				continue
			}
			ph, err := b.bind(l, v.t, v.enum)
			if err != nil {
				return typed{}, err
			}
			ps = append(ps, ph)
		}
		if v.is != nil {
			return typed{sql: "(" + strings.Join(ors, " OR ") + ")", t: Bool}, nil
		}
		return typed{sql: "(" + v.sql + " IN (" + strings.Join(ps, ", ") + "))", t: Bool, nullable: v.nullable}, nil
	case *odata.Call:
		return b.call(sc, x)
	}
	return typed{}, bad("unsupported expression")
}

func (b *builder) compare(sc *scope, x *odata.Binary) (typed, error) {
	l, err := b.expr(sc, x.L)
	if err != nil {
		return typed{}, err
	}
	r, err := b.expr(sc, x.R)
	if err != nil {
		return typed{}, err
	}
	if l.lit != nil && r.lit != nil {
		return typed{}, bad("a comparison needs a property or function on one side")
	}
	if l.lit != nil { // keep the property on the left
		l, r = r, l
		x = &odata.Binary{Op: map[string]string{"eq": "eq", "ne": "ne", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}[x.Op]}
	}
	if r.lit != nil && r.lit.Kind == odata.LitNull {
		switch x.Op {
		case "eq":
			return typed{sql: "(" + l.sql + " IS NULL)", t: Bool}, nil
		case "ne":
			return typed{sql: "(" + l.sql + " IS NOT NULL)", t: Bool}, nil
		}
		return typed{}, bad("null can only be compared with eq or ne")
	}
	if l.is != nil && r.lit != nil && (x.Op == "eq" || x.Op == "ne") {
		if _, err := literalValue(r.lit, l.t, l.enum); err != nil {
			return typed{}, err
		}
		if x.Op == "ne" {
			return typed{sql: "(NOT " + l.is(r.lit.Text) + ")", t: Bool}, nil
		}
		return typed{sql: l.is(r.lit.Text), t: Bool}, nil
	}
	rs := r.sql
	if r.lit != nil {
		if rs, err = b.bind(r.lit, l.t, l.enum); err != nil {
			return typed{}, err
		}
	} else if r.t != l.t {
		return typed{}, bad("cannot compare %s with %s", l.t.name(), r.t.name())
	}
	if l.t == Bool && x.Op != "eq" && x.Op != "ne" {
		return typed{}, bad("booleans compare only with eq or ne")
	}
	nullable := l.nullable || r.nullable
	if x.Op == "ne" && nullable {
		// OData's null ne 'x' is true; SQL's is unknown.
		return typed{sql: "(" + l.sql + " IS DISTINCT FROM " + rs + ")", t: Bool}, nil
	}
	return typed{sql: "(" + l.sql + " " + sqlOps[x.Op] + " " + rs + ")", t: Bool, nullable: nullable}, nil
}

func (b *builder) call(sc *scope, x *odata.Call) (typed, error) {
	want := map[string]int{"contains": 2, "startswith": 2, "endswith": 2, "tolower": 1, "toupper": 1, "length": 1, "trim": 1,
		"year": 1, "month": 1, "day": 1, "date": 1}
	n, ok := want[x.Name]
	if !ok {
		return typed{}, bad("%s is not a supported function", x.Name)
	}
	if len(x.Args) != n {
		return typed{}, bad("%s takes %d argument(s)", x.Name, n)
	}
	a, err := b.expr(sc, x.Args[0])
	if err != nil {
		return typed{}, err
	}
	if a.lit != nil {
		return typed{}, bad("the first argument of %s must be a property or function", x.Name)
	}
	switch x.Name {
	case "contains", "startswith", "endswith":
		if a.t != String {
			return typed{}, bad("%s needs a string", x.Name)
		}
		s, err := b.expr(sc, x.Args[1])
		if err != nil {
			return typed{}, err
		}
		arg := s.sql
		if s.lit != nil {
			if arg, err = b.bind(s.lit, String, nil); err != nil {
				return typed{}, err
			}
		} else if s.t != String {
			return typed{}, bad("%s needs a string", x.Name)
		}
		return typed{sql: b.d.strfn(x.Name, a.sql, arg), t: Bool, nullable: a.nullable || s.nullable}, nil
	case "tolower", "toupper", "trim":
		if a.t != String {
			return typed{}, bad("%s needs a string", x.Name)
		}
		fn := map[string]string{"tolower": "lower", "toupper": "upper", "trim": "trim"}[x.Name]
		return typed{sql: fn + "(" + a.sql + ")", t: String, nullable: a.nullable}, nil
	case "length":
		if a.t != String {
			return typed{}, bad("length needs a string")
		}
		return typed{sql: "length(" + a.sql + ")", t: Int, nullable: a.nullable}, nil
	case "year", "month", "day":
		if a.t != Date && a.t != Time {
			return typed{}, bad("%s needs a date or a date and time", x.Name)
		}
		return typed{sql: b.d.part(x.Name, a.sql, a.t), t: Int, nullable: a.nullable}, nil
	default: // date
		if a.t != Time {
			return typed{}, bad("date needs a date and time")
		}
		return typed{sql: b.d.date(a.sql), t: Date, nullable: a.nullable}, nil
	}
}
