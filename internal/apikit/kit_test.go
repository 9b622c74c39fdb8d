package apikit_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/validation"
)

const id = "0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b"

// The kit's readers of query and path values, as a table: what each
// accepts, and the field it names when it does not.
func TestReaders(t *testing.T) {
	cursor := base64.RawURLEncoding.EncodeToString([]byte(id))
	for _, tc := range []struct {
		name  string
		query string
		read  func(r *http.Request, errs *validation.Errors) any
		want  any
		field string // "" when accepted
	}{
		{"default page", "", func(r *http.Request, e *validation.Errors) any { return apikit.Page(r, e).Limit }, 100, ""},
		{"limit", "limit=7", func(r *http.Request, e *validation.Errors) any { return apikit.Page(r, e).Limit }, 7, ""},
		{"limit too big", "limit=1001", func(r *http.Request, e *validation.Errors) any { return apikit.Page(r, e).Limit }, 100, "limit"},
		{"limit not a number", "limit=x", func(r *http.Request, e *validation.Errors) any { return apikit.Page(r, e).Limit }, 100, "limit"},
		{"cursor", "cursor=" + cursor, func(r *http.Request, e *validation.Errors) any { return apikit.Page(r, e).After }, id, ""},
		{"cursor of no id", "cursor=" + base64.RawURLEncoding.EncodeToString([]byte("x")),
			func(r *http.Request, e *validation.Errors) any { return apikit.Page(r, e).After }, "", "cursor"},
		{"query id, any case", "OrgId=" + url.QueryEscape(" "+strings.ToUpper(id)+" "),
			func(r *http.Request, e *validation.Errors) any { return apikit.QueryID(r.URL.Query(), "OrgId", e) }, id, ""},
		{"query id that is none", "OrgId=42", func(r *http.Request, e *validation.Errors) any { return apikit.QueryID(r.URL.Query(), "OrgId", e) }, "", "OrgId"},
		{"query bool", "On=true", func(r *http.Request, e *validation.Errors) any { return *apikit.QueryBool(r.URL.Query(), "On", e) }, true, ""},
		{"query bool left out", "", func(r *http.Request, e *validation.Errors) any {
			return apikit.QueryBool(r.URL.Query(), "On", e) == nil
		}, true, ""},
		{"query bool that is none", "On=yes", func(r *http.Request, e *validation.Errors) any {
			return apikit.QueryBool(r.URL.Query(), "On", e) == nil
		}, true, "On"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/x?"+tc.query, nil)
			var errs validation.Errors
			got := tc.read(r, &errs)
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			switch {
			case tc.field == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.field != "" && (len(errs) != 1 || errs[0].Field != tc.field):
				t.Errorf("errors %v, want one on %s", errs, tc.field)
			}
		})
	}
}

func TestPathID(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.SetPathValue("id", "0190A3B4-5C6D-7E8F-9A0B-1C2D3E4F5A6B")
	if got, err := apikit.PathID(r, "id"); err != nil || got != id {
		t.Fatalf("PathID = %q, %v", got, err)
	}
	r.SetPathValue("id", "nope")
	var verrs validation.Errors
	if _, err := apikit.PathID(r, "id"); !errors.As(err, &verrs) || verrs[0].Field != "id" {
		t.Fatalf("PathID(nope) = %v, want a 400 on id", err)
	}
}

// Number keeps the literal: no float64 between the client and the decimal.
func TestNumber(t *testing.T) {
	var in struct {
		Price apikit.Number `json:"price"`
	}
	if err := json.Unmarshal([]byte(`{"price": 0.10000000000000000555}`), &in); err != nil {
		t.Fatal(err)
	}
	d, err := in.Price.Decimal()
	if err != nil || d.String() != "0.10000000000000000555" {
		t.Fatalf("Decimal = %v, %v", d, err)
	}
	for _, bad := range []string{`{"price": "1"}`, `{"price": true}`, `{"price": [1]}`} {
		if err := json.Unmarshal([]byte(bad), &in); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := apikit.Number("1e3").Decimal(); err == nil {
		t.Error("an exponent was accepted")
	}
}

// Answers: an empty page is [], a created resource has its Location under
// the base URL, and a page with more after it links to the next one.
func TestAnswers(t *testing.T) {
	env := apikit.Env{BaseURL: "https://kadens.example"}
	w := httptest.NewRecorder()
	apikit.WriteJSON(w, http.StatusOK, []string(nil))
	if w.Body.String() != "[]\n" {
		t.Errorf("nil slice written as %q", w.Body.String())
	}
	w = httptest.NewRecorder()
	env.Created(w, "/thing/"+id, id)
	if w.Code != http.StatusCreated || w.Header().Get("Location") != "https://kadens.example/thing/"+id || w.Body.String() != `"`+id+`"`+"\n" {
		t.Errorf("created: %d %q %q", w.Code, w.Header().Get("Location"), w.Body.String())
	}
	w = httptest.NewRecorder()
	env.WriteList(w, httptest.NewRequest(http.MethodGet, "/thing?limit=1", nil), []int{1}, id)
	want := `<https://kadens.example/thing?cursor=` + base64.RawURLEncoding.EncodeToString([]byte(id)) + `&limit=1>; rel="next"`
	if got := w.Header().Get("Link"); got != want {
		t.Errorf("Link %q, want %q", got, want)
	}
}
