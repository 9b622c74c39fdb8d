package catalogdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
)

// Template packages are stored in three tables: the package row, its
// products (included and additional, in order) and its billing plans (in
// order, the first being the default). A package is always read and
// written whole, in one transaction, so no reader sees half an edit.

const packageColumns = `id, name, description, currency, price, units, min_units, max_units,
	allow_price_override, allow_discount_override, number_of_editions, automatic_stop, permanent_discount,
	contract_binding_periods, contract_terms, package_chain_id, archived_at, created_at, updated_at,
	contract_early_cancellation`

func scanPackage(row store.Scanner) (catalog.TemplatePackage, error) {
	var (
		t                 catalog.TemplatePackage
		price             int64
		editions, binding sql.NullInt64
		discount, terms   string
		early             string
		chain             sql.NullString
		archived          sql.NullTime
	)
	ac := &t.AllowedChoices
	if err := row.Scan(&t.ID, &t.Name, &t.Description, &t.Currency, &price, &t.Units, &ac.MinUnits, &ac.MaxUnits,
		&ac.PriceOverride, &ac.DiscountOverride, &editions, &t.AutomaticStop, &discount,
		&binding, &terms, &chain, &archived, &t.CreatedAt, &t.UpdatedAt, &early); err != nil {
		return catalog.TemplatePackage{}, err
	}
	cur, ok := money.LookupCurrency(t.Currency)
	if !ok {
		return catalog.TemplatePackage{}, fmt.Errorf("template package %s has unknown currency %q", t.ID, t.Currency)
	}
	t.Price = catalog.NewAmount(price, cur)
	if editions.Valid {
		n := int(editions.Int64)
		t.NumberOfEditions = &n
	}
	d, err := catalog.ParsePercentText(discount)
	if err != nil {
		return catalog.TemplatePackage{}, err
	}
	t.PermanentDiscount = d
	if binding.Valid {
		t.Contract = &catalog.Contract{BindingPeriods: int(binding.Int64), Terms: terms, EarlyCancellation: early}
		t.Contract.EarlyCancellation = t.Contract.Rule() // '' on templates stored before the rule
	}
	if chain.Valid {
		t.PackageChainID = &chain.String
	}
	t.ArchivedAt = fromNullTime(archived)
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	t.Products = []catalog.PackageProduct{}
	t.AdditionalProducts = []catalog.AdditionalProduct{}
	t.BillingPlans = []string{}
	return t, nil
}

// packageArgs are the values of packageColumns after id, for t.
func packageArgs(t catalog.TemplatePackage) []any {
	var (
		editions, binding, chain any
		terms                    string
	)
	if t.NumberOfEditions != nil {
		editions = *t.NumberOfEditions
	}
	if t.Contract != nil {
		binding, terms = t.Contract.BindingPeriods, t.Contract.Terms
	}
	if t.PackageChainID != nil {
		chain = *t.PackageChainID
	}
	ac := t.AllowedChoices
	return []any{t.Name, t.Description, t.Currency, t.Price.Minor, t.Units, ac.MinUnits, ac.MaxUnits,
		ac.PriceOverride, ac.DiscountOverride, editions, t.AutomaticStop, t.PermanentDiscount.String(),
		binding, terms, chain}
}

// earlyCancellation is the stored rule of t's contract: the rule, or ”
// without a contract.
func earlyCancellation(t catalog.TemplatePackage) string {
	if t.Contract == nil {
		return ""
	}
	return t.Contract.Rule()
}

// CreatePackage stores template package t under the context's tenant
// with a new id and returns it as stored. The caller has checked it with
// catalog.CheckTemplate; a reference that vanished meanwhile is
// store.ErrConflict.
func CreatePackage(ctx context.Context, st *store.Store, t catalog.TemplatePackage, now time.Time) (catalog.TemplatePackage, error) {
	t.ID = store.NewID()
	t.CreatedAt = now.UTC().Truncate(time.Microsecond)
	t.UpdatedAt = t.CreatedAt
	t.ArchivedAt = nil
	var out catalog.TemplatePackage
	err := st.InTx(ctx, func(tx *store.Tx) error {
		args := append([]any{tx.TenantID(), t.ID}, packageArgs(t)...)
		args = append(args, nil, ts(t.CreatedAt), ts(t.UpdatedAt), earlyCancellation(t))
		if _, err := tx.Exec(ctx, `INSERT INTO template_packages (tenant_id, `+packageColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`, args...); err != nil {
			return err
		}
		if err := insertPackageChildren(ctx, tx, t); err != nil {
			return err
		}
		var err error
		out, err = loadPackage(ctx, tx, tx.TenantID(), t.ID)
		return err
	})
	if err != nil {
		return catalog.TemplatePackage{}, fmt.Errorf("catalogdb: create template package: %w", store.RefError(err))
	}
	return out, nil
}

func insertPackageChildren(ctx context.Context, tx *store.Tx, t catalog.TemplatePackage) error {
	const insertProduct = `INSERT INTO template_package_products
		(tenant_id, package_id, additional, position, product_id, share, price, selected_by_default)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	tenant := tx.TenantID()
	for i, p := range t.Products {
		var share, full any
		if p.Share != nil {
			share = p.Share.String()
		}
		if p.FullPrice != nil {
			full = p.FullPrice.Minor // an included product's price column is its fullPrice
		}
		if _, err := tx.Exec(ctx, insertProduct, tenant, t.ID, false, i, p.ProductID, share, full, false); err != nil {
			return err
		}
	}
	for i, p := range t.AdditionalProducts {
		if _, err := tx.Exec(ctx, insertProduct, tenant, t.ID, true, i, p.ProductID, nil, p.Price.Minor, p.SelectedByDefault); err != nil {
			return err
		}
	}
	for i, id := range t.BillingPlans {
		if _, err := tx.Exec(ctx, `INSERT INTO template_package_billing_plans
			(tenant_id, package_id, position, billing_plan_id) VALUES ($1, $2, $3, $4)`, tenant, t.ID, i, id); err != nil {
			return err
		}
	}
	return nil
}

// loadPackageChildren completes packages with their products and billing plans.
func loadPackageChildren(ctx context.Context, q querier, tenant string, pkgs []catalog.TemplatePackage) error {
	if len(pkgs) == 0 {
		return nil
	}
	at := make(map[string]int, len(pkgs))
	ids := make([]string, len(pkgs))
	for i, p := range pkgs {
		at[p.ID], ids[i] = i, p.ID
	}
	f := store.TenantFilter("", tenant)
	f.AddIn("package_id", ids)
	rows, err := q.Query(ctx, `SELECT package_id, additional, product_id, share, price, selected_by_default
		FROM template_package_products`+f.Where()+` ORDER BY package_id, additional, position`, f.Args()...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			pkgID, productID string
			additional, sel  bool
			share            sql.NullString
			price            sql.NullInt64
		)
		if err := rows.Scan(&pkgID, &additional, &productID, &share, &price, &sel); err != nil {
			return err
		}
		t := &pkgs[at[pkgID]]
		if additional {
			t.AdditionalProducts = append(t.AdditionalProducts, catalog.AdditionalProduct{
				ProductID: productID, Price: catalog.Amount{Minor: price.Int64, Digits: t.Price.Digits}, SelectedByDefault: sel,
			})
			continue
		}
		pp := catalog.PackageProduct{ProductID: productID}
		if share.Valid {
			p, err := catalog.ParsePercentText(share.String)
			if err != nil {
				return err
			}
			pp.Share = &p
		}
		if price.Valid {
			pp.FullPrice = &catalog.Amount{Minor: price.Int64, Digits: t.Price.Digits}
		}
		t.Products = append(t.Products, pp)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()

	plans, err := q.Query(ctx, `SELECT package_id, billing_plan_id FROM template_package_billing_plans`+
		f.Where()+` ORDER BY package_id, position`, f.Args()...)
	if err != nil {
		return err
	}
	defer plans.Close()
	for plans.Next() {
		var pkgID, planID string
		if err := plans.Scan(&pkgID, &planID); err != nil {
			return err
		}
		t := &pkgs[at[pkgID]]
		t.BillingPlans = append(t.BillingPlans, planID)
	}
	return plans.Err()
}

func loadPackage(ctx context.Context, q querier, tenant, id string) (catalog.TemplatePackage, error) {
	t, err := scanPackage(q.QueryRow(ctx,
		`SELECT `+packageColumns+` FROM template_packages WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return catalog.TemplatePackage{}, store.NotFound(err)
	}
	pkgs := []catalog.TemplatePackage{t}
	if err := loadPackageChildren(ctx, q, tenant, pkgs); err != nil {
		return catalog.TemplatePackage{}, err
	}
	return pkgs[0], nil
}

// Package returns template package id of the context's tenant, archived
// or not, or store.ErrNotFound (also for another tenant's package).
func Package(ctx context.Context, st *store.Store, id string) (catalog.TemplatePackage, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.TemplatePackage{}, err
	}
	if !store.ValidID(id) {
		return catalog.TemplatePackage{}, store.ErrNotFound
	}
	var t catalog.TemplatePackage
	err = st.InReadTx(ctx, func(q store.ReadTx) (err error) {
		t, err = loadPackage(ctx, q, tenant, id)
		return err
	})
	if err != nil {
		return catalog.TemplatePackage{}, fmt.Errorf("catalogdb: template package %s: %w", id, err)
	}
	return t, nil
}

// PackagesByID returns the template packages among ids that exist in the
// context's tenant (archived ones included), keyed by id.
func PackagesByID(ctx context.Context, st *store.Store, ids []string) (map[string]catalog.TemplatePackage, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]catalog.TemplatePackage{}
	f := store.TenantFilter("", tenant)
	if !f.AddIn("id", ids) {
		return out, nil
	}
	err = st.InReadTx(ctx, func(q store.ReadTx) error {
		pkgs, err := store.QueryAll(ctx, q, scanPackage, `SELECT `+packageColumns+` FROM template_packages`+f.Where(), f.Args()...)
		if err != nil {
			return err
		}
		if err := loadPackageChildren(ctx, q, tenant, pkgs); err != nil {
			return err
		}
		for _, p := range pkgs {
			out[p.ID] = p
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("catalogdb: template packages: %w", err)
	}
	return out, nil
}

// PackageFilter narrows ListPackages; zero fields do not filter, except
// Archived: archived packages are listed only when it is true, and then
// only they.
type PackageFilter struct {
	Currency       string
	PackageChainID string
	ProductID      string // included or additional
	BillingPlanID  string
	Archived       bool
}

// ListPackages returns one page of the tenant's template packages and the
// cursor of the next page ("" on the last).
func ListPackages(ctx context.Context, st *store.Store, f PackageFilter, p store.Page) ([]catalog.TemplatePackage, string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, "", err
	}
	for _, id := range []string{f.PackageChainID, f.ProductID, f.BillingPlanID} {
		if id != "" && !store.ValidID(id) {
			return nil, "", nil // names nothing; PostgreSQL would refuse the comparison
		}
	}
	q := store.TenantFilter("", tenant)
	if f.Archived {
		q.Add("archived_at IS NOT NULL")
	} else {
		q.Add("archived_at IS NULL")
	}
	if f.Currency != "" {
		q.Add("currency = ?", f.Currency)
	}
	if f.PackageChainID != "" {
		q.Add("package_chain_id = ?", f.PackageChainID)
	}
	if f.ProductID != "" {
		q.Add("id IN (SELECT package_id FROM template_package_products WHERE tenant_id = $1 AND product_id = ?)", f.ProductID)
	}
	if f.BillingPlanID != "" {
		q.Add("id IN (SELECT package_id FROM template_package_billing_plans WHERE tenant_id = $1 AND billing_plan_id = ?)", f.BillingPlanID)
	}
	var (
		out  []catalog.TemplatePackage
		next string
	)
	err = st.InReadTx(ctx, func(rq store.ReadTx) error {
		var err error
		if out, next, err = store.ListPage(ctx, rq, scanPackage, `SELECT `+packageColumns+` FROM template_packages`, q, "id", p,
			func(t catalog.TemplatePackage) string { return t.ID }); err != nil {
			return err
		}
		return loadPackageChildren(ctx, rq, tenant, out)
	})
	if err != nil {
		return nil, "", fmt.Errorf("catalogdb: list template packages: %w", err)
	}
	return out, next, nil
}

// UpdatePackage replaces template package t.ID (its fields, products and
// billing plans) and returns the stored result, or store.ErrNotFound.
// Archived packages can be edited and stay archived. Subscription
// packages made from the template are copies and do not change.
func UpdatePackage(ctx context.Context, st *store.Store, t catalog.TemplatePackage, now time.Time) (catalog.TemplatePackage, error) {
	if !store.ValidID(t.ID) {
		return catalog.TemplatePackage{}, store.ErrNotFound
	}
	var out catalog.TemplatePackage
	err := st.InTx(ctx, func(tx *store.Tx) error {
		tenant := tx.TenantID()
		args := append([]any{tenant, t.ID}, packageArgs(t)...)
		args = append(args, ts(now), earlyCancellation(t))
		res, err := tx.Exec(ctx, `UPDATE template_packages SET
			name = $3, description = $4, currency = $5, price = $6, units = $7, min_units = $8, max_units = $9,
			allow_price_override = $10, allow_discount_override = $11, number_of_editions = $12,
			automatic_stop = $13, permanent_discount = $14, contract_binding_periods = $15, contract_terms = $16,
			package_chain_id = $17, updated_at = $18, contract_early_cancellation = $19
			WHERE tenant_id = $1 AND id = $2`, args...)
		if err != nil {
			return err
		}
		if err := store.OneRow(res); err != nil {
			return err
		}
		for _, table := range []string{"template_package_products", "template_package_billing_plans"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1 AND package_id = $2`, tenant, t.ID); err != nil {
				return err
			}
		}
		if err := insertPackageChildren(ctx, tx, t); err != nil {
			return err
		}
		out, err = loadPackage(ctx, tx, tenant, t.ID)
		return err
	})
	if err != nil {
		return catalog.TemplatePackage{}, fmt.Errorf("catalogdb: update template package %s: %w", t.ID, store.RefError(err))
	}
	return out, nil
}

// DeletePackage deletes template package id, or archives it when
// something still needs it: a package chain step that uses it, or an
// order that named it (a template that orders, and so subscription
// packages, came from is archived, never deleted). Archiving hides the
// template from lists and stops it being ordered; it stays readable by id
// and keeps serving the chains that use it. Deleting an archived template
// deletes it once nothing needs it any more. archived reports which of
// the two happened.
func DeletePackage(ctx context.Context, st *store.Store, id string, now time.Time) (archived bool, err error) {
	if !store.ValidID(id) {
		return false, store.ErrNotFound
	}
	err = st.InTx(ctx, func(tx *store.Tx) error {
		tenant := tx.TenantID()
		var at sql.NullTime
		if err := tx.QueryRow(ctx, `SELECT archived_at FROM template_packages WHERE tenant_id = $1 AND id = $2`,
			tenant, id).Scan(&at); err != nil {
			return store.NotFound(err)
		}
		chains, err := referrers(ctx, tx, `SELECT DISTINCT chain_id FROM package_chain_steps
			WHERE tenant_id = $1 AND package_id = $2 ORDER BY chain_id`, tenant, id)
		if err != nil {
			return err
		}
		orders, err := referrers(ctx, tx, `SELECT id FROM orders
			WHERE tenant_id = $1 AND template_package_id = $2 ORDER BY id LIMIT 1`, tenant, id)
		if err != nil {
			return err
		}
		// A price change names the template as its source or target: it is
		// history (and may still be scheduled), so the template is kept.
		priced, err := referrers(ctx, tx, `SELECT id FROM price_changes
			WHERE tenant_id = $1 AND (template_package_id = $2 OR target_template_package_id = $2) ORDER BY id LIMIT 1`, tenant, id)
		if err != nil {
			return err
		}
		if len(chains) > 0 || len(orders) > 0 || len(priced) > 0 {
			archived = true
			_, err := tx.Exec(ctx, `UPDATE template_packages SET archived_at = $3, updated_at = $3
				WHERE tenant_id = $1 AND id = $2 AND archived_at IS NULL`, tenant, id, ts(now))
			return err
		}
		return deleteRow(ctx, tx, "template_packages", "template package", id)
	})
	if err != nil {
		return false, fmt.Errorf("catalogdb: delete template package %s: %w", id, store.RefError(err))
	}
	return archived, nil
}

// PackageForMerge reads, in one consistent snapshot, everything
// catalog.Merge needs for template package id: the template, its
// products, its billing plans and its chain. The caller adds the choices.
func PackageForMerge(ctx context.Context, st *store.Store, id string) (catalog.MergeInput, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.MergeInput{}, err
	}
	if !store.ValidID(id) {
		return catalog.MergeInput{}, store.ErrNotFound
	}
	var in catalog.MergeInput
	err = st.InReadTx(ctx, func(q store.ReadTx) error {
		var err error
		if in.Template, err = loadPackage(ctx, q, tenant, id); err != nil {
			return err
		}
		if in.Products, err = productsByID(ctx, q, tenant, in.Template.ProductIDs()); err != nil {
			return err
		}
		if in.BillingPlans, err = billingPlansByID(ctx, q, tenant, in.Template.BillingPlans); err != nil {
			return err
		}
		if cid := in.Template.PackageChainID; cid != nil {
			c, err := loadChain(ctx, q, tenant, *cid)
			if errors.Is(err, store.ErrNotFound) {
				return nil // Merge reports the missing chain
			}
			if err != nil {
				return err
			}
			in.Chain = &c
		}
		return nil
	})
	if err != nil {
		return catalog.MergeInput{}, fmt.Errorf("catalogdb: template package %s: %w", id, err)
	}
	return in, nil
}
