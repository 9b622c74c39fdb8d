package api

import (
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// The rules of apikit.DecodeBytes, on the order input (nested structs, embedded
// structs, slices) and the subscriber input with the subscriber's own
// representation as the echo of a PUT.
func TestDecodeBytesRules(t *testing.T) {
	subscriber := reflect.TypeFor[store.Subscriber]()
	for _, tc := range []struct {
		name   string
		body   string
		into   any
		echo   reflect.Type
		fields []string // nil: accepted
		msg    string   // part of the first message
	}{
		{name: "plain", body: `{"organizationId": "x", "subscriber": {"name": "Kari Nordmann", "contacts": [{"role": "Invoice", "name": "Ola"}]}}`,
			into: new(OrderInput)},
		{name: "names match case-insensitively", body: `{"ORGANIZATIONID": "x", "Subscriber": {"NAME": "Kari"}}`, into: new(OrderInput)},
		{name: "promoted property of an embedded struct", body: `{"subscriber": {"externalId": "a", "externalSubscriberId": "b"}}`,
			into: new(OrderInput)},
		{name: "unknown top-level property", body: `{"organizationId": "x", "priceOverrid": 5}`, into: new(OrderInput),
			fields: []string{"priceOverrid"}},
		{name: "unknown properties are all named with their path",
			body: `{"subscriber": {"contacts": [{"role": "Invoice"}, {"role": "Delivery", "fullPrice": 1}]}, "paymentAgreementParams": {}}`,
			into: new(OrderInput), fields: []string{"subscriber.contacts[1].fullPrice", "paymentAgreementParams"}},
		{name: "a near miss is suggested", body: `{"subscriberID": "x", "invoiceContac": {}}`, into: new(OrderInput),
			fields: []string{"invoiceContac"}, msg: "did you mean invoiceContact?"},
		{name: "path parameters are not body properties", body: `{"ID": "x", "name": "Kari"}`, into: new(subscriberUpdate),
			fields: []string{"ID"}},
		{name: "NUL in a nested name", body: `{"subscriber": {"contacts": [{"role": "Invoice", "name": "O\u0000la"}]}}`,
			into: new(OrderInput), fields: []string{"subscriber.contacts[0].name"}, msg: "U+0000"},
		{name: "line break in a name", body: `{"subscriber": {"name": "Kari\nNordmann"}}`, into: new(OrderInput),
			fields: []string{"subscriber.name"}, msg: "single line"},
		{name: "tab in an external id", body: `{"subscriber": {"externalId": "crm\t1"}}`, into: new(OrderInput),
			fields: []string{"subscriber.externalId"}},
		{name: "C1 control in an address", body: `{"invoiceContact": {"address": {"line1": "Storgata \u0085 1"}}}`, into: new(OrderInput),
			fields: []string{"invoiceContact.address.line1"}, msg: "U+0085"},
		{name: "DEL in an email", body: "{\"invoiceContact\": {\"email\": \"a\x7f@example.no\"}}", into: new(OrderInput),
			fields: []string{"invoiceContact.email"}},
		{name: "invalid UTF-8", body: "{\"subscriber\": {\"name\": \"Kari \xff\"}}", into: new(OrderInput),
			fields: []string{"subscriber.name"}, msg: "UTF-8"},
		{name: "unpaired high surrogate", body: `{"subscriber": {"name": "Kari \ud800"}}`, into: new(OrderInput),
			fields: []string{"subscriber.name"}, msg: "surrogate"},
		{name: "unpaired low surrogate", body: `{"subscriber": {"name": "\udc00"}}`, into: new(OrderInput),
			fields: []string{"subscriber.name"}, msg: "surrogate"},
		{name: "high surrogate before another escape", body: `{"subscriber": {"name": "\ud800\u0041"}}`, into: new(OrderInput),
			fields: []string{"subscriber.name"}, msg: "surrogate"},
		{name: "a surrogate pair is text", body: `{"subscriber": {"name": "Kari \ud83d\ude00 \u00e6\u00f8\u00e5 æøå"}}`, into: new(OrderInput)},
		{name: "descriptions may have line breaks and tabs", body: `{"name": "Digital", "description": "Line 1\r\n\tLine 2"}`,
			into: new(ProductInput)},
		{name: "but no other control characters", body: `{"name": "Digital", "description": "Line 1\u0007"}`,
			into: new(ProductInput), fields: []string{"description"}, msg: "U+0007"},
		{name: "a control character in an unknown property name", body: `{"na\u0000me": "x"}`, into: new(ProductInput),
			fields: []string{`"na\x00me"`}},
		{name: "echoed read-only properties are ignored in a PUT",
			body: `{"id": "x", "createdAt": "2027-01-01T00:00:00Z", "updatedAt": "y", "name": "Kari",
				"contacts": [{"role": "Invoice", "name": "Ola", "address": {"line1": "Storgata 1"}}]}`,
			into: new(SubscriberInput), echo: subscriber},
		{name: "unknown properties are still refused in a PUT", body: `{"id": "x", "nmae": "Kari"}`, into: new(SubscriberInput),
			echo: subscriber, fields: []string{"nmae"}, msg: "did you mean name?"},
		{name: "without an echo, read-only properties are unknown", body: `{"id": "x", "name": "Kari"}`, into: new(SubscriberInput),
			fields: []string{"id"}},
		{name: "strings of self-decoding types are text too", body: `{"name": "Digital", "vatRate": "2\u00005"}`, into: new(ProductInput),
			fields: []string{"vatRate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := apikit.DecodeBytes([]byte(tc.body), tc.into, tc.echo)
			if tc.fields == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			verrs, ok := err.(validation.Errors)
			if !ok {
				t.Fatalf("want field errors %v, got %v", tc.fields, err)
			}
			var got []string
			for _, fe := range verrs {
				got = append(got, fe.Field)
			}
			if !slices.Equal(got, tc.fields) {
				t.Fatalf("fields %q, want %q (%v)", got, tc.fields, err)
			}
			if !strings.Contains(verrs[0].Message, tc.msg) {
				t.Fatalf("message %q lacks %q", verrs[0].Message, tc.msg)
			}
		})
	}
}

func TestCheckQuery(t *testing.T) {
	for _, tc := range []struct {
		raw, field string
	}{
		{"", ""},
		{"limit=10&externalId=crm-1", ""},
		{"name=%C3%A6%C3%B8%C3%A5+as", ""},
		{"externalId=a%00b", "externalId"},
		{"limit=5&status=Issued%0A", "status"},
		{"q=%C2%85", "q"},
		{"q=%FF", "q"},
		{"q=%zz", "q"},
		{"a%00b=1", `"a\x00b"`},
	} {
		err := checkQuery(tc.raw)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%q refused: %v", tc.raw, err)
			}
			continue
		}
		verrs, ok := err.(validation.Errors)
		if !ok || len(verrs) != 1 || verrs[0].Field != tc.field {
			t.Errorf("%q: want an error naming %s, got %v", tc.raw, tc.field, err)
		}
	}
}

func TestCheckIdempotencyKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d71": true,
		strings.Repeat("k", 255):               true,
		strings.Repeat("k", 256):               false,
		"ordre-æ":                              false,
		"two words":                            false,
		"tab\there":                            false,
		"nul\x00":                              false,
	} {
		if err := checkIdempotencyKey(key); (err == nil) != ok {
			t.Errorf("%q: err %v, want ok=%v", key, err, ok)
		}
	}
}

// FuzzDecodeBytes: whatever the body, decoding never panics, and what it
// accepts holds only text a name may hold (no control characters, no
// replacement characters the body did not spell), with no property
// dropped.
func FuzzDecodeBytes(f *testing.F) {
	for _, s := range []string{
		`{"subscriber": {"name": "Kari", "contacts": [{"role": "Invoice", "name": "Ola"}]}}`,
		`{"organizationId": "x", "invoiceContact": {"address": {"line1": "a\u0000"}}}`,
		`{"subscriber": {"name": "\ud800\udc00 \ud800"}}`, "{\"subscriber\": {\"name\": \"\xff\"}}",
		`{"x": [1, {"y": null}], "requestedStart": "2027-01-01T00:00:00Z"}`, `[]`, `null`, `"s"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in OrderInput
		if apikit.DecodeBytes(body, &in, nil) != nil {
			return
		}
		if bodyHasUnknown(body) {
			t.Fatalf("accepted a property OrderInput does not have: %s", body)
		}
		checkStrings(t, reflect.ValueOf(in), string(body))
	})
}

// bodyHasUnknown reports whether body's top-level object has a property
// OrderInput lacks.
func bodyHasUnknown(body []byte) bool {
	var m map[string]any
	if apikit.DecodeBytes(body, &m, nil) != nil {
		return false
	}
	names := jsonNames(reflect.TypeFor[OrderInput]())
	for k := range m {
		if !names[strings.ToLower(k)] {
			return true
		}
	}
	return false
}

// jsonNames are the lower-cased JSON property names of struct type t, as
// encoding/json sees them (promoted through embedded structs): the
// fuzzer's own account of what the decoder's check must accept, written
// apart from it.
func jsonNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n := range jsonNames(ft) {
					out[n] = true
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[strings.ToLower(name)] = true
	}
	return out
}

func checkStrings(t *testing.T, v reflect.Value, body string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkStrings(t, v.Elem(), body)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			checkStrings(t, v.Field(i), body)
		}
	case reflect.Slice:
		for i := range v.Len() {
			checkStrings(t, v.Index(i), body)
		}
	case reflect.String:
		s := v.String()
		if p := validation.TextProblem(s, false); p != "" {
			t.Fatalf("accepted %q (%s) from %q", s, p, body)
		}
		if strings.ContainsRune(s, '\uFFFD') && !strings.Contains(body, "\uFFFD") && !strings.Contains(strings.ToLower(body), `\ufffd`) {
			t.Fatalf("accepted %q, a replacement for what %q spelled", s, body)
		}
	}
}

// FuzzCheckQuery: a query string checkQuery passes holds only text, as the
// handlers will read it.
func FuzzCheckQuery(f *testing.F) {
	for _, s := range []string{"limit=10", "externalId=a%00b", "q=%C2%85&x=%FF", "a%00=1", "q=%zz", "x=%C3%A6+%C3%B8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if checkQuery(raw) != nil {
			return
		}
		values, _ := url.ParseQuery(raw)
		for k, vs := range values {
			for _, s := range append([]string{k}, vs...) {
				if p := validation.TextProblem(s, false); p != "" {
					t.Fatalf("passed %q: %q %s", raw, s, p)
				}
			}
		}
	})
}
