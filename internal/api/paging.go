package api

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
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

// page reads limit and cursor. The cursor is opaque to clients; it encodes
// the last id of the previous page (ids are time-ordered UUIDv7s).
func page(r *http.Request, errs *validation.Errors) store.Page {
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

// writeList answers with a page of items and, when more follow, an RFC 8288
// Link header pointing at the next page.
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, items any, next string) {
	s.setNextLink(w, r, next)
	writeJSON(w, http.StatusOK, items)
}

// setNextLink sets the Link header to the page after next, if any.
func (s *Server) setNextLink(w http.ResponseWriter, r *http.Request, next string) {
	if next != "" {
		q := r.URL.Query()
		q.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(next)))
		w.Header().Set("Link", "<"+s.baseURL+r.URL.Path+"?"+q.Encode()+`>; rel="next"`)
	}
}

// getOne answers GET /…/{id} with the record fetch returns for the id.
func getOne[T any](fetch func(context.Context, string) (T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r, "id")
		if err != nil {
			return err
		}
		v, err := fetch(r.Context(), id)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, v)
		return nil
	}
}

// listAll answers an unfiltered, paged list with the page list returns.
func listAll[T any](s *Server, list func(context.Context, store.Page) ([]T, string, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var errs validation.Errors
		p := page(r, &errs)
		if err := errs.Err(); err != nil {
			return err
		}
		items, next, err := list(r.Context(), p)
		if err != nil {
			return err
		}
		if items == nil {
			items = []T{}
		}
		s.writeList(w, r, items, next)
		return nil
	}
}

// respList documents a 200 list answer with body, paged by the Link header.
func respList(body any) response {
	return response{status: http.StatusOK, body: body,
		headers: map[string]string{"Link": `RFC 8288 link to the next page (rel="next"), when there is one.`}}
}

// checkQuery refuses a query string with a parameter that is not text: a
// control character (%00, a line break, …) or invalid UTF-8 in a name or
// value, or a malformed escape. Every list's filters are single-line text,
// and this holds for all of them at once; a plain query (printable ASCII
// without escapes) is passed after one scan.
func checkQuery(raw string) error {
	if !strings.ContainsFunc(raw, func(c rune) bool { return c == '%' || c < 0x20 || c > 0x7e }) {
		return nil
	}
	var errs validation.Errors
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			errs.Add("query", "malformed escape in parameter name %q", k)
			continue
		}
		if p := validation.TextProblem(name, false); p != "" {
			errs.Add(strconv.QuoteToASCII(name), "parameter name %s", p)
			continue
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			errs.Add(name, "malformed escape in the value (use %%XX with two hex digits)")
			continue
		}
		if p := validation.TextProblem(value, false); p != "" {
			errs.Add(name, "%s", p)
		}
	}
	return errs.Err()
}
