package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/tenancy"
)

// IdempotencyRecord remembers the response to a POST sent with an
// Idempotency-Key, so that a retry gets the same answer instead of a second
// effect. StatusCode 0 means the first request is still being processed.
type IdempotencyRecord struct {
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

// ClaimIdempotencyKey reserves key for a new request. When the key is already
// taken (and younger than expiry) it returns the existing record and false;
// the caller replays it, or rejects a different request under the same key.
// An expired record is replaced.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, rec IdempotencyRecord, expiry time.Duration) (IdempotencyRecord, bool, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return IdempotencyRecord{}, false, err
	}
	var (
		existing IdempotencyRecord
		claimed  bool
	)
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var status sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT key, method, path, request_hash, status_code, location, content_type, body, created_at
			FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, tenant, rec.Key).
			Scan(&existing.Key, &existing.Method, &existing.Path, &existing.RequestHash, &status,
				&existing.Location, &existing.ContentType, &existing.Body, &existing.CreatedAt)
		switch {
		case err == nil && rec.CreatedAt.Sub(existing.CreatedAt) < expiry:
			existing.StatusCode = int(status.Int64)
			return nil
		case err == nil: // expired: forget the old answer
			if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, tenant, rec.Key); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO idempotency_keys (tenant_id, key, method, path, request_hash, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, tenant, rec.Key, rec.Method, rec.Path, rec.RequestHash, ts(rec.CreatedAt))
		claimed = err == nil
		return err
	})
	if isUniqueViolation(err) {
		// Another request claimed the key between our read and insert
		// (PostgreSQL); report it as in progress.
		return IdempotencyRecord{Key: rec.Key, RequestHash: rec.RequestHash}, false, nil
	}
	if err != nil {
		return IdempotencyRecord{}, false, fmt.Errorf("store: claim idempotency key: %w", err)
	}
	return existing, claimed, nil
}

// CompleteIdempotencyKey stores the response of the request that claimed key.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, rec IdempotencyRecord) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `UPDATE idempotency_keys SET status_code = $3, location = $4, content_type = $5, body = $6
		WHERE tenant_id = $1 AND key = $2`, tenant, rec.Key, rec.StatusCode, rec.Location, rec.ContentType, rec.Body)
	if err != nil {
		return fmt.Errorf("store: complete idempotency key: %w", err)
	}
	return nil
}

// ReleaseIdempotencyKey forgets a claim whose request failed with a server
// error, so the client may retry with the same key.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, key string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, tenant, key); err != nil {
		return fmt.Errorf("store: release idempotency key: %w", err)
	}
	return nil
}

// PurgeIdempotencyKeys deletes records created before t, across tenants.
func (s *Store) PurgeIdempotencyKeys(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, ts(before))
	if err != nil {
		return 0, fmt.Errorf("store: purge idempotency keys: %w", err)
	}
	return res.RowsAffected()
}
