// Package validation collects field errors so that a request with several
// problems is answered with all of them at once.
package validation

import (
	"fmt"
	"strings"
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
