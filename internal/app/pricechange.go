package app

import (
	"context"

	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
)

// Price changes move the running subscriptions of a template package to
// another template at their renewal (docs/CATALOG.md, "Price changes").
// They run at the tenant's time: a test tenant's clock decides when the
// notice period starts.

// SchedulePriceChange schedules a price change of template templateID:
// store.ErrNotFound if there is no such template, validation.Errors for a
// target or an effective time the rules refuse.
func (a *App) SchedulePriceChange(ctx context.Context, templateID string, req engine.PriceChangeRequest) (store.PriceChange, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return store.PriceChange{}, err
	}
	return a.engine.SchedulePriceChange(ctx, templateID, req, now)
}

// PreviewPriceChange tells what SchedulePriceChange's price change would
// do if it started now, storing nothing; it answers errors as that does.
func (a *App) PreviewPriceChange(ctx context.Context, templateID string, req engine.PriceChangeRequest) (engine.PriceChangePreview, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return engine.PriceChangePreview{}, err
	}
	return a.engine.PreviewPriceChange(ctx, templateID, req, now)
}

// PriceChanges lists the price changes of template templateID;
// store.ErrNotFound if there is no such (unarchived) template.
func (a *App) PriceChanges(ctx context.Context, templateID string) ([]store.PriceChange, error) {
	if _, err := catalogdb.PackageForMerge(ctx, a.store, templateID); err != nil {
		return nil, err
	}
	return catalogdb.PriceChanges(ctx, a.store, templateID)
}

// PriceChange is price change id of template templateID;
// store.ErrNotFound if there is none.
func (a *App) PriceChange(ctx context.Context, templateID, id string) (store.PriceChange, error) {
	return catalogdb.PriceChange(ctx, a.store, templateID, id)
}

// RevokePriceChange revokes price change id of template templateID before
// it starts: store.ErrNotFound if there is none, validation.Errors on
// priceChangeId once it has started.
func (a *App) RevokePriceChange(ctx context.Context, templateID, id string) error {
	now, err := a.Now(ctx)
	if err != nil {
		return err
	}
	return a.engine.RevokePriceChange(ctx, templateID, id, now)
}
