package idp

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// StoredKey is a token-signing key pair as the signing_keys table keeps
// it. The private half is stored encrypted (a JWE under the deployment's
// master key); the public half is published in the JWKS. Keys belong to
// the deployment, not to a tenant, so its statements have no tenant
// condition.
type StoredKey struct {
	ID         string // the JWS "kid"
	Algorithm  string
	PrivateJWE string
	PublicJWK  string
	CreatedAt  time.Time
	// RetiredAt is set once a newer key signs; a retired key stays published
	// until every token it signed has expired.
	RetiredAt *time.Time
}

// storedKeys returns all stored keys, newest first.
func storedKeys(ctx context.Context, st *store.Store) ([]StoredKey, error) {
	out, err := store.QueryAll(ctx, st.Reader(), func(row store.Scanner) (StoredKey, error) {
		var (
			k       StoredKey
			retired sql.NullTime
		)
		if err := row.Scan(&k.ID, &k.Algorithm, &k.PrivateJWE, &k.PublicJWK, &k.CreatedAt, &retired); err != nil {
			return StoredKey{}, err
		}
		k.CreatedAt = k.CreatedAt.UTC()
		if retired.Valid {
			t := retired.Time.UTC()
			k.RetiredAt = &t
		}
		return k, nil
	}, `SELECT id, algorithm, private_jwe, public_jwk, created_at, retired_at FROM signing_keys ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("idp: signing keys: %w", err)
	}
	return out, nil
}

// addKey makes k the active key. With retireOthers the currently active
// key is retired in the same transaction (rotation). Without it, k is
// stored only if no key is active yet; a unique index on active keys makes
// processes that start at once agree on a single first key. It reports
// whether k was stored.
func addKey(ctx context.Context, st *store.Store, k StoredKey, retireOthers bool) (bool, error) {
	// The transaction is of no tenant: keys are the deployment's. Its
	// statements run seldom (a first start, a rotation), so unprepared
	// (ExecBuilt), as they did in the store: a prepared copy would be kept
	// on the write pool for the life of the process.
	err := st.InQueueTx(ctx, func(tx *store.Tx) error {
		if retireOthers {
			if _, err := tx.ExecBuilt(ctx, `UPDATE signing_keys SET retired_at = $1 WHERE retired_at IS NULL AND algorithm = $2`,
				store.TimeParam(k.CreatedAt), k.Algorithm); err != nil {
				return fmt.Errorf("idp: retire signing keys: %w", err)
			}
		}
		_, err := tx.ExecBuilt(ctx,
			`INSERT INTO signing_keys (id, algorithm, private_jwe, public_jwk, created_at) VALUES ($1, $2, $3, $4, $5)`,
			k.ID, k.Algorithm, k.PrivateJWE, k.PublicJWK, store.TimeParam(k.CreatedAt))
		return err
	})
	if store.IsUniqueViolation(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("idp: add signing key: %w", err)
	}
	return true, nil
}

// deleteKeysRetiredBefore removes keys retired before t; the caller picks
// t so that no token they signed can still be valid.
func deleteKeysRetiredBefore(ctx context.Context, st *store.Store, t time.Time) (int64, error) {
	res, err := st.Writer().Exec(ctx, `DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < $1`, store.TimeParam(t))
	if err != nil {
		return 0, fmt.Errorf("idp: delete retired signing keys: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("idp: delete retired signing keys: %w", err)
	}
	return n, nil
}
