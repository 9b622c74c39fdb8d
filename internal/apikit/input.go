package apikit

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/validation"
)

// Text reads a text field: trimmed, at most max characters, without
// control characters other than line breaks and tabs (PostgreSQL cannot
// store NUL; DecodeJSON refuses line breaks and tabs where they do not
// belong).
func Text(errs *validation.Errors, field string, p *string, max int, required bool) string {
	s := Trimmed(p)
	switch n := utf8.RuneCountInString(s); {
	case n == 0 && required:
		errs.Add(field, "is required")
	case n > max:
		errs.Add(field, "must be at most %d characters", max)
	default:
		// DecodeJSON has refused what a single-line field may not hold;
		// this holds for values from elsewhere too.
		if p := validation.TextProblem(s, true); p != "" {
			errs.Add(field, "%s", p)
		}
	}
	return s
}

func Trimmed(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

// TimeField parses an optional RFC 3339 time, naming field when it is not
// one (encoding/json would report such an error without the field).
func TimeField(errs *validation.Errors, field string, p *string) *time.Time {
	v := Trimmed(p)
	if v == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		errs.Add(field, "must be an RFC 3339 time such as 2027-01-31T00:00:00+01:00")
		return nil
	}
	t = t.UTC()
	return &t
}

// Canonical returns the spelling among allowed that v matches ignoring
// case (enums are case-insensitive on input, canonical on output).
func Canonical(v string, allowed ...string) (string, bool) {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a, true
		}
	}
	return "", false
}

// OneOf returns the canonical spelling of v among allowed (def when v is
// empty), recording an error on field otherwise.
func OneOf(errs *validation.Errors, field string, v *string, def string, allowed ...string) string {
	s := Trimmed(v)
	if s == "" {
		return def
	}
	if c, ok := Canonical(s, allowed...); ok {
		return c
	}
	errs.Add(field, "%q is not one of %s", s, strings.Join(allowed, ", "))
	return ""
}
