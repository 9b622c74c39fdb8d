package store

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
)

// InvoiceFacts are the facts about an invoice that its events carry beside
// the ids (InvoicePaid; InvoiceIssued has them at hand when it is issued).
type InvoiceFacts struct {
	Number         int64
	OrganizationID string
	Currency       string
	Gross          catalog.Amount
	DueAt          time.Time
	DueDate        string
}

// InvoiceFacts reads the facts of invoice id in tx: one narrow row, not the
// whole document.
func (tx *Tx) InvoiceFacts(ctx context.Context, id string) (InvoiceFacts, error) {
	var (
		f     InvoiceFacts
		gross int64
	)
	err := tx.queryRow(ctx, `SELECT invoice_number, organization_id, currency, gross, due_at, due_date FROM invoices
		WHERE tenant_id = $1 AND id = $2`, tx.tenant, id).Scan(&f.Number, &f.OrganizationID, &f.Currency, &gross, &f.DueAt, &f.DueDate)
	if err != nil {
		return InvoiceFacts{}, fmt.Errorf("store: invoice %s: %w", id, notFound(err))
	}
	cur, err := currencyOf(f.Currency)
	if err != nil {
		return InvoiceFacts{}, err
	}
	f.Gross, f.DueAt = catalog.NewAmount(gross, cur), f.DueAt.UTC()
	return f, nil
}
