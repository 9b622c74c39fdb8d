package app

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/reporting"
	"github.com/kadens/kadens/internal/tenancy"
)

// The console dashboard's figures and the lists behind them, computed in
// SQL by internal/reporting on the read pool (docs/CONSOLE.md, "The
// dashboard"). Each takes a read turn, as the API's lists do.

// reports returns the reports, the context's tenant and the read turn to
// release.
func (a *App) reports(ctx context.Context) (*reporting.Reports, string, func(), error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	release, err := a.store.ReadTurn(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	return reporting.New(a.store), tenant, release, nil
}

// Dashboard is the dashboard's figures for the context's tenant at time
// at (normally App.Now), months counted in zone.
func (a *App) Dashboard(ctx context.Context, at time.Time, zone *time.Location) (reporting.Dashboard, error) {
	r, tenant, release, err := a.reports(ctx)
	if err != nil {
		return reporting.Dashboard{}, err
	}
	defer release()
	return r.Dashboard(ctx, tenant, at, zone)
}

// OutstandingInvoices lists the invoices still to be paid at time at whose
// days overdue are from..to (to −1: no bound; 0..0 not due yet), oldest
// due first, at most limit: the rows behind the outstanding-by-age chart.
func (a *App) OutstandingInvoices(ctx context.Context, at time.Time, from, to, limit int) ([]reporting.Outstanding, error) {
	r, tenant, release, err := a.reports(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return r.OutstandingList(ctx, tenant, at, from, to, limit)
}

// ActiveSubscriptions lists the periods active at at with their MRR (of
// the package named pkg, or all), at most limit: the rows behind the MRR
// and package charts.
func (a *App) ActiveSubscriptions(ctx context.Context, at time.Time, pkg string, limit int) ([]reporting.ActivePeriod, error) {
	r, tenant, release, err := a.reports(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return r.ActiveList(ctx, tenant, at, pkg, limit)
}

// SucceededPayments lists the succeeded payments paid in [from, until)
// (of provider, or all), oldest first, at most limit: the rows behind the
// payments chart.
func (a *App) SucceededPayments(ctx context.Context, from, until time.Time, provider string, limit int) ([]reporting.PaymentRow, error) {
	r, tenant, release, err := a.reports(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return r.PaymentList(ctx, tenant, from, until, provider, limit)
}
