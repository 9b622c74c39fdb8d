// Package idempotency keeps the answers to POSTs sent with an
// Idempotency-Key (the idempotency_keys table), so that a retry gets the
// first answer instead of a second effect. The API's middleware decides
// what to replay (internal/api/idempotency.go); this package owns the
// records and their SQL, on the store's query kit (internal/store/kit.go),
// with the tenant's condition first in every WHERE.
package idempotency

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Record remembers the response to a POST sent with an Idempotency-Key.
// StatusCode 0 means the first request is still being processed.
type Record struct {
	Key         string
	Method      string
	Path        string
	RequestHash string
	StatusCode  int
	Location    string
	ContentType string
	Body        []byte
	CreatedAt   time.Time
}

// Claim reserves rec.Key for a new request in the context's tenant. When
// the key is already taken (and younger than expiry) it returns the
// existing record and false; the caller replays it, or rejects a different
// request under the same key. An expired record is replaced.
func Claim(ctx context.Context, st *store.Store, rec Record, expiry time.Duration) (Record, bool, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Record{}, false, err
	}
	var (
		existing Record
		claimed  bool
	)
	err = st.InTx(ctx, func(tx *store.Tx) error {
		var status sql.NullInt64
		err := tx.QueryRow(ctx, `SELECT key, method, path, request_hash, status_code, location, content_type, body, created_at
			FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, tenant, rec.Key).
			Scan(&existing.Key, &existing.Method, &existing.Path, &existing.RequestHash, &status,
				&existing.Location, &existing.ContentType, &existing.Body, &existing.CreatedAt)
		switch {
		case err == nil && rec.CreatedAt.Sub(existing.CreatedAt) < expiry:
			existing.StatusCode = int(status.Int64)
			return nil
		case err == nil: // expired: forget the old answer
			if _, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, tenant, rec.Key); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO idempotency_keys (tenant_id, key, method, path, request_hash, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, tenant, rec.Key, rec.Method, rec.Path, rec.RequestHash, store.TimeParam(rec.CreatedAt))
		claimed = err == nil
		return err
	})
	if store.IsUniqueViolation(err) {
		// Another request claimed the key between our read and insert
		// (PostgreSQL); report it as in progress.
		return Record{Key: rec.Key, RequestHash: rec.RequestHash}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("idempotency: claim key: %w", err)
	}
	return existing, claimed, nil
}

// Complete stores the response of the request that claimed rec.Key.
func Complete(ctx context.Context, st *store.Store, rec Record) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	_, err = st.Writer().Exec(ctx, `UPDATE idempotency_keys SET status_code = $3, location = $4, content_type = $5, body = $6
		WHERE tenant_id = $1 AND key = $2`, tenant, rec.Key, rec.StatusCode, rec.Location, rec.ContentType, rec.Body)
	if err != nil {
		return fmt.Errorf("idempotency: complete key: %w", err)
	}
	return nil
}

// Release forgets a claim whose request failed with a server error, so the
// client may retry with the same key.
func Release(ctx context.Context, st *store.Store, key string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if _, err := st.Writer().Exec(ctx, `DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, tenant, key); err != nil {
		return fmt.Errorf("idempotency: release key: %w", err)
	}
	return nil
}

// Purge deletes the records created before t across tenants: the server's
// housekeeping, which serves no tenant (hence no tenant condition).
func Purge(ctx context.Context, st *store.Store, before time.Time) (int64, error) {
	res, err := st.Writer().Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, store.TimeParam(before))
	if err != nil {
		return 0, fmt.Errorf("idempotency: purge keys: %w", err)
	}
	return res.RowsAffected()
}
