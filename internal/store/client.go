package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Client is a machine or administrator client that obtains API tokens with
// the OAuth 2.0 client_credentials grant. Only a hash of its secret is kept.
type Client struct {
	ID         string
	TenantID   string
	Name       string
	SecretHash string
	Scopes     []string
	CreatedAt  time.Time
	RevokedAt  *time.Time
}

// CreateClient stores c. The caller generates the id and the secret hash.
func (s *Store) CreateClient(ctx context.Context, c Client) error {
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO api_clients (id, tenant_id, name, secret_hash, scopes, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.ID, c.TenantID, c.Name, c.SecretHash, strings.Join(c.Scopes, " "), ts(c.CreatedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("client %s: %w", c.ID, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: create client: %w", err)
	}
	return nil
}

// ClientByID returns the client, revoked or not, or ErrNotFound.
func (s *Store) ClientByID(ctx context.Context, id string) (Client, error) {
	var (
		c       Client
		scopes  string
		revoked sql.NullTime
	)
	err := s.r.QueryRowContext(ctx,
		`SELECT id, tenant_id, name, secret_hash, scopes, created_at, revoked_at FROM api_clients WHERE id = $1`, id).
		Scan(&c.ID, &c.TenantID, &c.Name, &c.SecretHash, &scopes, &c.CreatedAt, &revoked)
	if err != nil {
		return Client{}, fmt.Errorf("store: client %s: %w", id, notFound(err))
	}
	c.Scopes = strings.Fields(scopes)
	c.RevokedAt = fromNullTime(revoked)
	return c, nil
}
