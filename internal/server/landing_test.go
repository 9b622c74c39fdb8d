package server_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

var hrefs = regexp.MustCompile(`<a href="([^"]+)">([^<]+)</a>`)

// `/` answers a small English page (its language declared, a title, a main
// landmark, a heading, link texts that say where they go) whose links reach
// the API reference, the OpenAPI document, the OpenID Connect discovery
// document and the analytics $metadata, each answering 200 (the analytics
// with a token); the page is no API operation, so /openapi.json does not
// list `/`. The page reads no data: one engine is enough.
func TestLandingPage(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, store.SQLite, nil)
	r := e.Raw("GET", "/", nil)
	page := string(r.Body)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	for _, want := range []string{`<!doctype html>`, `<html lang="en">`, `<title>Kadens</title>`, `<main>`, `<h1>`, `name="viewport"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	var links []string
	for _, m := range hrefs.FindAllStringSubmatch(page, -1) {
		links = append(links, m[1])
		if len(strings.Fields(m[2])) < 2 {
			t.Errorf("link %s has the text %q, which does not say where it goes", m[1], m[2])
		}
	}
	want := []string{"/swagger/", "/openapi.json", "/idp/.well-known/openid-configuration", "/analytics/$metadata"}
	if !slices.Equal(links, want) {
		t.Fatalf("links %v, want %v", links, want)
	}
	for _, l := range want {
		var st int
		if strings.HasPrefix(l, "/analytics/") {
			st = e.Do("GET", l, nil).Status
		} else {
			st = e.Raw("GET", l, nil).Status
		}
		if st != http.StatusOK {
			t.Errorf("%s answers %d", l, st)
		}
	}
	var doc struct{ Paths map[string]any }
	e.Raw("GET", "/openapi.json", nil).JSON(t, &doc)
	if _, ok := doc.Paths["/"]; ok || len(doc.Paths) < 5 {
		t.Fatalf("/openapi.json lists / (or few paths: %d)", len(doc.Paths))
	}
	if r := e.Raw("POST", "/", nil); r.Status == 200 {
		t.Fatal("POST / answered the page")
	}
}
