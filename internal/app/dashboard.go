package app

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/reporting"
	"github.com/kadens/kadens/internal/tenancy"
)

// Dashboard is the console's dashboard figures for the context's tenant
// at time at (normally App.Now), months counted in zone: computed in SQL
// by internal/reporting on the read pool (docs/CONSOLE.md, "The
// dashboard").
func (a *App) Dashboard(ctx context.Context, at time.Time, zone *time.Location) (reporting.Dashboard, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return reporting.Dashboard{}, err
	}
	release, err := a.store.ReadTurn(ctx)
	if err != nil {
		return reporting.Dashboard{}, err
	}
	defer release()
	return reporting.New(a.store).Dashboard(ctx, tenant, at, zone)
}

// OutstandingInvoices lists the invoices still to be paid at time at whose
// days overdue are from..to (to −1: no bound; 0..0 not due yet), oldest
// due first, at most limit: the rows behind the dashboard's
// outstanding-by-age chart.
func (a *App) OutstandingInvoices(ctx context.Context, at time.Time, from, to, limit int) ([]reporting.Outstanding, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	release, err := a.store.ReadTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return reporting.New(a.store).OutstandingList(ctx, tenant, at, from, to, limit)
}
