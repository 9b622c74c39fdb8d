package app

import (
	"context"
	"errors"
	"strings"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// NewAccountItem is a charge or an allowance to book on a subscriber
// account (AddAccountItem), as a surface read it.
type NewAccountItem struct {
	AccountID string
	Kind      string // billing.ItemCharge or billing.ItemAllowance
	// Amount is gross, in minor units of the account's currency
	// (AccountCurrency), > 0.
	Amount      int64
	Description string
	// VATRate is the rate given, nil when none (valid) was given.
	VATRate *catalog.Percent
	// ProductID names the product whose VAT rate applies when VATRate is
	// nil and must equal it otherwise; "" for none (a uuid, as given).
	ProductID string
	// Invalid is what the surface found wrong reading the input; the
	// command's own problems follow.
	Invalid validation.Errors
}

// AddAccountItem books a charge or an allowance now (the tenant's time);
// the next invoices of the account bill or apply it. A product missing
// from the tenant or whose VAT rate differs from the one given is a
// validation.Errors (after in.Invalid); an unknown account is
// store.ErrNotFound.
func (a *App) AddAccountItem(ctx context.Context, in NewAccountItem) (store.AccountItem, error) {
	errs := append(validation.Errors(nil), in.Invalid...)
	rate, err := a.itemVATRate(ctx, &errs, in)
	if err != nil {
		return store.AccountItem{}, err
	}
	if err := errs.Err(); err != nil {
		return store.AccountItem{}, err
	}
	now, err := a.Now(ctx)
	if err != nil {
		return store.AccountItem{}, err
	}
	return invoicing.AddAccountItem(ctx, a.store, in.AccountID, in.Kind, in.Description, in.Amount, rate, now)
}

// itemVATRate is the VAT rate of a charge or allowance: the given rate,
// else the rate of the named product. A rate left out used to mean 0 %,
// which bills a taxable charge without its VAT; the surface refuses an
// item with neither.
func (a *App) itemVATRate(ctx context.Context, errs *validation.Errors, in NewAccountItem) (catalog.Percent, error) {
	var product catalog.Percent
	hasProduct := false
	if in.ProductID != "" {
		id := strings.ToLower(in.ProductID)
		switch p, err := a.Product(ctx, id); {
		case errors.Is(err, store.ErrNotFound):
			errs.Add("productId", "no product %s in this tenant", id)
		case err != nil:
			return catalog.Percent{}, err
		default:
			product, hasProduct = p.VATRate, true
		}
	}
	switch {
	case in.VATRate != nil && hasProduct && !in.VATRate.Equal(product):
		errs.Add("vatRate", "is %s%%, but product %s has %s%%", *in.VATRate, in.ProductID, product)
	case in.VATRate != nil:
		return *in.VATRate, nil
	case hasProduct:
		return product, nil
	}
	return catalog.Percent{}, nil
}

// AccountCurrency is the currency of a subscriber account of the tenant
// (what an amount booked on it is in), or store.ErrNotFound.
func (a *App) AccountCurrency(ctx context.Context, id string) (string, error) {
	return a.store.AccountCurrency(ctx, id)
}

// SubscriberAccount returns a subscriber account with its balances and
// newest entries, or store.ErrNotFound.
func (a *App) SubscriberAccount(ctx context.Context, id string) (store.SubscriberAccount, error) {
	return a.store.SubscriberAccount(ctx, id)
}

// SubscriberAccounts lists the tenant's subscriber accounts that f
// selects, a page at a time.
func (a *App) SubscriberAccounts(ctx context.Context, f store.AccountFilter, p store.Page) ([]store.SubscriberAccount, string, error) {
	return a.store.ListSubscriberAccounts(ctx, f, p)
}

// AccountEntries lists the ledger entries of account id, oldest first, a
// page at a time; an unknown account is store.ErrNotFound.
func (a *App) AccountEntries(ctx context.Context, id string, p store.Page) ([]store.AccountEntry, string, error) {
	return a.store.AccountEntries(ctx, id, p)
}
