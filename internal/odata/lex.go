// Package odata parses the OData v4 query options Kadens' analytics API
// accepts ($filter, $orderby, $select, $expand, $apply, $compute-style
// aliases) into a small syntax tree. It knows nothing of entity sets or
// SQL: internal/analytics checks names and types against its model and
// translates. Every input either parses or yields an *Error; nothing
// panics (FuzzFilter and friends check that).
package odata

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on what a query may hold, so a hostile URL cannot make the parser
// or the database work without bound.
const (
	// MaxDepth bounds nesting of parentheses, not, and $expand levels.
	MaxDepth = 32
	// MaxLength bounds the text of one query option.
	MaxLength = 8192
	// MaxItems bounds the items of one list (in (...), $select, $orderby).
	MaxItems = 1000
)

// Error is a syntax error in a query option. Target names the option.
type Error struct {
	Target  string
	Message string
}

func (e *Error) Error() string { return e.Target + ": " + e.Message }

func errf(format string, a ...any) *Error { return &Error{Message: fmt.Sprintf(format, a...)} }

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tDate
	tDateTime
	tGuid
	tPunct // ( ) , / ; = *
)

type token struct {
	kind tokKind
	text string // identifier, punctuation, number text; the unquoted value of a string
	pos  int
}

// lex splits s into tokens. OData words are separated by spaces; literals
// are recognised by shape.
func lex(s string) ([]token, error) {
	if len(s) > MaxLength {
		return nil, errf("longer than %d characters", MaxLength)
	}
	if !utf8.ValidString(s) {
		return nil, errf("not valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 && r != ' ' && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r <= 0x9f {
			return nil, errf("control character %U is not allowed", r)
		}
	}
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, errf("unterminated string starting at %d", i)
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			out = append(out, token{tString, b.String(), i})
			i = j + 1
		case strings.IndexByte("(),/;=*", c) >= 0:
			out = append(out, token{tPunct, string(c), i})
			i++
		case c == '$' || c == '_' || isLetter(c):
			j := i + 1
			for j < len(s) && (s[j] == '_' || isLetter(s[j]) || isDigit(s[j]) || s[j] == '.') {
				j++
			}
			word := s[i:j]
			// A guid may start with letters (a-f) and contain '-'.
			if g, ok := guidAt(s, i); ok {
				out = append(out, token{tGuid, g, i})
				i += len(g)
				continue
			}
			out = append(out, token{tIdent, word, i})
			i = j
		case isDigit(c) || c == '-':
			if g, ok := guidAt(s, i); ok {
				out = append(out, token{tGuid, g, i})
				i += len(g)
				continue
			}
			j := i
			if c == '-' {
				j++
			}
			for j < len(s) && (isDigit(s[j]) || strings.IndexByte(".-:TZ+", s[j]) >= 0 || (s[j] == 'e' || s[j] == 'E')) {
				j++
			}
			text := s[i:j]
			kind := tNumber
			switch {
			case strings.Contains(text, "T"):
				kind = tDateTime
			case strings.Count(text, "-") >= 2 && !strings.ContainsAny(text, "eE"):
				kind = tDate
			}
			if j == i || text == "-" {
				return nil, errf("unexpected %q at %d", string(c), i)
			}
			out = append(out, token{kind, text, i})
			i = j
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, errf("unexpected character %q at %d", r, i)
		}
	}
	return append(out, token{kind: tEOF, pos: len(s)}), nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// guidAt reports a guid literal (8-4-4-4-12 hex digits) at s[i:].
func guidAt(s string, i int) (string, bool) {
	if len(s)-i < 36 {
		return "", false
	}
	g := s[i : i+36]
	for k := 0; k < 36; k++ {
		switch k {
		case 8, 13, 18, 23:
			if g[k] != '-' {
				return "", false
			}
		default:
			if !isHex(g[k]) {
				return "", false
			}
		}
	}
	if len(s) > i+36 && (isHex(s[i+36]) || s[i+36] == '-' || s[i+36] == '_') {
		return "", false
	}
	return g, true
}
