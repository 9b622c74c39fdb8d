package bookkeeping

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// ConsumerName is the outbox consumer that posts billing documents
// (registered by internal/server with Post as its handler).
const ConsumerName = "bookkeeping"

// Kinds are the events whose documents post an entry. Charges, allowances
// and reminder fees reach the books as the invoice lines that bill them
// (until invoiced they are no revenue, only the subscriber's account).
var Kinds = []string{store.EventInvoiceIssued, store.EventCreditNoteIssued, store.EventPaymentCompleted}

// Post posts the document an event names, once: a document posted
// already (a rerun, a redelivery, a concurrent handler) posts nothing, and
// an organization without a chart posts nothing. The clock of PostedAt is
// the wall clock: it is audit, not business time.
func Post(ctx context.Context, st *store.Store, e store.Event) error {
	var ref struct {
		InvoiceID    string `json:"invoiceId"`
		CreditNoteID string `json:"creditNoteId"`
		PaymentID    string `json:"paymentId"`
	}
	if err := json.Unmarshal(e.Data, &ref); err != nil {
		return fmt.Errorf("bookkeeping: event %s: %w", e.ID, err)
	}
	now := time.Now()
	var err error
	switch e.EventType {
	case store.EventInvoiceIssued:
		err = PostInvoice(ctx, st, ref.InvoiceID, now)
	case store.EventCreditNoteIssued:
		err = PostCreditNote(ctx, st, ref.CreditNoteID, now)
	case store.EventPaymentCompleted:
		err = PostPayment(ctx, st, ref.PaymentID, now)
	default:
		return nil
	}
	if errors.Is(err, ErrNoChart) || errors.Is(err, ErrPosted) {
		return nil
	}
	return err
}

func location(org store.Organization) (*time.Location, error) {
	loc, err := time.LoadLocation(org.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("bookkeeping: time zone of %s: %w", org.ID, err)
	}
	return loc, nil
}

// PostInvoice posts an issued invoice.
func PostInvoice(ctx context.Context, st *store.Store, id string, now time.Time) error {
	return st.InTx(ctx, func(tx *store.Tx) error {
		inv, err := tx.Invoice(ctx, id)
		if err != nil {
			return fmt.Errorf("bookkeeping: invoice %s: %w", id, err)
		}
		c, err := chartOf(ctx, tx, tx.TenantID(), inv.OrganizationID)
		if err != nil {
			return err
		}
		if done, err := posted(ctx, tx, inv.OrganizationID, SourceInvoice, id); err != nil || done {
			return errors.Join(err, ErrPosted)
		}
		org, err := tx.Organization(ctx, inv.OrganizationID)
		if err != nil {
			return err
		}
		loc, err := location(org)
		if err != nil {
			return err
		}
		e, defs, err := invoiceEntry(c, inv, loc)
		if err != nil {
			return err
		}
		if err := insertEntry(ctx, tx, &e, now); err != nil {
			return err
		}
		return insertDeferrals(ctx, tx, inv.OrganizationID, defs)
	})
}

// PostCreditNote posts a credit note, reversing unearned revenue first.
func PostCreditNote(ctx context.Context, st *store.Store, id string, now time.Time) error {
	cn, err := st.CreditNote(ctx, id)
	if err != nil {
		return fmt.Errorf("bookkeeping: credit note %s: %w", id, err)
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		c, err := chartOf(ctx, tx, tx.TenantID(), cn.OrganizationID)
		if err != nil {
			return err
		}
		if done, err := posted(ctx, tx, cn.OrganizationID, SourceCreditNote, id); err != nil || done {
			return errors.Join(err, ErrPosted)
		}
		inv, err := tx.Invoice(ctx, cn.InvoiceID)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+deferralColumns+` FROM books_deferrals WHERE tenant_id = $1 AND invoice_id = $2`,
			tx.TenantID(), cn.InvoiceID)
		if err != nil {
			return fmt.Errorf("bookkeeping: deferrals: %w", err)
		}
		defs, was := map[int]*deferral{}, map[int]deferral{}
		for rows.Next() {
			d, err := scanDeferral(rows)
			if err != nil {
				rows.Close()
				return err
			}
			defs[d.Line], was[d.Line] = &d, d
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		e, err := creditEntry(c, cn, inv, defs)
		if err != nil {
			return err
		}
		if err := insertEntry(ctx, tx, &e, now); err != nil {
			return err
		}
		for line, d := range defs {
			if d.Reversed != was[line].Reversed {
				if err := updateDeferral(ctx, tx, *d, was[line]); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// PostPayment posts a payment received (a failed one posts nothing).
func PostPayment(ctx context.Context, st *store.Store, id string, now time.Time) error {
	p, err := st.Payment(ctx, id)
	if err != nil {
		return fmt.Errorf("bookkeeping: payment %s: %w", id, err)
	}
	if p.Status != store.PaymentSucceeded {
		return nil
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		inv, err := tx.Invoice(ctx, p.InvoiceID)
		if err != nil {
			return err
		}
		c, err := chartOf(ctx, tx, tx.TenantID(), inv.OrganizationID)
		if err != nil {
			return err
		}
		if done, err := posted(ctx, tx, inv.OrganizationID, SourcePayment, id); err != nil || done {
			return errors.Join(err, ErrPosted)
		}
		org, err := tx.Organization(ctx, inv.OrganizationID)
		if err != nil {
			return err
		}
		loc, err := location(org)
		if err != nil {
			return err
		}
		e, err := paymentEntry(c, p, inv.OrganizationID, loc)
		if err != nil {
			return err
		}
		return insertEntry(ctx, tx, &e, now)
	})
}

// Recognize moves to revenue what an organization's deferrals earned
// through the date through (inclusive), in one entry dated through (or
// the first open day after it). A rerun through the same date, or an
// earlier one, moves nothing; it returns the amount moved.
func Recognize(ctx context.Context, st *store.Store, orgID, through string, now time.Time) (int64, error) {
	if _, err := time.Parse(time.DateOnly, through); err != nil {
		return 0, fmt.Errorf("bookkeeping: through %q is not a date (YYYY-MM-DD)", through)
	}
	var total int64
	err := st.InTx(ctx, func(tx *store.Tx) error {
		total = 0
		if _, err := chartOf(ctx, tx, tx.TenantID(), orgID); err != nil {
			return err
		}
		defs, err := store.QueryAll(ctx, tx, scanDeferral, `SELECT `+deferralColumns+` FROM books_deferrals
			WHERE tenant_id = $1 AND organization_id = $2 AND next_date <= $3 AND next_date < end_date
			ORDER BY invoice_id, line_number`, tx.TenantID(), orgID, through)
		if err != nil {
			return fmt.Errorf("bookkeeping: open deferrals: %w", err)
		}
		var moved []deferral
		var amounts []int64
		for _, d := range defs {
			was := d
			inc := d.recognise(through)
			if d == was {
				continue
			}
			if err := updateDeferral(ctx, tx, d, was); err != nil {
				return err
			}
			if inc != 0 {
				moved, amounts = append(moved, d), append(amounts, inc)
				total += inc
			}
		}
		if len(moved) == 0 {
			return nil
		}
		e := recognitionEntry(orgID, through, moved, amounts)
		return insertEntry(ctx, tx, &e, now)
	})
	return total, err
}
