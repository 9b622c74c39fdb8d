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
		Type:             store.ProviderVipps,
		Check:            w.Check,
		UniqueReference:  true,
		AgreementCreated: w.AgreementCreated,
		AgreementDeleted: w.AgreementDeleted,
	}
	if every > 0 {
		p.Poll = &provider.Poll{Every: every, Run: func(ctx context.Context) error {
			return w.PollAll(ctx, func(string) time.Time { return time.Now().UTC() })
		}}
	}
	return p
}
