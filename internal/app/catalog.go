package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// The catalog: products, billing plans, template packages, package chains
// and proration policies. Their edits are stamped with the wall clock (a
// test tenant's clock is for its subscriptions, not its catalog). The
// store's conflicts come back as they are: *store.InUseError for a record
// still in use and store.ErrConflict for a reference removed during the
// command; a surface words them (the API's catalogError).

// Product is the product id of the context's tenant; store.ErrNotFound if
// there is none.
func (a *App) Product(ctx context.Context, id string) (catalog.Product, error) {
	return catalogdb.Product(ctx, a.store, id)
}

// Products lists the tenant's products that pass f, a page at a time; the
// string is the next page's cursor ("" on the last).
func (a *App) Products(ctx context.Context, f catalogdb.ProductFilter, p store.Page) ([]catalog.Product, string, error) {
	return catalogdb.ListProducts(ctx, a.store, f, p)
}

// CreateProduct stores a new product (already checked by its surface) and
// returns it with its id.
func (a *App) CreateProduct(ctx context.Context, p catalog.Product) (catalog.Product, error) {
	return catalogdb.CreateProduct(ctx, a.store, p, a.wall())
}

// UpdateProduct replaces the fields of product p.ID; store.ErrNotFound if
// the tenant has no such product.
func (a *App) UpdateProduct(ctx context.Context, p catalog.Product) (catalog.Product, error) {
	return catalogdb.UpdateProduct(ctx, a.store, p, a.wall())
}

// DeleteProduct deletes product id: store.ErrNotFound if there is none,
// *store.InUseError while a template package holds it.
func (a *App) DeleteProduct(ctx context.Context, id string) error {
	return catalogdb.DeleteProduct(ctx, a.store, id)
}

// BillingPlan is billing plan id of the context's tenant; store.ErrNotFound
// if there is none.
func (a *App) BillingPlan(ctx context.Context, id string) (catalog.BillingPlan, error) {
	return catalogdb.BillingPlan(ctx, a.store, id)
}

// BillingPlans lists the tenant's billing plans that pass f, a page at a
// time.
func (a *App) BillingPlans(ctx context.Context, f catalogdb.BillingPlanFilter, p store.Page) ([]catalog.BillingPlan, string, error) {
	return catalogdb.ListBillingPlans(ctx, a.store, f, p)
}

// CreateBillingPlan stores a new billing plan. A dunning process the
// tenant does not have is validation.Errors on dunningProcessId.
func (a *App) CreateBillingPlan(ctx context.Context, b catalog.BillingPlan) (catalog.BillingPlan, error) {
	if err := a.checkDunningProcess(ctx, b); err != nil {
		return catalog.BillingPlan{}, err
	}
	return catalogdb.CreateBillingPlan(ctx, a.store, b, a.wall())
}

// UpdateBillingPlan replaces the fields of billing plan b.ID:
// store.ErrNotFound if there is none; validation.Errors if its interval
// changes while a template package offers it (the packages' prices are per
// billing period) or it names a dunning process the tenant does not have.
func (a *App) UpdateBillingPlan(ctx context.Context, b catalog.BillingPlan) (catalog.BillingPlan, error) {
	old, err := catalogdb.BillingPlan(ctx, a.store, b.ID)
	if err != nil {
		return catalog.BillingPlan{}, err
	}
	if b.Interval() != old.Interval() {
		users, err := catalogdb.PackagesUsingBillingPlan(ctx, a.store, b.ID)
		if err != nil {
			return catalog.BillingPlan{}, err
		}
		if len(users) > 0 {
			var errs validation.Errors
			msg := "cannot change from %s while template package %s offers this plan; create a new billing plan"
			if b.IntervalUnit != old.IntervalUnit {
				errs.Add("intervalUnit", msg, old.Interval(), users[0])
			}
			if b.IntervalCount != old.IntervalCount {
				errs.Add("intervalCount", msg, old.Interval(), users[0])
			}
			return catalog.BillingPlan{}, errs
		}
	}
	if err := a.checkDunningProcess(ctx, b); err != nil {
		return catalog.BillingPlan{}, err
	}
	return catalogdb.UpdateBillingPlan(ctx, a.store, b, a.wall())
}

// DeleteBillingPlan deletes billing plan id: store.ErrNotFound if there is
// none, *store.InUseError while a template package offers it.
func (a *App) DeleteBillingPlan(ctx context.Context, id string) error {
	return catalogdb.DeleteBillingPlan(ctx, a.store, id)
}

// checkDunningProcess is validation.Errors when b names a dunning process
// the tenant does not have.
func (a *App) checkDunningProcess(ctx context.Context, b catalog.BillingPlan) error {
	if b.DunningProcessID == nil {
		return nil
	}
	if _, err := invoicing.DunningProcessByID(ctx, a.store, *b.DunningProcessID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return validation.Field("dunningProcessId", "there is no dunning process %s", *b.DunningProcessID)
		}
		return err
	}
	return nil
}

// TemplateInput is a template package to create or replace, as a surface
// decoded it.
type TemplateInput struct {
	Package catalog.TemplatePackage
	// TaxPercents[i], when not nil, is the VAT rate the input gave for
	// Package.Products[i] as a check: it must be the product's.
	TaxPercents []*decimal.Decimal
	// Invalid are the problems the surface found in the input's shape.
	// They come first in the command's answer, and the catalog's rules do
	// not report those fields again.
	Invalid validation.Errors
}

// Package is template package id of the context's tenant (archived ones
// too); store.ErrNotFound if there is none.
func (a *App) Package(ctx context.Context, id string) (catalog.TemplatePackage, error) {
	return catalogdb.Package(ctx, a.store, id)
}

// Packages lists the tenant's template packages that pass f, a page at a
// time.
func (a *App) Packages(ctx context.Context, f catalogdb.PackageFilter, p store.Page) ([]catalog.TemplatePackage, string, error) {
	return catalogdb.ListPackages(ctx, a.store, f, p)
}

// CreatePackage checks a new template package against the tenant's
// catalog (its products, billing plans and chain must exist, see
// catalog.CheckTemplate) and stores it: validation.Errors listing every
// problem, or the store's conflicts.
func (a *App) CreatePackage(ctx context.Context, in TemplateInput) (catalog.TemplatePackage, error) {
	t, err := a.checkedTemplate(ctx, in, nil)
	if err != nil {
		return catalog.TemplatePackage{}, err
	}
	return catalogdb.CreatePackage(ctx, a.store, t, a.wall())
}

// UpdatePackage replaces template package id as CreatePackage creates
// one: store.ErrNotFound if there is none; its currency cannot change
// while a package chain uses it (validation.Errors on Currency).
func (a *App) UpdatePackage(ctx context.Context, id string, in TemplateInput) (catalog.TemplatePackage, error) {
	old, err := catalogdb.Package(ctx, a.store, id)
	if err != nil {
		return catalog.TemplatePackage{}, err
	}
	t, err := a.checkedTemplate(ctx, in, &old)
	if err != nil {
		return catalog.TemplatePackage{}, err
	}
	t.ID = id
	return catalogdb.UpdatePackage(ctx, a.store, t, a.wall())
}

// DeletePackage deletes template package id, or archives it while a chain
// or an order still needs it; store.ErrNotFound if there is none.
func (a *App) DeletePackage(ctx context.Context, id string) (archived bool, err error) {
	return catalogdb.DeletePackage(ctx, a.store, id, a.wall())
}

// OrderableTemplate is template package id as an order merges it:
// store.ErrNotFound if the tenant has no such template or it is archived.
func (a *App) OrderableTemplate(ctx context.Context, id string) (catalog.MergeInput, error) {
	return catalogdb.PackageForMerge(ctx, a.store, id)
}

// PreviewPackage merges template package id with choices exactly as an
// order does, storing nothing: store.ErrNotFound for no (or an archived)
// template, validation.Errors for choices that do not fit it.
func (a *App) PreviewPackage(ctx context.Context, id string, choices catalog.Choices) (catalog.SubscriptionPackage, error) {
	mi, err := catalogdb.PackageForMerge(ctx, a.store, id)
	if err != nil {
		return catalog.SubscriptionPackage{}, err
	}
	mi.Choices = choices
	return catalog.Merge(mi)
}

// checkedTemplate checks in against the tenant's catalog. old is the
// stored version on an update (nil on a create).
func (a *App) checkedTemplate(ctx context.Context, in TemplateInput, old *catalog.TemplatePackage) (catalog.TemplatePackage, error) {
	t := in.Package
	errs := append(validation.Errors(nil), in.Invalid...)
	refs := catalog.Refs{Kept: map[string]bool{}}
	var err error
	if refs.Products, err = catalogdb.ProductsByID(ctx, a.store, t.ProductIDs()); err != nil {
		return catalog.TemplatePackage{}, err
	}
	if refs.BillingPlans, err = catalogdb.BillingPlansByID(ctx, a.store, t.BillingPlans); err != nil {
		return catalog.TemplatePackage{}, err
	}
	for i, d := range in.TaxPercents {
		if d == nil || i >= len(t.Products) {
			continue
		}
		prod, ok := refs.Products[t.Products[i].ProductID]
		if !ok {
			continue // reported on productId
		}
		if !d.Equal(prod.VATRate.Decimal()) {
			errs.Add(fmt.Sprintf("products[%d].taxPercent", i), "is %s but product %s has VAT rate %s; VAT comes from the product: change its vatRate or leave taxPercent out",
				d, prod.ID, prod.VATRate.Decimal())
		}
	}
	if id := t.PackageChainID; id != nil && store.ValidID(*id) {
		switch _, err := catalogdb.PackageChain(ctx, a.store, *id); {
		case err == nil:
			refs.ChainFound = true
		case !errors.Is(err, store.ErrNotFound):
			return catalog.TemplatePackage{}, err
		}
	}
	if old != nil {
		for _, id := range old.ProductIDs() {
			refs.Kept[id] = true
		}
		if t.Currency != old.Currency {
			chains, _, err := catalogdb.ListPackageChains(ctx, a.store, catalogdb.PackageChainFilter{PackageID: old.ID}, store.Page{Limit: 10})
			if err != nil {
				return catalog.TemplatePackage{}, err
			}
			if len(chains) > 0 {
				errs.Add("Currency", "cannot change from %s while package chain %s uses this package", old.Currency, chains[0].ID)
			}
		}
	}
	// A field whose shape was already reported (a missing binding period)
	// is not reported again by the rules.
	reported := map[string]bool{}
	for _, e := range errs {
		reported[e.Field] = true
	}
	for _, e := range catalog.CheckTemplate(t, refs) {
		if !reported[e.Field] {
			errs = append(errs, e)
		}
	}
	return t, errs.Err()
}

// ChainInput is a package chain to create or replace, as a surface decoded
// it.
type ChainInput struct {
	Chain catalog.Chain
	// Invalid are the problems the surface found in the input's shape, as
	// in TemplateInput. With "packageChain" among them (no steps were
	// given at all) the steps are not checked.
	Invalid validation.Errors
}

// PackageChain is package chain id of the context's tenant;
// store.ErrNotFound if there is none.
func (a *App) PackageChain(ctx context.Context, id string) (catalog.Chain, error) {
	return catalogdb.PackageChain(ctx, a.store, id)
}

// PackageChains lists the tenant's package chains that pass f, a page at a
// time.
func (a *App) PackageChains(ctx context.Context, f catalogdb.PackageChainFilter, p store.Page) ([]catalog.Chain, string, error) {
	return catalogdb.ListPackageChains(ctx, a.store, f, p)
}

// CreatePackageChain checks a new chain's steps against the tenant's
// template packages (catalog.CheckChain) and stores it: validation.Errors
// listing every problem, or the store's conflicts.
func (a *App) CreatePackageChain(ctx context.Context, in ChainInput) (catalog.Chain, error) {
	c, err := a.checkedChain(ctx, in)
	if err != nil {
		return catalog.Chain{}, err
	}
	return catalogdb.CreatePackageChain(ctx, a.store, c, a.wall())
}

// UpdatePackageChain replaces package chain id as CreatePackageChain
// creates one; store.ErrNotFound if there is none.
func (a *App) UpdatePackageChain(ctx context.Context, id string, in ChainInput) (catalog.Chain, error) {
	if _, err := catalogdb.PackageChain(ctx, a.store, id); err != nil {
		return catalog.Chain{}, err
	}
	c, err := a.checkedChain(ctx, in)
	if err != nil {
		return catalog.Chain{}, err
	}
	c.ID = id
	return catalogdb.UpdatePackageChain(ctx, a.store, c, a.wall())
}

// DeletePackageChain deletes package chain id: store.ErrNotFound if there
// is none, *store.InUseError while template packages link to it.
func (a *App) DeletePackageChain(ctx context.Context, id string) error {
	return catalogdb.DeletePackageChain(ctx, a.store, id)
}

func (a *App) checkedChain(ctx context.Context, in ChainInput) (catalog.Chain, error) {
	c := in.Chain
	errs := append(validation.Errors(nil), in.Invalid...)
	// A step left out was reported; do not report it again as out of
	// range.
	reported := map[string]bool{}
	for _, e := range errs {
		reported[e.Field] = true
	}
	if !reported["packageChain"] {
		pkgs, err := catalogdb.PackagesByID(ctx, a.store, c.PackageIDs())
		if err != nil {
			return catalog.Chain{}, err
		}
		for _, e := range catalog.CheckChain(c, pkgs) {
			if !reported[e.Field] {
				errs = append(errs, e)
			}
		}
	}
	return c, errs.Err()
}

// ProrationPolicy is proration policy id of the context's tenant;
// store.ErrNotFound if there is none.
func (a *App) ProrationPolicy(ctx context.Context, id string) (invoicing.ProrationPolicy, error) {
	return invoicing.ProrationPolicyByID(ctx, a.store, id)
}

// ProrationPolicies lists the tenant's proration policies, a page at a
// time.
func (a *App) ProrationPolicies(ctx context.Context, p store.Page) ([]invoicing.ProrationPolicy, string, error) {
	return invoicing.ListProrationPolicies(ctx, a.store, p)
}

// CreateProrationPolicy stores a new proration policy and returns it with
// its id.
func (a *App) CreateProrationPolicy(ctx context.Context, p invoicing.ProrationPolicy) (invoicing.ProrationPolicy, error) {
	return invoicing.CreateProrationPolicy(ctx, a.store, p, a.wall())
}

// UpdateProrationPolicy replaces the fields of proration policy p.ID;
// store.ErrNotFound if there is none.
func (a *App) UpdateProrationPolicy(ctx context.Context, p invoicing.ProrationPolicy) error {
	return invoicing.UpdateProrationPolicy(ctx, a.store, p, a.wall())
}

// DeleteProrationPolicy deletes proration policy id: store.ErrNotFound if
// there is none, *store.InUseError while a dunning process refers to it.
func (a *App) DeleteProrationPolicy(ctx context.Context, id string) error {
	return invoicing.DeleteProrationPolicy(ctx, a.store, id)
}
