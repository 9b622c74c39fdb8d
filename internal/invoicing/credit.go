package invoicing

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
)

// Lines chooses what to credit of invoice inv, given what has been given
// back of each of its lines (by line number: earlier credit notes and
// unused-days allowances, billing.GivenBack); no requests: nothing to
// credit.
type Lines func(inv store.Invoice, credited map[int]int64) ([]billing.CreditRequest, error)

// Credit issues a credit note for invoice id at business time at, in tx.
// lines chooses what to credit; when it returns no requests no note is
// issued (the zero CreditNote, nil). The note is numbered in the
// organization's own gap-free credit note series, settles the invoice's
// demand (Settle), writes the ledger (CreditNote −applied; a surplus
// becomes an allowance) and records CreditNoteIssued.
func Credit(ctx context.Context, tx *store.Tx, id, reason string, at time.Time, lines Lines) (store.CreditNote, error) {
	inv, err := tx.Invoice(ctx, id)
	if err != nil {
		return store.CreditNote{}, err
	}
	// The demand's lock comes before reading what earlier notes credited
	// and cancellations gave back: on PostgreSQL (READ COMMITTED) a read
	// before it sees the state before a concurrent credit or cancellation
	// commits, and both would give back the same amount (the second's
	// surplus an allowance out of nothing). Once the lock is held, every
	// later statement sees the winner's note or allowance.
	if _, err := tx.LockDemand(ctx, inv.PaymentDemandID); err != nil {
		return store.CreditNote{}, err
	}
	credited, err := givenBack(ctx, tx, inv)
	if err != nil {
		return store.CreditNote{}, err
	}
	reqs, err := lines(inv, credited)
	if err != nil || len(reqs) == 0 {
		return store.CreditNote{}, err
	}
	cur, err := currency(inv.Currency)
	if err != nil {
		return store.CreditNote{}, err
	}
	doc, err := billing.BuildCredit(cur, inv.Lines, credited, reqs)
	if err != nil {
		return store.CreditNote{}, err
	}
	org, err := tx.Organization(ctx, inv.OrganizationID)
	if err != nil {
		return store.CreditNote{}, err
	}
	loc, err := period.LoadZone(org.TimeZone)
	if err != nil {
		return store.CreditNote{}, err
	}
	number, err := tx.ReserveNumbers(ctx, store.CreditNoteSeries(inv.OrganizationID), 1)
	if err != nil {
		return store.CreditNote{}, err
	}
	at = at.UTC().Truncate(time.Microsecond)
	change, err := Settle(ctx, tx, inv.PaymentDemandID, 0, doc.Gross, at)
	if err != nil {
		return store.CreditNote{}, err
	}
	c := store.CreditNote{ID: store.NewID(), CreditNoteNumber: number, OrganizationID: inv.OrganizationID, InvoiceID: inv.ID,
		InvoiceNumber: inv.InvoiceNumber, PaymentDemandID: inv.PaymentDemandID, SubscriberAccountID: inv.SubscriberAccountID,
		SubscriberID: inv.SubscriberID, SubscriptionID: inv.SubscriptionID, Currency: inv.Currency, Reason: reason,
		IssuedAt: at, IssueDate: billing.LocalDate(at, loc), Lines: doc.Lines, VATTotals: doc.VATTotals,
		Net: catalog.NewAmount(doc.Net, cur), VAT: catalog.NewAmount(doc.VAT, cur), Gross: catalog.NewAmount(doc.Gross, cur),
		Applied: catalog.NewAmount(change.Applied, cur), Surplus: catalog.NewAmount(change.Surplus, cur),
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	if change.Surplus > 0 {
		item, err := bookAllowance(ctx, tx, inv.SubscriberAccountID, fmt.Sprintf("Credit note %d for invoice %d", number, inv.InvoiceNumber), change.Surplus, at,
			store.ItemSource{Kind: store.ItemSourceCreditNote, ID: c.ID})
		if err != nil {
			return store.CreditNote{}, err
		}
		c.AllowanceItemID = &item
	}
	if err := tx.InsertCreditNote(ctx, c); err != nil {
		return store.CreditNote{}, err
	}
	if change.Applied > 0 {
		if err := tx.AddEntries(ctx, []store.NewEntry{{AccountID: c.SubscriberAccountID, Kind: store.EntryCreditNote,
			Amount: -change.Applied, InvoiceID: c.InvoiceID, CreditNoteID: c.ID, BookedAt: at}}); err != nil {
			return store.CreditNote{}, err
		}
	}
	if err := tx.AddEvent(ctx, store.EventCreditNoteIssued, "/creditnote/"+c.ID, CreditNoteEventData{Amount: c.Gross,
		CreditNoteID: c.ID, CreditNoteNumber: c.CreditNoteNumber, Currency: c.Currency, InvoiceID: c.InvoiceID,
		InvoiceNumber: c.InvoiceNumber, Number: c.CreditNoteNumber, OrganizationID: c.OrganizationID,
		PaymentDemandID: c.PaymentDemandID, SubscriberID: c.SubscriberID, SubscriptionID: c.SubscriptionID}, at); err != nil {
		return store.CreditNote{}, err
	}
	return c, nil
}

// CreditInvoice is Credit in a transaction of its own.
func CreditInvoice(ctx context.Context, st *store.Store, id, reason string, at time.Time, lines Lines) (store.CreditNote, error) {
	var note store.CreditNote
	err := st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		note, err = Credit(ctx, tx, id, reason, at, lines)
		return err
	})
	if err != nil {
		return store.CreditNote{}, err
	}
	return note, nil
}

// givenBack sums what has been given back of each line of invoice inv:
// what its credit notes took off the line and what the unused-days
// allowances of a cancellation gave back (billing.GivenBack). A paid
// period cancelled early gives its unused days back as an allowance
// (GenerateAllowanceForRemainingTime), so a merchant's credit afterwards
// may credit only the rest, or the subscriber would get those days twice.
func givenBack(ctx context.Context, tx *store.Tx, inv store.Invoice) (map[int]int64, error) {
	lines, err := tx.CreditedLines(ctx, inv.ID)
	if err != nil {
		return nil, err
	}
	credited := map[int]int64{}
	for _, l := range lines {
		credited[l.InvoiceLineNumber] += l.Gross.Minor
	}
	allowances, err := tx.ProrationAllowances(ctx, inv.ID)
	if err != nil || len(allowances) == 0 {
		return credited, err
	}
	return billing.GivenBack(inv.Lines, credited, allowances), nil
}

// SettleCancellation is the billing hook of cancellations
// (engine.Hooks.Cancelled), run in the cancelling transaction. It settles
// the invoice of the cancelled period for the time that will not be used:
//
//   - a period that never started (cancelled before its start, e.g. one a
//     renewal created ahead) has its period lines credited whole — never
//     prorated; if it was paid, the credit becomes an allowance;
//   - a period that ends early is prorated by days per the proration policy
//     of the invoice's dunning process (billing.DefaultPolicy without one):
//     paid → an allowance for the remaining days
//     (GenerateAllowanceForRemainingTime); not paid → the invoice is
//     credited down to the consumed days (GenerateChargeForConsumedTime);
//     NoProration leaves amounts as they are;
//   - a cancellation that takes effect at the period end settles nothing.
//
// Plan changes (Immediately and OnScheduledTime) cancel the running period
// and so are prorated here, at execution; OnRenewal changes cancel nothing.
func SettleCancellation(ctx context.Context, tx *store.Tx, sub store.Subscription, at time.Time) error {
	if sub.CancelEffectiveAt == nil || !sub.CancelEffectiveAt.Before(sub.PeriodEnd) {
		return nil
	}
	demand, ok, err := tx.PeriodDemandOf(ctx, sub.ID)
	if err != nil || !ok {
		return err // a period without an invoice has nothing to settle
	}
	// Paid or not, and what earlier notes credited, are read under the
	// demand's lock: a payment or credit committing meanwhile must be seen,
	// or a period fully credited by the merchant would still give an
	// allowance for its unused days (Credit locks the same row first).
	locked, err := tx.LockDemand(ctx, demand.ID)
	if err != nil {
		return err
	}
	demand.Status = locked.Status
	policy, err := prorationPolicyOf(ctx, tx, demand.ProcessID)
	if err != nil {
		return err
	}
	inv, err := tx.Invoice(ctx, demand.InvoiceID)
	if err != nil {
		return err
	}
	credited, err := givenBack(ctx, tx, inv)
	if err != nil {
		return err
	}
	plan, err := settlementOf(sub, demand.Status, policy, inv, credited)
	if err != nil {
		return err
	}
	if len(plan.Credit) > 0 {
		// Credit reads what was given back again, under the lock held
		// since: the same as read here.
		_, err := Credit(ctx, tx, inv.ID, plan.Reason, at, func(store.Invoice, map[int]int64) ([]billing.CreditRequest, error) {
			return plan.Credit, nil
		})
		return err
	}
	for _, a := range plan.Allowances {
		desc := fmt.Sprintf("Unused time of invoice %d (%d of %d days)", inv.InvoiceNumber, plan.TotalDays-plan.UsedDays, plan.TotalDays)
		if _, err := BookItem(ctx, tx, inv.SubscriberAccountID, billing.ItemAllowance, desc, a.Gross, a.VATRate, at,
			store.ItemSource{Kind: store.ItemSourceProration, ID: inv.ID}); err != nil {
			return err
		}
	}
	return nil
}

// CancellationSettlement is what cancelling a period settles on its
// invoice (SettleCancellation): a credit note of Credit's requests with
// Reason, or allowances for the unused days of a paid period, or nothing.
type CancellationSettlement struct {
	InvoiceID     string
	InvoiceNumber int64
	// UsedDays of TotalDays are the days of the period used before the
	// cancellation takes effect.
	UsedDays, TotalDays int
	// Reason is the credit note's (store.CreditReasonCancellation or
	// store.CreditReasonProration) when Credit is not empty.
	Reason string
	Credit []billing.CreditRequest
	// Allowances are the account items booked, per VAT rate.
	Allowances []billing.RateAmount
}

// settlementOf decides what cancelling sub (CancelEffectiveAt set, before
// its period end) settles on its period's invoice inv, whose demand has
// status and whose lines have had credited given back, under the dunning
// process's proration policy. It is the one decision SettleCancellation
// writes and PreviewCancellation shows.
//
//   - a period that never started has its period lines credited whole;
//   - a period ending early: paid → an allowance for the remaining days
//     (ProrateAllowanceForRemaining), not paid → a credit down to the used
//     days (ProrateChargeForConsumed); credited, or NoProration → nothing.
func settlementOf(sub store.Subscription, status string, policy billing.Policy, inv store.Invoice, credited map[int]int64) (CancellationSettlement, error) {
	loc, err := period.LoadZone(sub.TimeZone)
	if err != nil {
		return CancellationSettlement{}, err
	}
	used, total := billing.ProrationDays(sub.PeriodStart, sub.PeriodEnd, *sub.CancelEffectiveAt, loc)
	out := CancellationSettlement{InvoiceID: inv.ID, InvoiceNumber: inv.InvoiceNumber, UsedDays: used, TotalDays: total}
	switch {
	case used == 0:
		out.Reason = store.CreditReasonCancellation
		out.Credit, err = billing.PeriodCredit(inv.Lines, credited, 0, total)
	case status == billing.DemandCredited:
	case status == billing.DemandPaid:
		if policy.Paid == billing.ProrateAllowanceForRemaining {
			out.Allowances, err = billing.PeriodAllowance(inv.Lines, credited, used, total)
		}
	default:
		if policy.NotPaid == billing.ProrateChargeForConsumed {
			out.Reason = store.CreditReasonProration
			out.Credit, err = billing.PeriodCredit(inv.Lines, credited, used, total)
		}
	}
	return out, err
}

// CancellationPreview is a cancelled period's settlement as
// PreviewCancellation shows it: the decision, and the credit note it
// would issue built as Credit builds it.
type CancellationPreview struct {
	CancellationSettlement
	Currency string
	// Note is the credit note's lines and totals (nil without Credit).
	Note *billing.CreditDocument
}

// PreviewCancellation is what SettleCancellation would settle for sub as
// a cancellation would write it (CancelEffectiveAt set), read in tx and
// written nowhere: the same reads, without the lock, and the same
// decision (settlementOf). ok is false when nothing is settled (an
// effect at the period end, a period without an invoice).
func PreviewCancellation(ctx context.Context, tx *store.Tx, sub store.Subscription) (CancellationPreview, bool, error) {
	if sub.CancelEffectiveAt == nil || !sub.CancelEffectiveAt.Before(sub.PeriodEnd) {
		return CancellationPreview{}, false, nil
	}
	demand, ok, err := tx.PeriodDemandOf(ctx, sub.ID)
	if err != nil || !ok {
		return CancellationPreview{}, false, err
	}
	state, err := tx.Demand(ctx, demand.ID)
	if err != nil {
		return CancellationPreview{}, false, err
	}
	policy, err := prorationPolicyOf(ctx, tx, demand.ProcessID)
	if err != nil {
		return CancellationPreview{}, false, err
	}
	inv, err := tx.Invoice(ctx, demand.InvoiceID)
	if err != nil {
		return CancellationPreview{}, false, err
	}
	credited, err := givenBack(ctx, tx, inv)
	if err != nil {
		return CancellationPreview{}, false, err
	}
	plan, err := settlementOf(sub, state.Status, policy, inv, credited)
	if err != nil {
		return CancellationPreview{}, false, err
	}
	out := CancellationPreview{CancellationSettlement: plan, Currency: inv.Currency}
	if len(plan.Credit) > 0 {
		cur, err := currency(inv.Currency)
		if err != nil {
			return CancellationPreview{}, false, err
		}
		doc, err := billing.BuildCredit(cur, inv.Lines, credited, plan.Credit)
		if err != nil {
			return CancellationPreview{}, false, err
		}
		out.Note = &doc
	}
	return out, true, nil
}

// prorationPolicyOf returns the proration policy of dunning process id
// (nil: none), or the default policy when there is none.
func prorationPolicyOf(ctx context.Context, tx *store.Tx, process *string) (billing.Policy, error) {
	if process == nil {
		return billing.DefaultPolicy, nil
	}
	p, err := processProrationPolicy(ctx, tx, *process)
	if err != nil {
		return billing.Policy{}, err
	}
	if p == nil {
		return billing.DefaultPolicy, nil
	}
	return p.Policy(), nil
}

// currency looks up the currency of code, which the store wrote.
func currency(code string) (money.Currency, error) {
	c, ok := money.LookupCurrency(code)
	if !ok {
		return money.Currency{}, fmt.Errorf("invoicing: unknown currency %q", code)
	}
	return c, nil
}
