package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// listAll answers an unfiltered, paged list with the page list returns.
func listAll[T any](s *Server, list func(context.Context, store.Page) ([]T, string, error)) apikit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var errs validation.Errors
		p := apikit.Page(r, &errs)
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
