package apikit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/validation"
)

// maxBodyProblems bounds the errors one answer lists; a body full of
// garbage needs only the first few to be fixed.
const maxBodyProblems = 50

// checkBody walks a well-formed JSON body alongside the Go type it was
// decoded into (and echo, the resource's representation, for PUTs), and
// reports unknown properties and unacceptable strings with their JSON path
// (subscriber.contacts[0].name). It reads the raw string literals, because
// encoding/json replaces invalid UTF-8 and unpaired surrogates with U+FFFD
// without a word.
func checkBody(body []byte, t, echo reflect.Type) error {
	c := &bodyChecker{body: body, dec: json.NewDecoder(bytes.NewReader(body))}
	c.dec.UseNumber()
	if err := c.value(t, echo, "", false); err != nil {
		// The body was decoded successfully before; a failure to tokenize
		// it again cannot happen, but it must not pass unchecked either.
		return validation.Field("body", "invalid JSON: %v", err)
	}
	return c.errs.Err()
}

type bodyChecker struct {
	body []byte
	dec  *json.Decoder
	errs validation.Errors
}

func (c *bodyChecker) add(field, format string, args ...any) {
	if field == "" {
		field = "body"
	}
	if len(c.errs) < maxBodyProblems {
		c.errs.Add(field, format, args...)
	}
}

// token reads the next token and the raw bytes it came from.
func (c *bodyChecker) token() (json.Token, []byte, error) {
	start := c.dec.InputOffset()
	tok, err := c.dec.Token()
	if err != nil {
		return nil, nil, err
	}
	// Between two tokens there is only white space and separators.
	raw := bytes.TrimLeft(c.body[start:c.dec.InputOffset()], " \t\r\n,:")
	return tok, raw, nil
}

// Shorthand marks a type that decodes itself only to accept a short form
// (a bare string) besides its object form, whose properties are checked
// as usual.
type Shorthand interface{ AcceptsShorthand() }

var (
	shorthandType   = reflect.TypeFor[Shorthand]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
)

// value checks the next JSON value, decoded into a t (nil: anything) at
// path. echo, when not nil, is the type of the same place in the
// resource's representation.
func (c *bodyChecker) value(t, echo reflect.Type, path string, multiline bool) error {
	t, echo = indirect(t), indirect(echo)
	if t == rawMessageType {
		return c.skip() // decoded, and checked, by the handler
	}
	tok, raw, err := c.token()
	if err != nil {
		return err
	}
	// Types that decode themselves (amounts, times, raw messages) have no
	// properties of ours to check; their strings still must be text.
	if t != nil && (t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)) &&
		!t.Implements(shorthandType) {
		t, echo = nil, nil
	}
	switch tok {
	case json.Delim('{'):
		switch {
		case t != nil && t.Kind() == reflect.Struct:
			return c.object(t, echo, path)
		case t != nil && t.Kind() == reflect.Map:
			return c.mapValues(t.Elem(), path)
		}
		return c.mapValues(nil, path)
	case json.Delim('['):
		var elem, echoElem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		if echo != nil && (echo.Kind() == reflect.Slice || echo.Kind() == reflect.Array) {
			echoElem = echo.Elem()
		}
		for i := 0; c.dec.More(); i++ {
			if err := c.value(elem, echoElem, fmt.Sprintf("%s[%d]", path, i), multiline); err != nil {
				return err
			}
		}
		_, _, err := c.token() // ]
		return err
	}
	if _, ok := tok.(string); ok {
		if p := literalProblem(raw, multiline); p != "" {
			c.add(path, "%s", p)
		}
	}
	return nil
}

// object checks the properties of a JSON object decoded into struct t.
func (c *bodyChecker) object(t, echo reflect.Type, path string) error {
	fields := bodyFields(t)
	var echoFields []bodyField
	if echo != nil && echo.Kind() == reflect.Struct {
		echoFields = bodyFields(echo)
	}
	for c.dec.More() {
		tok, raw, err := c.token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		f, known := findField(fields, name)
		ef, echoed := findField(echoFields, name)
		switch {
		case known:
			var et reflect.Type
			if echoed {
				et = ef.typ
			}
			if err := c.value(f.typ, et, join(path, f.name), multilineText[f.name]); err != nil {
				return err
			}
			continue
		case echoed:
			// A read-only property of the resource sent back in a PUT:
			// accepted, and ignored like the server ignores it.
		default:
			shown := name
			if literalProblem(raw, false) != "" {
				shown = strconv.QuoteToASCII(name)
			}
			msg := "is not a property of this request; remove it"
			if near := nearest(fields, name); near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			c.add(join(path, shown), "%s", msg)
		}
		if err := c.skip(); err != nil {
			return err
		}
	}
	_, _, err := c.token() // }
	return err
}

// mapValues checks an object with free keys (a map, or anything).
func (c *bodyChecker) mapValues(elem reflect.Type, path string) error {
	for c.dec.More() {
		tok, raw, err := c.token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		if p := literalProblem(raw, false); p != "" {
			c.add(join(path, strconv.QuoteToASCII(name)), "property name %s", p)
		}
		if err := c.value(elem, nil, join(path, name), false); err != nil {
			return err
		}
	}
	_, _, err := c.token() // }
	return err
}

// skip consumes the next value unchecked: it is ignored anyway.
func (c *bodyChecker) skip() error {
	var discard json.RawMessage
	return c.dec.Decode(&discard)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func indirect(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// literalProblem checks a raw JSON string literal (with its quotes): what
// validation.TextProblem says of its text, plus unpaired UTF-16 surrogate
// escapes, which encoding/json would turn into U+FFFD.
func literalProblem(raw []byte, multiline bool) string {
	if len(raw) < 2 {
		return ""
	}
	s := raw[1 : len(raw)-1]
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				return "must be valid UTF-8 text"
			}
			if p := validation.RuneProblem(r, multiline); p != "" {
				return p
			}
			i += size
			continue
		}
		if i+1 >= len(s) {
			return ""
		}
		esc := s[i+1]
		i += 2
		var r rune
		switch esc {
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'u':
			u, ok := hex4(s, i)
			if !ok {
				return "" // encoding/json has refused it already
			}
			i += 4
			r = rune(u)
			if utf16.IsSurrogate(r) {
				lo, ok := rune(-1), false
				if r < 0xDC00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					var l uint16
					if l, ok = hex4(s, i+2); ok {
						lo = rune(l)
					}
				}
				if dec := utf16.DecodeRune(r, lo); dec == utf8.RuneError {
					return fmt.Sprintf("must be valid UTF-16 text (it contains an unpaired surrogate \\u%04x)", r)
				}
				i += 6
				continue
			}
		default:
			continue // \" \\ \/
		}
		if p := validation.RuneProblem(r, multiline); p != "" {
			return p
		}
	}
	return ""
}

func hex4(s []byte, i int) (uint16, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s[i:i+4]), 16, 16)
	return uint16(n), err == nil
}

// bodyField is a JSON property of a struct type.
type bodyField struct {
	name string // as declared
	typ  reflect.Type
}

var bodyFieldCache sync.Map // reflect.Type → []bodyField

// bodyFields lists the JSON properties of struct t as encoding/json sees
// them: json tag names, else Go names; embedded structs' properties are
// promoted; fields that document path, query or header parameters (no
// json tag, a path/query/header tag) are not body properties.
func bodyFields(t reflect.Type) []bodyField {
	if v, ok := bodyFieldCache.Load(t); ok {
		return v.([]bodyField)
	}
	var out []bodyField
	seen := map[string]bool{}
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		var embedded []reflect.Type
		for i := range t.NumField() {
			sf := t.Field(i)
			tag, hasTag := sf.Tag.Lookup("json")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" && tag == "-" {
				continue
			}
			if !hasTag && (sf.Tag.Get("path") != "" || sf.Tag.Get("query") != "" || sf.Tag.Get("header") != "") {
				continue
			}
			if sf.Anonymous && name == "" {
				if et := indirect(sf.Type); et.Kind() == reflect.Struct {
					embedded = append(embedded, et)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			// Outer fields hide promoted ones of the same name.
			if key := strings.ToLower(name); !seen[key] {
				seen[key] = true
				out = append(out, bodyField{name: name, typ: sf.Type})
			}
		}
		if depth < 8 {
			for _, et := range embedded {
				walk(et, depth+1)
			}
		}
	}
	walk(t, 0)
	bodyFieldCache.Store(t, out)
	return out
}

// findField finds name among fields: exactly, else ignoring case.
func findField(fields []bodyField, name string) (bodyField, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, name) {
			return f, true
		}
	}
	return bodyField{}, false
}

// nearest suggests the declared property closest to a misspelled name
// (at most two edits apart, ignoring case), or "".
func nearest(fields []bodyField, name string) string {
	best, bestD := "", 3
	for _, f := range fields {
		if d := editDistance(strings.ToLower(f.name), strings.ToLower(name)); d < bestD {
			best, bestD = f.name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes (property
// names are ASCII).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
