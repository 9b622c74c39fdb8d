package idp

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// APIClient is a machine or administrator client that obtains API tokens
// with the OAuth 2.0 client_credentials grant (the api_clients table). Only
// a hash of its secret is kept.
type APIClient struct {
	ID         string
	TenantID   string
	Name       string
	SecretHash string
	Scopes     []string
	CreatedAt  time.Time
	RevokedAt  *time.Time
}

// createAPIClient stores c. The caller generates the id and the secret
// hash; an id taken already is store.ErrConflict.
func createAPIClient(ctx context.Context, st *store.Store, c APIClient) error {
	_, err := st.Writer().Exec(ctx,
		`INSERT INTO api_clients (id, tenant_id, name, secret_hash, scopes, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.ID, c.TenantID, c.Name, c.SecretHash, strings.Join(c.Scopes, " "), store.TimeParam(c.CreatedAt))
	if store.IsUniqueViolation(err) {
		return fmt.Errorf("client %s: %w", c.ID, store.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("idp: create client: %w", err)
	}
	return nil
}

// apiClientByID returns the client, revoked or not, of any tenant (the
// token endpoint learns the tenant from the client, so the lookup has no
// tenant condition), or store.ErrNotFound.
func apiClientByID(ctx context.Context, st *store.Store, id string) (APIClient, error) {
	var (
		c       APIClient
		scopes  string
		revoked sql.NullTime
	)
	err := st.Reader().QueryRow(ctx,
		`SELECT id, tenant_id, name, secret_hash, scopes, created_at, revoked_at FROM api_clients WHERE id = $1`, id).
		Scan(&c.ID, &c.TenantID, &c.Name, &c.SecretHash, &scopes, &c.CreatedAt, &revoked)
	if err != nil {
		return APIClient{}, fmt.Errorf("idp: client %s: %w", id, store.NotFound(err))
	}
	c.Scopes = strings.Fields(scopes)
	if revoked.Valid {
		t := revoked.Time.UTC()
		c.RevokedAt = &t
	}
	return c, nil
}
