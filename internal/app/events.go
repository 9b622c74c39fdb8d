package app

import (
	"context"

	"github.com/kadens/kadens/internal/store"
)

// Events lists the tenant's events matching f, oldest first, a page at a
// time; the string is the cursor of the next page ("" at the end).
func (a *App) Events(ctx context.Context, f store.EventFilter, p store.Page) ([]store.Event, string, error) {
	return a.store.ListEvents(ctx, f, p)
}
