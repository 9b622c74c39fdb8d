package peppol

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Peppol's SQL (docs/PEPPOL.md): the deliveries of invoices and credit
// notes through the network, on the store's query kit, the tenant's
// condition first in every WHERE. The events they write keep their kinds
// in the store's catalog of events (store.EventPeppolDelivery...), which
// webhook registrations subscribe to.

var peppolEvents = map[string]string{
	PeppolPending: store.EventPeppolDeliveryPending, PeppolSent: store.EventPeppolDeliverySent,
	PeppolDelivered: store.EventPeppolDeliveryDelivered, PeppolFailed: store.EventPeppolDeliveryFailed,
}

const peppolColumns = `id, document_kind, document_id, invoice_id, recipient, adapter, status, attempts, next_attempt_at,
	message_id, failure_reason, created_at, updated_at`

func scanPeppolDelivery(row store.Scanner) (PeppolDelivery, error) {
	var (
		d    PeppolDelivery
		next sql.NullTime
	)
	if err := row.Scan(&d.ID, &d.DocumentKind, &d.DocumentID, &d.InvoiceID, &d.Recipient, &d.Adapter, &d.Status,
		&d.Attempts, &next, &d.MessageID, &d.FailureReason, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return PeppolDelivery{}, err
	}
	if next.Valid {
		t := next.Time.UTC()
		d.NextAttemptAt = &t
	}
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

func peppolEvent(d PeppolDelivery, at time.Time) store.NewEvent {
	subject := "/invoice/" + d.DocumentID
	if d.DocumentKind == PeppolCreditNote {
		subject = "/creditnote/" + d.DocumentID
	}
	return store.NewEvent{Type: peppolEvents[d.Status], Subject: subject, At: at, Data: map[string]any{
		"deliveryId": d.ID, "documentKind": d.DocumentKind, "documentId": d.DocumentID, "invoiceId": d.InvoiceID,
		"recipient": d.Recipient, "status": d.Status, "messageId": d.MessageID, "failureReason": d.FailureReason}}
}

// CreateDelivery records a Pending delivery of d's document, due at
// now, and PeppolDeliveryPending, unless the document already has one: then
// it returns that one and created is false. Safe to call any number of
// times, from any number of processes.
func CreateDelivery(ctx context.Context, st *store.Store, d PeppolDelivery, now time.Time) (out PeppolDelivery, created bool, err error) {
	now = now.UTC().Truncate(time.Microsecond)
	err = st.InTx(ctx, func(tx *store.Tx) error {
		d.ID, d.Status, d.Attempts, d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = store.NewID(), PeppolPending, 0, &now, now, now
		res, err := tx.Exec(ctx, `INSERT INTO peppol_deliveries (id, tenant_id, document_kind, document_id, invoice_id,
			recipient, adapter, status, attempts, next_attempt_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $9, $9) ON CONFLICT DO NOTHING`,
			d.ID, tx.TenantID(), d.DocumentKind, d.DocumentID, d.InvoiceID, d.Recipient, d.Adapter, d.Status, store.TimeParam(now))
		if err != nil {
			return fmt.Errorf("peppol: create delivery: %w", store.RefError(err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("peppol: create delivery: %w", err)
		}
		if created = n == 1; created {
			return tx.AddEvents(ctx, []store.NewEvent{peppolEvent(d, now)})
		}
		return nil
	})
	if err != nil {
		return PeppolDelivery{}, false, err
	}
	out, err = Delivery(ctx, st, d.DocumentKind, d.DocumentID)
	return out, created, err
}

// Delivery returns the delivery of a document of the context's
// tenant, or ErrNotFound.
func Delivery(ctx context.Context, st *store.Store, kind, documentID string) (PeppolDelivery, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return PeppolDelivery{}, err
	}
	if !store.ValidID(documentID) {
		return PeppolDelivery{}, store.ErrNotFound
	}
	d, err := scanPeppolDelivery(st.Reader().QueryRow(ctx, `SELECT `+peppolColumns+` FROM peppol_deliveries
		WHERE tenant_id = $1 AND document_kind = $2 AND document_id = $3`, tenant, kind, documentID))
	if err != nil {
		return PeppolDelivery{}, fmt.Errorf("peppol: delivery of %s %s: %w", kind, documentID, store.NotFound(err))
	}
	return d, nil
}

// DueDeliveries lists up to limit deliveries of any tenant that are
// due at now (Pending ones to send, Sent ones to ask about) and not held by
// a live claim, oldest due first.
func DueDeliveries(ctx context.Context, st *store.Store, now time.Time, limit int) ([]DueDelivery, error) {
	rows, err := st.Reader().Query(ctx, `SELECT tenant_id, id FROM peppol_deliveries
		WHERE status IN ('Pending', 'Sent') AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
		ORDER BY next_attempt_at, id LIMIT $2`, store.TimeParam(now), limit)
	if err != nil {
		return nil, fmt.Errorf("peppol: due deliveries: %w", err)
	}
	defer rows.Close()
	var out []DueDelivery
	for rows.Next() {
		var d DueDelivery
		if err := rows.Scan(&d.TenantID, &d.ID); err != nil {
			return nil, fmt.Errorf("peppol: due deliveries: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// ClaimDelivery takes delivery id of the context's tenant for one
// attempt until now+lease, under token, if it is due and no live claim
// holds it; ok is false when another process has it or it is not due.
// The claim is committed before the attempt starts, so a process that
// dies mid-attempt leaves a claim that expires, never a second sender.
func ClaimDelivery(ctx context.Context, st *store.Store, id, token string, now time.Time, lease time.Duration) (d PeppolDelivery, ok bool, err error) {
	now = now.UTC()
	err = st.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE peppol_deliveries SET claim_token = $3, claimed_until = $4,
			attempts = CASE WHEN status = 'Pending' THEN attempts + 1 ELSE attempts END
			WHERE tenant_id = $1 AND id = $2 AND status IN ('Pending', 'Sent') AND next_attempt_at <= $5
			AND (claimed_until IS NULL OR claimed_until <= $5)`,
			tx.TenantID(), id, token, store.TimeParam(now.Add(lease)), store.TimeParam(now))
		if err != nil {
			return fmt.Errorf("peppol: claim delivery %s: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("peppol: claim delivery %s: %w", id, err)
		}
		if ok = n == 1; !ok {
			return nil
		}
		d, err = scanPeppolDelivery(tx.QueryRow(ctx, `SELECT `+peppolColumns+` FROM peppol_deliveries
			WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id))
		return err
	})
	return d, ok, err
}

// FinishAttempt records the outcome of the attempt made under token
// and releases the claim, with an event when the status changes.
func FinishAttempt(ctx context.Context, st *store.Store, id, token string, o PeppolOutcome, now time.Time) (PeppolDelivery, error) {
	now = now.UTC().Truncate(time.Microsecond)
	var d PeppolDelivery
	err := st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		d, err = scanPeppolDelivery(tx.QueryRow(ctx, `SELECT `+peppolColumns+` FROM peppol_deliveries
			WHERE tenant_id = $1 AND id = $2 AND claim_token = $3`, tx.TenantID(), id, token))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrClaimLost
		}
		if err != nil {
			return fmt.Errorf("peppol: delivery %s: %w", id, err)
		}
		before := d.Status
		d.Status, d.FailureReason, d.NextAttemptAt, d.UpdatedAt = o.Status, o.Reason, o.Next, now
		if o.MessageID != "" {
			d.MessageID = o.MessageID
		}
		var next any
		if o.Next != nil {
			next = store.TimeParam(*o.Next)
		}
		if _, err := tx.Exec(ctx, `UPDATE peppol_deliveries SET status = $3, message_id = $4, failure_reason = $5,
			next_attempt_at = $6, claim_token = NULL, claimed_until = NULL, updated_at = $7 WHERE tenant_id = $1 AND id = $2`,
			tx.TenantID(), id, d.Status, d.MessageID, d.FailureReason, next, store.TimeParam(now)); err != nil {
			return fmt.Errorf("peppol: record attempt %s: %w", id, err)
		}
		if d.Status != before {
			return tx.AddEvents(ctx, []store.NewEvent{peppolEvent(d, now)})
		}
		return nil
	})
	return d, err
}
