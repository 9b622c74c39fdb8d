package apitest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/store"
)

// TestContractCatches proves the check every API test relies on is not
// vacuous: it rejects what the document does not describe and accepts what
// it does.
func TestContractCatches(t *testing.T) {
	e := Start(t, store.SQLite, nil)
	id := store.NewID()
	json := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	for _, c := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		ok                 bool
	}{
		{"empty list", "GET", "/organization", 200, json, `[]`, true},
		{"null list", "GET", "/organization", 200, json, `null`, false},
		{"wrong property type", "GET", "/organization/" + id, 200, json, `{"id":5}`, false},
		{"missing required property", "GET", "/organization/" + id, 200, json, `{"id":"` + id + `"}`, false},
		{"documented empty 404", "GET", "/organization/" + id, 404, http.Header{}, ``, true},
		{"body on an empty 404", "GET", "/organization/" + id, 404, json, `{"error":"x"}`, false},
		{"undocumented status", "GET", "/organization/" + id, http.StatusTeapot, http.Header{}, ``, false},
		{"400 without ValidationResultModel", "GET", "/organization", 400, json, `{"message":1}`, false},
		{"valid 400", "GET", "/organization", 400, json, `{"message":"Validation Failed","errors":[{"field":"limit","message":"must be an integer"}]}`, true},
		{"not an operation", "GET", "/idp/.well-known/openid-configuration", 200, json, `{}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, e.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = e.contract.check(req, c.status, c.header, []byte(c.body))
			if (err == nil) != c.ok {
				t.Fatalf("check %s %s %d %s: %v, want ok=%v", c.method, c.path, c.status, strings.TrimSpace(c.body), err, c.ok)
			}
		})
	}
}
