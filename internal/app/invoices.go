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
