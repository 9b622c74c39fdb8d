package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// strictSchemas validates JSON response bodies against the document's
// schemas with santhosh-tekuri/jsonschema, a JSON Schema 2020-12 validator
// (the dialect of OpenAPI 3.1's schemas). The document is not a schema
// itself, so its schemas are copied into one schema resource: the
// components under $defs (their references rewritten from
// #/components/schemas/X to #/$defs/X) and each response body's schema
// under $defs/r<n>, compiled when first needed. Formats are annotations, as
// 2020-12 has them by default.
type strictSchemas struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	// index names the $defs entry of each response body schema, by
	// "METHOD path status media-type" (status as the document writes it).
	index    map[string]string
	compiled map[string]*jsonschema.Schema
}

const strictResource = "https://kadens.invalid/openapi-schemas.json"

func newStrictSchemas(doc []byte) (*strictSchemas, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Schemas map[string]any
		}
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("apitest: read /openapi.json: %w", err)
	}
	defs := map[string]any{}
	for name, sc := range d.Components.Schemas {
		defs[name] = sc
	}
	s := &strictSchemas{index: map[string]string{}, compiled: map[string]*jsonschema.Schema{}}
	for path, item := range d.Paths {
		for method, raw := range item {
			var op struct {
				Responses map[string]struct {
					Content map[string]struct {
						Schema any
					}
				}
			}
			if json.Unmarshal(raw, &op) != nil {
				continue // not an operation (parameters of the path item)
			}
			for status, r := range op.Responses {
				for ct, mt := range r.Content {
					if mt.Schema == nil || !isJSON(ct) {
						continue
					}
					key := "r" + strconv.Itoa(len(s.index))
					defs[key] = mt.Schema
					s.index[strings.ToUpper(method)+" "+path+" "+status+" "+ct] = key
				}
			}
		}
	}
	// The references, rewritten through the JSON text: "$ref" values are
	// the only strings of this shape.
	buf, err := json.Marshal(map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs})
	if err != nil {
		return nil, err
	}
	buf = bytes.ReplaceAll(buf, []byte(`"#/components/schemas/`), []byte(`"#/$defs/`))
	res, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf))
	if err != nil {
		return nil, err
	}
	s.compiler = jsonschema.NewCompiler()
	s.compiler.DefaultDraft(jsonschema.Draft2020)
	if err := s.compiler.AddResource(strictResource, res); err != nil {
		return nil, fmt.Errorf("apitest: schemas of /openapi.json: %w", err)
	}
	return s, nil
}

// check validates a JSON body of the response documented for method path
// (the document's path template) and status; anything else passes (kin-
// openapi has checked the status and the content type).
func (s *strictSchemas) check(path, method string, status int, contentType string, body []byte) error {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || !isJSON(mt) || len(body) == 0 {
		return nil
	}
	sch, err := s.schema(method, path, strconv.Itoa(status), mt)
	if err != nil || sch == nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("response %d is not JSON: %w", status, err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("response %d to %s %s fails its schema under JSON Schema 2020-12: %w", status, method, path, err)
	}
	return nil
}

// schema is the compiled body schema of method path status (or the
// operation's default response) and media type mt; nil when the document
// has none.
func (s *strictSchemas) schema(method, path, status, mt string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, ok := s.index[method+" "+path+" "+status+" "+mt]
	if !ok {
		if key, ok = s.index[method+" "+path+" default "+mt]; !ok {
			return nil, nil
		}
	}
	if sch, ok := s.compiled[key]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile(strictResource + "#/$defs/" + key)
	if err != nil {
		return nil, fmt.Errorf("apitest: compile the schema of %s %s %s: %w", method, path, status, err)
	}
	s.compiled[key] = sch
	return sch, nil
}

func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}
