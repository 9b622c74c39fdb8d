package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/tenancy"
)

// Template packages are stored in three tables: the package row, its
// products (included and additional, in order) and its billing plans (in
// order, the first being the default). A package is always read and
// written whole, in one transaction, so no reader sees half an edit.

const packageColumns = `id, name, description, currency, price, units, min_units, max_units,
	allow_price_override, allow_discount_override, number_of_editions, automatic_stop, permanent_discount,
	contract_binding_periods, contract_terms, package_chain_id, archived_at, created_at, updated_at`

func scanPackage(row scanner) (catalog.TemplatePackage, error) {
	var (
		t                 catalog.TemplatePackage
		price             int64
		editions, binding sql.NullInt64
		discount, terms   string
		chain             sql.NullString
		archived          sql.NullTime
	)
	ac := &t.AllowedChoices
	if err := row.Scan(&t.ID, &t.Name, &t.Description, &t.Currency, &price, &t.Units, &ac.MinUnits, &ac.MaxUnits,
		&ac.PriceOverride, &ac.DiscountOverride, &editions, &t.AutomaticStop, &discount,
		&binding, &terms, &chain, &archived, &t.CreatedAt, &t.UpdatedAt); err != nil {
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
		t.Contract = &catalog.Contract{BindingPeriods: int(binding.Int64), Terms: terms}
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

// CreatePackage stores template package t under the context's tenant with
// a new id and returns it as stored. The caller has checked it with
// catalog.CheckTemplate; a reference that vanished meanwhile is
// ErrConflict.
func (s *Store) CreatePackage(ctx context.Context, t catalog.TemplatePackage, now time.Time) (catalog.TemplatePackage, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.TemplatePackage{}, err
	}
	t.ID = NewID()
	t.CreatedAt = now.UTC().Truncate(time.Microsecond)
	t.UpdatedAt = t.CreatedAt
	t.ArchivedAt = nil
	var out catalog.TemplatePackage
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		args := append([]any{tenant, t.ID}, packageArgs(t)...)
		args = append(args, nil, ts(t.CreatedAt), ts(t.UpdatedAt))
		if _, err := tx.ExecContext(ctx, `INSERT INTO template_packages (tenant_id, `+packageColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`, args...); err != nil {
			return err
		}
		if err := insertPackageChildren(ctx, tx, tenant, t); err != nil {
			return err
		}
		out, err = loadPackage(ctx, tx, tenant, t.ID)
		return err
	})
	if err != nil {
		return catalog.TemplatePackage{}, fmt.Errorf("store: create template package: %w", refError(err))
	}
	return out, nil
}

func insertPackageChildren(ctx context.Context, tx *sql.Tx, tenant string, t catalog.TemplatePackage) error {
	const insertProduct = `INSERT INTO template_package_products
		(tenant_id, package_id, additional, position, product_id, share, price, selected_by_default)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	for i, p := range t.Products {
		var share, full any
		if p.Share != nil {
			share = p.Share.String()
		}
		if p.FullPrice != nil {
			full = p.FullPrice.Minor // an included product's price column is its fullPrice
		}
		if _, err := tx.ExecContext(ctx, insertProduct, tenant, t.ID, false, i, p.ProductID, share, full, false); err != nil {
			return err
		}
	}
	for i, p := range t.AdditionalProducts {
		if _, err := tx.ExecContext(ctx, insertProduct, tenant, t.ID, true, i, p.ProductID, nil, p.Price.Minor, p.SelectedByDefault); err != nil {
			return err
		}
	}
	for i, id := range t.BillingPlans {
		if _, err := tx.ExecContext(ctx, `INSERT INTO template_package_billing_plans
			(tenant_id, package_id, position, billing_plan_id) VALUES ($1, $2, $3, $4)`, tenant, t.ID, i, id); err != nil {
			return err
		}
	}
	return nil
}

// loadPackageChildren completes packages with their products and billing plans.
func loadPackageChildren(ctx context.Context, q queryer, tenant string, pkgs []catalog.TemplatePackage) error {
	if len(pkgs) == 0 {
		return nil
	}
	at := make(map[string]int, len(pkgs))
	ids := make([]string, len(pkgs))
	for i, p := range pkgs {
		at[p.ID], ids[i] = i, p.ID
	}
	f := tenantFilter(tenant)
	f.addIn("package_id", ids)
	rows, err := q.QueryContext(ctx, `SELECT package_id, additional, product_id, share, price, selected_by_default
		FROM template_package_products`+f.where()+` ORDER BY package_id, additional, position`, f.args...)
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

	plans, err := q.QueryContext(ctx, `SELECT package_id, billing_plan_id FROM template_package_billing_plans`+
		f.where()+` ORDER BY package_id, position`, f.args...)
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

func loadPackage(ctx context.Context, q queryer, tenant, id string) (catalog.TemplatePackage, error) {
	t, err := scanPackage(q.QueryRowContext(ctx,
		`SELECT `+packageColumns+` FROM template_packages WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return catalog.TemplatePackage{}, notFound(err)
	}
	pkgs := []catalog.TemplatePackage{t}
	if err := loadPackageChildren(ctx, q, tenant, pkgs); err != nil {
		return catalog.TemplatePackage{}, err
	}
	return pkgs[0], nil
}

// Package returns template package id of the context's tenant, archived or
// not, or ErrNotFound (also for another tenant's package).
func (s *Store) Package(ctx context.Context, id string) (catalog.TemplatePackage, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.TemplatePackage{}, err
	}
	if !ValidID(id) {
		return catalog.TemplatePackage{}, ErrNotFound
	}
	var t catalog.TemplatePackage
	err = s.readTx(ctx, func(q queryer) (err error) {
		t, err = loadPackage(ctx, q, tenant, id)
		return err
	})
	if err != nil {
		return catalog.TemplatePackage{}, fmt.Errorf("store: template package %s: %w", id, err)
	}
	return t, nil
}

// PackagesByID returns the template packages among ids that exist in the
// context's tenant (archived ones included), keyed by id.
func (s *Store) PackagesByID(ctx context.Context, ids []string) (map[string]catalog.TemplatePackage, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]catalog.TemplatePackage{}
	f := tenantFilter(tenant)
	if !f.addIn("id", ids) {
		return out, nil
	}
	err = s.readTx(ctx, func(q queryer) error {
		pkgs, err := queryPackages(ctx, q, `SELECT `+packageColumns+` FROM template_packages`+f.where(), f.args)
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
		return nil, fmt.Errorf("store: template packages: %w", err)
	}
	return out, nil
}

func queryPackages(ctx context.Context, q queryer, query string, args []any) ([]catalog.TemplatePackage, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []catalog.TemplatePackage
	for rows.Next() {
		t, err := scanPackage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
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
func (s *Store) ListPackages(ctx context.Context, f PackageFilter, p Page) ([]catalog.TemplatePackage, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	for _, id := range []string{f.PackageChainID, f.ProductID, f.BillingPlanID} {
		if id != "" && !ValidID(id) {
			return nil, "", nil // names nothing; PostgreSQL would refuse the comparison
		}
	}
	q := tenantFilter(tenant)
	if f.Archived {
		q.conds = append(q.conds, "archived_at IS NOT NULL")
	} else {
		q.conds = append(q.conds, "archived_at IS NULL")
	}
	if f.Currency != "" {
		q.add("currency = ?", f.Currency)
	}
	if f.PackageChainID != "" {
		q.add("package_chain_id = ?", f.PackageChainID)
	}
	if f.ProductID != "" {
		q.add("id IN (SELECT package_id FROM template_package_products WHERE tenant_id = $1 AND product_id = ?)", f.ProductID)
	}
	if f.BillingPlanID != "" {
		q.add("id IN (SELECT package_id FROM template_package_billing_plans WHERE tenant_id = $1 AND billing_plan_id = ?)", f.BillingPlanID)
	}
	tail := q.page(p)
	var (
		out  []catalog.TemplatePackage
		next string
	)
	err = s.readTx(ctx, func(rq queryer) error {
		var err error
		if out, err = queryPackages(ctx, rq, `SELECT `+packageColumns+` FROM template_packages`+q.where()+tail, q.args); err != nil {
			return err
		}
		out, next = trimPage(out, p, func(t catalog.TemplatePackage) string { return t.ID })
		return loadPackageChildren(ctx, rq, tenant, out)
	})
	if err != nil {
		return nil, "", fmt.Errorf("store: list template packages: %w", err)
	}
	return out, next, nil
}

// UpdatePackage replaces template package t.ID (its fields, products and
// billing plans) and returns the stored result, or ErrNotFound. Archived
// packages can be edited and stay archived. Subscription packages made
// from the template are copies and do not change.
func (s *Store) UpdatePackage(ctx context.Context, t catalog.TemplatePackage, now time.Time) (catalog.TemplatePackage, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.TemplatePackage{}, err
	}
	if !ValidID(t.ID) {
		return catalog.TemplatePackage{}, ErrNotFound
	}
	var out catalog.TemplatePackage
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		args := append([]any{tenant, t.ID}, packageArgs(t)...)
		args = append(args, ts(now))
		res, err := tx.ExecContext(ctx, `UPDATE template_packages SET
			name = $3, description = $4, currency = $5, price = $6, units = $7, min_units = $8, max_units = $9,
			allow_price_override = $10, allow_discount_override = $11, number_of_editions = $12,
			automatic_stop = $13, permanent_discount = $14, contract_binding_periods = $15, contract_terms = $16,
			package_chain_id = $17, updated_at = $18
			WHERE tenant_id = $1 AND id = $2`, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		for _, table := range []string{"template_package_products", "template_package_billing_plans"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1 AND package_id = $2`, tenant, t.ID); err != nil {
				return err
			}
		}
		if err := insertPackageChildren(ctx, tx, tenant, t); err != nil {
			return err
		}
		out, err = loadPackage(ctx, tx, tenant, t.ID)
		return err
	})
	if err != nil {
		return catalog.TemplatePackage{}, fmt.Errorf("store: update template package %s: %w", t.ID, refError(err))
	}
	return out, nil
}

// DeletePackage deletes template package id, or archives it when something
// still needs it: a package chain step that uses it, or an order that named
// it (a template that orders, and so subscription packages, came from is
// archived, never deleted). Archiving hides the template from lists and
// stops it being ordered; it stays readable by id and keeps serving the
// chains that use it. Deleting an archived template deletes it once
// nothing needs it any more.
// archived reports which of the two happened.
func (s *Store) DeletePackage(ctx context.Context, id string, now time.Time) (archived bool, err error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return false, err
	}
	if !ValidID(id) {
		return false, ErrNotFound
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var at sql.NullTime
		if err := tx.QueryRowContext(ctx, `SELECT archived_at FROM template_packages WHERE tenant_id = $1 AND id = $2`,
			tenant, id).Scan(&at); err != nil {
			return notFound(err)
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
			_, err := tx.ExecContext(ctx, `UPDATE template_packages SET archived_at = $3, updated_at = $3
				WHERE tenant_id = $1 AND id = $2 AND archived_at IS NULL`, tenant, id, ts(now))
			return err
		}
		return deleteRow(ctx, tx, "template_packages", "template package", tenant, id)
	})
	if err != nil {
		return false, fmt.Errorf("store: delete template package %s: %w", id, refError(err))
	}
	return archived, nil
}

// PackageForMerge reads, in one consistent snapshot, everything
// catalog.Merge needs for template package id: the template, its products,
// its billing plans and its chain. The caller adds the choices.
func (s *Store) PackageForMerge(ctx context.Context, id string) (catalog.MergeInput, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.MergeInput{}, err
	}
	if !ValidID(id) {
		return catalog.MergeInput{}, ErrNotFound
	}
	var in catalog.MergeInput
	err = s.readTx(ctx, func(q queryer) error {
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
			if errors.Is(err, ErrNotFound) {
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
		return catalog.MergeInput{}, fmt.Errorf("store: template package %s: %w", id, err)
	}
	return in, nil
}

// InUseError is returned when a resource cannot be deleted because others
// still refer to it. It matches ErrConflict.
type InUseError struct {
	What string   // "product"
	ID   string   // its id
	By   string   // "template package"
	IDs  []string // the ids of those referring to it
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s %s is used by %s %s", e.What, e.ID, e.By, strings.Join(e.IDs, ", "))
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *InUseError) Is(target error) bool { return target == ErrConflict }

// queryer is what reads need: a pool or a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readTx runs fn in a read-only transaction on the read pool, so that a
// resource read in several queries (a package and its products) comes from
// one snapshot. SQLite transactions are snapshots already; PostgreSQL
// needs REPEATABLE READ for that.
func (s *Store) readTx(ctx context.Context, fn func(q queryer) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.engine == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.r.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only; nothing to undo
	return fn(tx)
}

// addIn appends "col IN (...)" for the valid ids among vals. It reports
// false, adding nothing, when there is none: the caller then knows the
// answer is empty without asking the database.
func (f *filter) addIn(col string, vals []string) bool {
	var ph []string
	seen := map[string]bool{}
	for _, v := range vals {
		if !ValidID(v) || seen[v] {
			continue
		}
		seen[v] = true
		f.args = append(f.args, v)
		ph = append(ph, "$"+strconv.Itoa(len(f.args)))
	}
	if len(ph) == 0 {
		return false
	}
	f.conds = append(f.conds, col+" IN ("+strings.Join(ph, ", ")+")")
	return true
}

// referrers returns the ids a query for the users of a resource yields.
func referrers(ctx context.Context, q queryer, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// deleteRow deletes row id of a tenant-owned table, or returns
// deleteUnused deletes row id of table unless users (a query taking
// tenant and id) finds rows referring to it.
func (s *Store) deleteUnused(ctx context.Context, table, what, id, by, users string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !ValidID(id) {
		return ErrNotFound
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		ids, err := referrers(ctx, tx, users, tenant, id)
		if err != nil {
			return fmt.Errorf("store: delete %s %s: %w", what, id, err)
		}
		if len(ids) > 0 {
			return fmt.Errorf("store: delete %s %s: %w", what, id, &InUseError{What: what, ID: id, By: by, IDs: ids})
		}
		return deleteRow(ctx, tx, table, what, tenant, id)
	})
}

// ErrNotFound.
func deleteRow(ctx context.Context, tx *sql.Tx, table, what, tenant, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if err != nil {
		return fmt.Errorf("store: delete %s %s: %w", what, id, refError(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: delete %s %s: %w", what, id, err)
	} else if n == 0 {
		return fmt.Errorf("store: %s %s: %w", what, id, ErrNotFound)
	}
	return nil
}

// refError turns a foreign-key violation into ErrConflict: a row that was
// checked a moment ago was deleted, or gained a reference, concurrently.
func refError(err error) error {
	if isForeignKeyViolation(err) {
		return fmt.Errorf("%w: a referenced resource changed concurrently (%v)", ErrConflict, err)
	}
	return err
}

func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23503"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	return false
}
