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

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
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

// Hooks are called inside the engine's transactions (that of the action
// they follow, or of the step that looks for due work), so whatever they
// write commits or rolls back with it. internal/invoicing fills them
// (wired in internal/server).
type Hooks struct {
	// PeriodsCreated follows the creation of subscription periods (an
	// order's first, renewals, or the one a plan change generates), each
	// at its business time. A batch of renewals comes in one call, in the
	// order the engine performed them (due time, then id), after they were
	// written; an order or a plan change comes as a batch of one.
	PeriodsCreated func(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error
	// Cancelled follows a cancellation registered at at, a plan change's
	// cancellation of the old period included (its proration happens
	// here; the new period comes through PeriodsCreated).
	Cancelled func(ctx context.Context, tx *store.Tx, sub store.Subscription, at time.Time) error
	// BindingRemainder follows a cancellation during a ChargeRemainder
	// binding (docs/ORDERS.md, "Binding periods"), in the cancelling
	// transaction: it charges periods billing periods of sub's package,
	// sub being the period the cancellation cuts short (or that never
	// starts), at at.
	BindingRemainder func(ctx context.Context, tx *store.Tx, sub store.Subscription, periods int, at time.Time) error
	// Dun performs the dunning actions due at at, for at most limit
	// demands: reminders, and payment stops, which it carries out through
	// stop (the engine cancels the subscription at once). It reports how
	// many of each it did. Without it, or without NextDun, the engine duns
	// nothing (and does not look for due dunning).
	Dun func(ctx context.Context, tx *store.Tx, at time.Time, limit int, stop PaymentStop) (reminders, stops int, err error)
	// NextDun returns when the tenant's earliest dunning action is due
	// (nil: none), so that the engine takes dunning in time order with
	// its other due work; Dun then performs what is due at that time.
	NextDun func(ctx context.Context, tx *store.Tx) (*time.Time, error)
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
	return e.advance(ctx, tenantID, now, false)
}

// advance is Advance; with record, each batch's work is recorded in its
// transaction (RecordClockWork) for AdvanceClock to count.
func (e *Engine) advance(ctx context.Context, tenantID string, now time.Time, record bool) (Stats, error) {
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
			var (
				err error
				due time.Time
			)
			batch, more, err = e.step(ctx, tx, cache, now, &due)
			if err != nil || !record || batch == (Stats{}) {
				return err
			}
			return RecordClockWork(ctx, tx, ClockWork{Target: now, DueAt: due, Renewals: batch.Renewals,
				Deactivations: batch.Deactivations, PlanChanges: batch.PlanChanges, Reminders: batch.Reminders,
				PaymentStops: batch.PaymentStops, PriceChangeNotices: batch.PriceChangeNotices}, time.Now())
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

// step performs one batch of due work and reports whether more may remain;
// *due is set to the latest due time of the batch's actions.
//
// Work is taken strictly in time order: the earliest due plan change, or a
// batch of subscriptions due before it. A batch only spans one day after
// its first item: every period is at least a day long, so nothing the batch
// creates can fall due before the batch's last item.
func (e *Engine) step(ctx context.Context, tx *store.Tx, cache *catalogCache, now time.Time, due *time.Time) (Stats, bool, error) {
	var st Stats
	subAt, err := tx.NextSubscriptionAction(ctx)
	if err != nil {
		return st, false, err
	}
	chAt, err := tx.NextChangeAt(ctx)
	if err != nil {
		return st, false, err
	}
	var dunAt *time.Time
	if e.Hooks.Dun != nil && e.Hooks.NextDun != nil {
		if dunAt, err = e.Hooks.NextDun(ctx, tx); err != nil {
			return st, false, err
		}
	}
	pcAt, err := catalogdb.NextPriceChangeAt(ctx, tx)
	if err != nil {
		return st, false, err
	}
	subDue := subAt != nil && !subAt.After(now)
	chDue := chAt != nil && !chAt.After(now)
	dunDue := dunAt != nil && !dunAt.After(now)
	// A price change starts before anything else due at the same time, so
	// that the series it finds are those running at its start.
	if pcAt != nil && !pcAt.After(now) && (!subDue || !pcAt.After(*subAt)) && (!chDue || !pcAt.After(*chAt)) && (!dunDue || !pcAt.After(*dunAt)) {
		*due = *pcAt
		st, err := e.startPriceChanges(ctx, tx, cache, *pcAt)
		return st, true, err
	}
	// At equal times: plan changes, then subscriptions, then dunning.
	switch {
	case !subDue && !chDue && !dunDue:
		return st, false, nil
	case chDue && (!subDue || !chAt.After(*subAt)) && (!dunDue || !chAt.After(*dunAt)):
		*due = *chAt
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
		*due = *dunAt
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
	ids := make([]string, len(subs))
	for i := range subs {
		ids[i] = subs[i].ID
		if at := *subs[i].NextActionAt; at.After(*due) {
			*due = at
		}
	}
	pending, err := tx.PendingChanges(ctx, ids)
	if err != nil {
		return st, false, err
	}
	// A chain instance belongs to one series, which a batch renews once:
	// keeping the instances of earlier batches would only hold memory (at
	// 10 % of 100,000 subscriptions on chains, ~130 MiB by the end).
	cache.forgetInstances()
	if err := cache.loadInstances(ctx, txInstances(tx), chainIDsDue(subs)); err != nil {
		return st, false, fmt.Errorf("engine: %w", err)
	}
	var created []renewal
	for i := range subs {
		sub := &subs[i]
		var change *store.ScheduledChange
		if c, ok := pending[sub.ID]; ok {
			change = &c
		}
		s, err := e.act(ctx, tx, cache, sub, *sub.NextActionAt, change, &created)
		if err != nil {
			return st, false, fmt.Errorf("engine: subscription %s: %w", sub.ID, err)
		}
		st.add(s)
	}
	// The batch's new periods are written (those renew did not have to
	// write at once), the acted-on subscriptions updated (each still at the
	// version read, or the batch rolls back), and the new periods recorded
	// and billed, all together.
	written := make([]store.Subscription, len(created))
	for i, p := range created {
		written[i] = p.Sub
	}
	if err := tx.InsertSubscriptions(ctx, written); err != nil {
		return st, false, fmt.Errorf("engine: %w", err)
	}
	// Now that the new periods exist, the plan changes that waited on the
	// renewed ones ran into them (Executed) or follow them.
	for _, p := range created {
		switch c := p.Change; {
		case c == nil:
		case p.Applied:
			if err := tx.FinishChange(ctx, c.ID, store.ChangeExecuted, p.At, &p.Sub.ID, ""); err != nil {
				return st, false, err
			}
		default:
			if err := tx.MoveChanges(ctx, c.PendingOnID, p.Sub.ID); err != nil {
				return st, false, err
			}
		}
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
func (e *Engine) act(ctx context.Context, tx *store.Tx, cache *catalogCache, sub *store.Subscription, at time.Time, change *store.ScheduledChange, created *[]renewal) (Stats, error) {
	var st Stats
	loc, err := period.LoadZone(sub.TimeZone)
	if err != nil {
		return st, err
	}
	if d := deactivationAt(*sub); d != nil && sub.DeactivatedAt == nil && !d.After(at) {
		sub.DeactivatedAt = d
		if err := tx.AddEvent(ctx, store.EventSubscriptionDeactivated, subject(sub.ID), subscriptionData(*sub), *d); err != nil {
			return st, err
		}
		st.Deactivations++
		if change != nil && sub.NextID == nil {
			// The series ends here: what still waits on it never runs.
			if _, err := tx.EndChanges(ctx, []string{sub.ID}, store.ChangeExpired, store.ReasonSeriesEnded, *d); err != nil {
				return st, err
			}
			change = nil
		}
	}
	if sub.RenewAt != nil && sub.NextID == nil && sub.CancelledAt == nil && !sub.RenewAt.After(at) {
		next, change, applied, err := e.renew(ctx, tx, cache, *sub, loc, *sub.RenewAt, change)
		if err != nil {
			return st, err
		}
		sub.NextID = &next.ID
		*created = append(*created, renewal{NewPeriod: store.NewPeriod{Sub: next, At: *sub.RenewAt}, Change: change, Applied: applied})
		st.Renewals++
	}
	schedule(sub, loc)
	return st, nil
}

// renew builds the period after sub (planRenewal) and writes what that
// needs first: the expiry of a change that cannot run, a chain instance
// frozen for the new period. The caller writes, records and bills a
// batch's new periods together. It returns the change still to settle
// once the new period is written — applied (it ran: Executed into the new
// period), or to follow the series into it — or nil.
func (e *Engine) renew(ctx context.Context, tx *store.Tx, cache *catalogCache, sub store.Subscription, loc *time.Location, at time.Time, pending *store.ScheduledChange) (next store.Subscription, change *store.ScheduledChange, applied bool, err error) {
	p, err := e.planRenewal(ctx, txInstances(tx), cache, sub, loc, at, pending)
	if err != nil {
		return store.Subscription{}, nil, false, err
	}
	if c := p.Expired; c != nil {
		e.log.Warn("plan change expired", "change", c.ID, "err", p.ExpiredBy)
		if err := tx.FinishChange(ctx, c.ID, store.ChangeExpired, at, nil, store.ReasonCannotRun); err != nil {
			return store.Subscription{}, nil, false, err
		}
	}
	if p.Instance != nil {
		if err := cache.write(ctx, tx, *p.Instance); err != nil {
			return store.Subscription{}, nil, false, err
		}
	}
	return p.Next, p.Pending, p.Applied, nil
}

// renewalPlan is what the renewal of a period does (planRenewal).
type renewalPlan struct {
	// Next is the new period.
	Next store.Subscription
	// Pending is the change that waited on the renewed period and is
	// still to settle once Next is written: Applied (it runs into Next),
	// or following the series into Next; nil when none.
	Pending *store.ScheduledChange
	Applied bool
	// Expired is the OnRenewal change that cannot run any more (its
	// template changed, was archived or deleted, or changed currency),
	// ExpiredBy why; the renewal goes on without it.
	Expired   *store.ScheduledChange
	ExpiredBy error
	// ChainStep is set when Next is the series' next chain step.
	ChainStep bool
	// Instance is a chain instance frozen for Next, to write with it.
	Instance *catalog.ChainInstance
}

// planRenewal decides the period after sub, renewed at at, and writes
// nothing: renew writes what it decided, and a preview of the upcoming
// invoice (UpcomingRenewal) shows it. The next package is, in order of
// precedence: the target of the OnRenewal change waiting on sub
// (pending); the next chain step's package once the current step has
// lasted its periods; otherwise the same package. Catalog reads go
// through cache, chain instances through read.
func (e *Engine) planRenewal(ctx context.Context, read instanceReader, cache *catalogCache, sub store.Subscription, loc *time.Location, at time.Time, pending *store.ScheduledChange) (renewalPlan, error) {
	var p renewalPlan
	pkg, choices := sub.Package, sub.Choices
	stepPeriod := sub.StepPeriod + 1
	chainID, chainStep := sub.ChainID, sub.ChainStep
	// A price change's OnRenewal change waits for the first renewal whose
	// new period starts at or after its NotBefore.
	var run *store.ScheduledChange
	if c := pending; c != nil && c.ProcessingType == store.ChangeOnRenewal && (c.NotBefore == nil || !sub.PeriodEnd.Before(*c.NotBefore)) {
		run = c
	}
	p.Applied = run != nil
	if run != nil {
		merged, err := cache.merge(ctx, run.TemplatePackageID, run.Choices, false)
		var verrs validation.Errors
		switch {
		case errors.As(err, &verrs) || errors.Is(err, store.ErrNotFound) || (err == nil && merged.Currency != sub.Currency):
			// The template changed since registration so that the change
			// cannot run: it expires and the renewal goes on without it.
			if err == nil {
				err = fmt.Errorf("template currency %s, subscription %s", merged.Currency, sub.Currency)
			}
			p.Expired, p.ExpiredBy = run, err
			run, pending, p.Applied = nil, nil, false
		case err != nil:
			return renewalPlan{}, fmt.Errorf("plan change %s: %w", run.ID, err)
		default:
			if merged.SubscriptionPackageChainID != nil {
				// A chained target: the new series gets its chain instance.
				if merged, p.Instance, err = e.frozenPackage(ctx, cache, run.TemplatePackageID, run.Choices, at); err != nil {
					return renewalPlan{}, fmt.Errorf("plan change %s: %w", run.ID, err)
				}
			}
			pkg, choices, stepPeriod = merged, run.Choices, 1
			chainID, chainStep = merged.SubscriptionPackageChainID, merged.ChainStepOrder
		}
	}
	if run == nil && stepEnds(sub) {
		// The next step of the series' chain instance, frozen when it was
		// ordered: template and chain edits since then do not reach it.
		step, instanceID, frozen, ok, err := e.nextChainStep(ctx, read, cache, sub, at)
		if err != nil {
			return renewalPlan{}, fmt.Errorf("chain %s step %d: %w", *sub.ChainID, *sub.ChainStep+1, err)
		}
		p.Instance = frozen
		if ok {
			n := step.Step
			pkg, choices, stepPeriod, chainStep, chainID = step.Package, step.Choices, 1, &n, &instanceID
			p.ChainStep = true
		}
	}
	next := successor(sub, pkg, choices, loc, at)
	if run != nil {
		next.TemplatePackageID = &run.TemplatePackageID
	}
	next.ChainID, next.ChainStep, next.StepPeriod = chainID, chainStep, stepPeriod
	if next.ChainID == nil {
		next.ChainStep, next.StepPeriod = nil, 1
	}
	// The binding: renewals and chain steps keep the series' (successor
	// copied it); a plan change onto a package with a contract of its own
	// starts a new one with the new period, unless a price change
	// registered it (a new price binds nobody anew).
	if run != nil && run.PriceChangeID == nil && pkg.Contract != nil && pkg.Contract.BindingPeriods > 0 {
		startBinding(&next, loc)
	}
	// A cancellation asked during an EndOfBinding binding: the period
	// that reaches the binding end is the last, cancelled with effect at
	// its end.
	if c := next.ScheduledCancelAt; c != nil && !bound(next, next.PeriodEnd) {
		asked, end := *c, next.PeriodEnd
		next.CancelledAt, next.CancelEffectiveAt, next.CancelReason = &asked, &end, next.ScheduledCancelReason
		next.ScheduledCancelAt, next.ScheduledCancelReason = nil, ""
	}
	schedule(&next, loc)
	p.Next, p.Pending = next, pending
	return p, nil
}

// renewal is a period a batch created, with the plan change that waited
// on its predecessor: Applied (it ran into this period) or following the
// series into it.
type renewal struct {
	store.NewPeriod
	Change  *store.ScheduledChange
	Applied bool
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
	events := make([]store.NewEvent, 0, len(periods))
	for _, p := range periods {
		events = append(events, store.NewEvent{Type: store.EventSubscriptionCreated, Subject: subject(p.Sub.ID), Data: subscriptionData(p.Sub), At: p.At})
		if p.Sub.CancelledAt != nil {
			// The last bound period of a cancellation scheduled for the
			// binding end is created cancelled (planRenewal).
			events = append(events, store.NewEvent{Type: store.EventSubscriptionCancelled, Subject: subject(p.Sub.ID), Data: subscriptionData(p.Sub), At: p.At})
		}
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
