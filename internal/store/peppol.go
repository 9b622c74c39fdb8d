package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/tenancy"
)

// Kinds of documents sent through the Peppol network.
const (
	PeppolInvoice    = "Invoice"
	PeppolCreditNote = "CreditNote"
)

// Statuses of a Peppol delivery (docs/PEPPOL.md has the states × events
// table).
const (
	PeppolPending   = "Pending"   // recorded; waiting for (another) attempt
	PeppolSent      = "Sent"      // handed to the access point (or dropped in its directory)
	PeppolDelivered = "Delivered" // the access point reports it reached the recipient's
	PeppolFailed    = "Failed"    // given up: FailureReason says why
)

// Events of Peppol deliveries, written in the transaction of the change.
const (
	EventPeppolDeliveryPending   = "PeppolDeliveryPending"
	EventPeppolDeliverySent      = "PeppolDeliverySent"
	EventPeppolDeliveryDelivered = "PeppolDeliveryDelivered"
	EventPeppolDeliveryFailed    = "PeppolDeliveryFailed"
)

var peppolEvents = map[string]string{
	PeppolPending: EventPeppolDeliveryPending, PeppolSent: EventPeppolDeliverySent,
	PeppolDelivered: EventPeppolDeliveryDelivered, PeppolFailed: EventPeppolDeliveryFailed,
}

// PeppolDelivery is the delivery of one invoice or credit note through the
// Peppol network: at most one per document.
type PeppolDelivery struct {
	ID            string     `json:"id" description:"Also the idempotency key the access point receives on every attempt."`
	DocumentKind  string     `json:"documentKind" enum:"Invoice,CreditNote"`
	DocumentID    string     `json:"documentId"`
	InvoiceID     string     `json:"invoiceId" description:"The invoice, or the invoice the credit note credits."`
	Recipient     string     `json:"recipient" example:"iso6523-actorid-upis::0192:923609016" description:"The buyer's Peppol participant id."`
	Adapter       string     `json:"adapter" enum:"AccessPoint,Directory" description:"How the document leaves Kadens: an access point's HTTP API or a directory an access point picks files up from."`
	Status        string     `json:"status" enum:"Pending,Sent,Delivered,Failed"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"nextAttemptAt" description:"When a Pending delivery is tried again, or a Sent one's status is next asked for."`
	MessageID     string     `json:"messageId" description:"The access point's id of the message, once it has one."`
	FailureReason string     `json:"failureReason" description:"Why the delivery failed (Failed) or why the last attempt did (Pending)."`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
}

const peppolColumns = `id, document_kind, document_id, invoice_id, recipient, adapter, status, attempts, next_attempt_at,
	message_id, failure_reason, created_at, updated_at`

func scanPeppolDelivery(row scanner) (PeppolDelivery, error) {
	var (
		d    PeppolDelivery
		next sql.NullTime
	)
	if err := row.Scan(&d.ID, &d.DocumentKind, &d.DocumentID, &d.InvoiceID, &d.Recipient, &d.Adapter, &d.Status,
		&d.Attempts, &next, &d.MessageID, &d.FailureReason, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return PeppolDelivery{}, err
	}
	d.NextAttemptAt = fromNullTime(next)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

func peppolEvent(d PeppolDelivery, at time.Time) NewEvent {
	subject := "/invoice/" + d.DocumentID
	if d.DocumentKind == PeppolCreditNote {
		subject = "/creditnote/" + d.DocumentID
	}
	return NewEvent{Type: peppolEvents[d.Status], Subject: subject, At: at, Data: map[string]any{
		"deliveryId": d.ID, "documentKind": d.DocumentKind, "documentId": d.DocumentID, "invoiceId": d.InvoiceID,
		"recipient": d.Recipient, "status": d.Status, "messageId": d.MessageID, "failureReason": d.FailureReason}}
}

// CreatePeppolDelivery records a Pending delivery of d's document, due at
// now, and PeppolDeliveryPending, unless the document already has one: then
// it returns that one and created is false. Safe to call any number of
// times, from any number of processes.
func (s *Store) CreatePeppolDelivery(ctx context.Context, d PeppolDelivery, now time.Time) (out PeppolDelivery, created bool, err error) {
	now = now.UTC().Truncate(time.Microsecond)
	err = s.InTx(ctx, func(tx *Tx) error {
		d.ID, d.Status, d.Attempts, d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = NewID(), PeppolPending, 0, &now, now, now
		res, err := tx.tx.ExecContext(ctx, `INSERT INTO peppol_deliveries (id, tenant_id, document_kind, document_id, invoice_id,
			recipient, adapter, status, attempts, next_attempt_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $9, $9) ON CONFLICT DO NOTHING`,
			d.ID, tx.tenant, d.DocumentKind, d.DocumentID, d.InvoiceID, d.Recipient, d.Adapter, d.Status, ts(now))
		if err != nil {
			return fmt.Errorf("store: create peppol delivery: %w", refError(err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: create peppol delivery: %w", err)
		}
		if created = n == 1; created {
			return tx.AddEvents(ctx, []NewEvent{peppolEvent(d, now)})
		}
		return nil
	})
	if err != nil {
		return PeppolDelivery{}, false, err
	}
	out, err = s.PeppolDelivery(ctx, d.DocumentKind, d.DocumentID)
	return out, created, err
}

// PeppolDelivery returns the delivery of a document of the context's
// tenant, or ErrNotFound.
func (s *Store) PeppolDelivery(ctx context.Context, kind, documentID string) (PeppolDelivery, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return PeppolDelivery{}, err
	}
	if !ValidID(documentID) {
		return PeppolDelivery{}, ErrNotFound
	}
	d, err := scanPeppolDelivery(s.r.QueryRowContext(ctx, `SELECT `+peppolColumns+` FROM peppol_deliveries
		WHERE tenant_id = $1 AND document_kind = $2 AND document_id = $3`, tenant, kind, documentID))
	if err != nil {
		return PeppolDelivery{}, fmt.Errorf("store: peppol delivery of %s %s: %w", kind, documentID, notFound(err))
	}
	return d, nil
}

// DueDelivery names a delivery that is due, across tenants.
type DueDelivery struct {
	TenantID string
	ID       string
}

// DuePeppolDeliveries lists up to limit deliveries of any tenant that are
// due at now (Pending ones to send, Sent ones to ask about) and not held by
// a live claim, oldest due first.
func (s *Store) DuePeppolDeliveries(ctx context.Context, now time.Time, limit int) ([]DueDelivery, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tenant_id, id FROM peppol_deliveries
		WHERE status IN ('Pending', 'Sent') AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
		ORDER BY next_attempt_at, id LIMIT $2`, ts(now), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due peppol deliveries: %w", err)
	}
	defer rows.Close()
	var out []DueDelivery
	for rows.Next() {
		var d DueDelivery
		if err := rows.Scan(&d.TenantID, &d.ID); err != nil {
			return nil, fmt.Errorf("store: due peppol deliveries: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// ClaimPeppolDelivery takes delivery id of the context's tenant for one
// attempt until now+lease, under token, if it is due and no live claim
// holds it; ok is false when another process has it or it is not due.
// The claim is committed before the attempt starts, so a process that
// dies mid-attempt leaves a claim that expires, never a second sender.
func (s *Store) ClaimPeppolDelivery(ctx context.Context, id, token string, now time.Time, lease time.Duration) (d PeppolDelivery, ok bool, err error) {
	now = now.UTC()
	err = s.InTx(ctx, func(tx *Tx) error {
		res, err := tx.tx.ExecContext(ctx, `UPDATE peppol_deliveries SET claim_token = $3, claimed_until = $4,
			attempts = CASE WHEN status = 'Pending' THEN attempts + 1 ELSE attempts END
			WHERE tenant_id = $1 AND id = $2 AND status IN ('Pending', 'Sent') AND next_attempt_at <= $5
			AND (claimed_until IS NULL OR claimed_until <= $5)`,
			tx.tenant, id, token, ts(now.Add(lease)), ts(now))
		if err != nil {
			return fmt.Errorf("store: claim peppol delivery %s: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: claim peppol delivery %s: %w", id, err)
		}
		if ok = n == 1; !ok {
			return nil
		}
		d, err = scanPeppolDelivery(tx.tx.QueryRowContext(ctx, `SELECT `+peppolColumns+` FROM peppol_deliveries
			WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
		return err
	})
	return d, ok, err
}

// PeppolOutcome is what an attempt (or a status poll) found.
type PeppolOutcome struct {
	Status    string
	MessageID string // kept when empty
	Reason    string
	// Next is when to try or ask again (Pending, Sent); nil otherwise.
	Next *time.Time
}

// ErrClaimLost: the claim expired and another process took the delivery
// over; the attempt's outcome is not recorded.
var ErrClaimLost = errors.New("store: peppol delivery claim lost")

// FinishPeppolAttempt records the outcome of the attempt made under token
// and releases the claim, with an event when the status changes.
func (s *Store) FinishPeppolAttempt(ctx context.Context, id, token string, o PeppolOutcome, now time.Time) (PeppolDelivery, error) {
	now = now.UTC().Truncate(time.Microsecond)
	var d PeppolDelivery
	err := s.InTx(ctx, func(tx *Tx) error {
		var err error
		d, err = scanPeppolDelivery(tx.tx.QueryRowContext(ctx, `SELECT `+peppolColumns+` FROM peppol_deliveries
			WHERE tenant_id = $1 AND id = $2 AND claim_token = $3`, tx.tenant, id, token))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrClaimLost
		}
		if err != nil {
			return fmt.Errorf("store: peppol delivery %s: %w", id, err)
		}
		before := d.Status
		d.Status, d.FailureReason, d.NextAttemptAt, d.UpdatedAt = o.Status, o.Reason, o.Next, now
		if o.MessageID != "" {
			d.MessageID = o.MessageID
		}
		var next any
		if o.Next != nil {
			next = ts(*o.Next)
		}
		if _, err := tx.tx.ExecContext(ctx, `UPDATE peppol_deliveries SET status = $3, message_id = $4, failure_reason = $5,
			next_attempt_at = $6, claim_token = NULL, claimed_until = NULL, updated_at = $7 WHERE tenant_id = $1 AND id = $2`,
			tx.tenant, id, d.Status, d.MessageID, d.FailureReason, next, ts(now)); err != nil {
			return fmt.Errorf("store: record peppol attempt %s: %w", id, err)
		}
		if d.Status != before {
			return tx.AddEvents(ctx, []NewEvent{peppolEvent(d, now)})
		}
		return nil
	})
	return d, err
}
