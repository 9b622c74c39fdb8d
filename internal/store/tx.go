package store

import (
	"context"
	"database/sql"

	"github.com/kadens/kadens/internal/tenancy"
)

// Tx is a write transaction of one tenant. Domain packages (the engine,
// orders, billing) compose several store operations into one atomic change
// through it; the SQL stays here.
type Tx struct {
	tx     *sql.Tx
	tenant string
}

// TenantID is the tenant the transaction acts for.
func (tx *Tx) TenantID() string { return tx.tenant }

// InTx runs fn in a write transaction of the context's tenant, committing
// when fn returns nil and rolling back otherwise.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(t *sql.Tx) error { return fn(&Tx{tx: t, tenant: tenant}) })
}
