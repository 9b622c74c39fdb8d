package apikit

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

const (
	defaultLimit = 100
	maxLimit     = 1000
)

// ListParams are the paging query parameters every list operation takes.
type ListParams struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"1000" default:"100" description:"Page size."`
	Cursor string `query:"cursor" description:"Opaque cursor from the previous page's Link rel=\"next\"."`
}

// Page reads limit and cursor. The cursor is opaque to clients; it encodes
// the last id of the previous page (ids are time-ordered UUIDv7s).
func Page(r *http.Request, errs *validation.Errors) store.Page {
	p := store.Page{Limit: defaultLimit}
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			errs.Add("limit", "must be an integer from 1 to %d", maxLimit)
		} else {
			p.Limit = n
		}
	}
	if v := q.Get("cursor"); v != "" {
		raw, err := base64.RawURLEncoding.DecodeString(v)
		if err != nil || !store.ValidID(string(raw)) {
			errs.Add("cursor", "is not a cursor from a previous page")
		} else {
			p.After = string(raw)
		}
	}
	return p
}

// QueryID reads an optional uuid query parameter.
func QueryID(q map[string][]string, name string, errs *validation.Errors) string {
	v := ""
	if vs := q[name]; len(vs) > 0 {
		v = strings.ToLower(strings.TrimSpace(vs[0]))
	}
	if v != "" && !store.ValidID(v) {
		errs.Add(name, "must be a uuid")
		return ""
	}
	return v
}

// QueryBool reads an optional true/false query parameter.
func QueryBool(q map[string][]string, name string, errs *validation.Errors) *bool {
	vs := q[name]
	if len(vs) == 0 || vs[0] == "" {
		return nil
	}
	b, err := strconv.ParseBool(vs[0])
	if err != nil {
		errs.Add(name, "must be true or false")
		return nil
	}
	return &b
}

// UUIDField reads an optional id field of a body, lower-cased.
func UUIDField(errs *validation.Errors, field string, p *string) string {
	v := strings.ToLower(Trimmed(p))
	if v != "" && !store.ValidID(v) {
		errs.Add(field, "must be a uuid")
		return ""
	}
	return v
}
