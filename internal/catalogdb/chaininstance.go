package catalogdb

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
)

// Chain instances are the chains orders froze (catalog.Instantiate): the
// steps with their merged packages, which renewals walk whatever happens
// to the chain definition later.

// instanceStepJSON is the stored form of a catalog.InstanceStep: the
// choices in their stored form (store.EncodeChoices), since
// catalog.Choices has no JSON shape of its own.
type instanceStepJSON struct {
	Step              int                         `json:"step"`
	TemplatePackageID string                      `json:"templatePackageId"`
	Periods           int                         `json:"periods"`
	Package           catalog.SubscriptionPackage `json:"package"`
	Choices           json.RawMessage             `json:"choices"`
}

func encodeInstanceSteps(steps []catalog.InstanceStep) (string, error) {
	out := make([]instanceStepJSON, len(steps))
	for i, s := range steps {
		c, err := store.EncodeChoices(s.Choices)
		if err != nil {
			return "", err
		}
		out[i] = instanceStepJSON{Step: s.Step, TemplatePackageID: s.TemplatePackageID, Periods: s.Periods, Package: s.Package, Choices: json.RawMessage(c)}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func decodeInstanceSteps(s string) ([]catalog.InstanceStep, error) {
	var in []instanceStepJSON
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, err
	}
	out := make([]catalog.InstanceStep, len(in))
	for i, st := range in {
		c, err := store.DecodeChoices(string(st.Choices))
		if err != nil {
			return nil, err
		}
		out[i] = catalog.InstanceStep{Step: st.Step, TemplatePackageID: st.TemplatePackageID, Periods: st.Periods, Package: st.Package, Choices: c}
	}
	return out, nil
}

const chainInstanceColumns = `id, chain_id, name, steps, created_at`

func scanChainInstance(row store.Scanner) (catalog.ChainInstance, error) {
	var (
		c     catalog.ChainInstance
		steps string
	)
	if err := row.Scan(&c.ID, &c.ChainID, &c.Name, &steps, &c.CreatedAt); err != nil {
		return catalog.ChainInstance{}, err
	}
	c.CreatedAt = c.CreatedAt.UTC()
	var err error
	if c.Steps, err = decodeInstanceSteps(steps); err != nil {
		return catalog.ChainInstance{}, fmt.Errorf("chain instance %s steps: %w", c.ID, err)
	}
	return c, nil
}

// InsertChainInstance stores inst (made by catalog.Instantiate) in the
// transaction's tenant.
func InsertChainInstance(ctx context.Context, tx *store.Tx, inst catalog.ChainInstance) error {
	steps, err := encodeInstanceSteps(inst.Steps)
	if err != nil {
		return fmt.Errorf("catalogdb: insert chain instance: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO chain_instances (tenant_id, `+chainInstanceColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		tx.TenantID(), inst.ID, inst.ChainID, inst.Name, steps, ts(inst.CreatedAt)); err != nil {
		return fmt.Errorf("catalogdb: insert chain instance: %w", err)
	}
	return nil
}

// ChainInstances returns the transaction tenant's chain instances among
// ids, by id; an id that names none (or names a chain definition, as the
// periods written before instances existed do) is not in the map. One
// query per chunk of ids: the engine asks for a batch's instances at once.
func ChainInstances(ctx context.Context, tx *store.Tx, ids []string) (map[string]catalog.ChainInstance, error) {
	out := make(map[string]catalog.ChainInstance, len(ids))
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if store.ValidID(id) {
			valid = append(valid, id)
		}
	}
	for len(valid) > 0 {
		n := min(len(valid), store.MaxChunk)
		// InList pads the list to a power of two, so a few statement
		// texts serve every batch and stay prepared.
		list, args := store.InList(valid[:n], 2)
		got, err := store.QueryAll(ctx, tx, scanChainInstance, `SELECT `+chainInstanceColumns+` FROM chain_instances
			WHERE tenant_id = $1 AND id IN `+list, append([]any{tx.TenantID()}, args...)...)
		if err != nil {
			return nil, fmt.Errorf("catalogdb: chain instances: %w", err)
		}
		for _, c := range got {
			out[c.ID] = c
		}
		valid = valid[n:]
	}
	return out, nil
}

// ChainInstance returns chain instance id of the context's tenant, or
// store.ErrNotFound (also for another tenant's instance).
func ChainInstance(ctx context.Context, st *store.Store, id string) (catalog.ChainInstance, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return catalog.ChainInstance{}, err
	}
	if !store.ValidID(id) {
		return catalog.ChainInstance{}, store.ErrNotFound
	}
	var c catalog.ChainInstance
	err = st.InReadTx(ctx, func(q store.ReadTx) (err error) {
		c, err = scanChainInstance(q.QueryRow(ctx,
			`SELECT `+chainInstanceColumns+` FROM chain_instances WHERE tenant_id = $1 AND id = $2`, tenant, id))
		return store.NotFound(err)
	})
	if err != nil {
		return catalog.ChainInstance{}, fmt.Errorf("catalogdb: chain instance %s: %w", id, err)
	}
	return c, nil
}
