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

// TestStrictSchemas: the JSON Schema 2020-12 check of response bodies
// holds a nullable property to "null or the referenced schema", and fails
// what kin-openapi's validator lets through: with `type: object` beside the
// nullable anyOf (what the document generator used to write), null is no
// object under JSON Schema 2020-12, so the property can never be null
// (kin-openapi accepted it, which is how the document went unnoticed).
func TestStrictSchemas(t *testing.T) {
	doc := func(contact string) []byte {
		return []byte(`{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
			"paths": {"/x": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema":
				{"type": "object", "required": ["contact", "n"], "properties": {"contact": ` + contact + `,
					"n": {"type": ["integer", "null"]}}}}}}}}}},
			"components": {"schemas": {"Contact": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}}`)
	}
	nullable := `{"anyOf": [{"type": "null"}, {"$ref": "#/components/schemas/Contact"}]}`
	typedBeside := `{"type": "object", "anyOf": [{"type": "null"}, {"$ref": "#/components/schemas/Contact", "type": "object"}]}`
	json := http.Header{"Content-Type": {"application/json"}}
	check := func(c *contract, body string) error {
		req, err := http.NewRequest("GET", "http://kadens.test/x", nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.check(req, 200, json, []byte(body))
	}
	good, err := loadContract(doc(nullable))
	if err != nil {
		t.Fatal(err)
	}
	for body, ok := range map[string]bool{
		`{"contact": null, "n": null}`:          true,
		`{"contact": {"name": "Kari"}, "n": 1}`: true,
		`{"contact": {}, "n": 1}`:               false, // Contact requires name
		`{"contact": 5, "n": 1}`:                false,
		`{"contact": null, "n": "1"}`:           false,
		`{"n": 1}`:                              false,
	} {
		if err := check(good, body); (err == nil) != ok {
			t.Errorf("nullable contact, %s: %v, want ok=%v", body, err, ok)
		}
	}
	bad, err := loadContract(doc(typedBeside))
	if err != nil {
		t.Fatal(err)
	}
	if err := check(bad, `{"contact": null, "n": 1}`); err == nil || !strings.Contains(err.Error(), "2020-12") {
		t.Errorf("type beside a nullable anyOf let null through: %v", err)
	}
}
