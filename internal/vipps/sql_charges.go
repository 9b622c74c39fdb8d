package vipps

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
)

const chargeColumns = `invoice_id, payment_agreement_id, vipps_agreement_id, charge_id, amount, refunded, due_date, status`

func scanCharge(r store.Scanner) (VippsCharge, error) {
	var c VippsCharge
	err := r.Scan(&c.InvoiceID, &c.PaymentAgreementID, &c.VippsAgreementID, &c.ChargeID, &c.Amount, &c.Refunded, &c.DueDate, &c.Status)
	return c, err
}

// insertCharge records an invoice's charge unless one is recorded: the
// primary key (tenant, invoice) is the rule of one charge per invoice,
// and a losing concurrent insert does nothing.
func insertCharge(ctx context.Context, st *store.Store, tenant string, c VippsCharge, now time.Time) error {
	_, err := st.Writer().Exec(ctx, `INSERT INTO vipps_charges (tenant_id, invoice_id, payment_agreement_id, vipps_agreement_id,
		charge_id, amount, refunded, due_date, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, $9, $9) ON CONFLICT DO NOTHING`,
		tenant, c.InvoiceID, c.PaymentAgreementID, c.VippsAgreementID, c.ChargeID, c.Amount, c.DueDate, c.Status, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("vipps: record charge of %s: %w", c.InvoiceID, err)
	}
	return nil
}

// ChargeOf returns the charge of invoice id; none is store.ErrNotFound.
func ChargeOf(ctx context.Context, st *store.Store, tenant, invoiceID string) (VippsCharge, error) {
	return chargeOf(ctx, st, tenant, invoiceID)
}

func chargeOf(ctx context.Context, st *store.Store, tenant, invoiceID string) (VippsCharge, error) {
	c, err := scanCharge(st.Writer().QueryRow(ctx, `SELECT `+chargeColumns+` FROM vipps_charges WHERE tenant_id = $1 AND invoice_id = $2`,
		tenant, invoiceID))
	if err != nil {
		return VippsCharge{}, fmt.Errorf("vipps: charge of %s: %w", invoiceID, store.NotFound(err))
	}
	return c, nil
}

// setChargeStatus moves the charge from one status to another (compare
// and set: a concurrent sync that moved it first wins, and this changes
// nothing).
func setChargeStatus(ctx context.Context, st *store.Store, tenant, invoiceID, from, to string, now time.Time) error {
	_, err := st.Writer().Exec(ctx, `UPDATE vipps_charges SET status = $4, updated_at = $5
		WHERE tenant_id = $1 AND invoice_id = $2 AND status = $3`, tenant, invoiceID, from, to, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("vipps: charge of %s to %s: %w", invoiceID, to, err)
	}
	return nil
}

// setRefunded records what Vipps says is refunded of the charge.
func setRefunded(ctx context.Context, st *store.Store, tenant, invoiceID, status string, refunded int64, now time.Time) error {
	_, err := st.Writer().Exec(ctx, `UPDATE vipps_charges SET status = $3, refunded = $4, updated_at = $5
		WHERE tenant_id = $1 AND invoice_id = $2`, tenant, invoiceID, status, refunded, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("vipps: refund of %s: %w", invoiceID, err)
	}
	return nil
}

// openCharges lists the invoices whose charge can still change.
func openCharges(ctx context.Context, st *store.Store, tenant string) ([]string, error) {
	rows, err := st.Writer().Query(ctx, `SELECT invoice_id FROM vipps_charges WHERE tenant_id = $1
		AND status IN ('CREATING', 'PENDING', 'DUE') ORDER BY invoice_id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("vipps: open charges: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// invoiceOfCharge finds the invoice of Vipps' charge id.
func invoiceOfCharge(ctx context.Context, st *store.Store, tenant, chargeID string) (string, error) {
	var id string
	err := st.Writer().QueryRow(ctx, `SELECT invoice_id FROM vipps_charges WHERE tenant_id = $1 AND charge_id = $2`, tenant, chargeID).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("vipps: charge %s: %w", chargeID, store.NotFound(err))
	}
	return id, nil
}

// openInvoicesOn are the ids of tenant's issued invoices on payment
// agreement id that are not settled (Issued or PartiallyPaid, the stored
// status) and have no charge yet, oldest first.
func openInvoicesOn(ctx context.Context, st *store.Store, tenant, id string) ([]string, error) {
	ids, err := store.QueryAll(ctx, st.Reader(), func(r store.Scanner) (string, error) {
		var s string
		return s, r.Scan(&s)
	}, `SELECT i.id FROM invoices i
		WHERE i.tenant_id = $1 AND i.payment_agreement_id = $2 AND i.status IN ($3, $4)
		AND NOT EXISTS (SELECT 1 FROM vipps_charges c WHERE c.tenant_id = i.tenant_id AND c.invoice_id = i.id)
		ORDER BY i.id`, tenant, id, billing.InvoiceIssued, billing.InvoicePartiallyPaid)
	if err != nil {
		return nil, fmt.Errorf("vipps: open invoices on %s: %w", id, err)
	}
	return ids, nil
}

// liveSubscriptionsOn counts the series on payment agreement id that have
// not ended: their last period (no next one) is not deactivated.
func liveSubscriptionsOn(ctx context.Context, st *store.Store, tenant, id string) (int, error) {
	var n int
	err := st.Writer().QueryRow(ctx, `SELECT COUNT(*) FROM subscriptions
		WHERE tenant_id = $1 AND payment_agreement_id = $2 AND next_id IS NULL AND deactivated_at IS NULL`, tenant, id).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("vipps: subscriptions on %s: %w", id, err)
	}
	return n, nil
}
