package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

// parentNotFoundLists are the list operations whose table in the contract
// (service-spec.md) lists 404, with their filters that name a parent: one
// naming a parent that does not exist answers 404 there. /avtalegiro/mandate,
// of the same family and not in the contract, answers as its siblings do
// (product-decisions §2: "the Autogiro and AvtaleGiro lists").
var parentNotFoundLists = map[string][]string{
	"/autogiro/account": {"OrganizationId"}, "/autogiro/mandate": {"AccountId", "SubscriberId"},
	"/autogiro/transaction": {"MandateId"}, "/avtalegiro/account": nil,
	"/avtalegiro/mandate": {"AccountId", "SubscriberId"}, "/avtalegiro/claim": {"MandateId"},
}

// singletons are GETs without a path parameter that read one record, not
// a list: the tenant's Vipps merchant is 404 until it is set.
var singletons = map[string]bool{"/vipps/merchant": true}

// TestListFiltersNamingNoParent: every list operation of the document, each
// uuid filter given an id nothing has. Where the contract's table for the
// operation lists 404 (parentNotFoundLists) the answer is 404 and the
// document says so; everywhere else it is 200 with [] and the document
// lists no 404 (GET /authorizations/source/account?UserId=<unknown> used to
// be a 404, which its table, listing only 200 and 400, does not allow).
func TestListFiltersNamingNoParent(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		var doc struct {
			Paths map[string]map[string]struct {
				Parameters []struct {
					Name, In string
					Schema   struct{ Format string }
				}
				Responses map[string]json.RawMessage
			}
		}
		e.Raw("GET", "/openapi.json", nil).JSON(t, &doc)
		var paths []string
		for p := range doc.Paths {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		tried := 0
		for _, path := range paths {
			op, ok := doc.Paths[path]["get"]
			if !ok || strings.Contains(path, "{") || singletons[path] {
				continue
			}
			_, documented404 := op.Responses["404"]
			parents, want404 := parentNotFoundLists[path]
			if documented404 != want404 {
				t.Errorf("GET %s: the document lists 404: %v, want %v", path, documented404, want404)
			}
			for _, prm := range op.Parameters {
				if prm.In != "query" || prm.Schema.Format != "uuid" {
					continue
				}
				tried++
				r := e.Do("GET", path+"?"+prm.Name+"="+store.NewID(), nil)
				parent := slices.ContainsFunc(parents, func(p string) bool { return strings.EqualFold(p, prm.Name) })
				switch {
				case parent && r.Status != http.StatusNotFound:
					t.Errorf("GET %s?%s=<unknown>: %d %s, want 404", path, prm.Name, r.Status, r.Body)
				case !parent && (r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "[]"):
					t.Errorf("GET %s?%s=<unknown>: %d %s, want 200 []", path, prm.Name, r.Status, r.Body)
				}
			}
		}
		if tried < 20 {
			t.Fatalf("only %d uuid filters found in the document", tried)
		}
	})
}

// wantEmpty fails t unless r is 200 with an empty list.
func wantEmpty(t *testing.T, r *apitest.Response, what string) {
	t.Helper()
	if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "[]" {
		t.Errorf("%s: %d %s, want 200 []", what, r.Status, r.Body)
	}
}
