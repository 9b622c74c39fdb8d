package app

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
)

// The kinds of a TimelineEntry, in the order entries of the same time are
// shown: a plan change before the period it produced, a period before the
// invoice issued for it, which comes before what was paid, credited or
// reminded on it, and a cancellation or an event recorded in the same
// instant reads as its consequence.
const (
	TimelinePlanChange   = "planChange"
	TimelinePeriod       = "period"
	TimelineChainStep    = "chainStep"
	TimelineInvoice      = "invoice"
	TimelinePayment      = "payment"
	TimelineCreditNote   = "creditNote"
	TimelineReminder     = "reminder"
	TimelineCancellation = "cancellation"
	TimelineEvent        = "event"
)

var timelineKindOrder = map[string]int{
	TimelinePlanChange: 0, TimelinePeriod: 1, TimelineChainStep: 2, TimelineInvoice: 3, TimelinePayment: 4,
	TimelineCreditNote: 5, TimelineReminder: 6, TimelineCancellation: 7, TimelineEvent: 8,
}

// TimelineEntry is one thing that happened to a subscription.
type TimelineEntry struct {
	At    time.Time
	Kind  string
	Label string
	// ID is the record the entry points to (a period, invoice, payment,
	// credit note, reminder, plan change or event) and Path its resource
	// path, as events name their subjects.
	ID   string
	Path string
	// Cause is why it happened where the data says so: "order",
	// "renewal", "plan change", "chain step", a credit note's or
	// cancellation's reason, "dunning", or an event's type; "" when the
	// data does not say.
	Cause string
	// PeriodID is the period the entry belongs to.
	PeriodID string
}

// timelinePage is the page size of the lists the timeline reads; they are
// read to the end, so it only bounds one round trip.
const timelinePage = 200

// Timeline is everything that happened to subscription id's series (every
// period linked to it, before and after), oldest first: periods, chain
// steps, plan changes, the periods' invoices and the payments, credit
// notes and reminders on them, cancellations, and the events whose subject
// is one of the periods. store.ErrNotFound when the tenant of ctx has no
// such subscription. It is a read of existing lists, not a stored log: it
// shows records as they are now, so a period's package is its current one.
func (a *App) Timeline(ctx context.Context, subscriptionID string) ([]TimelineEntry, error) {
	// The series, not the one period: a subscription as a subscriber
	// knows it is every period linked by renewals and plan changes, and
	// a page about "this subscription" should not stop at one period.
	periods, err := a.series(ctx, subscriptionID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(periods))
	for i, p := range periods {
		ids[i] = p.ID
	}
	byID := map[string]store.Subscription{}
	for _, p := range periods {
		byID[p.ID] = p
	}
	changes, err := a.store.ChangesOfSeries(ctx, ids)
	if err != nil {
		return nil, err
	}
	// A period a plan change produced is caused by it, not by a renewal.
	fromChange := map[string]bool{}
	var out []TimelineEntry
	for _, c := range changes {
		if c.ResultSubscriptionID != nil {
			fromChange[*c.ResultSubscriptionID] = true
		}
		at := c.RegisteredAt
		if c.ExecutedAt != nil {
			at = *c.ExecutedAt
		}
		cause := "plan change"
		if c.PriceChangeID != nil {
			cause = "price change"
		}
		out = append(out, TimelineEntry{At: at, Kind: TimelinePlanChange, ID: c.ID, PeriodID: c.SubscriptionID,
			Path:  "/subscription/" + c.SubscriptionID + "/scheduledchange/" + c.ID,
			Label: fmt.Sprintf("plan change to package %s (%s, %s)", c.TemplatePackageID, c.ProcessingType, c.Status), Cause: cause})
	}
	causeOf := map[string]string{}
	for _, p := range periods {
		cause := periodCause(p, byID, fromChange)
		causeOf[p.ID] = cause
		path := "/subscription/" + p.ID
		// A period is placed when it was created (the order's completion,
		// the renewal or the change that made it), not when it starts:
		// a renewal creates the next period and issues its invoice ahead
		// of its start, and at its start the invoice would read as if it
		// came before its cause. The label carries start and end.
		out = append(out, TimelineEntry{At: p.CreatedAt, Kind: TimelinePeriod, ID: p.ID, Path: path, PeriodID: p.ID, Cause: cause,
			Label: fmt.Sprintf("period %s – %s, %s, %s %s", p.PeriodStart.Format(time.DateOnly), p.PeriodEnd.Format(time.DateOnly),
				p.Package.Name, p.Package.TotalPrice, p.Currency)})
		if cause == "chain step" {
			out = append(out, TimelineEntry{At: p.CreatedAt, Kind: TimelineChainStep, ID: p.ID, Path: path, PeriodID: p.ID, Cause: cause,
				Label: fmt.Sprintf("chain step %d", *p.ChainStep)})
		}
		if p.CancelledAt != nil {
			label := "cancelled"
			if p.CancelEffectiveAt != nil {
				label = "cancelled with effect " + p.CancelEffectiveAt.Format(time.RFC3339)
			}
			out = append(out, TimelineEntry{At: *p.CancelledAt, Kind: TimelineCancellation, ID: p.ID, Path: path, PeriodID: p.ID,
				Label: label, Cause: p.CancelReason})
		}
	}
	evs, err := a.periodEvents(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		out = append(out, TimelineEntry{At: e.EventTime, Kind: TimelineEvent, ID: e.ID, Path: e.Subject,
			PeriodID: strings.TrimPrefix(e.Subject, "/subscription/"), Label: e.EventType, Cause: e.EventType})
	}
	docs, err := a.periodDocuments(ctx, periods, causeOf)
	if err != nil {
		return nil, err
	}
	out = append(out, docs...)
	slices.SortStableFunc(out, func(x, y TimelineEntry) int {
		return cmp.Or(x.At.Compare(y.At), cmp.Compare(timelineKindOrder[x.Kind], timelineKindOrder[y.Kind]), cmp.Compare(x.ID, y.ID))
	})
	return out, nil
}

// periodEvents are the events whose subject is one of the periods ids,
// read with as few queries as the subjects allow (store.MaxEventSubjects
// a query), not one per period.
func (a *App) periodEvents(ctx context.Context, ids []string) ([]store.Event, error) {
	var out []store.Event
	for chunk := range slices.Chunk(ids, store.MaxEventSubjects) {
		subjects := make([]string, len(chunk))
		for i, id := range chunk {
			subjects[i] = "/subscription/" + id
		}
		evs, err := readAll(func(pg store.Page) ([]store.Event, string, error) {
			return a.store.ListEvents(ctx, store.EventFilter{Subjects: subjects}, pg)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}

// periodDocuments are the invoices of periods and the payments, credit
// notes and reminders on each; an invoice is caused by what caused its
// period (the order, a renewal or a plan change). Each kind is one list of
// the subscriber's documents, kept to the series' here: a series belongs
// to one subscriber, whose documents are a bounded few, while a read per
// period and per invoice grows with the series' age.
func (a *App) periodDocuments(ctx context.Context, periods []store.Subscription, causeOf map[string]string) ([]TimelineEntry, error) {
	if len(periods) == 0 {
		return nil, nil
	}
	now, err := a.Now(ctx)
	if err != nil {
		return nil, err
	}
	subscriber := periods[0].SubscriberID
	currency := map[string]string{}
	for _, p := range periods {
		currency[p.ID] = p.Currency
	}
	allInvs, err := readAll(func(pg store.Page) ([]store.Invoice, string, error) {
		return a.store.ListInvoiceItems(ctx, store.DocumentFilter{SubscriberID: subscriber, Now: now}, pg, store.InvoiceParts{})
	})
	if err != nil {
		return nil, err
	}
	var out []TimelineEntry
	invs := map[string]store.Invoice{}
	periodOf := map[string]string{}
	for _, inv := range allInvs {
		if inv.SubscriptionID == nil {
			continue
		}
		cur, ok := currency[*inv.SubscriptionID]
		if !ok {
			continue // another series of the subscriber
		}
		invs[inv.ID], periodOf[inv.ID] = inv, *inv.SubscriptionID
		out = append(out, TimelineEntry{At: inv.IssuedAt, Kind: TimelineInvoice, ID: inv.ID, Path: "/invoice/" + inv.ID, PeriodID: *inv.SubscriptionID,
			Cause: causeOf[*inv.SubscriptionID], Label: fmt.Sprintf("invoice %d, %s %s", inv.InvoiceNumber, inv.Gross, cur)})
	}
	pays, err := readAll(func(pg store.Page) ([]store.Payment, string, error) {
		return a.store.ListPayments(ctx, store.PaymentFilter{SubscriberID: subscriber}, pg)
	})
	if err != nil {
		return nil, err
	}
	for _, pay := range pays {
		inv, ok := invs[pay.InvoiceID]
		if !ok {
			continue
		}
		p := periodOf[inv.ID]
		out = append(out, TimelineEntry{At: pay.PaidAt, Kind: TimelinePayment, ID: pay.ID, Path: "/payment/" + pay.ID, PeriodID: p,
			Cause: "invoice " + inv.ID, Label: fmt.Sprintf("payment %s %s on invoice %d (%s)", pay.Amount, currency[p], inv.InvoiceNumber, pay.Status)})
	}
	notes, err := readAll(func(pg store.Page) ([]store.CreditNote, string, error) {
		return a.store.ListCreditNotes(ctx, store.CreditNoteFilter{SubscriberID: subscriber}, pg)
	})
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		inv, ok := invs[n.InvoiceID]
		if !ok {
			continue
		}
		p := periodOf[inv.ID]
		out = append(out, TimelineEntry{At: n.IssuedAt, Kind: TimelineCreditNote, ID: n.ID, Path: "/creditnote/" + n.ID, PeriodID: p,
			Cause: n.Reason, Label: fmt.Sprintf("credit note %d, %s %s on invoice %d", n.CreditNoteNumber, n.Gross, currency[p], inv.InvoiceNumber)})
	}
	rems, err := readAll(func(pg store.Page) ([]invoicing.Reminder, string, error) {
		return invoicing.ListReminders(ctx, a.store, invoicing.ReminderFilter{SubscriberID: subscriber}, pg)
	})
	if err != nil {
		return nil, err
	}
	for _, r := range rems {
		inv, ok := invs[r.InvoiceID]
		if !ok {
			continue
		}
		out = append(out, TimelineEntry{At: r.IssuedAt, Kind: TimelineReminder, ID: r.ID, Path: "/reminder/" + r.ID, PeriodID: periodOf[inv.ID],
			Cause: "dunning", Label: fmt.Sprintf("reminder on invoice %d, fee %s", inv.InvoiceNumber, r.FeeAmount)})
	}
	return out, nil
}

// periodCause says why period p exists: the order that started it, a plan
// change that produced it, a chain moving to its next step, or a renewal.
// A period with neither an order nor a previous period (imported) has no
// cause the data names.
func periodCause(p store.Subscription, byID map[string]store.Subscription, fromChange map[string]bool) string {
	switch {
	case fromChange[p.ID]:
		return "plan change"
	case p.PreviousID == nil && p.OrderID != nil:
		return "order"
	case p.PreviousID == nil:
		return ""
	}
	if prev, ok := byID[*p.PreviousID]; ok && p.ChainStep != nil && (prev.ChainStep == nil || *prev.ChainStep != *p.ChainStep) {
		return "chain step"
	}
	return "renewal"
}

// series are the periods linked to period id, first to last. It reads
// the subscriber's periods in one list (a series belongs to one
// subscriber) and follows the links among them, instead of one read per
// period; a link to a period the list lacks (one created during the read)
// is read on its own. It reads on the read pool rather than through
// engine.SeriesIDs, which opens a write transaction: a query should not
// queue behind SQLite's one writer. A renewal committed during the read
// may or may not be included, as in any read of a moving series. The
// periods' packages are the list's summary: name, price and total.
func (a *App) series(ctx context.Context, id string) ([]store.Subscription, error) {
	sub, err := a.store.Subscription(ctx, id)
	if err != nil {
		return nil, err
	}
	listed, err := readAll(func(pg store.Page) ([]store.ListedSubscription, string, error) {
		return a.store.ListSubscriptionItems(ctx, store.SubscriptionFilter{SubscriberID: sub.SubscriberID}, pg, false)
	})
	if err != nil {
		return nil, err
	}
	byID := make(map[string]store.Subscription, len(listed))
	for _, l := range listed {
		var sum store.PackageSummary
		if err := json.Unmarshal(l.PackageJSON, &sum); err != nil {
			return nil, fmt.Errorf("app: period %s: package: %w", l.ID, err)
		}
		p := l.Subscription
		p.Package.Name, p.Package.Price, p.Package.TotalPrice = sum.Name, sum.Price, sum.TotalPrice
		byID[p.ID] = p
	}
	byID[sub.ID] = sub
	get := func(id string) (store.Subscription, error) {
		if p, ok := byID[id]; ok {
			return p, nil
		}
		return a.store.Subscription(ctx, id)
	}
	out := []store.Subscription{sub}
	for cur := sub; cur.PreviousID != nil; {
		if cur, err = get(*cur.PreviousID); err != nil {
			return nil, err
		}
		out = append(out, cur)
	}
	slices.Reverse(out)
	for cur := sub; cur.NextID != nil; {
		if cur, err = get(*cur.NextID); err != nil {
			return nil, err
		}
		out = append(out, cur)
	}
	return out, nil
}

// readAll reads every page of a list.
func readAll[T any](list func(store.Page) ([]T, string, error)) ([]T, error) {
	var out []T
	pg := store.Page{Limit: timelinePage}
	for {
		items, next, err := list(pg)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if next == "" {
			return out, nil
		}
		pg.After = next
	}
}
