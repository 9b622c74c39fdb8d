package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// SigningKey is a token-signing key pair. The private half is stored
// encrypted (a JWE under the deployment's master key); the public half is
// published in the JWKS.
type SigningKey struct {
	ID         string // the JWS "kid"
	Algorithm  string
	PrivateJWE string
	PublicJWK  string
	CreatedAt  time.Time
	// RetiredAt is set once a newer key signs; a retired key stays published
	// until every token it signed has expired.
	RetiredAt *time.Time
}

// SigningKeys returns all stored keys, newest first.
func (s *Store) SigningKeys(ctx context.Context) ([]SigningKey, error) {
	rows, err := s.r.QueryContext(ctx,
		`SELECT id, algorithm, private_jwe, public_jwk, created_at, retired_at FROM signing_keys ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: signing keys: %w", err)
	}
	defer rows.Close()
	var out []SigningKey
	for rows.Next() {
		var (
			k       SigningKey
			retired sql.NullTime
		)
		if err := rows.Scan(&k.ID, &k.Algorithm, &k.PrivateJWE, &k.PublicJWK, &k.CreatedAt, &retired); err != nil {
			return nil, fmt.Errorf("store: signing keys: %w", err)
		}
		k.CreatedAt = k.CreatedAt.UTC()
		k.RetiredAt = fromNullTime(retired)
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: signing keys: %w", err)
	}
	return out, nil
}

// AddSigningKey makes k the active key. With retireOthers the currently
// active key is retired in the same transaction (rotation). Without it, k is
// stored only if no key is active yet; a unique index on active keys makes
// processes that start at once agree on a single first key. It reports
// whether k was stored.
func (s *Store) AddSigningKey(ctx context.Context, k SigningKey, retireOthers bool) (bool, error) {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if retireOthers {
			if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET retired_at = $1 WHERE retired_at IS NULL AND algorithm = $2`,
				ts(k.CreatedAt), k.Algorithm); err != nil {
				return fmt.Errorf("store: retire signing keys: %w", err)
			}
		}
		_, err := tx.ExecContext(ctx,
			`INSERT INTO signing_keys (id, algorithm, private_jwe, public_jwk, created_at) VALUES ($1, $2, $3, $4, $5)`,
			k.ID, k.Algorithm, k.PrivateJWE, k.PublicJWK, ts(k.CreatedAt))
		return err
	})
	if isUniqueViolation(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: add signing key: %w", err)
	}
	return true, nil
}

// DeleteSigningKeysRetiredBefore removes keys retired before t; no token they
// signed can still be valid.
func (s *Store) DeleteSigningKeysRetiredBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < $1`, ts(t))
	if err != nil {
		return 0, fmt.Errorf("store: delete retired keys: %w", err)
	}
	return res.RowsAffected()
}
