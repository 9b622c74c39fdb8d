package catalogdb

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
)

const chainColumns = `id, name, description, created_at, updated_at`

func scanChain(row store.Scanner) (catalog.Chain, error) {
	var c catalog.Chain
	if err := row.Scan(&c.ID, &c.Name, &c.Description, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return catalog.Chain{}, err
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	c.PackageChain.Steps = []catalog.ChainStep{}
	return c, nil
}

func insertChainSteps(ctx context.Context, tx *store.Tx, c catalog.Chain) error {
	for _, st := range c.PackageChain.Steps {
		if _, err := tx.Exec(ctx, `INSERT INTO package_chain_steps (tenant_id, chain_id, step, package_id, periods)
			VALUES ($1, $2, $3, $4, $5)`, tx.TenantID(), c.ID, st.Step, st.NextPackageID, st.Periods); err != nil {
			return err
		}
	}
	return nil
}

// loadChainSteps completes chains with their steps, in step order.
func loadChainSteps(ctx context.Context, q querier, tenant string, chains []catalog.Chain) error {
	if len(chains) == 0 {
		return nil
	}
	at := make(map[string]int, len(chains))
	ids := make([]string, len(chains))
	for i, c := range chains {
		at[c.ID], ids[i] = i, c.ID
	}
	f := store.TenantFilter("", tenant)
	f.AddIn("chain_id", ids)
	rows, err := q.Query(ctx, `SELECT chain_id, step, package_id, periods FROM package_chain_steps`+
		f.Where()+` ORDER BY chain_id, step`, f.Args()...)
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

func loadChain(ctx context.Context, q querier, tenant, id string) (catalog.Chain, error) {
	c, err := scanChain(q.QueryRow(ctx,
		`SELECT `+chainColumns+` FROM package_chains WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return catalog.Chain{}, store.NotFound(err)
	}
	chains := []catalog.Chain{c}
	if err := loadChainSteps(ctx, q, tenant, chains); err != nil {
		return catalog.Chain{}, err
	}
	return chains[0], nil
}

// CreatePackageChain stores chain c (checked with catalog.CheckChain)
// under the context's tenant with a new id, its steps in step order, and
// returns it as stored. A step package deleted meanwhile is
// store.ErrConflict.
func CreatePackageChain(ctx context.Context, st *store.Store, c catalog.Chain, now time.Time) (catalog.Chain, error) {
	c.ID = store.NewID()
	c.CreatedAt = now.UTC().Truncate(time.Microsecond)
	c.UpdatedAt = c.CreatedAt
	c.SortSteps()
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO package_chains (tenant_id, `+chainColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6)`, tx.TenantID(), c.ID, c.Name, c.Description, ts(c.CreatedAt), ts(c.UpdatedAt)); err != nil {
			return err
		}
		return insertChainSteps(ctx, tx, c)
	})
	if err != nil {
		return catalog.Chain{}, fmt.Errorf("catalogdb: create package chain: %w", store.RefError(err))
	}
	return c, nil
}

// PackageChain returns package chain id of the context's tenant with its
// steps, or store.ErrNotFound (also for another tenant's chain).
func PackageChain(ctx context.Context, st *store.Store, id string) (catalog.Chain, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.Chain{}, err
	}
	if !store.ValidID(id) {
		return catalog.Chain{}, store.ErrNotFound
	}
	var c catalog.Chain
	err = st.InReadTx(ctx, func(q store.ReadTx) (err error) {
		c, err = loadChain(ctx, q, tenant, id)
		return err
	})
	if err != nil {
		return catalog.Chain{}, fmt.Errorf("catalogdb: package chain %s: %w", id, err)
	}
	return c, nil
}

// PackageChainFilter narrows ListPackageChains; zero fields do not filter.
type PackageChainFilter struct {
	// PackageID lists the chains with a step that uses this template.
	PackageID string
}

// ListPackageChains returns one page of the tenant's package chains and
// the cursor of the next page ("" on the last).
func ListPackageChains(ctx context.Context, st *store.Store, f PackageChainFilter, p store.Page) ([]catalog.Chain, string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, "", err
	}
	if f.PackageID != "" && !store.ValidID(f.PackageID) {
		return nil, "", nil // names nothing; PostgreSQL would refuse the comparison
	}
	q := store.TenantFilter("", tenant)
	if f.PackageID != "" {
		q.Add("id IN (SELECT chain_id FROM package_chain_steps WHERE tenant_id = $1 AND package_id = ?)", f.PackageID)
	}
	var (
		out  []catalog.Chain
		next string
	)
	err = st.InReadTx(ctx, func(rq store.ReadTx) error {
		var err error
		if out, next, err = store.ListPage(ctx, rq, scanChain, `SELECT `+chainColumns+` FROM package_chains`, q, "id", p,
			func(c catalog.Chain) string { return c.ID }); err != nil {
			return err
		}
		return loadChainSteps(ctx, rq, tenant, out)
	})
	if err != nil {
		return nil, "", fmt.Errorf("catalogdb: list package chains: %w", err)
	}
	return out, next, nil
}

// UpdatePackageChain replaces chain c.ID's name, description and steps
// and returns the stored result, or store.ErrNotFound.
func UpdatePackageChain(ctx context.Context, st *store.Store, c catalog.Chain, now time.Time) (catalog.Chain, error) {
	if !store.ValidID(c.ID) {
		return catalog.Chain{}, store.ErrNotFound
	}
	c.SortSteps()
	var out catalog.Chain
	err := st.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE package_chains SET name = $3, description = $4, updated_at = $5
			WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), c.ID, c.Name, c.Description, ts(now))
		if err != nil {
			return err
		}
		if err := store.OneRow(res); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM package_chain_steps WHERE tenant_id = $1 AND chain_id = $2`, tx.TenantID(), c.ID); err != nil {
			return err
		}
		if err := insertChainSteps(ctx, tx, c); err != nil {
			return err
		}
		out, err = loadChain(ctx, tx, tx.TenantID(), c.ID)
		return err
	})
	if err != nil {
		return catalog.Chain{}, fmt.Errorf("catalogdb: update package chain %s: %w", c.ID, store.RefError(err))
	}
	return out, nil
}

// DeletePackageChain removes chain id and its steps. A chain that
// template packages (archived or not) link to with packageChainId is not
// deleted: the error is a *store.InUseError naming them; unlink them
// first.
func DeletePackageChain(ctx context.Context, st *store.Store, id string) error {
	return st.DeleteUnused(ctx, "package_chains", "package chain", id, "template package",
		`SELECT id FROM template_packages WHERE tenant_id = $1 AND package_chain_id = $2 ORDER BY id`)
}
