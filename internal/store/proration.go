package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/period"
)

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
func SettleCancellation(ctx context.Context, tx *Tx, sub Subscription, at time.Time) error {
	if sub.CancelEffectiveAt == nil || !sub.CancelEffectiveAt.Before(sub.PeriodEnd) {
		return nil
	}
	var (
		demandID, invoiceID, status string
		process                     sql.NullString
	)
	err := tx.queryRow(ctx, `SELECT id, invoice_id, status, dunning_process_id FROM payment_demands
		WHERE tenant_id = $1 AND subscription_id = $2 AND kind = 'Period'`, tx.tenant, sub.ID).Scan(&demandID, &invoiceID, &status, &process)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // a period without an invoice has nothing to settle
	}
	if err != nil {
		return fmt.Errorf("store: demand of subscription %s: %w", sub.ID, err)
	}
	loc, err := period.LoadZone(sub.TimeZone)
	if err != nil {
		return err
	}
	used, total := billing.ProrationDays(sub.PeriodStart, sub.PeriodEnd, *sub.CancelEffectiveAt, loc)
	if used == 0 {
		_, err := tx.CreditInvoice(ctx, invoiceID, CreditReasonCancellation, at, func(inv Invoice, credited map[int]int64) ([]billing.CreditRequest, error) {
			return billing.PeriodCredit(inv.Lines, credited, 0, total)
		})
		return err
	}
	policy, err := tx.prorationPolicyOf(ctx, nullString(process))
	if err != nil {
		return err
	}
	switch status {
	case billing.DemandCredited:
		return nil
	case billing.DemandPaid:
		if policy.Paid != billing.ProrateAllowanceForRemaining {
			return nil
		}
		inv, err := tx.invoice(ctx, invoiceID)
		if err != nil {
			return err
		}
		credited, err := tx.creditedLines(ctx, invoiceID)
		if err != nil {
			return err
		}
		amounts, err := billing.PeriodAllowance(inv.Lines, credited, used, total)
		if err != nil {
			return err
		}
		for _, a := range amounts {
			desc := fmt.Sprintf("Unused time of invoice %d (%d of %d days)", inv.InvoiceNumber, total-used, total)
			if _, err := tx.BookItem(ctx, inv.SubscriberAccountID, billing.ItemAllowance, desc, a.Gross, a.VATRate, at); err != nil {
				return err
			}
		}
		return nil
	default:
		if policy.NotPaid != billing.ProrateChargeForConsumed {
			return nil
		}
		_, err := tx.CreditInvoice(ctx, invoiceID, CreditReasonProration, at, func(inv Invoice, credited map[int]int64) ([]billing.CreditRequest, error) {
			return billing.PeriodCredit(inv.Lines, credited, used, total)
		})
		return err
	}
}

// prorationPolicyOf returns the proration policy of dunning process id
// (nil: none), or the default policy.
func (tx *Tx) prorationPolicyOf(ctx context.Context, process *string) (billing.Policy, error) {
	if process == nil {
		return billing.DefaultPolicy, nil
	}
	var policy sql.NullString
	err := tx.queryRow(ctx, `SELECT proration_policy_id FROM dunning_processes WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, *process).Scan(&policy)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !policy.Valid {
		return billing.DefaultPolicy, nil
	}
	if err != nil {
		return billing.Policy{}, fmt.Errorf("store: dunning process %s: %w", *process, err)
	}
	p, err := tx.ProrationPolicy(ctx, policy.String)
	if errors.Is(err, ErrNotFound) {
		return billing.DefaultPolicy, nil
	}
	if err != nil {
		return billing.Policy{}, err
	}
	return p.Policy(), nil
}
