package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
)

// Why a subscription will not renew (UpcomingInvoice.Reason).
const (
	// NoRenewalCancelled: the series' last period is cancelled and the
	// cancellation has not taken effect yet (at the period's end, or at a
	// chosen time); PendingChanges shows it.
	NoRenewalCancelled = "Cancelled"
	// NoRenewalEnded: the series has ended (its cancellation took effect,
	// or it stopped automatically).
	NoRenewalEnded = "Ended"
	// NoRenewalAutomaticStop: the package stops by itself at the end of
	// the running period.
	NoRenewalAutomaticStop = "AutomaticStop"
	// NoRenewalPlanChange: a plan change scheduled at or before the
	// renewal replaces the period first; the new plan's first invoice is
	// issued when it runs (PendingChanges shows it).
	NoRenewalPlanChange = "PlanChange"
)

// Kinds of an UpcomingChange.
const (
	UpcomingPlanChange   = "PlanChange"
	UpcomingCancellation = "Cancellation"
)

// UpcomingInvoice is the invoice the next renewal of a subscription's
// series will issue, as the engine and billing will build it
// (engine.PreviewRenewal, invoicing.PreviewPeriod), and what is pending on
// the series. When WillRenew is false, Reason says why and there is no
// period, no dates and no lines.
type UpcomingInvoice struct {
	// SubscriptionID is the period asked about; RenewingID the series'
	// last period, whose renewal this is.
	SubscriptionID string
	RenewingID     string
	WillRenew      bool
	Reason         string
	// PeriodStart and PeriodEnd are the new period's.
	PeriodStart time.Time
	PeriodEnd   time.Time
	// IssuedAt is when the renewal happens and the invoice is issued;
	// DueAt when it falls due; IssueDate and DueDate the printed local
	// dates.
	IssuedAt  time.Time
	DueAt     time.Time
	IssueDate string
	DueDate   string
	// Package is the new period's package: the current one, the next
	// chain step's (ChainStep), or a plan change's target (PlanChangeID).
	Package      catalog.SubscriptionPackage
	ChainStep    bool
	PlanChangeID string
	Currency     string
	// PricesIncludeVAT says the lines' unit prices and discounts are
	// gross.
	PricesIncludeVAT bool
	Lines            []billing.Line
	VATTotals        []billing.VATTotal
	Net              catalog.Amount
	VAT              catalog.Amount
	Gross            catalog.Amount
	PendingChanges   []UpcomingChange
	// Binding is the series' binding period while it lasts (nil when none
	// or ended).
	Binding *UpcomingBinding
}

// UpcomingBinding is a series' running binding period (docs/ORDERS.md,
// "Binding periods").
type UpcomingBinding struct {
	EndsAt time.Time
	// EarlyCancellation is the rule of a cancellation before EndsAt
	// (catalog.EndOfBinding or catalog.ChargeRemainder).
	EarlyCancellation string
	// PeriodsAfter counts the bound periods after the series' last
	// period: what a ChargeRemainder cancellation at its end charges.
	PeriodsAfter int
	// CancellationScheduled is set when a cancellation waits for EndsAt.
	CancellationScheduled bool
}

// UpcomingChange is a change waiting on a series: a registered plan change
// or a cancellation that has not taken effect.
type UpcomingChange struct {
	Kind string
	// ID is the plan change's id, or the cancelled period's.
	ID   string
	Path string
	// At is when it takes effect: a plan change's scheduled time, or the
	// renewal for an OnRenewal change (nil when it waits for a later
	// renewal: NotBefore); a cancellation's effect.
	At *time.Time
	// AtRenewal is set when it acts at the previewed renewal: an OnRenewal
	// change that runs into the new period.
	AtRenewal         bool
	ProcessingType    string
	TemplatePackageID string
	NotBefore         *time.Time
	Reason            string
}

// UpcomingInvoice previews the invoice the next renewal of subscription
// id's series will issue, at the tenant's time, writing nothing: the
// period it covers, when it is issued and due, its lines and totals
// (with the plan change or chain step that renewal applies and the
// account's open charges and allowances booked by now), and the changes
// pending on the series. The period and the lines come from the engine's
// and billing's own computations, so the renewal issues what this shows,
// unless something changes first (a charge booked, a cancellation, a
// price change starting, another invoice of the account issued before it
// using the account's items). A series that will not renew answers
// WillRenew false with its Reason; store.ErrNotFound for an unknown
// subscription or another tenant's.
func (a *App) UpcomingInvoice(ctx context.Context, id string) (UpcomingInvoice, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return UpcomingInvoice{}, err
	}
	// Only the series' last period renews: follow the renewals and plan
	// changes forward from the one asked about.
	last, err := a.store.Subscription(ctx, id)
	if err != nil {
		return UpcomingInvoice{}, err
	}
	var prev *store.Subscription
	for last.NextID != nil {
		cur := last
		if last, err = a.store.Subscription(ctx, *last.NextID); err != nil {
			return UpcomingInvoice{}, err
		}
		prev = &cur
	}
	out := UpcomingInvoice{SubscriptionID: id, RenewingID: last.ID, Currency: last.Currency}
	pending, err := a.store.PendingChangeOn(ctx, last.ID)
	if err != nil {
		return UpcomingInvoice{}, err
	}
	if prev == nil && last.PreviousID != nil && last.CancelledAt != nil {
		// Asked about the last period itself: cancelEnd may need the one
		// before it.
		p, err := a.store.Subscription(ctx, *last.PreviousID)
		if err != nil {
			return UpcomingInvoice{}, err
		}
		prev = &p
	}
	if b := last.BindingEnd; b != nil && b.After(now) {
		n, err := engine.BoundPeriodsAfter(last)
		if err != nil {
			return UpcomingInvoice{}, err
		}
		rule := last.BindingRule
		if rule == "" {
			rule = catalog.EndOfBinding
		}
		out.Binding = &UpcomingBinding{EndsAt: *b, EarlyCancellation: rule, PeriodsAfter: n, CancellationScheduled: last.ScheduledCancelAt != nil}
		if last.ScheduledCancelAt != nil {
			// The series renews until the binding ends, and ends then.
			end := *b
			out.PendingChanges = append(out.PendingChanges, UpcomingChange{Kind: UpcomingCancellation, ID: last.ID,
				Path: "/subscription/" + last.ID, At: &end, Reason: last.ScheduledCancelReason})
		}
	}
	ends := cancelEnd(last, prev)
	if ends != nil && ends.After(now) {
		out.PendingChanges = append(out.PendingChanges, UpcomingChange{Kind: UpcomingCancellation, ID: last.ID,
			Path: "/subscription/" + last.ID, At: ends, Reason: last.CancelReason})
	}
	switch {
	case ends != nil && ends.After(now):
		out.Reason = NoRenewalCancelled
	case last.CancelledAt != nil || last.DeactivatedAt != nil || (last.Package.AutomaticStop && !now.Before(last.PeriodEnd)):
		out.Reason = NoRenewalEnded
	case last.Package.AutomaticStop:
		out.Reason = NoRenewalAutomaticStop
	case pending != nil && pending.ProcessingType == store.ChangeOnScheduledTime && last.RenewAt != nil && !pending.ScheduledAt.After(*last.RenewAt):
		// The engine runs a change due at the renewal time before it.
		out.Reason = NoRenewalPlanChange
	}
	if out.Reason != "" {
		if pending != nil {
			out.PendingChanges = append(out.PendingChanges, planChange(*pending, nil))
		}
		return out, nil
	}
	r, err := a.engine.PreviewRenewal(ctx, last, pending)
	if errors.Is(err, engine.ErrNoRenewal) {
		out.Reason = NoRenewalEnded
		return out, nil
	}
	if err != nil {
		return UpcomingInvoice{}, fmt.Errorf("app: upcoming renewal of subscription %s: %w", last.ID, err)
	}
	if pending != nil {
		out.PendingChanges = append(out.PendingChanges, planChange(*pending, &r))
	}
	inv, err := invoicing.PreviewPeriod(ctx, a.store, store.NewPeriod{Sub: r.Period, At: r.At})
	if err != nil {
		return UpcomingInvoice{}, fmt.Errorf("app: upcoming invoice of subscription %s: %w", last.ID, err)
	}
	out.WillRenew = true
	out.PeriodStart, out.PeriodEnd = r.Period.PeriodStart, r.Period.PeriodEnd
	out.IssuedAt, out.DueAt, out.IssueDate, out.DueDate = inv.IssuedAt, inv.DueAt, inv.IssueDate, inv.DueDate
	out.Package, out.ChainStep = r.Period.Package, r.ChainStep
	if r.Change != nil {
		out.PlanChangeID = r.Change.ID
	}
	out.Currency, out.PricesIncludeVAT = inv.Currency.Code, inv.PricesIncludeVAT
	out.Lines, out.VATTotals = inv.Lines, inv.VATTotals
	out.Net, out.VAT, out.Gross = catalog.NewAmount(inv.Net, inv.Currency), catalog.NewAmount(inv.VAT, inv.Currency), catalog.NewAmount(inv.Gross, inv.Currency)
	return out, nil
}

// cancelEnd is when a series whose last period is cancelled stops giving
// access (nil when it is not cancelled): the cancellation's effect, or,
// for a period a renewal created ahead (prev renewed into it) and that was
// cancelled before it started, the end of the running period before it.
func cancelEnd(last store.Subscription, prev *store.Subscription) *time.Time {
	if last.CancelledAt == nil || last.CancelEffectiveAt == nil {
		return nil
	}
	end := *last.CancelEffectiveAt
	if !end.After(last.PeriodStart) && prev != nil && prev.CancelledAt == nil && prev.NextID != nil && *prev.NextID == last.ID {
		end = prev.PeriodEnd
	}
	return &end
}

// planChange is the pending change c as an UpcomingChange, with r the
// previewed renewal (nil when the series does not renew).
func planChange(c store.ScheduledChange, r *engine.UpcomingRenewal) UpcomingChange {
	u := UpcomingChange{Kind: UpcomingPlanChange, ID: c.ID, Path: "/subscription/" + c.SubscriptionID + "/scheduledchange/" + c.ID,
		At: c.ScheduledAt, ProcessingType: c.ProcessingType, TemplatePackageID: c.TemplatePackageID, NotBefore: c.NotBefore}
	if r != nil && r.Change != nil && r.Change.ID == c.ID {
		at := r.At
		u.At, u.AtRenewal = &at, true
	}
	if r != nil && r.Expiring != nil && r.Expiring.ID == c.ID {
		u.Reason = store.ReasonCannotRun
	}
	return u
}
