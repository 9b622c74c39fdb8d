package api

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/swaggest/jsonschema-go"
	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi31"
)

// contractRules make the reflected document say what the server sends, by
// rules on Go types rather than tags on every field:
//
//   - a pointer field that is not omitempty may be sent as null, so its
//     schema is nullable (`anyOf: [null, $ref]` for a shared schema);
//   - a response field that is not omitempty (nor omitzero) is always
//     present, so it is required — generated clients then need no
//     pointers for it;
//   - a slice in a response is always an array, never null (handlers send
//     empty lists as []); in request bodies null is still accepted;
//   - every JSON number the service writes or reads is an exact decimal
//     (money in major units, percentages): `type: number, format: decimal`
//     (json.Number is documented as a number, which it is on the wire;
//     finishSchemas adds the format).
func contractRules() []func(*jsonschema.ReflectContext) {
	return []func(*jsonschema.ReflectContext){
		func(rc *jsonschema.ReflectContext) { rc.EnvelopNullability = true },
		jsonschema.InterceptNullability(listsAreArrays),
		jsonschema.InterceptProp(alwaysPresentIsRequired),
	}
}

// inResponse reports whether rc reflects a response body.
func inResponse(rc *jsonschema.ReflectContext) bool {
	oc, ok := openapi.OperationCtx(rc)
	return ok && oc.IsProcessingResponse()
}

// finishSchemas applies the rules the reflector has no hook for, to the
// reflected document: every JSON number is an exact decimal (money in major
// units, percentages; the types that write them describe themselves as plain
// numbers), so that generators do not map money to float32; a nullable
// schema says its type only in its alternatives (nullableAlternatives); a
// response body that is a list is an array, never null; every paged list
// documents its Link header; a non-JSON body names its media type.
func finishSchemas(spec *openapi31.Spec) {
	for _, sc := range spec.Components.Schemas {
		decimalNumbers(sc)
		nullableAlternatives(sc)
	}
	for _, item := range spec.Paths.MapOfPathItemValues {
		for _, op := range []*openapi31.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op == nil {
				continue
			}
			for _, p := range op.Parameters {
				if p.Parameter != nil {
					decimalNumbers(p.Parameter.Schema)
					nullableAlternatives(p.Parameter.Schema)
				}
			}
			if rb := op.RequestBody; rb != nil && rb.RequestBody != nil {
				for _, mt := range rb.RequestBody.Content {
					decimalNumbers(mt.Schema)
					nullableAlternatives(mt.Schema)
				}
			}
			paged := slices.ContainsFunc(op.Parameters, func(p openapi31.ParameterOrReference) bool {
				return p.Parameter != nil && p.Parameter.In == openapi31.ParameterInQuery && p.Parameter.Name == "cursor"
			})
			for status, r := range op.Responses.MapOfResponseOrReferenceValues {
				if r.Response == nil {
					continue
				}
				if _, ok := r.Response.Headers["Link"]; paged && status == "200" && !ok {
					// Every paged list answers with the next page's link.
					h := openapi31.Header{}
					h.WithDescription(linkHeader)
					h.WithSchema(map[string]any{"type": "string"})
					r.Response.WithHeadersItem("Link", openapi31.HeaderOrReference{Header: &h})
				}
				for ct, mt := range r.Response.Content {
					if ct != "application/json" && mt.Schema["type"] == "string" {
						// A document (the printable invoice): raw bytes of
						// that media type, not a JSON string.
						mt.Schema["contentMediaType"] = ct
					}
					decimalNumbers(mt.Schema)
					nullableAlternatives(mt.Schema)
					if types, ok := mt.Schema["type"].([]any); ok && slices.Contains(types, any("array")) {
						mt.Schema["type"] = "array"
					}
				}
			}
		}
	}
}

// linkHeader describes the Link header of a paged list.
const linkHeader = `RFC 8288 link to the next page (rel="next"), when there is one.`

// decimalNumbers adds `format: decimal` to every number schema in v.
func decimalNumbers(v any) {
	switch v := v.(type) {
	case map[string]any:
		if isNumber(v["type"]) {
			if _, ok := v["format"]; !ok {
				v["format"] = "decimal"
			}
		}
		for _, c := range v {
			decimalNumbers(c)
		}
	case []any:
		for _, c := range v {
			decimalNumbers(c)
		}
	}
}

// nullableAlternatives makes every schema in v that is "null or X"
// (anyOf/oneOf with a {"type": "null"} alternative, which the reflector
// writes for a pointer to a shared schema) say X's type only in X's
// alternative: the reflector also copies X's type (and format) beside the
// anyOf, where JSON Schema 2020-12 applies it to the value too, so null
// failed `type: object` and no null ever validated. The alternative that
// is a $ref keeps only the reference, whose schema has the type.
func nullableAlternatives(v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, key := range []string{"anyOf", "oneOf"} {
			alts, _ := v[key].([]any)
			if !slices.ContainsFunc(alts, isNullSchema) {
				continue
			}
			delete(v, "type")
			delete(v, "format")
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["$ref"] != nil {
					delete(m, "type")
					delete(m, "format")
				}
			}
		}
		for _, c := range v {
			nullableAlternatives(c)
		}
	case []any:
		for _, c := range v {
			nullableAlternatives(c)
		}
	}
}

// isNullSchema reports whether v is the schema {"type": "null"}.
func isNullSchema(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 1 && m["type"] == "null"
}

func isNumber(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "number"
	case []any:
		return slices.Contains(t, any("number"))
	}
	return false
}

// listsAreArrays removes the null the reflector adds to slices, in
// responses.
func listsAreArrays(p jsonschema.InterceptNullabilityParams) {
	if p.Type.Kind() != reflect.Slice || !inResponse(p.Context) {
		return
	}
	if p.NullAdded {
		p.Schema.RemoveType(jsonschema.Null)
	}
	// A named slice type is a shared schema the reflector wraps in
	// anyOf [null, $ref]; unwrap it.
	if len(p.Schema.AnyOf) == 2 && p.Schema.AnyOf[1].TypeObject != nil && p.Schema.AnyOf[1].TypeObject.Ref != nil {
		*p.Schema = *p.Schema.AnyOf[1].TypeObject
	}
}

// alwaysPresentIsRequired lists a response field that is not omitempty
// (nor omitzero) as required. A field that shadows an embedded struct's
// field of the same name (a list item leaving out parts of the record it
// embeds) decides, whichever of the two is reflected first: once a name
// is optional in a schema, it stays optional there.
func alwaysPresentIsRequired(p jsonschema.InterceptPropParams) error {
	if !p.Processed || p.ParentSchema == nil || !inResponse(p.Context) {
		return nil
	}
	tag, ok := p.Field.Tag.Lookup("json")
	if !ok || tag == "-" {
		return nil
	}
	_, opts, _ := strings.Cut(tag, ",")
	for _, o := range strings.Split(opts, ",") {
		if o == "omitempty" || o == "omitzero" {
			optionalNames.Store(optionalKey{p.ParentSchema, p.Name}, true)
			p.ParentSchema.Required = slices.DeleteFunc(p.ParentSchema.Required, func(n string) bool { return n == p.Name })
			return nil
		}
	}
	if _, optional := optionalNames.Load(optionalKey{p.ParentSchema, p.Name}); optional {
		return nil
	}
	if !slices.Contains(p.ParentSchema.Required, p.Name) {
		p.ParentSchema.Required = append(p.ParentSchema.Required, p.Name)
	}
	return nil
}

// optionalNames remembers the properties a schema has as optional (see
// alwaysPresentIsRequired); keyed by the schema being built.
var optionalNames sync.Map

type optionalKey struct {
	schema *jsonschema.Schema
	name   string
}
