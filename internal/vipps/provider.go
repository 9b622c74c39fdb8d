package vipps

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
)

// PollEvery is how often the poller reconciles open agreements with
// Vipps (what a webhook missed); Vipps asks integrations to poll a
// pending agreement rather than trust the redirect.
const PollEvery = 5 * time.Minute

// Registration is the Vipps payment-agreement provider: Check drafts or
// imports, the lifecycle hooks start and stop the Vipps agreement from
// the outbox, and the poll reconciles statuses every every (0: never).
func (w *Wing) Registration(every time.Duration) provider.Provider {
	p := provider.Provider{
		Type:              store.ProviderVipps,
		Check:             w.Check,
		UniqueReference:   true,
		AgreementCreated:  w.AgreementCreated,
		AgreementDeleted:  w.AgreementDeleted,
		SubscriptionEnded: w.SubscriptionEnded,
		InvoiceIssued:     w.InvoiceIssued,
		InvoiceCredited:   w.InvoiceCredited,
		Callback:          w.Callback,
	}
	if every > 0 {
		p.Poll = &provider.Poll{Every: every, Run: func(ctx context.Context) error {
			return w.PollAll(ctx, w.tenantNow)
		}}
	}
	return p
}

// tenantNow is the tenant's time (a test tenant's clock), the wall clock
// when the tenant cannot be read.
func (w *Wing) tenantNow(tenant string) time.Time {
	t, err := w.st.TenantByID(context.Background(), tenant)
	if err != nil {
		return time.Now().UTC()
	}
	return t.Now(time.Now().UTC())
}

// Poll runs one reconciliation of every tenant's agreements and charges
// at each tenant's own time, as the registered poll does.
func (w *Wing) Poll(ctx context.Context) error { return w.PollAll(ctx, w.tenantNow) }
