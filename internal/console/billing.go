package console

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicedoc"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webui"
)

// invoiceView is the invoice page's data: the invoice with its status now,
// and what was paid, credited and reminded on it.
type invoiceView struct {
	Invoice     store.Invoice
	Subscriber  store.Subscriber
	Payments    []store.Payment
	CreditNotes []store.CreditNote
	Reminders   []invoicing.Reminder
	// Open is what the invoice still owes: a payment or a credit can be
	// recorded.
	Open bool
	// Creditable: some of it is left to credit.
	Creditable bool
	// PaymentForm is the payment form as given, after a refusal.
	PaymentForm paymentForm
	// Credited is what credit notes took off each line so far, by line
	// number; CreditForm the credit form as given, after a refusal.
	Credited   map[int]int64
	CreditForm creditForm
}

// creditForm is the credit form as given: the lines chosen, the amounts
// typed (by line number), and what is wrong beside each field.
type creditForm struct {
	Reason  string
	Chosen  map[int]bool
	Amounts map[int]string
	Errors  map[int]string
}

type paymentForm struct {
	Amount, Reference, PaidOn string
}

func (c *Console) invoiceView(r *http.Request, id string) (invoiceView, error) {
	ctx := r.Context()
	inv, err := c.app.Invoice(ctx, id)
	if err != nil {
		return invoiceView{}, err
	}
	v := invoiceView{Invoice: inv, Open: inv.Status != "Paid" && inv.Status != "Credited"}
	if v.Subscriber, err = c.app.Subscriber(ctx, inv.SubscriberID); err != nil {
		return invoiceView{}, err
	}
	if v.Payments, _, err = c.app.Payments(ctx, store.PaymentFilter{InvoiceID: id}, store.Page{Limit: pageLimit}); err != nil {
		return invoiceView{}, err
	}
	if v.CreditNotes, _, err = c.app.CreditNotes(ctx, store.CreditNoteFilter{InvoiceID: id}, store.Page{Limit: pageLimit}); err != nil {
		return invoiceView{}, err
	}
	if v.Reminders, _, err = c.app.Reminders(ctx, invoicing.ReminderFilter{InvoiceID: id}, store.Page{Limit: pageLimit}); err != nil {
		return invoiceView{}, err
	}
	credited := int64(0)
	v.Credited = map[int]int64{}
	for _, n := range v.CreditNotes {
		credited += n.Gross.Minor
		for _, l := range n.Lines {
			v.Credited[l.InvoiceLineNumber] += l.Gross.Minor
		}
	}
	v.Creditable = credited < inv.Gross.Minor
	return v, nil
}

// invoice shows an invoice: its lines, VAT, totals, KID and due date, and
// the payments, credit notes and reminders on it; finance staff record a
// payment or credit it here.
func (c *Console) invoice(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	v, err := c.invoiceView(r, r.PathValue("id"))
	if c.notFound(w, r, s, err) {
		return
	}
	p := page{Page: webui.Page{Title: fmt.Sprintf("%s %d", texts[c.languages().Choose(w, r)]["invoiceNumber"], v.Invoice.InvoiceNumber), Data: v}}
	switch r.URL.Query().Get("done") {
	case "payment":
		p.Notice = "paymentRecorded"
	case "credit":
		p.Notice = "creditIssued"
	}
	c.render(w, r, s, http.StatusOK, "invoice", p)
}

// invoicePDF answers the invoice's PDF as the API's GET /invoice/{id}
// with Accept: application/pdf and Min side serve it (invoicedoc.Serve).
func (c *Console) invoicePDF(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	ctx := r.Context()
	inv, err := c.app.Invoice(ctx, r.PathValue("id"))
	if c.notFound(w, r, s, err) {
		return
	}
	loc, err := c.app.OrganizationZone(ctx, inv.OrganizationID)
	if c.failed(w, r, s, err) {
		return
	}
	lang := invoicedoc.English
	if c.languages().Choose(w, r) == "nb" {
		lang = invoicedoc.Norwegian
	}
	if err := invoicedoc.Serve(w, inv, invoicedoc.Options{Lang: lang, Location: loc}, true); err != nil {
		c.failed(w, r, s, err)
	}
}

// recordPayment records a payment a finance user saw on the bank account
// (provider Manual) through the API's own function. The bank's reference
// makes it idempotent: the same reference again records nothing new, so a
// form sent twice pays once.
func (c *Console) recordPayment(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	id := r.PathValue("id")
	ctx := r.Context()
	f := paymentForm{Amount: strings.TrimSpace(r.PostFormValue("amount")), Reference: strings.TrimSpace(r.PostFormValue("reference")),
		PaidOn: strings.TrimSpace(r.PostFormValue("paidOn"))}
	again := func(status int, msg string) {
		v, err := c.invoiceView(r, id)
		if c.notFound(w, r, s, err) {
			return
		}
		v.PaymentForm = f
		c.render(w, r, s, status, "invoice", page{Page: webui.Page{Data: v, Error: msg}})
	}
	inv, err := c.app.Invoice(ctx, id)
	if c.notFound(w, r, s, err) {
		return
	}
	cur, ok := money.LookupCurrency(inv.Currency)
	if !ok {
		c.failed(w, r, s, fmt.Errorf("console: invoice %s: unknown currency %s", inv.ID, inv.Currency))
		return
	}
	minor, err := money.ParseMinor(strings.ReplaceAll(strings.ReplaceAll(f.Amount, " ", ""), ",", "."), cur)
	if err != nil || minor <= 0 {
		again(http.StatusBadRequest, "badAmount")
		return
	}
	if f.Reference == "" || len(f.Reference) > 200 || validation.TextProblem(f.Reference, false) != "" {
		again(http.StatusBadRequest, "badReference")
		return
	}
	var paidAt *time.Time
	if f.PaidOn != "" {
		d, err := time.ParseInLocation("2006-01-02", f.PaidOn, c.zone)
		if err != nil {
			again(http.StatusBadRequest, "badDate")
			return
		}
		d = d.Add(12 * time.Hour) // midday: the same date in every Nordic zone
		paidAt = &d
	}
	_, _, err = c.app.RecordPayment(ctx, app.NewPayment{InvoiceID: id, Status: store.PaymentSucceeded, Amount: minor, Currency: inv.Currency,
		PaidAt: paidAt, Provider: "Manual", ProviderReference: f.Reference})
	var invalid validation.Errors
	switch {
	case errors.As(err, &invalid):
		again(http.StatusBadRequest, "paymentRefused")
		return
	case errors.Is(err, store.ErrConflict):
		again(http.StatusConflict, "referenceTaken")
		return
	case c.failed(w, r, s, err):
		return
	}
	http.Redirect(w, r, Prefix+"/invoice/"+id+"?done=payment", http.StatusSeeOther)
}

// creditInvoice credits an invoice, with a reason, through the API's own
// function (App.CreditInvoice): the lines chosen, each with the amount
// typed or, without one, all that is left of it; no line chosen credits
// what is left of the whole invoice. A line with an amount typed counts as
// chosen. What cannot be credited is shown beside the line's field.
// Crediting the whole invoice twice credits once: the second finds
// nothing left.
func (c *Console) creditInvoice(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	id := r.PathValue("id")
	f := creditForm{Reason: strings.TrimSpace(r.PostFormValue("reason")), Chosen: map[int]bool{}, Amounts: map[int]string{}, Errors: map[int]string{}}
	fail := func(status int, msg string) {
		v, err := c.invoiceView(r, id)
		if c.notFound(w, r, s, err) {
			return
		}
		v.CreditForm = f
		c.render(w, r, s, status, "invoice", page{Page: webui.Page{Data: v, Error: msg}})
	}
	inv, err := c.app.Invoice(r.Context(), id)
	if c.notFound(w, r, s, err) {
		return
	}
	for _, v := range r.PostForm["line"] {
		n, err := strconv.Atoi(v)
		if err != nil {
			c.fail(w, r, s, http.StatusBadRequest, "badForm")
			return
		}
		f.Chosen[n] = true
	}
	var lines []app.CreditLine
	for _, l := range inv.Lines {
		amt := strings.TrimSpace(r.PostFormValue("amount-" + strconv.Itoa(l.LineNumber)))
		f.Amounts[l.LineNumber] = amt
		if amt != "" {
			f.Chosen[l.LineNumber] = true
		}
		if f.Chosen[l.LineNumber] {
			n := l.LineNumber
			lines = append(lines, app.CreditLine{LineNumber: &n, Amount: strings.ReplaceAll(strings.ReplaceAll(amt, " ", ""), ",", ".")})
		}
	}
	if f.Reason == "" || len(f.Reason) > 500 || validation.TextProblem(f.Reason, false) != "" {
		fail(http.StatusBadRequest, "creditReason")
		return
	}
	_, err = c.app.CreditInvoice(r.Context(), app.NewCredit{InvoiceID: id, Reason: f.Reason, Lines: lines})
	var invalid validation.Errors
	switch {
	case errors.As(err, &invalid):
		msg := "nothingToCredit"
		for _, fe := range invalid {
			var i int
			if _, err := fmt.Sscanf(fe.Field, "lines[%d]", &i); err == nil && i >= 0 && i < len(lines) {
				key := "creditLineAmount"
				if strings.HasSuffix(fe.Field, ".lineNumber") {
					key = "creditLineNumber"
				}
				f.Errors[*lines[i].LineNumber] = texts[c.languages().Choose(w, r)][key]
				msg = "creditLineProblem"
			}
		}
		fail(http.StatusBadRequest, msg)
		return
	case c.notFound(w, r, s, err):
		return
	}
	http.Redirect(w, r, Prefix+"/invoice/"+id+"?done=credit", http.StatusSeeOther)
}

// changeOption is a package a subscription can be changed to.
type changeOption struct {
	ID, Name string
	Price    catalog.Amount
	Currency string
}

// changeOptions are the tenant's packages in the subscription's currency
// that could be changed to (the first page of them, by name).
func (c *Console) changeOptions(r *http.Request, sub store.Subscription) ([]changeOption, error) {
	pkgs, _, err := c.app.Packages(r.Context(), catalogdb.PackageFilter{}, store.Page{Limit: pageLimit})
	if err != nil {
		return nil, err
	}
	var out []changeOption
	for _, p := range pkgs {
		if p.Currency == sub.Currency && !p.Archived() {
			out = append(out, changeOption{ID: p.ID, Name: p.Name, Price: p.Price, Currency: p.Currency})
		}
	}
	return out, nil
}

// changePlan registers a plan change on a subscription (now, or at the
// next renewal) through the same function as the API's plan change.
func (c *Console) changePlan(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	id := r.PathValue("id")
	when, target := r.PostFormValue("when"), r.PostFormValue("package")
	problem := ""
	switch {
	case when != store.ChangeImmediately && when != store.ChangeOnRenewal:
		problem = "changeWhen"
	case !store.ValidID(target):
		problem = "changePackage"
	}
	if problem == "" {
		_, err := c.app.RegisterChange(r.Context(), id, engine.ChangeRequest{ProcessingType: when, TemplatePackageID: target})
		var invalid validation.Errors
		switch {
		case err == nil:
			http.Redirect(w, r, Prefix+"/subscription/"+id+"?done=changed", http.StatusSeeOther)
			return
		case errors.As(err, &invalid):
			problem = "changeRefused"
		case c.notFound(w, r, s, err):
			return
		}
	}
	c.refused(w, r, s, id, problem)
}

// revokeChange revokes the plan change registered on a subscription.
func (c *Console) revokeChange(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	id, change := r.PathValue("id"), r.PathValue("change")
	if !store.ValidID(change) {
		c.fail(w, r, s, http.StatusBadRequest, "badID")
		return
	}
	err := c.app.RevokeChange(r.Context(), id, change)
	var invalid validation.Errors
	if errors.As(err, &invalid) {
		c.refused(w, r, s, id, "revokeRefused")
		return
	}
	if c.notFound(w, r, s, err) {
		return
	}
	http.Redirect(w, r, Prefix+"/subscription/"+id+"?done=revoked", http.StatusSeeOther)
}
