package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webui"
)

// Hit is one search result: a subscriber and what matched.
type Hit struct {
	ID               string `json:"id"`
	SubscriberNumber int64  `json:"subscriberNumber"`
	Name             string `json:"name"`
	Email            string `json:"email"`
	// MatchedBy is what the query matched: id, subscriberNumber, email,
	// name, externalId, invoiceNumber, kid, subscription or invoice.
	MatchedBy string `json:"matchedBy"`
	URL       string `json:"url"`
}

// searchResult is the search page's data (and, as JSON, its answer).
type searchResult struct {
	Query string `json:"query"`
	Hits  []Hit  `json:"hits"`
	// More says there were more hits than shown: narrow the search.
	More bool `json:"more"`
}

// searchLimit is how many hits a search shows.
const searchLimit = 50

// search finds subscribers by what a customer gives on the phone: a
// subscriber number or an invoice number or KID (digits), an e-mail
// address, a subscriber's, subscription's or invoice's id, the merchant's
// external id, or part of the name. It answers the page, or JSON when the request asks for it
// (Accept: application/json or format=json), for a search-as-you-type
// field or a script.
func (c *Console) search(w http.ResponseWriter, r *http.Request, s *session) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	asJSON := r.URL.Query().Get("format") == "json" || strings.Contains(r.Header.Get("Accept"), "application/json")
	if len(q) > 200 || validation.TextProblem(q, false) != "" {
		if asJSON {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "q must be one line of at most 200 characters"})
			return
		}
		c.render(w, r, s, http.StatusBadRequest, "search", page{Page: webui.Page{Data: searchResult{Query: q}, Error: "badQuery"}})
		return
	}
	res := searchResult{Query: q, Hits: []Hit{}}
	if q != "" {
		var err error
		res.Hits, res.More, err = c.find(r, q)
		if err != nil {
			c.log.ErrorContext(r.Context(), "console search", "err", err)
			c.fail(w, r, s, http.StatusInternalServerError, "failed")
			return
		}
	}
	if asJSON {
		writeJSON(w, http.StatusOK, res)
		return
	}
	if len(res.Hits) == 1 && r.URL.Query().Get("go") != "" {
		http.Redirect(w, r, res.Hits[0].URL, http.StatusSeeOther)
		return
	}
	c.render(w, r, s, http.StatusOK, "search", page{Page: webui.Page{Data: res}})
}

func (c *Console) find(r *http.Request, q string) ([]Hit, bool, error) {
	ctx := r.Context()
	var hits []Hit
	seen := map[string]bool{}
	add := func(sub store.Subscriber, by string) {
		if seen[sub.ID] {
			return
		}
		seen[sub.ID] = true
		hits = append(hits, Hit{ID: sub.ID, SubscriberNumber: sub.SubscriberNumber, Name: sub.Name, Email: sub.Email, MatchedBy: by,
			URL: Prefix + "/subscriber/" + sub.ID})
	}
	byID := func(id, by string) error {
		sub, err := c.app.Subscriber(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err == nil {
			add(sub, by)
		}
		return err
	}
	list := func(f store.SubscriberFilter, by string) (bool, error) {
		subs, next, err := c.app.Subscribers(ctx, f, store.Page{Limit: searchLimit})
		for _, sub := range subs {
			add(sub, by)
		}
		return next != "", err
	}
	switch {
	case store.ValidID(q):
		if err := byID(q, "id"); err != nil {
			return nil, false, err
		}
		if sub, err := c.app.Subscription(ctx, q); err == nil {
			if err := byID(sub.SubscriberID, "subscription"); err != nil {
				return nil, false, err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, false, err
		}
		if inv, err := c.app.Invoice(ctx, q); err == nil {
			if err := byID(inv.SubscriberID, "invoice"); err != nil {
				return nil, false, err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, false, err
		}
	case allDigits(q):
		if n, err := strconv.ParseInt(q, 10, 64); err == nil {
			if _, err := list(store.SubscriberFilter{SubscriberNumber: n}, "subscriberNumber"); err != nil {
				return nil, false, err
			}
			invs, _, err := c.app.Invoices(ctx, store.DocumentFilter{InvoiceNumber: &n}, store.Page{Limit: 10}, store.InvoiceParts{})
			if err != nil {
				return nil, false, err
			}
			for _, inv := range invs {
				if err := byID(inv.SubscriberID, "invoiceNumber"); err != nil {
					return nil, false, err
				}
			}
		}
		invs, _, err := c.app.Invoices(ctx, store.DocumentFilter{KID: q}, store.Page{Limit: 10}, store.InvoiceParts{})
		if err != nil {
			return nil, false, err
		}
		for _, inv := range invs {
			if err := byID(inv.SubscriberID, "kid"); err != nil {
				return nil, false, err
			}
		}
	case strings.Contains(q, "@"):
		if _, err := list(store.SubscriberFilter{Email: q}, "email"); err != nil {
			return nil, false, err
		}
	default:
		// An external id (the merchant's own customer number) matches
		// whole; anything else is part of a name.
		if _, err := list(store.SubscriberFilter{ExternalID: q}, "externalId"); err != nil {
			return nil, false, err
		}
		more, err := list(store.SubscriberFilter{Name: q}, "name")
		return hits, more, err
	}
	return hits, false, nil
}

func allDigits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) || r > unicode.MaxASCII }) < 0
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// subscriberView is the subscriber page's data.
type subscriberView struct {
	Subscriber    store.Subscriber
	Subscriptions []subscriptionRow
	Invoices      []store.Invoice
	MoreInvoices  bool
	// Accounts are the subscriber's accounts (one per currency) with
	// their balances and open items.
	Accounts    []accountRow
	Agreements  []store.PaymentAgreement
	Payments    []store.Payment
	CreditNotes []store.CreditNote
	Reminders   []invoicing.Reminder
	Users       []app.SubscriberUser
	MoreUsers   bool
}

// accountRow is a subscriber account with its open charges and
// allowances.
type accountRow struct {
	store.SubscriberAccount
	Items []store.OpenItem
}

// subscriberDetails fills in the subscriber page's money and access
// sections: accounts and open items, payment agreements, payments, credit
// notes, reminders, and the subscriber's users with their entitlements.
func (c *Console) subscriberDetails(r *http.Request, v *subscriberView) error {
	ctx := r.Context()
	id := v.Subscriber.ID
	accounts, _, err := c.app.SubscriberAccounts(ctx, store.AccountFilter{SubscriberID: id}, store.Page{Limit: pageLimit})
	if err != nil {
		return err
	}
	for _, acc := range accounts {
		_, items, err := c.app.OpenAccountItems(ctx, id, acc.Currency)
		if err != nil {
			return err
		}
		v.Accounts = append(v.Accounts, accountRow{SubscriberAccount: acc, Items: items})
	}
	if v.Agreements, _, err = c.app.PaymentAgreements(ctx, store.AgreementFilter{SubscriberID: id}, store.Page{Limit: pageLimit}); err != nil {
		return err
	}
	if v.Payments, _, err = c.app.Payments(ctx, store.PaymentFilter{SubscriberID: id}, store.Page{Limit: pageLimit}); err != nil {
		return err
	}
	if v.CreditNotes, _, err = c.app.CreditNotes(ctx, store.CreditNoteFilter{SubscriberID: id}, store.Page{Limit: pageLimit}); err != nil {
		return err
	}
	if v.Reminders, _, err = c.app.Reminders(ctx, invoicing.ReminderFilter{SubscriberID: id}, store.Page{Limit: pageLimit}); err != nil {
		return err
	}
	v.Users, v.MoreUsers, err = c.app.SubscriberUsers(ctx, id, 20)
	return err
}

type subscriptionRow struct {
	store.ListedSubscription
	// Package is the list's summary of the period's package.
	Package store.PackageSummary
	Status  string
}

// pageLimit bounds the lists on a page.
const pageLimit = 100

// badID answers a path id that is no id at all: a 400 naming it.
func (c *Console) badID(w http.ResponseWriter, r *http.Request, s *session) bool {
	if store.ValidID(r.PathValue("id")) {
		return false
	}
	c.fail(w, r, s, http.StatusBadRequest, "badID")
	return true
}

// subscriber shows a subscriber, its current subscriptions (the latest
// period of each series) and its invoices, newest first.
func (c *Console) subscriber(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	ctx := r.Context()
	id := r.PathValue("id")
	sub, err := c.app.Subscriber(ctx, id)
	if c.notFound(w, r, s, err) {
		return
	}
	now, err := c.app.Now(ctx)
	if c.failed(w, r, s, err) {
		return
	}
	v := subscriberView{Subscriber: sub}
	for pg := (store.Page{Limit: pageLimit}); ; {
		subs, next, err := c.app.Subscriptions(ctx, store.SubscriptionFilter{SubscriberID: id}, pg, false)
		if c.failed(w, r, s, err) {
			return
		}
		for _, p := range subs {
			if p.NextID == nil {
				row := subscriptionRow{ListedSubscription: p, Status: engine.Status(p.Subscription, now)}
				if err := json.Unmarshal(p.PackageJSON, &row.Package); c.failed(w, r, s, err) {
					return
				}
				v.Subscriptions = append(v.Subscriptions, row)
			}
		}
		if next == "" || len(v.Subscriptions) >= pageLimit {
			break
		}
		pg.After = next
	}
	invs, next, err := c.app.Invoices(ctx, store.DocumentFilter{SubscriberID: id, Now: now}, store.Page{Limit: pageLimit}, store.InvoiceParts{})
	if c.failed(w, r, s, err) {
		return
	}
	slices.Reverse(invs)
	v.Invoices, v.MoreInvoices = invs, next != ""
	if c.failed(w, r, s, c.subscriberDetails(r, &v)) {
		return
	}
	c.render(w, r, s, http.StatusOK, "subscriber", page{Page: webui.Page{Title: sub.Name, Data: v}})
}

// subscriptionView is the subscription page's data: the period, its
// status and the series' timeline.
type subscriptionView struct {
	Subscription store.Subscription
	Subscriber   store.Subscriber
	Status       string
	Timeline     []timelineRow
	// Cancellable: the subscription has neither ended nor been cancelled.
	Cancellable bool
	// Undoable: a cancellation waits to take effect (at the period's end
	// or the binding's); whether it may be undone is the engine's to say.
	Undoable bool
	// Change is the plan change registered on the series and waiting to
	// run (nil when none), ChangeTo its target's name; Options are the
	// packages it could be changed to.
	Change   *store.ScheduledChange
	ChangeTo string
	Options  []changeOption
}

// Link is the console page of a timeline entry's record, "" when the
// console has none.
func (e timelineRow) Link() string {
	for _, kind := range []string{"/invoice/", "/subscription/"} {
		if strings.HasPrefix(e.Path, kind) {
			return Prefix + e.Path
		}
	}
	return ""
}

type timelineRow struct{ app.TimelineEntry }

func (c *Console) subscriptionView(r *http.Request, id string) (subscriptionView, error) {
	ctx := r.Context()
	sub, err := c.app.Subscription(ctx, id)
	if err != nil {
		return subscriptionView{}, err
	}
	now, err := c.app.Now(ctx)
	if err != nil {
		return subscriptionView{}, err
	}
	owner, err := c.app.Subscriber(ctx, sub.SubscriberID)
	if err != nil {
		return subscriptionView{}, err
	}
	tl, err := c.app.Timeline(ctx, id)
	if err != nil {
		return subscriptionView{}, err
	}
	rows := make([]timelineRow, len(tl))
	for i, e := range tl {
		rows[len(tl)-1-i] = timelineRow{e} // newest first: what happened last is what a caller asks about
	}
	status := engine.Status(sub, now)
	v := subscriptionView{Subscription: sub, Subscriber: owner, Status: status, Timeline: rows,
		Cancellable: sub.CancelledAt == nil && sub.DeactivatedAt == nil && sub.ScheduledCancelAt == nil && status != "Completed" && status != "Cancelled",
		Undoable:    sub.DeactivatedAt == nil && (sub.CancelledAt != nil || sub.ScheduledCancelAt != nil) && status != "Completed"}
	changes, err := c.app.ChangesOfSeries(ctx, id)
	if err != nil {
		return subscriptionView{}, err
	}
	for i := range changes {
		if changes[i].Status == store.ChangeRegistered {
			v.Change = &changes[i]
		}
	}
	if v.Options, err = c.changeOptions(r, sub); err != nil {
		return subscriptionView{}, err
	}
	if v.Change != nil {
		v.ChangeTo = v.Change.TemplatePackageID
		for _, o := range v.Options {
			if o.ID == v.Change.TemplatePackageID {
				v.ChangeTo = o.Name
			}
		}
	}
	return v, nil
}

// subscription shows a subscription with its timeline.
func (c *Console) subscription(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	v, err := c.subscriptionView(r, r.PathValue("id"))
	if c.notFound(w, r, s, err) {
		return
	}
	p := page{Page: webui.Page{Title: v.Subscription.Package.Name, Data: v}}
	switch r.URL.Query().Get("done") {
	case "cancelled":
		p.Notice = "cancelled"
	case "changed":
		p.Notice = "changeRegistered"
	case "revoked":
		p.Notice = "changeRevoked"
	case "undone":
		p.Notice = "cancelUndone"
	}
	c.render(w, r, s, http.StatusOK, "subscription", p)
}

// refused answers a subscription form that could not be carried out:
// the subscription's page again, a 400 with the text of problem.
func (c *Console) refused(w http.ResponseWriter, r *http.Request, s *session, id, problem string) {
	v, err := c.subscriptionView(r, id)
	if c.notFound(w, r, s, err) {
		return
	}
	c.render(w, r, s, http.StatusBadRequest, "subscription", page{Page: webui.Page{Title: v.Subscription.Package.Name, Data: v, Error: problem}})
}

// notFound answers err when there is one: a 404 page for store.ErrNotFound
// (also another tenant's record), a 500 page otherwise.
func (c *Console) notFound(w http.ResponseWriter, r *http.Request, s *session, err error) bool {
	if errors.Is(err, store.ErrNotFound) {
		c.fail(w, r, s, http.StatusNotFound, "notFound")
		return true
	}
	return c.failed(w, r, s, err)
}

func (c *Console) failed(w http.ResponseWriter, r *http.Request, s *session, err error) bool {
	if err == nil {
		return false
	}
	c.log.ErrorContext(r.Context(), "console", "path", r.URL.Path, "err", err)
	c.fail(w, r, s, http.StatusInternalServerError, "failed")
	return true
}

// auditView is the audit page's data: the filters as given and a page of
// events, newest page last like every list (Next continues).
type auditView struct {
	ActorKind, ActorID, Subscriber, From, Until string
	Events                                      []store.Event
	Next                                        string
	Kinds                                       []actor.Kind
	Query                                       string
	// Bad names the filter that could not be read.
	Bad string
}

// audit lists the tenant's events with who caused them, filtered by
// actor (kind and id: a staff user, a machine client, a subscriber user),
// by subscriber (its own resources' events) and by when they were
// recorded. Bad filters are a 400 page naming the filter.
func (c *Console) audit(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	v := auditView{ActorKind: q.Get("actorKind"), ActorID: strings.TrimSpace(q.Get("actorId")), Subscriber: strings.TrimSpace(q.Get("subscriber")),
		From: q.Get("from"), Until: q.Get("until"), Kinds: []actor.Kind{actor.Staff, actor.Client, actor.Subscriber, actor.System}}
	f := store.EventFilter{ActorID: v.ActorID}
	bad := ""
	if v.ActorKind != "" {
		if !slices.Contains(v.Kinds, actor.Kind(v.ActorKind)) {
			bad = "actorKind"
		}
		f.ActorKind = actor.Kind(v.ActorKind)
	}
	if len(v.ActorID) > 200 || validation.TextProblem(v.ActorID, false) != "" {
		bad = "actorId"
	}
	if v.Subscriber != "" && !store.ValidID(v.Subscriber) {
		bad = "subscriber"
	}
	day := func(name, val string) time.Time {
		if val == "" {
			return time.Time{}
		}
		t, err := time.ParseInLocation("2006-01-02", val, c.zone)
		if err != nil {
			bad = name
		}
		return t
	}
	f.From = day("from", v.From)
	if until := day("until", v.Until); !until.IsZero() {
		f.Until = until.AddDate(0, 0, 1) // the whole day given
	}
	after := q.Get("after")
	if after != "" && !store.ValidID(after) {
		bad = "after"
	}
	if bad != "" {
		v.Bad = bad
		c.render(w, r, s, http.StatusBadRequest, "audit", page{Page: webui.Page{Data: v, Error: "badFilter"}})
		return
	}
	pg := store.Page{Limit: pageLimit, After: after}
	var err error
	if v.Subscriber != "" {
		v.Events, v.Next, err = c.app.SubscriberEvents(r.Context(), v.Subscriber, f, pg)
		if errors.Is(err, store.ErrNotFound) {
			c.render(w, r, s, http.StatusNotFound, "audit", page{Page: webui.Page{Data: v, Error: "noSubscriber"}})
			return
		}
	} else {
		v.Events, v.Next, err = c.app.Events(r.Context(), f, pg)
	}
	if c.failed(w, r, s, err) {
		return
	}
	next := q
	next.Set("after", v.Next)
	next.Del("lang")
	v.Query = next.Encode()
	c.render(w, r, s, http.StatusOK, "audit", page{Page: webui.Page{Data: v}})
}
