package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// LoginClient is a relying party that sends a tenant's subscribers to the
// identity provider's login page (docs/LOGIN.md). Only a bcrypt hash of its
// secret is kept.
type LoginClient struct {
	ID                     string    `json:"id"`
	TenantID               string    `json:"tenantId"`
	Name                   string    `json:"name"`
	SecretHash             string    `json:"-"`
	RedirectURIs           []string  `json:"redirectUris"`
	PostLogoutRedirectURIs []string  `json:"postLogoutRedirectUris"`
	Scopes                 []string  `json:"scopes"`
	CreatedAt              time.Time `json:"createdAt"`
}

const loginClientColumns = `id, tenant_id, name, secret_hash, redirect_uris, post_logout_uris, scopes, created_at`

func scanLoginClient(row scanner) (LoginClient, error) {
	var (
		c                         LoginClient
		redirects, logouts, scope string
	)
	if err := row.Scan(&c.ID, &c.TenantID, &c.Name, &c.SecretHash, &redirects, &logouts, &scope, &c.CreatedAt); err != nil {
		return LoginClient{}, err
	}
	c.RedirectURIs, c.PostLogoutRedirectURIs, c.Scopes = strings.Fields(redirects), strings.Fields(logouts), strings.Fields(scope)
	c.CreatedAt = c.CreatedAt.UTC()
	return c, nil
}

// CreateLoginClient stores c; the caller makes the id and the secret hash.
func (s *Store) CreateLoginClient(ctx context.Context, c LoginClient) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO login_clients (`+loginClientColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.TenantID, c.Name, c.SecretHash, strings.Join(c.RedirectURIs, " "), strings.Join(c.PostLogoutRedirectURIs, " "),
		strings.Join(c.Scopes, " "), ts(c.CreatedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("login client %s: %w", c.ID, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: create login client: %w", err)
	}
	return nil
}

// LoginClientByID returns the client of any tenant (the identity provider
// learns the tenant from the client), or ErrNotFound.
func (s *Store) LoginClientByID(ctx context.Context, id string) (LoginClient, error) {
	c, err := scanLoginClient(s.readRow(ctx, `SELECT `+loginClientColumns+` FROM login_clients WHERE id = $1`, id))
	if err != nil {
		return LoginClient{}, fmt.Errorf("store: login client %s: %w", id, notFound(err))
	}
	return c, nil
}

// LoginClients lists tenantID's login clients, oldest first.
func (s *Store) LoginClients(ctx context.Context, tenantID string) ([]LoginClient, error) {
	out, err := queryAll(ctx, s.r, scanLoginClient,
		`SELECT `+loginClientColumns+` FROM login_clients WHERE tenant_id = $1 ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("store: list login clients: %w", err)
	}
	return out, nil
}

// DeleteLoginClient removes tenantID's client id together with its pending
// logins, codes and refresh tokens (ON DELETE CASCADE), or ErrNotFound.
func (s *Store) DeleteLoginClient(ctx context.Context, tenantID, id string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM login_clients WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("store: delete login client %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: login client %s: %w", id, ErrNotFound)
	}
	return nil
}

// LoginRequest is one authorization request at the identity provider, from
// /authorize to the exchange of its code (docs/LOGIN.md has its states).
type LoginRequest struct {
	ID              string
	TenantID        string
	ClientID        string
	RedirectURI     string
	State           string
	Nonce           string
	Scopes          []string
	ResponseMode    string
	CodeChallenge   string
	ChallengeMethod string
	OrgName         string
	Language        string
	CSRF            string
	// UserID is set once the user logged in, with AuthTime.
	UserID    string
	AuthTime  *time.Time
	CreatedAt time.Time
	ExpiresAt time.Time
}

const loginRequestColumns = `id, tenant_id, client_id, redirect_uri, state, nonce, scopes, response_mode, code_challenge,
	challenge_method, org_name, language, csrf, user_id, auth_time, created_at, expires_at`

func scanLoginRequest(row scanner) (LoginRequest, error) {
	var (
		r      LoginRequest
		scopes string
		user   sql.NullString
		auth   sql.NullTime
	)
	if err := row.Scan(&r.ID, &r.TenantID, &r.ClientID, &r.RedirectURI, &r.State, &r.Nonce, &scopes, &r.ResponseMode,
		&r.CodeChallenge, &r.ChallengeMethod, &r.OrgName, &r.Language, &r.CSRF, &user, &auth, &r.CreatedAt, &r.ExpiresAt); err != nil {
		return LoginRequest{}, err
	}
	r.Scopes, r.UserID, r.AuthTime = strings.Fields(scopes), user.String, fromNullTime(auth)
	r.CreatedAt, r.ExpiresAt = r.CreatedAt.UTC(), r.ExpiresAt.UTC()
	return r, nil
}

// CreateLoginRequest stores r.
func (s *Store) CreateLoginRequest(ctx context.Context, r LoginRequest) error {
	return s.createLoginRequest(ctx, r, nil)
}

// CreateLoginRequestWithCode stores r, which a login session completed
// (UserID and AuthTime set), with the hash of its code, expiring at
// expires: SetLoginCode's effect in the same write.
func (s *Store) CreateLoginRequestWithCode(ctx context.Context, r LoginRequest, codeHash string, expires time.Time) error {
	if r.UserID == "" || r.AuthTime == nil {
		return errors.New("store: a login request with a code needs its user")
	}
	r.ExpiresAt = expires
	return s.createLoginRequest(ctx, r, codeHash)
}

func (s *Store) createLoginRequest(ctx context.Context, r LoginRequest, codeHash any) error {
	var auth any
	if r.AuthTime != nil {
		auth = ts(*r.AuthTime)
	}
	_, err := s.writeExec(ctx, `INSERT INTO login_requests (id, tenant_id, client_id, redirect_uri, state, nonce, scopes,
		response_mode, code_challenge, challenge_method, org_name, language, csrf, user_id, auth_time, code_hash, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		r.ID, r.TenantID, r.ClientID, r.RedirectURI, r.State, r.Nonce, strings.Join(r.Scopes, " "), r.ResponseMode,
		r.CodeChallenge, r.ChallengeMethod, r.OrgName, r.Language, r.CSRF, nullID(r.UserID), auth, codeHash, ts(r.CreatedAt), ts(r.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: create login request: %w", err)
	}
	return nil
}

// LiveLoginRequest returns request id if it has not expired at now, or
// ErrNotFound.
func (s *Store) LiveLoginRequest(ctx context.Context, id string, now time.Time) (LoginRequest, error) {
	r, err := scanLoginRequest(s.readRow(ctx, `SELECT `+loginRequestColumns+` FROM login_requests WHERE id = $1 AND expires_at > $2`, id, ts(now)))
	if err != nil {
		return LoginRequest{}, fmt.Errorf("store: login request: %w", notFound(err))
	}
	return r, nil
}

// CompleteLoginRequest records that userID logged in on request id at now;
// ErrNotFound if the request expired, is gone or already has a user.
func (s *Store) CompleteLoginRequest(ctx context.Context, id, userID string, now time.Time) error {
	res, err := s.writeExec(ctx, `UPDATE login_requests SET user_id = $1, auth_time = $2
		WHERE id = $3 AND user_id IS NULL AND expires_at > $2`, userID, ts(now), id)
	if err != nil {
		return fmt.Errorf("store: complete login request: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: login request: %w", ErrNotFound)
	}
	return nil
}

// SetLoginCode attaches the hash of a code to logged-in request id and
// makes it expire at expires (codes are short-lived).
func (s *Store) SetLoginCode(ctx context.Context, id, codeHash string, expires time.Time) error {
	res, err := s.writeExec(ctx, `UPDATE login_requests SET code_hash = $1, expires_at = $2
		WHERE id = $3 AND user_id IS NOT NULL AND code_hash IS NULL`, codeHash, ts(expires), id)
	if err != nil {
		return fmt.Errorf("store: save login code: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: login request: %w", ErrNotFound)
	}
	return nil
}

// ErrCodeUsed: the code was exchanged before (or a failed exchange spent
// it); codes are single-use.
var ErrCodeUsed = errors.New("store: code already used")

// UseLoginCode spends the code whose hash is codeHash and returns its
// request: the first caller wins; later ones get ErrCodeUsed, an expired or
// unknown code ErrNotFound.
func (s *Store) UseLoginCode(ctx context.Context, codeHash string, now time.Time) (LoginRequest, error) {
	r, err := scanLoginRequest(s.writeRow(ctx, `UPDATE login_requests SET code_used = TRUE
		WHERE code_hash = $1 AND NOT code_used AND expires_at > $2 RETURNING `+loginRequestColumns, codeHash, ts(now)))
	if errors.Is(err, sql.ErrNoRows) {
		var used bool
		if e := s.writeRow(ctx, `SELECT code_used FROM login_requests WHERE code_hash = $1`, codeHash).Scan(&used); e == nil && used {
			return LoginRequest{}, ErrCodeUsed
		}
		return LoginRequest{}, fmt.Errorf("store: login code: %w", ErrNotFound)
	}
	if err != nil {
		return LoginRequest{}, fmt.Errorf("store: use login code: %w", err)
	}
	return r, nil
}

// DeleteExpiredLoginRequests forgets the login requests that have expired
// at now, whatever their state (pending at the form, logged in, with a
// code, spent): none can be used any more, and the table holds live
// logins only.
func (s *Store) DeleteExpiredLoginRequests(ctx context.Context, now time.Time) error {
	if _, err := s.writeExec(ctx, `DELETE FROM login_requests WHERE expires_at <= $1`, ts(now)); err != nil {
		return fmt.Errorf("store: delete expired login requests: %w", err)
	}
	return nil
}

// DeleteExpiredPasswordResets forgets the password reset links that have
// expired at now, used or not.
func (s *Store) DeleteExpiredPasswordResets(ctx context.Context, now time.Time) error {
	if _, err := s.writeExec(ctx, `DELETE FROM password_resets WHERE expires_at <= $1`, ts(now)); err != nil {
		return fmt.Errorf("store: delete expired password resets: %w", err)
	}
	return nil
}

// TenantIDByName returns the id of the tenant named name (a login's
// connection), or ErrNotFound.
func (s *Store) TenantIDByName(ctx context.Context, name string) (string, error) {
	var id string
	if err := s.readRow(ctx, `SELECT id FROM tenants WHERE name = $1`, name).Scan(&id); err != nil {
		return "", fmt.Errorf("store: tenant %q: %w", name, notFound(err))
	}
	return id, nil
}

// RefreshToken is the stored half of a refresh token: its SHA-256 and what
// it grants.
type RefreshToken struct {
	Hash      string
	TenantID  string
	ClientID  string
	UserID    string
	Scopes    []string
	AuthTime  time.Time
	CreatedAt time.Time
	ExpiresAt time.Time
}

const refreshColumns = `token_hash, tenant_id, client_id, user_id, scopes, auth_time, created_at, expires_at`

func scanRefresh(row scanner) (RefreshToken, error) {
	var (
		t      RefreshToken
		scopes string
	)
	if err := row.Scan(&t.Hash, &t.TenantID, &t.ClientID, &t.UserID, &scopes, &t.AuthTime, &t.CreatedAt, &t.ExpiresAt); err != nil {
		return RefreshToken{}, err
	}
	t.Scopes = strings.Fields(scopes)
	t.AuthTime, t.CreatedAt, t.ExpiresAt = t.AuthTime.UTC(), t.CreatedAt.UTC(), t.ExpiresAt.UTC()
	return t, nil
}

// CreateRefreshToken stores t and, when previous is not "", marks that
// token used in the same transaction (rotation): if previous was used
// meanwhile, nothing is stored and the answer is ErrCodeUsed.
func (s *Store) CreateRefreshToken(ctx context.Context, t RefreshToken, previous string) error {
	const insert = `INSERT INTO refresh_tokens (` + refreshColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	if previous == "" {
		// A code's first token: one statement, no transaction.
		_, err := s.writeExec(ctx, insert, t.Hash, t.TenantID, t.ClientID, t.UserID, strings.Join(t.Scopes, " "),
			ts(t.AuthTime), ts(t.CreatedAt), ts(t.ExpiresAt))
		if err != nil {
			return fmt.Errorf("store: create refresh token: %w", err)
		}
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE refresh_tokens SET used = TRUE WHERE token_hash = $1 AND NOT used`, previous)
		if err != nil {
			return fmt.Errorf("store: rotate refresh token: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrCodeUsed
		}
		_, err = tx.ExecContext(ctx, insert,
			t.Hash, t.TenantID, t.ClientID, t.UserID, strings.Join(t.Scopes, " "), ts(t.AuthTime), ts(t.CreatedAt), ts(t.ExpiresAt))
		if err != nil {
			return fmt.Errorf("store: create refresh token: %w", err)
		}
		return nil
	})
}

// LiveRefreshToken returns the unused, unexpired token with hash h, or
// ErrNotFound.
func (s *Store) LiveRefreshToken(ctx context.Context, h string, now time.Time) (RefreshToken, error) {
	t, err := scanRefresh(s.writeRow(ctx, `SELECT `+refreshColumns+` FROM refresh_tokens
		WHERE token_hash = $1 AND NOT used AND expires_at > $2`, h, ts(now)))
	if err != nil {
		return RefreshToken{}, fmt.Errorf("store: refresh token: %w", notFound(err))
	}
	return t, nil
}

// RevokeRefreshToken makes the token with hash h unusable.
func (s *Store) RevokeRefreshToken(ctx context.Context, h string) error {
	if _, err := s.writeExec(ctx, `UPDATE refresh_tokens SET used = TRUE WHERE token_hash = $1`, h); err != nil {
		return fmt.Errorf("store: revoke refresh token: %w", err)
	}
	return nil
}

// EndLoginSessions revokes every refresh token userID holds at clientID
// (logout).
func (s *Store) EndLoginSessions(ctx context.Context, userID, clientID string) error {
	if _, err := s.writeExec(ctx, `UPDATE refresh_tokens SET used = TRUE WHERE user_id = $1 AND client_id = $2`, userID, clientID); err != nil {
		return fmt.Errorf("store: end login sessions: %w", err)
	}
	return nil
}

// LoginSession is a browser's login at the identity provider: the SHA-256
// of its cookie's token, whose user logged in at AuthTime.
type LoginSession struct {
	Hash      string
	TenantID  string
	UserID    string
	AuthTime  time.Time
	ExpiresAt time.Time
}

// CreateLoginSession stores sess, and forgets the sessions that expired
// before its AuthTime (so the table holds live sessions only).
func (s *Store) CreateLoginSession(ctx context.Context, sess LoginSession) error {
	if _, err := s.writeExec(ctx, `DELETE FROM login_sessions WHERE expires_at < $1`, ts(sess.AuthTime)); err != nil {
		return fmt.Errorf("store: forget expired login sessions: %w", err)
	}
	_, err := s.writeExec(ctx, `INSERT INTO login_sessions (token_hash, tenant_id, user_id, auth_time, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, sess.Hash, sess.TenantID, sess.UserID, ts(sess.AuthTime), ts(sess.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: create login session: %w", err)
	}
	return nil
}

// LiveLoginSession returns the session with hash h if it has not expired
// at now, or ErrNotFound.
func (s *Store) LiveLoginSession(ctx context.Context, h string, now time.Time) (LoginSession, error) {
	var sess LoginSession
	err := s.readRow(ctx, `SELECT token_hash, tenant_id, user_id, auth_time, expires_at FROM login_sessions
		WHERE token_hash = $1 AND expires_at > $2`, h, ts(now)).Scan(&sess.Hash, &sess.TenantID, &sess.UserID, &sess.AuthTime, &sess.ExpiresAt)
	if err != nil {
		return LoginSession{}, fmt.Errorf("store: login session: %w", notFound(err))
	}
	sess.AuthTime, sess.ExpiresAt = sess.AuthTime.UTC(), sess.ExpiresAt.UTC()
	return sess, nil
}

// EndLoginSession ends the session with hash h (logout); an unknown one
// is no error.
func (s *Store) EndLoginSession(ctx context.Context, h string) error {
	if _, err := s.writeExec(ctx, `DELETE FROM login_sessions WHERE token_hash = $1`, h); err != nil {
		return fmt.Errorf("store: end login session: %w", err)
	}
	return nil
}

// EndUserLoginSessions ends every login session of userID (its password
// changed: a browser that knew the old one must log in again).
func (s *Store) EndUserLoginSessions(ctx context.Context, userID string) error {
	if !ValidID(userID) {
		return nil
	}
	if _, err := s.writeExec(ctx, `DELETE FROM login_sessions WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("store: end login sessions of %s: %w", userID, err)
	}
	return nil
}

// CreatePasswordReset stores a reset link's token hash for userID.
func (s *Store) CreatePasswordReset(ctx context.Context, tokenHash, tenantID, userID string, now, expires time.Time) error {
	_, err := s.writeExec(ctx, `INSERT INTO password_resets (token_hash, tenant_id, user_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, tokenHash, tenantID, userID, ts(now), ts(expires))
	if err != nil {
		return fmt.Errorf("store: create password reset: %w", err)
	}
	return nil
}

// UsePasswordReset spends the reset token with hash h and returns its
// tenant and user; ErrNotFound when it is unknown, used or expired.
func (s *Store) UsePasswordReset(ctx context.Context, h string, now time.Time) (tenantID, userID string, err error) {
	err = s.writeRow(ctx, `UPDATE password_resets SET used = TRUE WHERE token_hash = $1 AND NOT used AND expires_at > $2
		RETURNING tenant_id, user_id`, h, ts(now)).Scan(&tenantID, &userID)
	if err != nil {
		return "", "", fmt.Errorf("store: password reset: %w", notFound(err))
	}
	return tenantID, userID, nil
}

// LivePasswordReset reports whether reset token hash h can still be used.
func (s *Store) LivePasswordReset(ctx context.Context, h string, now time.Time) bool {
	var one int
	return s.r.QueryRowContext(ctx, `SELECT 1 FROM password_resets WHERE token_hash = $1 AND NOT used AND expires_at > $2`, h, ts(now)).Scan(&one) == nil
}

// SubscriberUserTenant returns the tenant of subscriber user id (ids are
// unique across tenants), for the identity provider, which meets a user id
// in a token before it knows the tenant; ErrNotFound if there is no user.
func (s *Store) SubscriberUserTenant(ctx context.Context, id string) (string, error) {
	if !ValidID(id) {
		return "", ErrNotFound
	}
	var tenant string
	if err := s.readRow(ctx, `SELECT tenant_id FROM subscriber_users WHERE id = $1`, id).Scan(&tenant); err != nil {
		return "", fmt.Errorf("store: subscriber user %s: %w", id, notFound(err))
	}
	return tenant, nil
}

// OrganizationLogo returns the logo address of tenantID's organization
// named name (ignoring case), "" when there is none: the login page's
// logo. A prepared read of the first 100 organizations, as the page
// always looked.
func (s *Store) OrganizationLogo(ctx context.Context, tenantID, name string) (string, error) {
	st, err := s.readStmt(ctx, `SELECT name, logo_url FROM organizations WHERE tenant_id = $1 ORDER BY id LIMIT 100`)
	if err != nil {
		return "", fmt.Errorf("store: organization logo: %w", err)
	}
	rows, err := st.QueryContext(ctx, tenantID)
	if err != nil {
		return "", fmt.Errorf("store: organization logo: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n, logo string
		if err := rows.Scan(&n, &logo); err != nil {
			return "", fmt.Errorf("store: organization logo: %w", err)
		}
		if strings.EqualFold(n, name) {
			return logo, nil
		}
	}
	return "", rows.Err()
}
