package app

import (
	"context"

	"github.com/kadens/kadens/internal/store"
)

// CreateDunningProcess stores a new dunning process (stamped with the wall
// clock); a second default is the store's conflict error.
func (a *App) CreateDunningProcess(ctx context.Context, d store.DunningProcess) (store.DunningProcess, error) {
	return a.store.CreateDunningProcess(ctx, d, a.wall())
}

// UpdateDunningProcess replaces the fields of dunning process d.ID; an
// unknown one is store.ErrNotFound.
func (a *App) UpdateDunningProcess(ctx context.Context, d store.DunningProcess) error {
	return a.store.UpdateDunningProcess(ctx, d, a.wall())
}

// DeleteDunningProcess deletes a dunning process no billing plan refers
// to; an unknown one is store.ErrNotFound.
func (a *App) DeleteDunningProcess(ctx context.Context, id string) error {
	return a.store.DeleteDunningProcess(ctx, id)
}

// DunningProcess returns a dunning process of the tenant, or
// store.ErrNotFound.
func (a *App) DunningProcess(ctx context.Context, id string) (store.DunningProcess, error) {
	return a.store.DunningProcess(ctx, id)
}

// DunningProcesses lists the tenant's dunning processes, a page at a time.
func (a *App) DunningProcesses(ctx context.Context, p store.Page) ([]store.DunningProcess, string, error) {
	return a.store.ListDunningProcesses(ctx, p)
}
