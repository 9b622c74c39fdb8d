package app

import (
	"context"

	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
)

// CreateDunningProcess stores a new dunning process (stamped with the wall
// clock); a second default is the store's conflict error.
func (a *App) CreateDunningProcess(ctx context.Context, d invoicing.DunningProcess) (invoicing.DunningProcess, error) {
	return invoicing.CreateDunningProcess(ctx, a.store, d, a.wall())
}

// UpdateDunningProcess replaces the fields of dunning process d.ID; an
// unknown one is store.ErrNotFound.
func (a *App) UpdateDunningProcess(ctx context.Context, d invoicing.DunningProcess) error {
	return invoicing.UpdateDunningProcess(ctx, a.store, d, a.wall())
}

// DeleteDunningProcess deletes a dunning process no billing plan refers
// to; an unknown one is store.ErrNotFound.
func (a *App) DeleteDunningProcess(ctx context.Context, id string) error {
	return invoicing.DeleteDunningProcess(ctx, a.store, id)
}

// DunningProcess returns a dunning process of the tenant, or
// store.ErrNotFound.
func (a *App) DunningProcess(ctx context.Context, id string) (invoicing.DunningProcess, error) {
	return invoicing.DunningProcessByID(ctx, a.store, id)
}

// DunningProcesses lists the tenant's dunning processes, a page at a time.
func (a *App) DunningProcesses(ctx context.Context, p store.Page) ([]invoicing.DunningProcess, string, error) {
	return invoicing.ListDunningProcesses(ctx, a.store, p)
}
