// Package engine moves subscriptions through time. Advance(tenant, now)
// performs every action that is due up to now, in time order: renewals
// (creating the next period ahead of its start), chain steps, plan changes
// registered for a time or for the renewal, and deactivations when
// cancellations or automatic stops take effect.
//
// Advance is a deterministic function of the stored state and now: running
// it twice for the same now changes nothing, and an interrupted run that is
// started again ends in the state an uninterrupted run would have reached,
// because work is taken in a fixed order (due time, then id) and committed
// in batches. Many processes may advance the same tenant: a lease makes one
// of them do the work, and every update checks the row's version, so even
// without the lease no action can be applied twice.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// Event kinds the engine records.
const (
	EventSubscriptionCreated     = "SubscriptionCreated"
	EventSubscriptionCancelled   = "SubscriptionCancelled"
	EventSubscriptionDeactivated = "SubscriptionDeactivated"
)

// ErrBusy means another worker holds the tenant's engine lease.
var ErrBusy = errors.New("engine: another worker is advancing this tenant")

// Engine advances tenants.
type Engine struct {
	store  *store.Store
	log    *slog.Logger
	holder string
	// Batch is how many subscriptions one transaction handles.
	Batch int
	// Lease is how long a worker may hold a tenant without renewing.
	Lease time.Duration
	// Hooks lets billing act inside the engine's transactions.
	Hooks Hooks
}

// Hooks are called inside the transaction of the action they follow, so
// whatever they write commits or rolls back with it. Billing fills them.
type Hooks struct {
	// PeriodsCreated follows the creation of subscription periods (an
	// order's first, renewals, or the one a plan change generates), each
	// at its business time. A batch of renewals comes in one call, in the
	// order the engine performed them (due time, then id), after they were
	// written; an order or a plan change comes as a batch of one.
	PeriodsCreated func(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error
	// PlanChanged follows a plan change that cancelled old and generated
	// new at at; proration of old's period happens here.
	PlanChanged func(ctx context.Context, tx *store.Tx, old, new store.Subscription, at time.Time) error
	// Cancelled follows a cancellation registered at at.
	Cancelled func(ctx context.Context, tx *store.Tx, sub store.Subscription, at time.Time) error
}

// New returns an engine whose leases are held in the name of holder (a
// unique id of this process).
func New(s *store.Store, log *slog.Logger, holder string) *Engine {
	return &Engine{store: s, log: log, holder: holder, Batch: 1000, Lease: 20 * time.Second}
}

// Stats count what one Advance did.
type Stats struct {
	Renewals      int `json:"renewals"`
	Deactivations int `json:"deactivations"`
	PlanChanges   int `json:"planChanges"`
	Reminders     int `json:"reminders"`
	PaymentStops  int `json:"paymentStops"`
	// PriceChangeNotices counts the subscriptions price changes that
	// started registered a change on (and notified).
	PriceChangeNotices int `json:"priceChangeNotices"`
}

func (s *Stats) add(o Stats) {
	s.Renewals += o.Renewals
	s.Deactivations += o.Deactivations
	s.PlanChanges += o.PlanChanges
	s.Reminders += o.Reminders
	s.PaymentStops += o.PaymentStops
	s.PriceChangeNotices += o.PriceChangeNotices
}

// Advance performs every action of tenant due at or before now. It returns
// ErrBusy when another worker is advancing the tenant.
func (e *Engine) Advance(ctx context.Context, tenantID string, now time.Time) (Stats, error) {
	ctx = tenancy.With(ctx, tenantID)
	var total Stats
	lease := func() error {
		wall := time.Now()
		ok, err := e.store.AcquireEngineLease(ctx, tenantID, e.holder, wall, wall.Add(e.Lease))
		if err != nil {
			return err
		}
		if !ok {
			return ErrBusy
		}
		return nil
	}
	if err := lease(); err != nil {
		return total, err
	}
	defer func() {
		if err := e.store.ReleaseEngineLease(context.WithoutCancel(ctx), tenantID, e.holder); err != nil {
			e.log.Error("release engine lease", "tenant", tenantID, "err", err)
		}
	}()
	cache := newCatalogCache(e.store)
	for {
		var (
			batch Stats
			more  bool
		)
		err := e.store.InTx(ctx, func(tx *store.Tx) error {
			var err error
			batch, more, err = e.step(ctx, tx, cache, now)
			return err
		})
		if errors.Is(err, store.ErrConflict) {
			// Another worker changed a row we read: its work is done, ours
			// rolled back; look again.
			if err := lease(); err != nil {
				return total, err
			}
			continue
		}
		if err != nil {
			return total, err
		}
		total.add(batch)
		if !more {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
		if err := lease(); err != nil {
			return total, err
		}
	}
}

// step performs one batch of due work and reports whether more may remain.
//
// Work is taken strictly in time order: the earliest due plan change, or a
// batch of subscriptions due before it. A batch only spans one day after
// its first item: every period is at least a day long, so nothing the batch
// creates can fall due before the batch's last item.
func (e *Engine) step(ctx context.Context, tx *store.Tx, cache *catalogCache, now time.Time) (Stats, bool, error) {
	var st Stats
	subAt, err := tx.NextSubscriptionAction(ctx)
	if err != nil {
		return st, false, err
	}
	chAt, err := tx.NextChangeAt(ctx)
	if err != nil {
		return st, false, err
	}
	dunAt, err := tx.NextDunningAt(ctx)
	if err != nil {
		return st, false, err
	}
	pcAt, err := tx.NextPriceChangeAt(ctx)
	if err != nil {
		return st, false, err
	}
	subDue := subAt != nil && !subAt.After(now)
	chDue := chAt != nil && !chAt.After(now)
	dunDue := dunAt != nil && !dunAt.After(now)
	// A price change starts before anything else due at the same time, so
	// that the series it finds are those running at its start.
	if pcAt != nil && !pcAt.After(now) && (!subDue || !pcAt.After(*subAt)) && (!chDue || !pcAt.After(*chAt)) && (!dunDue || !pcAt.After(*dunAt)) {
		st, err := e.startPriceChanges(ctx, tx, cache, *pcAt)
		return st, true, err
	}
	// At equal times: plan changes, then subscriptions, then dunning.
	switch {
	case !subDue && !chDue && !dunDue:
		return st, false, nil
	case chDue && (!subDue || !chAt.After(*subAt)) && (!dunDue || !chAt.After(*dunAt)):
		changes, err := tx.DueChanges(ctx, *chAt, e.Batch)
		if err != nil {
			return st, false, err
		}
		for _, c := range changes {
			if err := e.executeChange(ctx, tx, cache, c, *c.ScheduledAt); err != nil {
				return st, false, err
			}
			st.PlanChanges++
		}
		return st, true, nil
	case dunDue && (!subDue || dunAt.Before(*subAt)) && (!chDue || dunAt.Before(*chAt)):
		st, err := e.dunning(ctx, tx, *dunAt)
		return st, true, err
	}
	until := subAt.Add(24*time.Hour - time.Microsecond)
	if until.After(now) {
		until = now
	}
	if chDue && chAt.Add(-time.Microsecond).Before(until) {
		until = chAt.Add(-time.Microsecond)
	}
	if pcAt != nil && !pcAt.After(now) && pcAt.Add(-time.Microsecond).Before(until) {
		until = pcAt.Add(-time.Microsecond)
	}
	if dunDue && dunAt.Before(until) {
		// Subscriptions due at the dunning time go first.
		until = *dunAt
	}
	subs, err := tx.DueSubscriptions(ctx, until, e.Batch)
	if err != nil {
		return st, false, err
	}
	withChanges, err := tx.SubscriptionsWithChanges(ctx)
	if err != nil {
		return st, false, err
	}
	if err := cache.loadInstances(ctx, tx, chainIDsDue(subs)); err != nil {
		return st, false, fmt.Errorf("engine: %w", err)
	}
	var created []renewal
	for i := range subs {
		sub := &subs[i]
		s, err := e.act(ctx, tx, cache, sub, *sub.NextActionAt, withChanges[sub.ID], &created)
		if err != nil {
			return st, false, fmt.Errorf("engine: subscription %s: %w", sub.ID, err)
		}
		st.add(s)
	}
	// The batch's new periods are written (those renew did not have to
	// write at once), the acted-on subscriptions updated (each still at the
	// version read, or the batch rolls back), and the new periods recorded
	// and billed, all together.
	var pending []store.Subscription
	for _, p := range created {
		if !p.Written {
			pending = append(pending, p.Sub)
		}
	}
	if err := tx.InsertSubscriptions(ctx, pending); err != nil {
		return st, false, fmt.Errorf("engine: %w", err)
	}
	if err := tx.UpdateSubscriptionSchedules(ctx, subs); err != nil {
		return st, false, fmt.Errorf("engine: %w", err)
	}
	if err := e.created(ctx, tx, periods(created)); err != nil {
		return st, false, fmt.Errorf("engine: %w", err)
	}
	return st, true, nil
}

// act performs the actions of sub due at at: deactivation and renewal. It
// changes *sub for the caller to write (store.UpdateSubscriptionSchedules:
// act changes nothing else of it). A period the renewal creates is
// appended to created, for the caller to record and bill (see created).
func (e *Engine) act(ctx context.Context, tx *store.Tx, cache *catalogCache, sub *store.Subscription, at time.Time, hasChanges bool, created *[]renewal) (Stats, error) {
	var st Stats
	loc, err := period.LoadZone(sub.TimeZone)
	if err != nil {
		return st, err
	}
	if d := deactivationAt(*sub); d != nil && sub.DeactivatedAt == nil && !d.After(at) {
		sub.DeactivatedAt = d
		if err := tx.AddEvent(ctx, EventSubscriptionDeactivated, subject(sub.ID), subscriptionData(*sub), *d); err != nil {
			return st, err
		}
		st.Deactivations++
		if hasChanges && sub.NextID == nil {
			// The series ends here: what still waits on it never runs.
			if _, err := tx.EndChanges(ctx, []string{sub.ID}, store.ChangeExpired, store.ReasonSeriesEnded, *d); err != nil {
				return st, err
			}
		}
	}
	if sub.RenewAt != nil && sub.NextID == nil && sub.CancelledAt == nil && !sub.RenewAt.After(at) {
		next, written, err := e.renew(ctx, tx, cache, *sub, loc, *sub.RenewAt, hasChanges)
		if err != nil {
			return st, err
		}
		sub.NextID = &next.ID
		*created = append(*created, renewal{NewPeriod: store.NewPeriod{Sub: next, At: *sub.RenewAt}, Written: written})
		st.Renewals++
	}
	schedule(sub, loc)
	return st, nil
}

// renew creates the period after sub (the caller records and bills it).
// It reports whether it wrote the period: without plan changes to move it
// leaves that to the caller, who writes a batch's periods together. The next package is, in order of
// precedence: the target of a plan change registered for the renewal; the
// next chain step's package once the current step has lasted its periods;
// otherwise the same package.
func (e *Engine) renew(ctx context.Context, tx *store.Tx, cache *catalogCache, sub store.Subscription, loc *time.Location, at time.Time, hasChanges bool) (store.Subscription, bool, error) {
	pkg, choices := sub.Package, sub.Choices
	stepPeriod := sub.StepPeriod + 1
	chainID, chainStep := sub.ChainID, sub.ChainStep
	var changes []store.ScheduledChange
	if hasChanges {
		var err error
		if changes, err = tx.RegisteredChanges(ctx, sub.ID); err != nil {
			return store.Subscription{}, false, err
		}
	}
	var applied *store.ScheduledChange
	for i := range changes {
		// A price change's OnRenewal change waits for the first renewal
		// whose new period starts at or after its NotBefore.
		if c := changes[i]; c.ProcessingType == store.ChangeOnRenewal && (c.NotBefore == nil || !sub.PeriodEnd.Before(*c.NotBefore)) {
			applied = &changes[i]
		}
	}
	if applied != nil {
		merged, err := cache.merge(ctx, applied.TemplatePackageID, applied.Choices, false)
		var verrs validation.Errors
		switch {
		case errors.As(err, &verrs) || errors.Is(err, store.ErrNotFound) || (err == nil && merged.Currency != sub.Currency):
			// The template changed since registration so that the change
			// cannot run: it expires and the renewal goes on without it.
			e.log.Warn("plan change expired", "change", applied.ID, "err", err)
			if err := tx.FinishChange(ctx, applied.ID, store.ChangeExpired, at, nil, store.ReasonCannotRun); err != nil {
				return store.Subscription{}, false, err
			}
			applied = nil
		case err != nil:
			return store.Subscription{}, false, fmt.Errorf("plan change %s: %w", applied.ID, err)
		default:
			if merged.SubscriptionPackageChainID != nil {
				// A chained target: the new series gets its chain instance.
				if merged, err = e.instancePackage(ctx, tx, cache, applied.TemplatePackageID, applied.Choices, at); err != nil {
					return store.Subscription{}, false, fmt.Errorf("plan change %s: %w", applied.ID, err)
				}
			}
			pkg, choices, stepPeriod = merged, applied.Choices, 1
			chainID, chainStep = merged.SubscriptionPackageChainID, merged.ChainStepOrder
		}
	}
	if applied == nil && stepEnds(sub) {
		// The next step of the series' chain instance, frozen when it was
		// ordered: template and chain edits since then do not reach it.
		step, instanceID, ok, err := e.nextChainStep(ctx, tx, cache, sub, at)
		if err != nil {
			return store.Subscription{}, false, fmt.Errorf("chain %s step %d: %w", *sub.ChainID, *sub.ChainStep+1, err)
		}
		if ok {
			n := step.Step
			pkg, choices, stepPeriod, chainStep, chainID = step.Package, step.Choices, 1, &n, &instanceID
		}
	}
	next := successor(sub, pkg, choices, loc, at)
	if applied != nil {
		next.TemplatePackageID = &applied.TemplatePackageID
	}
	next.ChainID, next.ChainStep, next.StepPeriod = chainID, chainStep, stepPeriod
	if next.ChainID == nil {
		next.ChainStep, next.StepPeriod = nil, 1
	}
	schedule(&next, loc)
	if !hasChanges {
		// Nothing refers to the new period yet: the caller writes it with
		// the rest of the batch.
		return next, false, nil
	}
	if err := tx.InsertSubscription(ctx, next); err != nil {
		return store.Subscription{}, false, err
	}
	if applied != nil {
		if err := tx.FinishChange(ctx, applied.ID, store.ChangeExecuted, at, &next.ID, ""); err != nil {
			return store.Subscription{}, false, err
		}
	}
	// Changes for later times follow the subscription into its next period.
	if hasChanges {
		if err := tx.MoveChanges(ctx, sub.ID, next.ID); err != nil {
			return store.Subscription{}, false, err
		}
	}
	return next, true, nil
}

// renewal is a period a batch created, and whether it is written yet.
type renewal struct {
	store.NewPeriod
	Written bool
}

func periods(rs []renewal) []store.NewPeriod {
	out := make([]store.NewPeriod, len(rs))
	for i, r := range rs {
		out[i] = r.NewPeriod
	}
	return out
}

// created records new periods, in order: their SubscriptionCreated events
// and the billing hook, once for all of them.
func (e *Engine) created(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error {
	if len(periods) == 0 {
		return nil
	}
	events := make([]store.NewEvent, len(periods))
	for i, p := range periods {
		events[i] = store.NewEvent{Type: EventSubscriptionCreated, Subject: subject(p.Sub.ID), Data: subscriptionData(p.Sub), At: p.At}
	}
	if err := tx.AddEvents(ctx, events); err != nil {
		return err
	}
	if e.Hooks.PeriodsCreated != nil {
		return e.Hooks.PeriodsCreated(ctx, tx, periods)
	}
	return nil
}

// Start begins the series n in tx at now, as an order's completion does:
// it writes the first period and records it (its SubscriptionCreated
// event, and with billing its payment demand and invoice).
func (e *Engine) Start(ctx context.Context, tx *store.Tx, n NewSeries, now time.Time) (store.Subscription, error) {
	first, err := Begin(n, now)
	if err != nil {
		return store.Subscription{}, err
	}
	if err := tx.InsertSubscription(ctx, first); err != nil {
		return store.Subscription{}, err
	}
	if err := e.created(ctx, tx, []store.NewPeriod{{Sub: first, At: now}}); err != nil {
		return store.Subscription{}, err
	}
	return first, nil
}

func subject(id string) string { return "/subscription/" + id }

// subscriptionData is the light payload of subscription events.
func subscriptionData(sub store.Subscription) subscriptionEvent {
	return subscriptionEvent{OrganizationID: sub.OrganizationID, SubscriberID: sub.SubscriberID, SubscriptionID: sub.ID}
}

// subscriptionEvent is that payload. A struct encodes faster than a map;
// its fields are in the order of their names, the order encoding/json
// writes a map's keys in, so events read exactly as before.
type subscriptionEvent struct {
	OrganizationID string `json:"organizationId"`
	SubscriberID   string `json:"subscriberId"`
	SubscriptionID string `json:"subscriptionId"`
}
