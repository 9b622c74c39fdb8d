package engine

import (
	"context"
	"errors"
	"time"

	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
)

// ErrNoRenewal is PreviewRenewal's answer for a period that will not
// renew: cancelled, ended, stopping automatically, or already renewed.
var ErrNoRenewal = errors.New("engine: the period does not renew")

// UpcomingRenewal is the renewal a series' last period is due for.
type UpcomingRenewal struct {
	// At is when the renewal happens: its new period is created and, with
	// billing, invoiced then (minimumDueDays local days before the
	// renewed period ends).
	At time.Time
	// Period is the new period as the renewal will build it; its id is
	// not the one the renewal will give it.
	Period store.Subscription
	// Change is the OnRenewal plan change that will run into Period; nil
	// when none does (a price change's change that waits for a later
	// renewal does not).
	Change *store.ScheduledChange
	// Expiring is the OnRenewal change that will expire at the renewal
	// instead of running, because its template can no longer take it.
	Expiring *store.ScheduledChange
	// ChainStep is set when Period is the series' next chain step.
	ChainStep bool
}

// PreviewRenewal is the renewal of sub, the last period of its series,
// with pending the registered change waiting on it (nil: none), exactly
// as the engine's renewal will decide it (planRenewal, the decision its
// renewals run), from the catalog and chain instances as they are now. It
// reads on the read pool and writes nothing: a chain instance the renewal
// would freeze is frozen in memory only. ErrNoRenewal when sub does not
// renew.
func (e *Engine) PreviewRenewal(ctx context.Context, sub store.Subscription, pending *store.ScheduledChange) (UpcomingRenewal, error) {
	if sub.RenewAt == nil || sub.NextID != nil || sub.CancelledAt != nil || sub.DeactivatedAt != nil {
		return UpcomingRenewal{}, ErrNoRenewal
	}
	loc, err := period.LoadZone(sub.TimeZone)
	if err != nil {
		return UpcomingRenewal{}, err
	}
	at := *sub.RenewAt
	p, err := e.planRenewal(ctx, e.poolInstances, newCatalogCache(e.store), sub, loc, at, pending)
	if err != nil {
		return UpcomingRenewal{}, err
	}
	out := UpcomingRenewal{At: at, Period: p.Next, Expiring: p.Expired, ChainStep: p.ChainStep}
	if p.Applied {
		out.Change = p.Pending
	}
	return out, nil
}
