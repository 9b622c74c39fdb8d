package catalogdb

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
)

const productColumns = `id, name, description, category, vat_rate, active, created_at, updated_at`

func scanProduct(row store.Scanner) (catalog.Product, error) {
	var (
		p   catalog.Product
		vat string
	)
	if err := row.Scan(&p.ID, &p.Name, &p.Description, &p.Category, &vat, &p.Active, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return catalog.Product{}, err
	}
	rate, err := catalog.ParsePercentText(vat)
	if err != nil {
		return catalog.Product{}, err
	}
	p.VATRate = rate
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, nil
}

// CreateProduct stores p under the context's tenant with a new id and
// returns it as stored.
func CreateProduct(ctx context.Context, st *store.Store, p catalog.Product, now time.Time) (catalog.Product, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.Product{}, err
	}
	p.ID = store.NewID()
	p.CreatedAt = now.UTC().Truncate(time.Microsecond)
	p.UpdatedAt = p.CreatedAt
	_, err = st.Writer().Exec(ctx, `INSERT INTO products (tenant_id, `+productColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		tenant, p.ID, p.Name, p.Description, p.Category, p.VATRate.String(), p.Active, ts(p.CreatedAt), ts(p.UpdatedAt))
	if err != nil {
		return catalog.Product{}, fmt.Errorf("catalogdb: create product: %w", err)
	}
	return p, nil
}

// Product returns product id of the context's tenant, or
// store.ErrNotFound (also for another tenant's product).
func Product(ctx context.Context, st *store.Store, id string) (catalog.Product, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.Product{}, err
	}
	if !store.ValidID(id) {
		return catalog.Product{}, store.ErrNotFound
	}
	p, err := scanProduct(st.Reader().QueryRow(ctx,
		`SELECT `+productColumns+` FROM products WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return catalog.Product{}, fmt.Errorf("catalogdb: product %s: %w", id, store.NotFound(err))
	}
	return p, nil
}

// ProductsByID returns the products among ids that exist in the context's
// tenant, keyed by id; ids of no product (or of another tenant's) are
// simply absent.
func ProductsByID(ctx context.Context, st *store.Store, ids []string) (map[string]catalog.Product, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	return productsByID(ctx, st.Reader(), tenant, ids)
}

func productsByID(ctx context.Context, q querier, tenant string, ids []string) (map[string]catalog.Product, error) {
	out := map[string]catalog.Product{}
	f := store.TenantFilter("", tenant)
	if !f.AddIn("id", ids) {
		return out, nil
	}
	ps, err := store.QueryAll(ctx, q, scanProduct, `SELECT `+productColumns+` FROM products`+f.Where(), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("catalogdb: products: %w", err)
	}
	for _, p := range ps {
		out[p.ID] = p
	}
	return out, nil
}

// ProductFilter narrows ListProducts; zero fields do not filter.
type ProductFilter struct {
	Active   *bool
	Category string
}

// ListProducts returns one page of the tenant's products and the cursor of
// the next page ("" on the last).
func ListProducts(ctx context.Context, st *store.Store, f ProductFilter, p store.Page) ([]catalog.Product, string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("", tenant)
	if f.Active != nil {
		q.Add("active = ?", *f.Active)
	}
	if f.Category != "" {
		q.Add("category = ?", f.Category)
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanProduct, `SELECT `+productColumns+` FROM products`, q, "id", p,
		func(pr catalog.Product) string { return pr.ID })
	if err != nil {
		return nil, "", fmt.Errorf("catalogdb: list products: %w", err)
	}
	return out, next, nil
}

// UpdateProduct replaces the editable fields of product p.ID and returns
// the stored result, or store.ErrNotFound. Template packages refer to
// products by id, so they see the change; subscription packages made
// earlier keep the copy they took.
func UpdateProduct(ctx context.Context, st *store.Store, p catalog.Product, now time.Time) (catalog.Product, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.Product{}, err
	}
	if !store.ValidID(p.ID) {
		return catalog.Product{}, store.ErrNotFound
	}
	updated, err := scanProduct(st.Writer().QueryRow(ctx, `UPDATE products SET
		name = $3, description = $4, category = $5, vat_rate = $6, active = $7, updated_at = $8
		WHERE tenant_id = $1 AND id = $2 RETURNING `+productColumns,
		tenant, p.ID, p.Name, p.Description, p.Category, p.VATRate.String(), p.Active, ts(now)))
	if err != nil {
		return catalog.Product{}, fmt.Errorf("catalogdb: update product %s: %w", p.ID, store.NotFound(err))
	}
	return updated, nil
}

// DeleteProduct removes product id. A product that a template package
// (archived or not) still contains is not deleted: the error is a
// *store.InUseError naming those packages (it matches ErrConflict);
// deactivate the product instead, or take it out of the packages first.
func DeleteProduct(ctx context.Context, st *store.Store, id string) error {
	return st.DeleteUnused(ctx, "products", "product", id, "template package", `SELECT DISTINCT package_id
		FROM template_package_products WHERE tenant_id = $1 AND product_id = $2 ORDER BY package_id`)
}
