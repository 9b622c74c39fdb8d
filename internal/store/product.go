package store

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

const productColumns = `id, name, description, category, vat_rate, active, created_at, updated_at`

func scanProduct(row scanner) (catalog.Product, error) {
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
func (s *Store) CreateProduct(ctx context.Context, p catalog.Product, now time.Time) (catalog.Product, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.Product{}, err
	}
	p.ID = NewID()
	p.CreatedAt = now.UTC().Truncate(time.Microsecond)
	p.UpdatedAt = p.CreatedAt
	_, err = s.w.ExecContext(ctx, `INSERT INTO products (tenant_id, `+productColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		tenant, p.ID, p.Name, p.Description, p.Category, p.VATRate.String(), p.Active, ts(p.CreatedAt), ts(p.UpdatedAt))
	if err != nil {
		return catalog.Product{}, fmt.Errorf("store: create product: %w", err)
	}
	return p, nil
}

// Product returns product id of the context's tenant, or ErrNotFound (also
// for another tenant's product).
func (s *Store) Product(ctx context.Context, id string) (catalog.Product, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.Product{}, err
	}
	if !ValidID(id) {
		return catalog.Product{}, ErrNotFound
	}
	p, err := scanProduct(s.readRow(ctx,
		`SELECT `+productColumns+` FROM products WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return catalog.Product{}, fmt.Errorf("store: product %s: %w", id, notFound(err))
	}
	return p, nil
}

// ProductsByID returns the products among ids that exist in the context's
// tenant, keyed by id; ids of no product (or of another tenant's) are
// simply absent.
func (s *Store) ProductsByID(ctx context.Context, ids []string) (map[string]catalog.Product, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	return productsByID(ctx, s.r, tenant, ids)
}

func productsByID(ctx context.Context, q queryer, tenant string, ids []string) (map[string]catalog.Product, error) {
	out := map[string]catalog.Product{}
	f := tenantFilter(tenant)
	if !f.addIn("id", ids) {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+productColumns+` FROM products`+f.where(), f.args...)
	if err != nil {
		return nil, fmt.Errorf("store: products: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanProduct(rows)
		if err != nil {
			return nil, fmt.Errorf("store: products: %w", err)
		}
		out[p.ID] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: products: %w", err)
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
func (s *Store) ListProducts(ctx context.Context, f ProductFilter, p Page) ([]catalog.Product, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	if f.Active != nil {
		q.add("active = ?", *f.Active)
	}
	if f.Category != "" {
		q.add("category = ?", f.Category)
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanProduct, `SELECT `+productColumns+` FROM products`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list products: %w", err)
	}
	out, next := trimPage(out, p, func(pr catalog.Product) string { return pr.ID })
	return out, next, nil
}

// UpdateProduct replaces the editable fields of product p.ID and returns
// the stored result, or ErrNotFound. Template packages refer to products
// by id, so they see the change; subscription packages made earlier keep
// the copy they took.
func (s *Store) UpdateProduct(ctx context.Context, p catalog.Product, now time.Time) (catalog.Product, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.Product{}, err
	}
	if !ValidID(p.ID) {
		return catalog.Product{}, ErrNotFound
	}
	updated, err := scanProduct(s.w.QueryRowContext(ctx, `UPDATE products SET
		name = $3, description = $4, category = $5, vat_rate = $6, active = $7, updated_at = $8
		WHERE tenant_id = $1 AND id = $2 RETURNING `+productColumns,
		tenant, p.ID, p.Name, p.Description, p.Category, p.VATRate.String(), p.Active, ts(now)))
	if err != nil {
		return catalog.Product{}, fmt.Errorf("store: update product %s: %w", p.ID, notFound(err))
	}
	return updated, nil
}

// DeleteProduct removes product id. A product that a template package
// (archived or not) still contains is not deleted: the error is an
// *InUseError naming those packages (it matches ErrConflict); deactivate
// the product instead, or take it out of the packages first.
func (s *Store) DeleteProduct(ctx context.Context, id string) error {
	return s.deleteUnused(ctx, "products", "product", id, "template package", `SELECT DISTINCT package_id
		FROM template_package_products WHERE tenant_id = $1 AND product_id = $2 ORDER BY package_id`)
}
