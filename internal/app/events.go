package app

import (
	"context"

	"github.com/kadens/kadens/internal/store"
)

// Events lists the tenant's events matching f, oldest first, a page at a
// time; the string is the cursor of the next page ("" at the end).
func (a *App) Events(ctx context.Context, f store.EventFilter, p store.Page) ([]store.Event, string, error) {
	return a.store.ListEvents(ctx, f, p)
}

// SubscriberEvents lists the tenant's events matching f about subscriber
// id's resources: the subscriber itself, every period of its
// subscriptions, its invoices, payments and credit notes (the subjects
// those events name), oldest first, a page at a time. It is the audit log's filter by subscriber.
// store.ErrNotFound when the tenant has no such subscriber. A subscriber
// with more resources than one query can name (store.MaxEventSubjects)
// is searched over its first ones.
func (a *App) SubscriberEvents(ctx context.Context, id string, f store.EventFilter, p store.Page) ([]store.Event, string, error) {
	if _, err := a.store.Subscriber(ctx, id); err != nil {
		return nil, "", err
	}
	subjects := []string{"/subscriber/" + id}
	full := func() bool { return len(subjects) >= store.MaxEventSubjects }
	for pg := (store.Page{Limit: timelinePage}); !full(); {
		subs, next, err := a.store.ListSubscriptionItems(ctx, store.SubscriptionFilter{SubscriberID: id}, pg, false)
		if err != nil {
			return nil, "", err
		}
		for _, s := range subs {
			subjects = append(subjects, "/subscription/"+s.ID)
		}
		if next == "" {
			break
		}
		pg.After = next
	}
	for pg := (store.Page{Limit: timelinePage}); !full(); {
		invs, next, err := a.store.ListInvoiceItems(ctx, store.DocumentFilter{SubscriberID: id}, pg, store.InvoiceParts{})
		if err != nil {
			return nil, "", err
		}
		for _, inv := range invs {
			subjects = append(subjects, "/invoice/"+inv.ID)
		}
		if next == "" {
			break
		}
		pg.After = next
	}
	for pg := (store.Page{Limit: timelinePage}); !full(); {
		pays, next, err := a.store.ListPayments(ctx, store.PaymentFilter{SubscriberID: id}, pg)
		if err != nil {
			return nil, "", err
		}
		for _, p := range pays {
			subjects = append(subjects, "/payment/"+p.ID)
		}
		if next == "" {
			break
		}
		pg.After = next
	}
	for pg := (store.Page{Limit: timelinePage}); !full(); {
		notes, next, err := a.store.ListCreditNotes(ctx, store.CreditNoteFilter{SubscriberID: id}, pg)
		if err != nil {
			return nil, "", err
		}
		for _, n := range notes {
			subjects = append(subjects, "/creditnote/"+n.ID)
		}
		if next == "" {
			break
		}
		pg.After = next
	}
	f.Subjects = subjects[:min(len(subjects), store.MaxEventSubjects)]
	return a.store.ListEvents(ctx, f, p)
}
