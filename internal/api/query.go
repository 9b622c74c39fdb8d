package api

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/kadens/kadens/internal/validation"
)

// queryNames returns the query parameters a route's request type declares
// (its `query` tags, through embedded structs such as ListParams), by
// their lower-case form: the same declaration the OpenAPI document is
// reflected from. Parameter names match case-insensitively, as JSON
// property names do (the contract writes filters both as SubscriberNumber
// and externalId).
func queryNames(req any) map[string]string {
	names := map[string]string{}
	if req == nil {
		return names
	}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for f := range t.Fields() {
			if name, ok := f.Tag.Lookup("query"); ok {
				name = strings.Split(name, ",")[0]
				names[strings.ToLower(name)] = name
			} else if f.Anonymous {
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeOf(req))
	return names
}

// canonicalQuery answers 400 naming every query parameter of r the route
// does not declare: a misspelled filter (?kid= where no such filter
// exists) must not silently widen a list to everything. Declared
// parameters written in another case are rewritten to their declared
// spelling, so handlers read them with Query().Get.
func canonicalQuery(r *http.Request, known map[string]string) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	var errs validation.Errors
	q := r.URL.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(url.Values, len(q))
	rewrite := false
	for _, k := range keys {
		name, ok := known[strings.ToLower(k)]
		if !ok {
			errs.Add(k, "is not a parameter of this operation")
			continue
		}
		rewrite = rewrite || name != k
		out[name] = append(out[name], q[k]...)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if rewrite {
		r.URL.RawQuery = out.Encode()
	}
	return nil
}
