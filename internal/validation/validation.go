// Package validation collects field errors so that a request with several
// problems is answered with all of them at once.
package validation

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FieldError names one invalid input field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Errors is a list of field errors; as an error it means "the input is
// invalid" and the API answers 400 with a ValidationResultModel.
type Errors []FieldError

// Add records a problem with field.
func (e *Errors) Add(field, format string, args ...any) {
	*e = append(*e, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Err returns e as an error, or nil when nothing was recorded.
func (e Errors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

func (e Errors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		parts[i] = fe.Field + ": " + fe.Message
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

// Field is shorthand for an Errors holding one problem.
func Field(field, format string, args ...any) Errors {
	var e Errors
	e.Add(field, format, args...)
	return e
}

// TextProblem says what makes s unacceptable as text input, or "" when it
// is fine: invalid UTF-8, or a control character (C0, DEL or C1). Line
// breaks and tabs are allowed only in multiline (free) text such as a
// description; names, ids, emails, codes and query parameters are single
// lines. PostgreSQL cannot store NUL at all, and no field of Kadens has a
// use for the others, which only make printed invoices and exports wrong.
func TextProblem(s string, multiline bool) string {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return "must be valid UTF-8 text"
			}
		}
		if p := RuneProblem(r, multiline); p != "" {
			return p
		}
	}
	return ""
}

// RuneProblem is TextProblem for one character.
func RuneProblem(r rune, multiline bool) string {
	if !unicode.IsControl(r) {
		return ""
	}
	if multiline && (r == '\n' || r == '\r' || r == '\t') {
		return ""
	}
	if !multiline && (r == '\n' || r == '\r' || r == '\t') {
		return fmt.Sprintf("must be a single line without tabs (it contains U+%04X)", r)
	}
	return fmt.Sprintf("must not contain control characters (it contains U+%04X)", r)
}
