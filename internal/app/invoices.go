package app

import (
	"context"

	"github.com/kadens/kadens/internal/store"
)

// Invoice returns an invoice of the tenant as issued (its stored status),
// or store.ErrNotFound.
func (a *App) Invoice(ctx context.Context, id string) (store.Invoice, error) {
	return a.store.Invoice(ctx, id)
}

// Invoices lists the tenant's invoices matching f, a page at a time, with
// the parts a list leaves out unless asked. It waits for a read turn
// first (store.ReadTurn): list pages are heavy reads served in arrival
// order.
func (a *App) Invoices(ctx context.Context, f store.DocumentFilter, p store.Page, parts store.InvoiceParts) ([]store.Invoice, string, error) {
	release, err := a.store.ReadTurn(ctx)
	if err != nil {
		return nil, "", err
	}
	defer release()
	return a.store.ListInvoiceItems(ctx, f, p, parts)
}
