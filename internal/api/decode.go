package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/kadens/kadens/internal/validation"
)

// decodeJSON reads the request body into v. Property names match
// case-insensitively (encoding/json's rule), unknown properties are
// ignored, and every malformed body becomes a 400 naming the field, never a
// 500. An over-long body surfaces as *http.MaxBytesError (413).
func decodeJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return validation.Field("body", "could not read the request body: %v", err)
	}
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
	return nil
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
