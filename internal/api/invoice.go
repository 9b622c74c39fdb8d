package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

type invoiceListParams struct {
	apikit.ListParams
	SubscriberID   string `query:"subscriberId" format:"uuid" description:"Only invoices of this subscriber."`
	SubscriptionID string `query:"subscriptionId" format:"uuid" description:"Only invoices of this subscription period."`
	Status         string `query:"status" enum:"Issued,PartiallyPaid,Paid,Overdue,Credited"`
	IssuedFrom     string `query:"issuedFrom" format:"date-time" description:"Only invoices issued at or after this time."`
	IssuedTo       string `query:"issuedTo" format:"date-time" description:"Only invoices issued before this time."`
	KID            string `query:"kid" description:"Only the invoices with this KID (payment reference)."`
	InvoiceNumber  string `query:"invoiceNumber" description:"Only the invoices with this number (numbers are per organization, so several organizations' invoices may match)."`
	Expand         string `query:"expand" pattern:"^(seller|buyer|lines|vatTotals)(,(seller|buyer|lines|vatTotals))*$" description:"Parts of the invoice the list items carry besides the ids, totals, KID, dates and status: seller, buyer, lines, vatTotals (comma separated, or the parameter repeated). GET /invoice/{id} always has them all."`
}

func (s *Server) invoiceRoutes() {
	const tag = "Invoice"
	s.add(route{method: http.MethodGet, path: "/invoice/{id}", id: "getInvoice", tag: tag,
		summary: "Get an invoice",
		desc: "An invoice as issued: number (gap-free per organization), issue and due dates, seller and buyer, lines with " +
			"net, VAT and gross, VAT totals per rate, KID. Status Overdue is derived from the due time and the tenant's clock. " +
			"`Accept: text/html` answers a printable page and `Accept: application/pdf` a PDF (optional `lang`: en, nb); " +
			"an Accept that admits none of JSON, HTML and PDF is 406.",
		request: new(invoiceGetParams), responses: invoiceResponses(), handle: s.getInvoice})
	s.add(route{method: http.MethodGet, path: "/invoice", id: "listInvoices", tag: tag,
		summary: "List invoices", desc: "Items leave out the seller, buyer, lines and VAT totals unless `expand` names them.",
		request: new(invoiceListParams), responses: common(respOK(new([]InvoiceListItem))), handle: s.listInvoices})
}

func (s *Server) getInvoice(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	w.Header().Add("Vary", "Accept")
	format, err := negotiateInvoice(r)
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	inv, err := s.app.Invoice(r.Context(), id)
	if err != nil {
		return err
	}
	inv.Status = billing.Status(inv.Status, inv.DueAt, now)
	if format.media != mediaJSON {
		return s.writeInvoiceDocument(w, r, inv, format)
	}
	apikit.WriteJSON(w, http.StatusOK, inv)
	return nil
}

// documentFilter reads the query parameters invoices and demands share.
func documentFilter(r *http.Request, errs *validation.Errors, statuses []string, now time.Time) store.DocumentFilter {
	q := r.URL.Query()
	f := store.DocumentFilter{Now: now}
	ids := map[string]*string{"subscriberId": &f.SubscriberID, "subscriptionId": &f.SubscriptionID}
	for _, name := range []string{"subscriberId", "subscriptionId"} {
		v := strings.ToLower(strings.TrimSpace(q.Get(name)))
		if v != "" && !store.ValidID(v) {
			errs.Add(name, "must be a uuid")
			continue
		}
		*ids[name] = v
	}
	if v := q.Get("status"); v != "" {
		if !slices.Contains(statuses, v) {
			errs.Add("status", "must be one of %s", strings.Join(statuses, ", "))
		}
		f.Status = v
	}
	for name, dst := range map[string]**time.Time{"issuedFrom": &f.IssuedFrom, "issuedTo": &f.IssuedTo} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				errs.Add(name, "must be an RFC 3339 time")
				continue
			}
			t = t.UTC()
			*dst = &t
		}
	}
	return f
}

func (s *Server) listInvoices(w http.ResponseWriter, r *http.Request) error {
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	f := documentFilter(r, &errs, billing.InvoiceStatuses, now)
	expand := expandParam(r, &errs, "seller", "buyer", "lines", "vatTotals")
	parts := store.InvoiceParts{Seller: expand["seller"], Buyer: expand["buyer"], Lines: expand["lines"], VATTotals: expand["vatTotals"]}
	if err := errs.Err(); err != nil {
		return err
	}
	q := r.URL.Query()
	if v := strings.TrimSpace(q.Get("kid")); v != "" {
		if strings.Trim(v, "0123456789") != "" || len(v) < 2 || len(v) > 25 {
			errs.Add("kid", "must be the digits of a KID (2 to 25)")
		}
		f.KID = v
	}
	if v := strings.TrimSpace(q.Get("invoiceNumber")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			errs.Add("invoiceNumber", "must be a positive integer")
		}
		f.InvoiceNumber = &n
	}
	if err := errs.Err(); err != nil {
		return err
	}
	invs, next, err := s.app.Invoices(r.Context(), f, p, parts)
	if err != nil {
		return err
	}
	for i := range invs {
		invs[i].Status = billing.Status(invs[i].Status, invs[i].DueAt, now)
	}
	s.writeInvoiceList(w, r, invs, parts, next)
	return nil
}
