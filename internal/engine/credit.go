package engine

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
)

// CreditInvoice issues a credit note on invoice id at now in one
// transaction: decide turns the invoice and what its lines have had
// credited into the credit's requests (a validation error rolls it back).
// A zero CreditNote means nothing was left to credit and nothing was
// written. It is the transaction the API's POST /invoice/{id}/credit needs,
// held here because the HTTP layer opens no store transactions (the credit
// workflow itself moves to internal/invoicing with issue 14's first item).
func (e *Engine) CreditInvoice(ctx context.Context, id, reason string, now time.Time,
	decide func(inv store.Invoice, credited map[int]int64) ([]billing.CreditRequest, error)) (store.CreditNote, error) {
	var note store.CreditNote
	err := e.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		note, err = tx.CreditInvoice(ctx, id, reason, now, decide)
		return err
	})
	return note, err
}
