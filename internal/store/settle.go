package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// EventInvoicePaid is recorded when an invoice becomes Paid, in the
// transaction that settled it.
const EventInvoicePaid = "InvoicePaid"

// DemandState is a payment demand as settling reads it.
type DemandState struct {
	ID             string
	InvoiceID      string
	AccountID      string
	SubscriberID   string
	SubscriptionID *string
	OrganizationID string
	Currency       string
	Amount         int64
	Paid           int64
	Credited       int64
	Status         string
}

// LockDemand reads payment demand id and locks its row for the rest of tx
// (PostgreSQL: SELECT ... FOR UPDATE; SQLite has one writer), so that
// concurrent settlements of one demand queue instead of losing an update.
func (tx *Tx) LockDemand(ctx context.Context, id string) (DemandState, error) {
	return tx.demand(ctx, id, true)
}

// Demand reads payment demand id in tx without locking it.
func (tx *Tx) Demand(ctx context.Context, id string) (DemandState, error) {
	return tx.demand(ctx, id, false)
}

func (tx *Tx) demand(ctx context.Context, id string, lock bool) (DemandState, error) {
	if !ValidID(id) {
		return DemandState{}, ErrNotFound
	}
	q := `SELECT invoice_id, account_id, subscriber_id, subscription_id, organization_id, currency, amount, paid_amount,
		credited_amount, status FROM payment_demands WHERE tenant_id = $1 AND id = $2`
	if lock && tx.s.engine == Postgres {
		q += ` FOR UPDATE`
	}
	d := DemandState{ID: id}
	var sub sql.NullString
	if err := tx.queryRow(ctx, q, tx.tenant, id).Scan(&d.InvoiceID, &d.AccountID, &d.SubscriberID, &sub,
		&d.OrganizationID, &d.Currency, &d.Amount, &d.Paid, &d.Credited, &d.Status); err != nil {
		return DemandState{}, fmt.Errorf("store: payment demand %s: %w", id, notFound(err))
	}
	d.SubscriptionID = nullString(sub)
	return d, nil
}

// Settlement is what settling writes to a demand and its invoice.
type Settlement struct {
	DemandID, InvoiceID string
	Paid, Credited      int64
	// DemandStatus and InvoiceStatus are the statuses to store.
	DemandStatus, InvoiceStatus string
	// StopDunning clears the demand's next dunning action; otherwise it is
	// left as it is.
	StopDunning bool
}

// WriteSettlement stores s on its demand and invoice.
func (tx *Tx) WriteSettlement(ctx context.Context, s Settlement) error {
	if _, err := tx.exec(ctx, `UPDATE payment_demands SET paid_amount = $3, credited_amount = $4, status = $5,
		next_dunning_at = CASE WHEN $6 THEN NULL ELSE next_dunning_at END
		WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, s.DemandID, s.Paid, s.Credited, s.DemandStatus, s.StopDunning); err != nil {
		return fmt.Errorf("store: settle payment demand %s: %w", s.DemandID, err)
	}
	if _, err := tx.exec(ctx, `UPDATE invoices SET status = $3, version = version + 1 WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, s.InvoiceID, s.InvoiceStatus); err != nil {
		return fmt.Errorf("store: settle invoice %s: %w", s.InvoiceID, err)
	}
	return nil
}

// PeriodDemand is the payment demand of a subscription period, as a
// cancellation's settlement reads it.
type PeriodDemand struct {
	ID, InvoiceID, Status string
	ProcessID             *string
}

// PeriodDemandOf reads the demand of subscription period subID; ok is
// false when the period has none.
func (tx *Tx) PeriodDemandOf(ctx context.Context, subID string) (PeriodDemand, bool, error) {
	var (
		d       PeriodDemand
		process sql.NullString
	)
	err := tx.queryRow(ctx, `SELECT id, invoice_id, status, dunning_process_id FROM payment_demands
		WHERE tenant_id = $1 AND subscription_id = $2 AND kind = 'Period'`, tx.tenant, subID).Scan(&d.ID, &d.InvoiceID, &d.Status, &process)
	if errors.Is(err, sql.ErrNoRows) {
		return PeriodDemand{}, false, nil
	}
	if err != nil {
		return PeriodDemand{}, false, fmt.Errorf("store: demand of subscription %s: %w", subID, err)
	}
	d.ProcessID = nullString(process)
	return d, true, nil
}
