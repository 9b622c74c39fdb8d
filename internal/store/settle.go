package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
)

// EventInvoicePaid is recorded when an invoice becomes Paid, in the
// transaction that settled it.
const EventInvoicePaid = "InvoicePaid"

// DemandChange is what SettleDemand did to a payment demand.
type DemandChange struct {
	DemandID       string
	InvoiceID      string
	AccountID      string
	SubscriberID   string
	SubscriptionID *string
	OrganizationID string
	Currency       string
	// Before and After are the demand's settlement around the change.
	Before, After billing.Settlement
	// PaidApplied and CreditedApplied are the parts of the offered paid
	// and credited amounts that reduced what is outstanding; Applied is
	// their sum. Surplus is what the demand could not absorb: the caller
	// books it on the account (an allowance, see BookAllowance).
	PaidApplied, CreditedApplied int64
	Applied, Surplus             int64
	// OldStatus and NewStatus are the demand's stored statuses;
	// InvoiceStatus is the invoice's stored status after the change.
	OldStatus, NewStatus string
	InvoiceStatus        string
}

// Settled reports whether the demand is settled after the change (Paid or
// Credited): nothing is outstanding and dunning has stopped.
func (c DemandChange) Settled() bool {
	return c.NewStatus == billing.DemandPaid || c.NewStatus == billing.DemandCredited
}

// SettleDemand offers paid (a payment) and credited (a credit note) minor
// units to payment demand demandID at business time at, with the one
// settlement rule (billing.Settlement): it locks the demand row for the rest
// of tx (PostgreSQL: SELECT ... FOR UPDATE; SQLite has one writer), applies
// paid first and then credited up to what is outstanding, adds the applied
// parts to paid_amount and credited_amount, writes the statuses of
// Settlement.Statuses to the demand and its invoice, clears next_dunning_at
// once the demand is settled (no more reminders), and records InvoicePaid
// when the invoice becomes Paid. Both amounts must be ≥ 0.
//
// It writes no ledger entry and books no surplus: the caller (a payment, a
// credit note) writes its own entry with its own id for Applied and books
// Surplus, in the same tx. Concurrent settlements of one demand queue on
// the row lock, so none is lost.
func (tx *Tx) SettleDemand(ctx context.Context, demandID string, paid, credited int64, at time.Time) (DemandChange, error) {
	if paid < 0 || credited < 0 {
		return DemandChange{}, fmt.Errorf("store: settle demand %s: negative amount (paid %d, credited %d)", demandID, paid, credited)
	}
	if !ValidID(demandID) {
		return DemandChange{}, ErrNotFound
	}
	q := `SELECT invoice_id, account_id, subscriber_id, subscription_id, organization_id, currency, amount, paid_amount,
		credited_amount, status FROM payment_demands WHERE tenant_id = $1 AND id = $2`
	if tx.s.engine == Postgres {
		q += ` FOR UPDATE`
	}
	c := DemandChange{DemandID: demandID}
	var sub sql.NullString
	if err := tx.queryRow(ctx, q, tx.tenant, demandID).Scan(&c.InvoiceID, &c.AccountID, &c.SubscriberID, &sub,
		&c.OrganizationID, &c.Currency, &c.Before.Amount, &c.Before.Paid, &c.Before.Credited, &c.OldStatus); err != nil {
		return DemandChange{}, fmt.Errorf("store: payment demand %s: %w", demandID, notFound(err))
	}
	c.SubscriptionID = nullString(sub)
	var paidSurplus, creditSurplus int64
	c.After = c.Before
	c.PaidApplied, paidSurplus = c.After.Apply(paid)
	c.After.Paid += c.PaidApplied
	c.CreditedApplied, creditSurplus = c.After.Apply(credited)
	c.After.Credited += c.CreditedApplied
	c.Applied, c.Surplus = c.PaidApplied+c.CreditedApplied, paidSurplus+creditSurplus
	c.NewStatus, c.InvoiceStatus = c.After.Statuses()

	// next_dunning_at is cleared once settled and otherwise left as it is:
	// a partial payment does not stop reminders.
	if _, err := tx.exec(ctx, `UPDATE payment_demands SET paid_amount = $3, credited_amount = $4, status = $5,
		next_dunning_at = CASE WHEN $6 THEN NULL ELSE next_dunning_at END
		WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, demandID, c.After.Paid, c.After.Credited, c.NewStatus, c.Settled()); err != nil {
		return DemandChange{}, fmt.Errorf("store: settle payment demand %s: %w", demandID, err)
	}
	if _, err := tx.exec(ctx, `UPDATE invoices SET status = $3 WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, c.InvoiceID, c.InvoiceStatus); err != nil {
		return DemandChange{}, fmt.Errorf("store: settle invoice %s: %w", c.InvoiceID, err)
	}
	if c.InvoiceStatus == billing.InvoicePaid && c.OldStatus != billing.DemandPaid {
		if err := tx.AddEvent(ctx, EventInvoicePaid, "/invoice/"+c.InvoiceID, map[string]any{
			"invoiceId": c.InvoiceID, "paymentDemandId": demandID, "subscriberId": c.SubscriberID,
			"subscriptionId": c.SubscriptionID}, at); err != nil {
			return DemandChange{}, err
		}
	}
	return c, nil
}

// BookAllowance books an allowance of amount minor units (> 0, VAT rate 0)
// on account accountID at business time at, with its Allowance ledger
// entry, and returns its id: how a payment's or credit note's surplus
// reaches the subscriber's next invoices.
func (tx *Tx) BookAllowance(ctx context.Context, accountID, description string, amount int64, at time.Time) (string, error) {
	it, err := tx.BookItem(ctx, accountID, billing.ItemAllowance, description, amount, catalog.PercentOf(0), at)
	if err != nil {
		return "", err
	}
	return it.ID, nil
}
