package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/invoicedoc"
	"github.com/kadens/kadens/internal/store"
)

// Media types of GET /invoice/{id}, in the server's order of preference:
// JSON is the default (no Accept, */*, application/*).
const (
	mediaJSON = "application/json"
	mediaHTML = "text/html"
	mediaPDF  = "application/pdf"
)

var invoiceMediaTypes = []string{mediaJSON, mediaHTML, mediaPDF}

var errNotAcceptable = &statusError{http.StatusNotAcceptable, "not acceptable"}

// invoiceGetParams documents GET /invoice/{id}. The media type is chosen
// with the Accept header, which OpenAPI does not let an operation declare as
// a parameter; the responses list the three types instead.
type invoiceGetParams struct {
	apikit.IDParam
	Lang string `query:"lang" enum:"en,nb" description:"Language of the text/html and application/pdf renderings (labels, number and date formats): en (default; 1,234.50 and 2027-02-01) or nb (1 234,50 and 01.02.2027). Not used by JSON."`
}

// invoiceResponses are the answers of GET /invoice/{id}: one 200 with three
// content types (the OpenAPI reflector merges responses of one status).
func invoiceResponses() []response {
	return common(
		response{status: http.StatusOK, body: new(store.Invoice),
			desc: "The invoice. JSON unless the Accept header prefers text/html (a printable page with the organization's logo, " +
				"lines, VAT summary, totals, KID and due date) or application/pdf (the same content on A4, without the logo). " +
				"Responses vary by Accept."},
		response{status: http.StatusOK, contentType: mediaHTML},
		response{status: http.StatusOK, contentType: mediaPDF},
		respNotFound,
		response{status: http.StatusNotAcceptable, desc: "The Accept header admits none of " + strings.Join(invoiceMediaTypes, ", ") + "; no body."},
	)
}

// invoiceFormat is how GET /invoice/{id} answers: the negotiated media type
// and, for the documents, their language.
type invoiceFormat struct {
	media string
	lang  string
}

// negotiateInvoice reads Accept and lang: 406 when Accept admits no
// media type we serve, 400 naming lang when it is not a language we write.
func negotiateInvoice(r *http.Request) (invoiceFormat, error) {
	media, ok := negotiate(strings.Join(r.Header.Values("Accept"), ","), invoiceMediaTypes)
	if !ok {
		return invoiceFormat{}, errNotAcceptable
	}
	lang := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("lang")))
	if lang == "" {
		lang = invoicedoc.English
	}
	if !slices.Contains(invoicedoc.Languages, lang) {
		return invoiceFormat{}, fieldErr("lang", "must be one of "+strings.Join(invoicedoc.Languages, ", "))
	}
	return invoiceFormat{media: media, lang: lang}, nil
}

// writeInvoiceDocument renders inv (its status already derived) as HTML or
// PDF (invoicedoc.Serve). Dates of periods are shown in the organization's
// time zone.
func (s *Server) writeInvoiceDocument(w http.ResponseWriter, r *http.Request, inv store.Invoice, f invoiceFormat) error {
	loc, err := s.app.OrganizationZone(r.Context(), inv.OrganizationID)
	if err != nil {
		return err
	}
	return invoicedoc.Serve(w, inv, invoicedoc.Options{Lang: f.lang, Location: loc}, f.media == mediaPDF)
}

// negotiate picks the media type of offers (in the server's order of
// preference) that accept (an Accept header value, RFC 9110 §12.5.1)
// ranks highest. A media type takes the quality of the most specific range
// that matches it (type/subtype over type/* over */*); ties go to the
// earlier offer; q=0 refuses. No Accept at all accepts everything. ok is
// false when nothing is acceptable.
func negotiate(accept string, offers []string) (string, bool) {
	if strings.TrimSpace(accept) == "" {
		return offers[0], true
	}
	type mediaRange struct {
		typ, sub string
		q        float64
	}
	var ranges []mediaRange
	for _, part := range strings.Split(accept, ",") {
		params := strings.Split(part, ";")
		typ, sub, ok := strings.Cut(strings.ToLower(strings.TrimSpace(params[0])), "/")
		if !ok || typ == "" || sub == "" || (typ == "*" && sub != "*") {
			continue
		}
		mr := mediaRange{typ: strings.TrimSpace(typ), sub: strings.TrimSpace(sub), q: 1}
		valid := true
		for _, p := range params[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || q < 0 || q > 1 {
					valid = false
				}
				mr.q = q
			}
		}
		if valid {
			ranges = append(ranges, mr)
		}
	}
	best, bestQ := "", 0.0
	for _, offer := range offers {
		typ, sub, _ := strings.Cut(offer, "/")
		q, specificity := 0.0, 0
		for _, mr := range ranges {
			s := 0
			switch {
			case mr.typ == typ && mr.sub == sub:
				s = 3
			case mr.typ == typ && mr.sub == "*":
				s = 2
			case mr.typ == "*":
				s = 1
			}
			if s > specificity || (s == specificity && s > 0 && mr.q > q) {
				q, specificity = mr.q, s
			}
		}
		if q > bestQ {
			best, bestQ = offer, q
		}
	}
	return best, bestQ > 0
}
