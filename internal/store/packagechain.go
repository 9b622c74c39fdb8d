package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

const chainColumns = `id, name, description, created_at, updated_at`

func scanChain(row scanner) (catalog.Chain, error) {
	var c catalog.Chain
	if err := row.Scan(&c.ID, &c.Name, &c.Description, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return catalog.Chain{}, err
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	c.PackageChain.Steps = []catalog.ChainStep{}
	return c, nil
}

func insertChainSteps(ctx context.Context, tx *sql.Tx, tenant string, c catalog.Chain) error {
	for _, st := range c.PackageChain.Steps {
		if _, err := tx.ExecContext(ctx, `INSERT INTO package_chain_steps (tenant_id, chain_id, step, package_id, periods)
			VALUES ($1, $2, $3, $4, $5)`, tenant, c.ID, st.Step, st.NextPackageID, st.Periods); err != nil {
			return err
		}
	}
	return nil
}

// loadChainSteps completes chains with their steps, in step order.
func loadChainSteps(ctx context.Context, q queryer, tenant string, chains []catalog.Chain) error {
	if len(chains) == 0 {
		return nil
	}
	at := make(map[string]int, len(chains))
	ids := make([]string, len(chains))
	for i, c := range chains {
		at[c.ID], ids[i] = i, c.ID
	}
	f := tenantFilter(tenant)
	f.addIn("chain_id", ids)
	rows, err := q.QueryContext(ctx, `SELECT chain_id, step, package_id, periods FROM package_chain_steps`+
		f.where()+` ORDER BY chain_id, step`, f.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			chainID string
			st      catalog.ChainStep
		)
		if err := rows.Scan(&chainID, &st.Step, &st.NextPackageID, &st.Periods); err != nil {
			return err
		}
		c := &chains[at[chainID]]
		c.PackageChain.Steps = append(c.PackageChain.Steps, st)
	}
	return rows.Err()
}

func loadChain(ctx context.Context, q queryer, tenant, id string) (catalog.Chain, error) {
	c, err := scanChain(q.QueryRowContext(ctx,
		`SELECT `+chainColumns+` FROM package_chains WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return catalog.Chain{}, notFound(err)
	}
	chains := []catalog.Chain{c}
	if err := loadChainSteps(ctx, q, tenant, chains); err != nil {
		return catalog.Chain{}, err
	}
	return chains[0], nil
}

// CreatePackageChain stores chain c (checked with catalog.CheckChain)
// under the context's tenant with a new id, its steps in step order, and
// returns it as stored. A step package deleted meanwhile is ErrConflict.
func (s *Store) CreatePackageChain(ctx context.Context, c catalog.Chain, now time.Time) (catalog.Chain, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.Chain{}, err
	}
	c.ID = NewID()
	c.CreatedAt = now.UTC().Truncate(time.Microsecond)
	c.UpdatedAt = c.CreatedAt
	c.SortSteps()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO package_chains (tenant_id, `+chainColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6)`, tenant, c.ID, c.Name, c.Description, ts(c.CreatedAt), ts(c.UpdatedAt)); err != nil {
			return err
		}
		return insertChainSteps(ctx, tx, tenant, c)
	})
	if err != nil {
		return catalog.Chain{}, fmt.Errorf("store: create package chain: %w", refError(err))
	}
	return c, nil
}

// PackageChain returns package chain id of the context's tenant with its
// steps, or ErrNotFound (also for another tenant's chain).
func (s *Store) PackageChain(ctx context.Context, id string) (catalog.Chain, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.Chain{}, err
	}
	if !ValidID(id) {
		return catalog.Chain{}, ErrNotFound
	}
	var c catalog.Chain
	err = s.readTx(ctx, func(q queryer) (err error) {
		c, err = loadChain(ctx, q, tenant, id)
		return err
	})
	if err != nil {
		return catalog.Chain{}, fmt.Errorf("store: package chain %s: %w", id, err)
	}
	return c, nil
}

// PackageChainFilter narrows ListPackageChains; zero fields do not filter.
type PackageChainFilter struct {
	// PackageID lists the chains with a step that uses this template.
	PackageID string
}

// ListPackageChains returns one page of the tenant's package chains and the
// cursor of the next page ("" on the last).
func (s *Store) ListPackageChains(ctx context.Context, f PackageChainFilter, p Page) ([]catalog.Chain, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if f.PackageID != "" && !ValidID(f.PackageID) {
		return nil, "", nil // names nothing; PostgreSQL would refuse the comparison
	}
	q := tenantFilter(tenant)
	if f.PackageID != "" {
		q.add("id IN (SELECT chain_id FROM package_chain_steps WHERE tenant_id = $1 AND package_id = ?)", f.PackageID)
	}
	tail := q.page(p)
	var (
		out  []catalog.Chain
		next string
	)
	err = s.readTx(ctx, func(rq queryer) error {
		rows, err := rq.QueryContext(ctx, `SELECT `+chainColumns+` FROM package_chains`+q.where()+tail, q.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanChain(rows)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		out, next = trimPage(out, p, func(c catalog.Chain) string { return c.ID })
		return loadChainSteps(ctx, rq, tenant, out)
	})
	if err != nil {
		return nil, "", fmt.Errorf("store: list package chains: %w", err)
	}
	return out, next, nil
}

// UpdatePackageChain replaces chain c.ID's name, description and steps and
// returns the stored result, or ErrNotFound.
func (s *Store) UpdatePackageChain(ctx context.Context, c catalog.Chain, now time.Time) (catalog.Chain, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.Chain{}, err
	}
	if !ValidID(c.ID) {
		return catalog.Chain{}, ErrNotFound
	}
	c.SortSteps()
	var out catalog.Chain
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE package_chains SET name = $3, description = $4, updated_at = $5
			WHERE tenant_id = $1 AND id = $2`, tenant, c.ID, c.Name, c.Description, ts(now))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM package_chain_steps WHERE tenant_id = $1 AND chain_id = $2`, tenant, c.ID); err != nil {
			return err
		}
		if err := insertChainSteps(ctx, tx, tenant, c); err != nil {
			return err
		}
		out, err = loadChain(ctx, tx, tenant, c.ID)
		return err
	})
	if err != nil {
		return catalog.Chain{}, fmt.Errorf("store: update package chain %s: %w", c.ID, refError(err))
	}
	return out, nil
}

// DeletePackageChain removes chain id and its steps. A chain that template
// packages (archived or not) link to with packageChainId is not deleted:
// the error is an *InUseError naming them; unlink them first.
func (s *Store) DeletePackageChain(ctx context.Context, id string) error {
	return s.deleteUnused(ctx, "package_chains", "package chain", id, "template package",
		`SELECT id FROM template_packages WHERE tenant_id = $1 AND package_chain_id = $2 ORDER BY id`)
}
