package api

import (
	"bytes"
	"testing"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/invoice"
)

// TestOpenAPIKeptDocument holds the kept document to a fresh rendering: a
// server's /openapi.json names its own addresses, even ones JSON escapes,
// and servers with other addresses started before it change nothing.
func TestOpenAPIKeptDocument(t *testing.T) {
	for _, c := range []struct{ base, idp string }{
		{"http://kadens.test", "http://kadens.test/idp"},
		{"https://billing.example.no/a&b<c>", "https://login.example.no/\"q\"\\"},
		{"http://kadens.test", "http://other.test/idp"},
	} {
		s, err := New(Options{BaseURL: c.base, IdPURL: c.idp, Providers: provider.NewRegistry(invoice.Provider)})
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.renderOpenAPI(c.base, c.idp)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(s.doc, want) {
			t.Errorf("%s, %s: the kept document differs from a fresh rendering", c.base, c.idp)
		}
		if bytes.Contains(s.doc, []byte(".kadens-openapi.invalid")) {
			t.Errorf("%s: a placeholder is left in the document", c.base)
		}
	}
}
