package invoicing

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
)

// PeriodInvoice is the invoice a period will be issued with: what
// IssuePeriods writes for it, but for what only issuing hands out (the
// number and KID, the ids, the statuses).
type PeriodInvoice struct {
	OrganizationID   string
	AccountID        string // "" while the subscriber has no account in the currency
	Currency         money.Currency
	PricesIncludeVAT bool
	IssuedAt         time.Time
	DueAt            time.Time
	// IssueDate and DueDate are the printed local dates.
	IssueDate   string
	DueDate     string
	PeriodStart time.Time
	PeriodEnd   time.Time
	billing.Document
}

// PreviewPeriod builds the invoice of period p.Sub issued at p.At as
// IssuePeriods would (periodDocument, the one computation both use), from
// the organization and the account's open items as they are now, read on
// the read pool; it writes nothing. What it cannot know is left out: items
// booked after now, and items another invoice of the same account issued
// before p.At bills or applies first.
func PreviewPeriod(ctx context.Context, st *store.Store, p store.NewPeriod) (PeriodInvoice, error) {
	sub := p.Sub
	at := p.At.UTC().Truncate(time.Microsecond)
	cur, ok := money.LookupCurrency(sub.Currency)
	if !ok {
		return PeriodInvoice{}, fmt.Errorf("invoicing: subscription %s: unknown currency %q", sub.ID, sub.Currency)
	}
	o, err := st.Organization(ctx, sub.OrganizationID)
	if err != nil {
		return PeriodInvoice{}, fmt.Errorf("invoicing: preview: %w", err)
	}
	org, err := issuerOf(o)
	if err != nil {
		return PeriodInvoice{}, fmt.Errorf("invoicing: preview: %w", err)
	}
	account, stored, err := st.OpenItemsOf(ctx, store.AccountKey{SubscriberID: sub.SubscriberID, Currency: sub.Currency}, at)
	if err != nil {
		return PeriodInvoice{}, fmt.Errorf("invoicing: preview: %w", err)
	}
	doc, due, err := periodDocument(sub, org, cur, openItems(stored), at)
	if err != nil {
		return PeriodInvoice{}, fmt.Errorf("invoicing: preview: %w", err)
	}
	return PeriodInvoice{OrganizationID: org.ID, AccountID: account, Currency: cur, PricesIncludeVAT: org.PricesIncludeVAT,
		IssuedAt: at, DueAt: due, IssueDate: billing.LocalDate(at, org.loc), DueDate: billing.LocalDate(due, org.loc),
		PeriodStart: sub.PeriodStart, PeriodEnd: sub.PeriodEnd, Document: doc}, nil
}
