package odata

import (
	"strconv"
	"strings"
)

type parser struct {
	toks  []token
	i     int
	depth int
}

func newParser(s string) (*parser, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	return &parser{toks: toks}, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isPunct(s string) bool { t := p.peek(); return t.kind == tPunct && t.text == s }
func (p *parser) isWord(s string) bool  { t := p.peek(); return t.kind == tIdent && t.text == s }

func (p *parser) expect(s string) error {
	if !p.isPunct(s) {
		return p.unexpected("'" + s + "'")
	}
	p.next()
	return nil
}

func (p *parser) unexpected(want string) error {
	t := p.peek()
	if t.kind == tEOF {
		return errf("expected %s at the end", want)
	}
	return errf("expected %s at %d, found %q", want, t.pos, t.text)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return errf("nested deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *parser) end() error {
	if p.peek().kind != tEOF {
		return p.unexpected("the end")
	}
	return nil
}

// ParseFilter parses a $filter expression.
func ParseFilter(s string) (Expr, error) {
	p, err := newParser(s)
	if err != nil {
		return nil, err
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	return e, p.end()
}

func (p *parser) or() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.isWord("or") {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &Binary{Op: "or", L: l, R: r}
	}
	return l, nil
}

func (p *parser) and() (Expr, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.isWord("and") {
		p.next()
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = &Binary{Op: "and", L: l, R: r}
	}
	return l, nil
}

func (p *parser) not() (Expr, error) {
	if p.isWord("not") {
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &Not{X: x}, nil
	}
	return p.comparison()
}

var comparisons = map[string]bool{"eq": true, "ne": true, "gt": true, "ge": true, "lt": true, "le": true}

func (p *parser) comparison() (Expr, error) {
	l, err := p.primary()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tIdent && comparisons[t.text]:
		p.next()
		r, err := p.primary()
		if err != nil {
			return nil, err
		}
		return &Binary{Op: t.text, L: l, R: r}, nil
	case t.kind == tIdent && t.text == "in":
		p.next()
		if err := p.expect("("); err != nil {
			return nil, err
		}
		var list []Expr
		for {
			v, err := p.primary()
			if err != nil {
				return nil, err
			}
			if len(list) == MaxItems {
				return nil, errf("more than %d values in a list", MaxItems)
			}
			list = append(list, v)
			if p.isPunct(",") {
				p.next()
				continue
			}
			break
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return &In{X: l, List: list}, nil
	}
	return l, nil
}

var keywords = map[string]bool{"and": true, "or": true, "not": true, "in": true, "eq": true, "ne": true,
	"gt": true, "ge": true, "lt": true, "le": true, "asc": true, "desc": true, "with": true, "as": true}

func (p *parser) primary() (Expr, error) {
	t := p.peek()
	switch t.kind {
	case tString:
		p.next()
		return &Literal{Kind: LitString, Text: t.text}, nil
	case tNumber:
		p.next()
		if _, err := strconv.ParseFloat(t.text, 64); err != nil {
			return nil, errf("%q at %d is not a number", t.text, t.pos)
		}
		return &Literal{Kind: LitNumber, Text: t.text}, nil
	case tDate:
		p.next()
		return &Literal{Kind: LitDate, Text: t.text}, nil
	case tDateTime:
		p.next()
		return &Literal{Kind: LitDateTime, Text: t.text}, nil
	case tGuid:
		p.next()
		return &Literal{Kind: LitGuid, Text: t.text}, nil
	case tPunct:
		if t.text == "(" {
			p.next()
			if err := p.enter(); err != nil {
				return nil, err
			}
			e, err := p.or()
			p.depth--
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return e, nil
		}
	case tIdent:
		switch t.text {
		case "null":
			p.next()
			return &Literal{Kind: LitNull}, nil
		case "true", "false":
			p.next()
			return &Literal{Kind: LitBool, Text: t.text}, nil
		}
		if keywords[t.text] {
			return nil, p.unexpected("a value")
		}
		p.next()
		if p.isPunct("(") {
			p.next()
			if err := p.enter(); err != nil {
				return nil, err
			}
			defer func() { p.depth-- }()
			call := &Call{Name: t.text}
			if !p.isPunct(")") {
				for {
					a, err := p.or()
					if err != nil {
						return nil, err
					}
					if len(call.Args) == 8 {
						return nil, errf("too many arguments to %s", t.text)
					}
					call.Args = append(call.Args, a)
					if p.isPunct(",") {
						p.next()
						continue
					}
					break
				}
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return call, nil
		}
		path := &Path{Segments: []string{t.text}}
		for p.isPunct("/") {
			p.next()
			n := p.peek()
			if n.kind != tIdent || keywords[n.text] {
				return nil, p.unexpected("a property name")
			}
			p.next()
			if len(path.Segments) == MaxDepth {
				return nil, errf("path longer than %d segments", MaxDepth)
			}
			path.Segments = append(path.Segments, n.text)
		}
		return path, nil
	}
	return nil, p.unexpected("a value")
}

// path parses a property path (A/B/C).
func (p *parser) path() (Path, error) {
	t := p.peek()
	if t.kind != tIdent || keywords[t.text] || t.text == "null" || t.text == "true" || t.text == "false" {
		return Path{}, p.unexpected("a property name")
	}
	p.next()
	path := Path{Segments: []string{t.text}}
	for p.isPunct("/") {
		p.next()
		n := p.peek()
		if n.kind != tIdent || keywords[n.text] {
			return Path{}, p.unexpected("a property name")
		}
		p.next()
		if len(path.Segments) == MaxDepth {
			return Path{}, errf("path longer than %d segments", MaxDepth)
		}
		path.Segments = append(path.Segments, n.text)
	}
	return path, nil
}

// ParseOrderBy parses $orderby: paths, each optionally asc or desc.
func ParseOrderBy(s string) ([]OrderItem, error) {
	p, err := newParser(s)
	if err != nil {
		return nil, err
	}
	var out []OrderItem
	for {
		path, err := p.path()
		if err != nil {
			return nil, err
		}
		it := OrderItem{Path: path}
		switch {
		case p.isWord("asc"):
			p.next()
		case p.isWord("desc"):
			p.next()
			it.Desc = true
		}
		if len(out) == 32 {
			return nil, errf("more than 32 sort keys")
		}
		out = append(out, it)
		if p.isPunct(",") {
			p.next()
			continue
		}
		return out, p.end()
	}
}

// ParseSelect parses $select: property names or *.
func ParseSelect(s string) ([]string, error) {
	p, err := newParser(s)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for {
		if p.isPunct("*") {
			p.next()
			out = append(out, "*")
		} else {
			t := p.peek()
			if t.kind != tIdent || keywords[t.text] {
				return nil, p.unexpected("a property name")
			}
			p.next()
			out = append(out, t.text)
		}
		if len(out) > MaxItems {
			return nil, errf("more than %d properties", MaxItems)
		}
		if p.isPunct(",") {
			p.next()
			continue
		}
		return out, p.end()
	}
}

// split cuts s at sep where sep is outside quotes and parentheses.
func split(s string, sep byte) ([]string, error) {
	var out []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return nil, errf("unbalanced ')' at %d", i)
			}
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if quoted {
		return nil, errf("unterminated string")
	}
	if depth != 0 {
		return nil, errf("unbalanced '('")
	}
	return append(out, s[start:]), nil
}

// ParseExpand parses $expand at nesting level depth (0 for a request's own).
func ParseExpand(s string, depth int) ([]Expand, error) {
	if depth >= MaxExpandDepth {
		return nil, errf("$expand nested deeper than %d levels", MaxExpandDepth)
	}
	if len(s) > MaxLength {
		return nil, errf("longer than %d characters", MaxLength)
	}
	items, err := split(s, ',')
	if err != nil {
		return nil, err
	}
	var out []Expand
	for _, item := range items {
		item = strings.TrimSpace(item)
		name, rest, nested := strings.Cut(item, "(")
		name = strings.TrimSpace(name)
		if !isName(name) {
			return nil, errf("%q is not a navigation property name", name)
		}
		ex := Expand{Nav: name}
		if nested {
			rest = strings.TrimSpace(rest)
			if !strings.HasSuffix(rest, ")") {
				return nil, errf("options of %s must end with ')'", name)
			}
			opts, err := split(rest[:len(rest)-1], ';')
			if err != nil {
				return nil, err
			}
			pairs := map[string]string{}
			for _, o := range opts {
				k, v, ok := strings.Cut(o, "=")
				k = strings.TrimSpace(k)
				if !ok {
					return nil, errf("option %q of %s has no '='", k, name)
				}
				if _, dup := pairs[k]; dup {
					return nil, errf("option %s given twice in %s", k, name)
				}
				pairs[k] = v
			}
			ex.Options, err = ParseOptions(pairs, depth+1)
			if err != nil {
				return nil, err
			}
		}
		if len(out) == 32 {
			return nil, errf("more than 32 expanded properties")
		}
		out = append(out, ex)
	}
	return out, nil
}

// MaxExpandDepth bounds $expand nesting.
const MaxExpandDepth = 3

func isName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || isLetter(c) || (i > 0 && isDigit(c))) {
			return false
		}
	}
	return true
}

// ParseOptions parses the system query options in opts (name → raw value,
// names with their $). Unknown $-options are errors; the caller ignores
// custom (non-$) parameters. Errors carry the option as Target.
func ParseOptions(opts map[string]string, depth int) (Options, error) {
	var o Options
	for k, v := range opts {
		var err error
		switch k {
		case "$filter":
			o.Filter, err = ParseFilter(v)
		case "$orderby":
			o.OrderBy, err = ParseOrderBy(v)
		case "$select":
			o.Select, err = ParseSelect(v)
		case "$expand":
			o.Expand, err = ParseExpand(v, depth)
		case "$apply":
			if depth > 0 {
				err = errf("not allowed inside $expand")
			} else {
				o.Apply, err = ParseApply(v)
			}
		case "$top", "$skip":
			var n int64
			n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 {
				err = errf("must be a non-negative integer")
			} else if k == "$top" {
				o.Top = &n
			} else {
				o.Skip = &n
			}
		case "$count":
			if depth > 0 {
				err = errf("not supported inside $expand")
				break
			}
			switch v {
			case "true":
				o.Count = true
			case "false":
			default:
				err = errf("must be true or false")
			}
		case "$format":
			if v != "json" && !strings.HasPrefix(v, "application/json") {
				err = errf("only json is supported")
			}
		case "$skiptoken", "$search", "$levels":
			// $skiptoken is read by the caller; $search is not supported.
			if k != "$skiptoken" {
				err = errf("is not supported")
			}
		default:
			err = errf("is not a supported query option")
		}
		if err != nil {
			e, ok := err.(*Error)
			if !ok {
				e = &Error{Message: err.Error()}
			}
			if e.Target == "" {
				e.Target = k
			}
			return Options{}, e
		}
	}
	return o, nil
}

// ParseApply parses $apply: transformations separated by '/'.
func ParseApply(s string) ([]Transform, error) {
	if len(s) > MaxLength {
		return nil, errf("longer than %d characters", MaxLength)
	}
	steps, err := split(s, '/')
	if err != nil {
		return nil, err
	}
	if len(steps) > 8 {
		return nil, errf("more than 8 transformations")
	}
	var out []Transform
	for _, step := range steps {
		p, err := newParser(step)
		if err != nil {
			return nil, err
		}
		t, err := p.transform()
		if err != nil {
			return nil, err
		}
		if err := p.end(); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func (p *parser) transform() (Transform, error) {
	t := p.next()
	if t.kind != tIdent {
		return Transform{}, errf("expected a transformation (filter, compute, groupby, aggregate) at %d", t.pos)
	}
	if err := p.expect("("); err != nil {
		return Transform{}, err
	}
	tr := Transform{Kind: t.text}
	var err error
	switch t.text {
	case "filter":
		tr.Filter, err = p.or()
	case "compute":
		for err == nil {
			var c Computed
			if c.Expr, err = p.or(); err != nil {
				break
			}
			if c.Alias, err = p.alias(); err != nil {
				break
			}
			tr.Compute = append(tr.Compute, c)
			if !p.isPunct(",") {
				break
			}
			p.next()
		}
	case "aggregate":
		tr.Aggregate, err = p.aggregates()
	case "groupby":
		if err = p.expect("("); err != nil {
			break
		}
		for err == nil {
			var path Path
			if path, err = p.path(); err != nil {
				break
			}
			tr.GroupBy = append(tr.GroupBy, path)
			if !p.isPunct(",") {
				break
			}
			p.next()
		}
		if err != nil {
			break
		}
		if err = p.expect(")"); err != nil {
			break
		}
		if p.isPunct(",") {
			p.next()
			if !p.isWord("aggregate") {
				err = p.unexpected("aggregate(...)")
				break
			}
			p.next()
			if err = p.expect("("); err != nil {
				break
			}
			tr.Aggregate, err = p.aggregates()
			if err == nil {
				err = p.expect(")")
			}
		}
	default:
		return Transform{}, errf("%q is not a supported transformation (filter, compute, groupby, aggregate)", t.text)
	}
	if err != nil {
		return Transform{}, err
	}
	return tr, p.expect(")")
}

func (p *parser) alias() (string, error) {
	if !p.isWord("as") {
		return "", p.unexpected("'as'")
	}
	p.next()
	t := p.next()
	if t.kind != tIdent || keywords[t.text] || !isName(t.text) {
		return "", errf("expected an alias at %d", t.pos)
	}
	return t.text, nil
}

func (p *parser) aggregates() ([]Aggregate, error) {
	var out []Aggregate
	for {
		var a Aggregate
		if p.isWord("$count") {
			p.next()
			a.Method = "count"
		} else {
			path, err := p.path()
			if err != nil {
				return nil, err
			}
			a.Path = &path
			if !p.isWord("with") {
				return nil, p.unexpected("'with'")
			}
			p.next()
			m := p.next()
			if m.kind != tIdent {
				return nil, errf("expected an aggregation method at %d", m.pos)
			}
			a.Method = m.text
		}
		alias, err := p.alias()
		if err != nil {
			return nil, err
		}
		a.Alias = alias
		if len(out) == 32 {
			return nil, errf("more than 32 aggregates")
		}
		out = append(out, a)
		if !p.isPunct(",") {
			return out, nil
		}
		p.next()
	}
}
