package invoicedoc

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	"github.com/kadens/kadens/internal/store"
)

// HTMLPolicy is the Content-Security-Policy of the HTML rendering: its
// inline style sheet and the organization's logo, nothing else, so no
// script can run even if escaping ever failed.
const HTMLPolicy = "default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Serve answers with inv rendered as the PDF (pdf) or the HTML page, with
// its content type, length and (PDF) file name, or (HTML) HTMLPolicy:
// what the API's invoice document routes and Min side serve. The document
// is rendered first, so an error leaves w untouched for the caller's
// error answer.
func Serve(w http.ResponseWriter, inv store.Invoice, o Options, pdf bool) error {
	var buf bytes.Buffer
	render, kind := HTML, HTMLContentType
	if pdf {
		render, kind = PDF, PDFContentType
	}
	if err := render(&buf, inv, o); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", kind)
	if pdf {
		h.Set("Content-Disposition", fmt.Sprintf(`inline; filename="invoice-%d.pdf"`, inv.InvoiceNumber))
	} else {
		h.Set("Content-Security-Policy", HTMLPolicy)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	_, err := buf.WriteTo(w)
	return err
}
