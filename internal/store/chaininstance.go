package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// instanceStepJSON is the stored form of a catalog.InstanceStep: the
// choices in their stored form (EncodeChoices), since catalog.Choices has
// no JSON shape of its own.
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
		c, err := EncodeChoices(s.Choices)
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
		c, err := DecodeChoices(string(st.Choices))
		if err != nil {
			return nil, err
		}
		out[i] = catalog.InstanceStep{Step: st.Step, TemplatePackageID: st.TemplatePackageID, Periods: st.Periods, Package: st.Package, Choices: c}
	}
	return out, nil
}

const chainInstanceColumns = `id, chain_id, name, steps, created_at`

func scanChainInstance(row scanner) (catalog.ChainInstance, error) {
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
func (tx *Tx) InsertChainInstance(ctx context.Context, inst catalog.ChainInstance) error {
	steps, err := encodeInstanceSteps(inst.Steps)
	if err != nil {
		return fmt.Errorf("store: insert chain instance: %w", err)
	}
	if _, err := tx.exec(ctx, `INSERT INTO chain_instances (tenant_id, `+chainInstanceColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		tx.tenant, inst.ID, inst.ChainID, inst.Name, steps, ts(inst.CreatedAt)); err != nil {
		return fmt.Errorf("store: insert chain instance: %w", err)
	}
	return nil
}

// ChainInstances returns the transaction tenant's chain instances among
// ids, by id; an id that names none (or names a chain definition, as the
// periods written before instances existed do) is not in the map. One
// query per chunk of ids: the engine asks for a batch's instances at once.
func (tx *Tx) ChainInstances(ctx context.Context, ids []string) (map[string]catalog.ChainInstance, error) {
	out := make(map[string]catalog.ChainInstance, len(ids))
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if ValidID(id) {
			valid = append(valid, id)
		}
	}
	err := tx.queryIn(ctx, `SELECT `+chainInstanceColumns+` FROM chain_instances WHERE tenant_id = $1 AND id IN `, ``, nil, valid,
		func(rows *sql.Rows) error {
			c, err := scanChainInstance(rows)
			if err != nil {
				return err
			}
			out[c.ID] = c
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: chain instances: %w", err)
	}
	return out, nil
}

// ChainInstance returns chain instance id of the context's tenant, or
// ErrNotFound (also for another tenant's instance).
func (s *Store) ChainInstance(ctx context.Context, id string) (catalog.ChainInstance, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return catalog.ChainInstance{}, err
	}
	if !ValidID(id) {
		return catalog.ChainInstance{}, ErrNotFound
	}
	var c catalog.ChainInstance
	err = s.readTx(ctx, func(q queryer) (err error) {
		c, err = scanChainInstance(q.QueryRowContext(ctx,
			`SELECT `+chainInstanceColumns+` FROM chain_instances WHERE tenant_id = $1 AND id = $2`, tenant, id))
		return notFound(err)
	})
	if err != nil {
		return catalog.ChainInstance{}, fmt.Errorf("store: chain instance %s: %w", id, err)
	}
	return c, nil
}
