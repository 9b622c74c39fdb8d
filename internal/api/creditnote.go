package api

import (
	"encoding/json"
	"net/http"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// CreditInput is the body of POST /invoice/{id}/credit. Without lines the
// whole invoice is credited (every positive line, less what earlier credit
// notes took).
type CreditInput struct {
	Reason *string           `json:"reason" maxLength:"500" description:"Why the invoice is credited; printed on the credit note." example:"Delivery missed in week 12"`
	Lines  []CreditLineInput `json:"lines" maxItems:"1000" description:"What to credit, per invoice line. Left out: everything that can still be credited."`
}

// CreditLineInput credits amount (gross, in the invoice's currency and
// price convention's gross) of invoice line lineNumber; without an amount,
// all that is left of the line.
type CreditLineInput struct {
	LineNumber *int        `json:"lineNumber" required:"true" minimum:"1"`
	Amount     json.Number `json:"amount" description:"Gross amount to credit; at most what is left of the line. Left out: all of it." example:"49.50"`
}

type creditNoteListParams struct {
	apikit.ListParams
	InvoiceID    string `query:"invoiceId" format:"uuid" description:"Only credit notes of this invoice."`
	SubscriberID string `query:"subscriberId" format:"uuid" description:"Only credit notes of this subscriber."`
}

type reminderListParams struct {
	apikit.ListParams
	InvoiceID    string `query:"invoiceId" format:"uuid" description:"Only reminders of this invoice."`
	SubscriberID string `query:"subscriberId" format:"uuid" description:"Only reminders of this subscriber."`
}

func (s *Server) creditNoteRoutes() {
	const tag = "CreditNote"
	s.add(route{method: http.MethodPost, path: "/invoice/{id}/credit", id: "creditInvoice", tag: tag,
		summary: "Credit an invoice, fully or by lines",
		desc: "Issues a credit note, numbered in the organization's own gap-free credit note series. What it credits first " +
			"reduces what the invoice still owes; beyond that (the invoice was paid) it becomes an allowance on the subscriber " +
			"account, applied to the next invoices. Records CreditNoteIssued. Cancelling a subscription credits its unused or " +
			"future periods by itself.",
		request: new(struct {
			apikit.IDParam
			CreditInput
		}), responses: common(respCreated, respNotFound), handle: s.creditInvoice})
	s.add(route{method: http.MethodGet, path: "/creditnote/{id}", id: "getCreditNote", tag: tag,
		summary: "Get a credit note", request: new(apikit.IDParam),
		responses: common(respOK(new(store.CreditNote)), respNotFound), handle: apikit.GetOne(s.app.CreditNote)})
	s.add(route{method: http.MethodGet, path: "/creditnote", id: "listCreditNotes", tag: tag,
		summary: "List credit notes", request: new(creditNoteListParams),
		responses: common(respOK(new([]store.CreditNote))), handle: s.listCreditNotes})
	s.add(route{method: http.MethodGet, path: "/reminder", id: "listReminders", tag: "DunningProcess",
		summary: "List reminders issued for unpaid invoices", request: new(reminderListParams),
		responses: common(respOK(new([]invoicing.Reminder))), handle: s.listReminders})
}

func (s *Server) creditInvoice(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in CreditInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	reason := apikit.Text(&errs, "reason", in.Reason, 500, false)
	if err := errs.Err(); err != nil {
		return err
	}
	lines := make([]app.CreditLine, len(in.Lines))
	for i, l := range in.Lines {
		lines[i] = app.CreditLine{LineNumber: l.LineNumber, Amount: string(l.Amount)}
	}
	note, err := s.app.CreditInvoice(r.Context(), app.NewCredit{InvoiceID: id, Reason: reason, Lines: lines})
	if err != nil {
		return err
	}
	s.created(w, "/creditnote/"+note.ID, note.ID)
	return nil
}

func (s *Server) listCreditNotes(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := store.CreditNoteFilter{InvoiceID: apikit.QueryID(q, "invoiceId", &errs), SubscriberID: apikit.QueryID(q, "subscriberId", &errs)}
	if err := errs.Err(); err != nil {
		return err
	}
	cs, next, err := s.app.CreditNotes(r.Context(), f, p)
	if err != nil {
		return err
	}
	if cs == nil {
		cs = []store.CreditNote{}
	}
	s.writeList(w, r, cs, next)
	return nil
}

func (s *Server) listReminders(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := invoicing.ReminderFilter{InvoiceID: apikit.QueryID(q, "invoiceId", &errs), SubscriberID: apikit.QueryID(q, "subscriberId", &errs)}
	if err := errs.Err(); err != nil {
		return err
	}
	rs, next, err := s.app.Reminders(r.Context(), f, p)
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []invoicing.Reminder{}
	}
	s.writeList(w, r, rs, next)
	return nil
}
