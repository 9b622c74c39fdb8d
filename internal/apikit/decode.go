package apikit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/kadens/kadens/internal/validation"
)

// DecodeJSON reads the request body into v. Every malformed body becomes a
// 400 naming the field, never a 500; an over-long body surfaces as
// *http.MaxBytesError (413). Beyond what encoding/json checks:
//
//   - property names match case-insensitively (encoding/json's rule), but a
//     property v's type does not declare is refused, naming its JSON path,
//     so that a misspelled field is never silently dropped. In a PUT body,
//     properties of the resource's own representation (its GET answer:
//     id, timestamps, status, …) are accepted and ignored, so a client can
//     GET, modify and PUT the result;
//   - every string must be valid UTF-8 without control characters
//     (validation.TextProblem); line breaks and tabs are allowed only in
//     the free-text properties named in multilineText.
//
// The rules are driven by v's Go type, so a new input field needs nothing
// here.
func DecodeJSON(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return DecodeBytes(body, v, echoType(r.Context()))
}

// DecodeOptionalJSON is DecodeJSON for a body that may be left out: an
// empty body leaves v as it is.
func DecodeOptionalJSON(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	return DecodeBytes(body, v, echoType(r.Context()))
}

// readBody reads the whole body; an over-long one stays an
// *http.MaxBytesError (413), any other failure is a 400.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, validation.Field("body", "could not read the request body: %v", err)
	}
	return body, nil
}

// DecodeBytes is DecodeJSON for a body already read; echo is the type of
// the resource's representation whose properties are ignored (nil: none).
func DecodeBytes(body []byte, v any, echo reflect.Type) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return validation.Field("body", "a JSON body is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return validation.Field("body", "unexpected data after the JSON value")
	}
	// The body is well-formed JSON of the right shape now; look at what
	// encoding/json let through.
	return checkBody(body, reflect.TypeOf(v), echo)
}

// multilineText are the free-text properties in which line breaks and tabs
// are allowed; every other string is a single line.
var multilineText = map[string]bool{"description": true, "terms": true, "reason": true}

type echoKey struct{}

// WithEcho records, for a PUT, the type of the resource's representation.
func WithEcho(ctx context.Context, t reflect.Type) context.Context {
	return context.WithValue(ctx, echoKey{}, t)
}

func echoType(ctx context.Context) reflect.Type {
	t, _ := ctx.Value(echoKey{}).(reflect.Type)
	return t
}

// jsonError explains a decoding error in terms of the client's input.
func jsonError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		return validation.Field("body", "malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "body"
		}
		return validation.Field(field, "must be %s, not %s", describeType(typ.Type.Kind().String(), typ.Type.String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return validation.Field("body", "the JSON body ends too early")
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return validation.Field(fe.field, "%s", fe.msg)
	}
	return validation.Field("body", "invalid JSON: %v", err)
}

func describeType(kind, name string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"), name == "json.Number":
		return "a number"
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "true or false"
	case kind == "slice", kind == "array":
		return "an array"
	case kind == "struct", kind == "map":
		return "an object"
	}
	return fmt.Sprintf("of type %s", name)
}

// fieldError lets custom UnmarshalJSON methods name the offending field.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }
