package minside

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicedoc"
	"github.com/kadens/kadens/internal/privacy"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webui"
)

// listLimit bounds each list a page shows (the newest first).
const listLimit = 100

// subscriptionView is one current subscription with its next invoice.
type subscriptionView struct {
	Subscription store.Subscription
	Status       string
	Cancellable  bool
	// Undoable: a cancellation waits to take effect (at the period's end
	// or the binding's); whether it may be undone is the engine's to say.
	Undoable bool
	Upcoming *app.UpcomingInvoice
}

type overviewView struct {
	Subscriber    store.Subscriber
	Subscriptions []subscriptionView
}

// linked answers the page for a user who acts for no subscriber (the
// merchant has not linked one yet) and reports whether there is one.
func (m *MinSide) linked(w http.ResponseWriter, r *http.Request, s *session) bool {
	if s.SubscriberID != "" {
		return true
	}
	m.render(w, r, s, http.StatusOK, "error", page{Page: webui.Page{Title: s.Email, Data: "noSubscriber"}})
	return false
}

// subscriber is the session's subscriber, or false when the request has
// been answered (no subscriber linked, or it is gone).
func (m *MinSide) subscriber(w http.ResponseWriter, r *http.Request, s *session) (store.Subscriber, bool) {
	if !m.linked(w, r, s) {
		return store.Subscriber{}, false
	}
	sub, err := m.o.App.Subscriber(r.Context(), s.SubscriberID)
	return sub, !m.notFound(w, r, s, err)
}

// subscriberNow is subscriber and the tenant's time.
func (m *MinSide) subscriberNow(w http.ResponseWriter, r *http.Request, s *session) (store.Subscriber, time.Time, bool) {
	sub, ok := m.subscriber(w, r, s)
	if !ok {
		return sub, time.Time{}, false
	}
	now, err := m.o.App.Now(r.Context())
	return sub, now, !m.failed(w, r, s, err)
}

// overview lists the subscriber's current subscriptions (the latest
// period of each series), what each includes and costs, and the invoice
// its next renewal will issue (App.UpcomingInvoice).
func (m *MinSide) overview(w http.ResponseWriter, r *http.Request, s *session) {
	sub, now, ok := m.subscriberNow(w, r, s)
	if !ok {
		return
	}
	ctx := r.Context()
	v := overviewView{Subscriber: sub}
	list, _, err := m.o.App.Subscriptions(ctx, store.SubscriptionFilter{SubscriberID: s.SubscriberID}, store.Page{Limit: listLimit}, false)
	if m.failed(w, r, s, err) {
		return
	}
	for _, l := range list {
		if l.NextID != nil {
			continue
		}
		full, err := m.o.App.Subscription(ctx, l.ID)
		if m.failed(w, r, s, err) {
			return
		}
		status := engine.Status(full, now)
		sv := subscriptionView{Subscription: full, Status: status,
			Cancellable: full.CancelledAt == nil && full.DeactivatedAt == nil && full.ScheduledCancelAt == nil && status != "Completed" && status != "Cancelled",
			Undoable:    full.DeactivatedAt == nil && (full.CancelledAt != nil || full.ScheduledCancelAt != nil) && status != "Completed"}
		if status != "Completed" && status != "Cancelled" {
			up, err := m.o.App.UpcomingInvoice(ctx, l.ID)
			if m.failed(w, r, s, err) {
				return
			}
			sv.Upcoming = &up
		}
		v.Subscriptions = append(v.Subscriptions, sv)
	}
	p := page{Page: webui.Page{Data: v}}
	switch r.URL.Query().Get("done") {
	case "cancelled":
		p.Notice = "cancelled"
	case "undone":
		p.Notice = "undone"
	}
	m.render(w, r, s, http.StatusOK, "overview", p)
}

type invoicesView struct {
	Invoices    []store.Invoice
	CreditNotes []store.CreditNote
	Payments    []store.Payment
}

// invoices lists the subscriber's invoices (status as of now), credit
// notes and payments, newest first.
func (m *MinSide) invoices(w http.ResponseWriter, r *http.Request, s *session) {
	if !m.linked(w, r, s) {
		return
	}
	ctx := r.Context()
	now, err := m.o.App.Now(ctx)
	if m.failed(w, r, s, err) {
		return
	}
	var v invoicesView
	v.Invoices, _, err = m.o.App.Invoices(ctx, store.DocumentFilter{SubscriberID: s.SubscriberID, Now: now}, store.Page{Limit: listLimit}, store.InvoiceParts{Seller: true})
	if m.failed(w, r, s, err) {
		return
	}
	v.CreditNotes, _, err = m.o.App.CreditNotes(ctx, store.CreditNoteFilter{SubscriberID: s.SubscriberID}, store.Page{Limit: listLimit})
	if m.failed(w, r, s, err) {
		return
	}
	v.Payments, _, err = m.o.App.Payments(ctx, store.PaymentFilter{SubscriberID: s.SubscriberID}, store.Page{Limit: listLimit})
	if m.failed(w, r, s, err) {
		return
	}
	slices.Reverse(v.Invoices)
	slices.Reverse(v.CreditNotes)
	slices.Reverse(v.Payments)
	m.render(w, r, s, http.StatusOK, "invoices", page{Page: webui.Page{Data: v}})
}

// mine is err, or store.ErrNotFound when the record read is another
// subscriber's: to this subscriber it does not exist.
func (s *session) mine(subscriberID string, err error) error {
	if err == nil && subscriberID != s.SubscriberID {
		return store.ErrNotFound
	}
	return err
}

// ownID reads the route's id: a 400 page when it is no id.
func (m *MinSide) ownID(w http.ResponseWriter, r *http.Request, s *session) (string, bool) {
	id := r.PathValue("id")
	if !store.ValidID(id) {
		m.fail(w, r, s, http.StatusBadRequest, "badID")
		return "", false
	}
	return id, m.linked(w, r, s)
}

// invoice is one of the subscriber's invoices as the printable page
// (?format=html, the default) or the PDF (?format=pdf), as the API's
// invoice document routes render it (internal/invoicedoc). Another
// subscriber's invoice is a 404, as a missing one.
func (m *MinSide) invoice(w http.ResponseWriter, r *http.Request, s *session) {
	id, ok := m.ownID(w, r, s)
	if !ok {
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "html" && format != "pdf" {
		m.fail(w, r, s, http.StatusBadRequest, "badFormat")
		return
	}
	ctx := r.Context()
	inv, err := m.o.App.Invoice(ctx, id)
	if m.notFound(w, r, s, s.mine(inv.SubscriberID, err)) {
		return
	}
	now, err := m.o.App.Now(ctx)
	if m.failed(w, r, s, err) {
		return
	}
	inv.Status = billing.Status(inv.Status, inv.DueAt, now)
	opts := invoicedoc.Options{Lang: invoicedoc.English}
	if l := m.languages().Choose(w, r); l == "nb" || l == "nn" {
		opts.Lang = invoicedoc.Norwegian
	}
	if opts.Location, err = m.o.App.OrganizationZone(ctx, inv.OrganizationID); m.failed(w, r, s, err) {
		return
	}
	if err := invoicedoc.Serve(w, inv, opts, format == "pdf"); err != nil {
		m.failed(w, r, s, err)
	}
}

// cancel ends one of the subscriber's subscriptions at the end of its
// paid period, through App.CancelSubscription (the API's and the
// console's); another subscriber's is a 404.
func (m *MinSide) cancel(w http.ResponseWriter, r *http.Request, s *session) {
	id, ok := m.ownID(w, r, s)
	if !ok {
		return
	}
	ctx := r.Context()
	sub, err := m.o.App.Subscription(ctx, id)
	if m.notFound(w, r, s, s.mine(sub.SubscriberID, err)) {
		return
	}
	_, _, err = m.o.App.CancelSubscription(ctx, id, app.Cancellation{Mode: engine.CancelEndOfPeriod, Reason: "Cancelled by the subscriber on Min side"})
	var invalid validation.Errors
	switch {
	case err == nil:
		http.Redirect(w, r, Prefix+"/?done=cancelled", http.StatusSeeOther)
	case errors.As(err, &invalid):
		m.fail(w, r, s, http.StatusConflict, "cancelRefused")
	default:
		m.notFound(w, r, s, err)
	}
}

// undoCancel takes back the cancellation waiting on one of the
// subscriber's subscriptions, through App.UndoCancellation (the API's);
// one the engine refuses (it took effect or settled money) is a 409 page
// that sends the subscriber to customer service; another subscriber's is
// a 404.
func (m *MinSide) undoCancel(w http.ResponseWriter, r *http.Request, s *session) {
	id, ok := m.ownID(w, r, s)
	if !ok {
		return
	}
	ctx := r.Context()
	sub, err := m.o.App.Subscription(ctx, id)
	if m.notFound(w, r, s, s.mine(sub.SubscriberID, err)) {
		return
	}
	_, _, err = m.o.App.UndoCancellation(ctx, id)
	var invalid validation.Errors
	switch {
	case err == nil:
		http.Redirect(w, r, Prefix+"/?done=undone", http.StatusSeeOther)
	case errors.As(err, &invalid):
		m.fail(w, r, s, http.StatusConflict, "undoRefused")
	default:
		m.notFound(w, r, s, err)
	}
}

// profileForm is the contact and address form's fields.
type profileForm struct {
	Name, Email, Phone, Line1, Line2, PostalCode, City, Country string
	// Deletion is the subscriber's open deletion request (nil: none);
	// Message and MessageProblem the deletion form as sent, when refused.
	Deletion                *privacy.Request
	Message, MessageProblem string
}

func formOf(sub store.Subscriber) profileForm {
	return profileForm{Name: sub.Name, Email: sub.Email, Phone: sub.Phone, Line1: sub.Address.Line1, Line2: sub.Address.Line2,
		PostalCode: sub.Address.PostalCode, City: sub.Address.City, Country: sub.Address.Country}
}

func (m *MinSide) profile(w http.ResponseWriter, r *http.Request, s *session) {
	sub, ok := m.subscriber(w, r, s)
	if !ok {
		return
	}
	f := formOf(sub)
	if !m.withDeletion(w, r, s, &f) {
		return
	}
	p := page{Page: webui.Page{Data: f}}
	switch r.URL.Query().Get("done") {
	case "saved":
		p.Notice = "saved"
	case "deletion":
		p.Notice = "deletionRequested"
	}
	m.render(w, r, s, http.StatusOK, "profile", p)
}

// withDeletion adds the subscriber's open deletion request, if any, to
// the profile page's data.
func (m *MinSide) withDeletion(w http.ResponseWriter, r *http.Request, s *session, f *profileForm) bool {
	open, _, err := m.o.App.DeletionRequests(r.Context(), privacy.Filter{Status: privacy.StatusOpen, SubscriberID: s.SubscriberID}, store.Page{Limit: 1})
	if m.failed(w, r, s, err) {
		return false
	}
	if len(open) > 0 {
		f.Deletion = &open[0]
	}
	return true
}

// requestDeletion records the subscriber's request to delete their data
// (App.RequestDeletion: a task for the merchant, answered within a month;
// asking again while one is open changes nothing) and shows the profile
// page with it. A message too long is a 400 page beside the form.
func (m *MinSide) requestDeletion(w http.ResponseWriter, r *http.Request, s *session) {
	sub, ok := m.subscriber(w, r, s)
	if !ok {
		return
	}
	msg := r.PostFormValue("message")
	_, _, err := m.o.App.RequestDeletion(r.Context(), sub.ID, msg)
	var invalid validation.Errors
	switch {
	case err == nil:
		http.Redirect(w, r, Prefix+"/profile?done=deletion", http.StatusSeeOther)
	case errors.As(err, &invalid):
		f := formOf(sub)
		f.Message, f.MessageProblem = msg, "deletionBadMessage"
		if m.withDeletion(w, r, s, &f) {
			m.render(w, r, s, http.StatusBadRequest, "profile", page{Page: webui.Page{Data: f}})
		}
	default:
		m.failed(w, r, s, err)
	}
}

// profileFields map the form's fields to the names App.UpdateSubscriber's
// validation.Errors use.
var profileFields = map[string]string{"name": "name", "email": "email", "phone": "phone", "line1": "address.line1",
	"line2": "address.line2", "postalCode": "address.postalCode", "city": "address.city", "country": "address.country"}

// saveProfile updates the subscriber's contact details and invoice
// address through App.UpdateSubscriber; its problems are shown beside the
// fields (400).
func (m *MinSide) saveProfile(w http.ResponseWriter, r *http.Request, s *session) {
	sub, ok := m.subscriber(w, r, s)
	if !ok {
		return
	}
	ctx := r.Context()
	get := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := profileForm{Name: get("name"), Email: get("email"), Phone: get("phone"), Line1: get("line1"), Line2: get("line2"),
		PostalCode: get("postalCode"), City: get("city"), Country: strings.ToUpper(get("country"))}
	fields := map[string]string{}
	for k := range profileFields {
		if v := get(k); len(v) > 200 || validation.TextProblem(v, false) != "" {
			fields[k] = "fieldText"
		}
	}
	if len(fields) == 0 {
		sub.Name, sub.Email, sub.Phone = f.Name, f.Email, f.Phone
		sub.Address = store.Address{Line1: f.Line1, Line2: f.Line2, PostalCode: f.PostalCode, City: f.City, Country: f.Country}
		var invalid validation.Errors
		err := app.CheckContactDetails(sub).Err()
		if err == nil {
			_, err = m.o.App.UpdateSubscriber(ctx, sub)
		}
		switch {
		case err == nil:
			http.Redirect(w, r, Prefix+"/profile?done=saved", http.StatusSeeOther)
			return
		case errors.As(err, &invalid):
			for k, name := range profileFields {
				for _, fe := range invalid {
					if fe.Field == name || strings.HasPrefix(fe.Field, name+".") {
						fields[k] = "fieldInvalid"
					}
				}
			}
			if len(fields) == 0 {
				fields["name"] = "fieldInvalid"
			}
		default:
			m.notFound(w, r, s, err)
			return
		}
	}
	m.render(w, r, s, http.StatusBadRequest, "profile", page{Page: webui.Page{Error: "profileProblems", Fields: fields, Data: f}})
}

// export is the subscriber's own data as JSON (GDPR, art. 15 and 20): the
// subscriber record, every subscription period with its package, the
// invoices, credit notes and payments, and the user who asked, as a file
// to download. Only the session's subscriber's records are read.
func (m *MinSide) export(w http.ResponseWriter, r *http.Request, s *session) {
	sub, now, ok := m.subscriberNow(w, r, s)
	if !ok {
		return
	}
	ctx := r.Context()
	out := dataExport{ExportedAt: now, User: exportUser{ID: s.UserID, Email: s.Email}, Subscriber: sub,
		Subscriptions: []store.Subscription{}}
	list, err := allPages(func(p store.Page) ([]store.ListedSubscription, string, error) {
		return m.o.App.Subscriptions(ctx, store.SubscriptionFilter{SubscriberID: sub.ID}, p, false)
	})
	if m.failed(w, r, s, err) {
		return
	}
	for _, l := range list {
		full, err := m.o.App.Subscription(ctx, l.ID)
		if m.failed(w, r, s, err) {
			return
		}
		out.Subscriptions = append(out.Subscriptions, full)
	}
	if out.Invoices, err = allPages(func(p store.Page) ([]store.Invoice, string, error) {
		return m.o.App.Invoices(ctx, store.DocumentFilter{SubscriberID: sub.ID, Now: now}, p, store.InvoiceParts{Seller: true, Buyer: true, Lines: true, VATTotals: true})
	}); m.failed(w, r, s, err) {
		return
	}
	if out.CreditNotes, err = allPages(func(p store.Page) ([]store.CreditNote, string, error) {
		return m.o.App.CreditNotes(ctx, store.CreditNoteFilter{SubscriberID: sub.ID}, p)
	}); m.failed(w, r, s, err) {
		return
	}
	if out.Payments, err = allPages(func(p store.Page) ([]store.Payment, string, error) {
		return m.o.App.Payments(ctx, store.PaymentFilter{SubscriberID: sub.ID}, p)
	}); m.failed(w, r, s, err) {
		return
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if m.failed(w, r, s, err) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="my-data-%d.json"`, sub.SubscriberNumber))
	_, _ = w.Write(append(b, '\n'))
}

// dataExport is the file export writes.
type dataExport struct {
	ExportedAt    time.Time            `json:"exportedAt"`
	User          exportUser           `json:"user"`
	Subscriber    store.Subscriber     `json:"subscriber"`
	Subscriptions []store.Subscription `json:"subscriptions"`
	Invoices      []store.Invoice      `json:"invoices"`
	CreditNotes   []store.CreditNote   `json:"creditNotes"`
	Payments      []store.Payment      `json:"payments"`
}

type exportUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// allPages reads every page of a list.
func allPages[T any](list func(store.Page) ([]T, string, error)) ([]T, error) {
	out := []T{}
	for p := (store.Page{Limit: listLimit}); ; {
		items, next, err := list(p)
		if err != nil {
			return nil, err
		}
		if out = append(out, items...); next == "" {
			return out, nil
		}
		p.After = next
	}
}
