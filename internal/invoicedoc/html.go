package invoicedoc

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"

	"github.com/kadens/kadens/internal/store"
)

//go:embed templates/invoice.html
var templates embed.FS

// page is parsed once; html/template escapes every value by its context
// (text, attribute, URL), so a seller or buyer name cannot inject markup
// and a logo URL cannot become a javascript: link.
var page = template.Must(template.ParseFS(templates, "templates/invoice.html"))

// HTMLContentType is the media type HTML writes.
const HTMLContentType = "text/html; charset=utf-8"

// HTML writes inv as a self-contained, printable HTML page (inline
// stylesheet with an A4 print layout; the only external resource is the
// organization's logo).
func HTML(w io.Writer, inv store.Invoice, o Options) error {
	v, err := newView(inv, o)
	if err != nil {
		return err
	}
	// Render to memory first, so a template error never leaves half a page.
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return fmt.Errorf("invoicedoc: render invoice %s: %w", inv.ID, err)
	}
	_, err = buf.WriteTo(w)
	return err
}
