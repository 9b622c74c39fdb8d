package app

import (
	"context"

	"github.com/kadens/kadens/internal/store"
)

// PaymentDemand is the tenant's payment demand id; store.ErrNotFound when
// there is none.
func (a *App) PaymentDemand(ctx context.Context, id string) (store.PaymentDemand, error) {
	return a.store.PaymentDemand(ctx, id)
}

// PaymentDemands lists the tenant's payment demands matching f, a page at
// a time.
func (a *App) PaymentDemands(ctx context.Context, f store.DocumentFilter, p store.Page) ([]store.PaymentDemand, string, error) {
	return a.store.ListPaymentDemands(ctx, f, p)
}

// Settlements is what settled a page of demands, read in three statements
// for the whole page: the subscriptions' origins by subscription id, the
// succeeded payments by demand id and the allowance lines by invoice id.
type Settlements struct {
	Origins    map[string]store.SubscriptionOrigin
	Payments   map[string][]store.AppliedPayment
	Allowances map[string][]store.AllowanceLine
}

// DemandSettlements reads the Settlements of demands (their subscriptions,
// ids and invoices given by the caller, who has the demands already).
func (a *App) DemandSettlements(ctx context.Context, subscriptionIDs, demandIDs, invoiceIDs []string) (Settlements, error) {
	var out Settlements
	var err error
	if out.Origins, err = a.store.SubscriptionOrigins(ctx, subscriptionIDs); err != nil {
		return out, err
	}
	if out.Payments, err = a.store.SucceededPayments(ctx, demandIDs); err != nil {
		return out, err
	}
	out.Allowances, err = a.store.AllowanceLines(ctx, invoiceIDs)
	return out, err
}
