// Package catalogdb holds the catalog's SQL: products, billing plans,
// template packages, package chains, the chain instances orders freeze
// and the price changes of templates (docs/CATALOG.md). The catalog is
// not one of the store's shared records: only the application layer, the
// engine and the tools that fill a tenant read and write it, so its SQL
// lives here, beside no rules of its own (those are in internal/catalog),
// on the store's query kit (internal/store/kit.go). The tables and their
// migrations stay in internal/store. Every statement puts the tenant's
// condition first in its WHERE, as the store's own do.
//
// The store does not import this package: what the store's own SQL needs
// of the catalog (the foreign keys, the subscription packages merged from
// templates) it reads from the tables directly.
package catalogdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// querier is what the catalog's reads run on: a write transaction
// (*store.Tx), a read snapshot (store.ReadTx) or a pool (store.Pool).
type querier interface {
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) *sql.Row
}

// tenantOf is the context's tenant, which every function here works in.
func tenantOf(ctx context.Context) (string, error) { return tenancy.From(ctx) }

// ts is the parameter of a timestamp column.
func ts(t time.Time) any { return store.TimeParam(t) }

// optTS is ts for a timestamp that may be NULL.
func optTS(t *time.Time) any {
	if t == nil {
		return nil
	}
	return store.TimeParam(*t)
}

func fromNullTime(nt sql.NullTime) *time.Time {
	if !nt.Valid {
		return nil
	}
	t := nt.Time.UTC()
	return &t
}

func nullString(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	s := n.String
	return &s
}

// referrers returns the ids a query for the users of a record yields.
func referrers(ctx context.Context, q store.Querier, query string, args ...any) ([]string, error) {
	return store.QueryAll(ctx, q, func(row store.Scanner) (string, error) {
		var id string
		err := row.Scan(&id)
		return id, err
	}, query, args...)
}

// deleteRow deletes row id of a tenant's table in tx, or answers
// ErrNotFound.
func deleteRow(ctx context.Context, tx *store.Tx, table, what, id string) error {
	res, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id)
	if err != nil {
		return fmt.Errorf("catalogdb: delete %s %s: %w", what, id, store.RefError(err))
	}
	if err := store.OneRow(res); err != nil {
		return fmt.Errorf("catalogdb: %s %s: %w", what, id, err)
	}
	return nil
}
