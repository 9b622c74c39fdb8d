package idp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
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

func scanLoginClient(row store.Scanner) (LoginClient, error) {
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
func CreateLoginClient(ctx context.Context, st *store.Store, c LoginClient) error {
	_, err := st.Writer().Exec(ctx, `INSERT INTO login_clients (`+loginClientColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.TenantID, c.Name, c.SecretHash, strings.Join(c.RedirectURIs, " "), strings.Join(c.PostLogoutRedirectURIs, " "),
		strings.Join(c.Scopes, " "), store.TimeParam(c.CreatedAt))
	if store.IsUniqueViolation(err) {
		return fmt.Errorf("login client %s: %w", c.ID, store.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("idp: create login client: %w", err)
	}
	return nil
}

// LoginClientByID returns the client of any tenant (the identity provider
// learns the tenant from the client), or store.ErrNotFound.
func LoginClientByID(ctx context.Context, st *store.Store, id string) (LoginClient, error) {
	c, err := scanLoginClient(st.Reader().QueryRow(ctx, `SELECT `+loginClientColumns+` FROM login_clients WHERE id = $1`, id))
	if err != nil {
		return LoginClient{}, fmt.Errorf("idp: login client %s: %w", id, store.NotFound(err))
	}
	return c, nil
}

// LoginClients lists tenantID's login clients, oldest first.
func LoginClients(ctx context.Context, st *store.Store, tenantID string) ([]LoginClient, error) {
	out, err := store.QueryAll(ctx, st.Reader(), scanLoginClient,
		`SELECT `+loginClientColumns+` FROM login_clients WHERE tenant_id = $1 ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("idp: list login clients: %w", err)
	}
	return out, nil
}

// DeleteLoginClient removes tenantID's client id together with its pending
// logins, codes and refresh tokens (ON DELETE CASCADE), or store.ErrNotFound.
func DeleteLoginClient(ctx context.Context, st *store.Store, tenantID, id string) error {
	res, err := st.Writer().Exec(ctx, `DELETE FROM login_clients WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("idp: delete login client %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("idp: login client %s: %w", id, store.ErrNotFound)
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

func scanLoginRequest(row store.Scanner) (LoginRequest, error) {
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
	r.Scopes, r.UserID, r.AuthTime = strings.Fields(scopes), user.String, nil
	if auth.Valid {
		t := auth.Time.UTC()
		r.AuthTime = &t
	}
	r.CreatedAt, r.ExpiresAt = r.CreatedAt.UTC(), r.ExpiresAt.UTC()
	return r, nil
}

// CreateLoginRequest stores r.
func CreateLoginRequest(ctx context.Context, st *store.Store, r LoginRequest) error {
	return createLoginRequest(ctx, st, r, nil)
}

// CreateLoginRequestWithCode stores r, which a login session completed
// (UserID and AuthTime set), with the hash of its code, expiring at
// expires: SetLoginCode's effect in the same write.
func CreateLoginRequestWithCode(ctx context.Context, st *store.Store, r LoginRequest, codeHash string, expires time.Time) error {
	if r.UserID == "" || r.AuthTime == nil {
		return errors.New("idp: a login request with a code needs its user")
	}
	r.ExpiresAt = expires
	return createLoginRequest(ctx, st, r, codeHash)
}

func createLoginRequest(ctx context.Context, st *store.Store, r LoginRequest, codeHash any) error {
	var auth any
	if r.AuthTime != nil {
		auth = store.TimeParam(*r.AuthTime)
	}
	_, err := st.Writer().ExecPrepared(ctx, `INSERT INTO login_requests (id, tenant_id, client_id, redirect_uri, state, nonce, scopes,
		response_mode, code_challenge, challenge_method, org_name, language, csrf, user_id, auth_time, code_hash, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		r.ID, r.TenantID, r.ClientID, r.RedirectURI, r.State, r.Nonce, strings.Join(r.Scopes, " "), r.ResponseMode,
		r.CodeChallenge, r.ChallengeMethod, r.OrgName, r.Language, r.CSRF, userParam(r.UserID), auth, codeHash, store.TimeParam(r.CreatedAt), store.TimeParam(r.ExpiresAt))
	if err != nil {
		return fmt.Errorf("idp: create login request: %w", err)
	}
	return nil
}

// LiveLoginRequest returns request id if it has not expired at now, or
// store.ErrNotFound.
func LiveLoginRequest(ctx context.Context, st *store.Store, id string, now time.Time) (LoginRequest, error) {
	r, err := scanLoginRequest(st.Reader().QueryRow(ctx, `SELECT `+loginRequestColumns+` FROM login_requests WHERE id = $1 AND expires_at > $2`, id, store.TimeParam(now)))
	if err != nil {
		return LoginRequest{}, fmt.Errorf("idp: login request: %w", store.NotFound(err))
	}
	return r, nil
}

// CompleteLoginRequest records that userID logged in on request id at now;
// store.ErrNotFound if the request expired, is gone or already has a user.
func CompleteLoginRequest(ctx context.Context, st *store.Store, id, userID string, now time.Time) error {
	res, err := st.Writer().ExecPrepared(ctx, `UPDATE login_requests SET user_id = $1, auth_time = $2
		WHERE id = $3 AND user_id IS NULL AND expires_at > $2`, userID, store.TimeParam(now), id)
	if err != nil {
		return fmt.Errorf("idp: complete login request: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("idp: login request: %w", store.ErrNotFound)
	}
	return nil
}

// SetLoginCode attaches the hash of a code to logged-in request id and
// makes it expire at expires (codes are short-lived).
func SetLoginCode(ctx context.Context, st *store.Store, id, codeHash string, expires time.Time) error {
	res, err := st.Writer().ExecPrepared(ctx, `UPDATE login_requests SET code_hash = $1, expires_at = $2
		WHERE id = $3 AND user_id IS NOT NULL AND code_hash IS NULL`, codeHash, store.TimeParam(expires), id)
	if err != nil {
		return fmt.Errorf("idp: save login code: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("idp: login request: %w", store.ErrNotFound)
	}
	return nil
}

// ErrCodeUsed: the code was exchanged before (or a failed exchange spent
// it); codes are single-use.
var ErrCodeUsed = errors.New("idp: code already used")

// UseLoginCode spends the code whose hash is codeHash and returns its
// request: the first caller wins; later ones get ErrCodeUsed, an expired or
// unknown code store.ErrNotFound.
func UseLoginCode(ctx context.Context, st *store.Store, codeHash string, now time.Time) (LoginRequest, error) {
	r, err := scanLoginRequest(st.Writer().QueryRowPrepared(ctx, `UPDATE login_requests SET code_used = TRUE
		WHERE code_hash = $1 AND NOT code_used AND expires_at > $2 RETURNING `+loginRequestColumns, codeHash, store.TimeParam(now)))
	if errors.Is(err, sql.ErrNoRows) {
		var used bool
		if e := st.Writer().QueryRowPrepared(ctx, `SELECT code_used FROM login_requests WHERE code_hash = $1`, codeHash).Scan(&used); e == nil && used {
			return LoginRequest{}, ErrCodeUsed
		}
		return LoginRequest{}, fmt.Errorf("idp: login code: %w", store.ErrNotFound)
	}
	if err != nil {
		return LoginRequest{}, fmt.Errorf("idp: use login code: %w", err)
	}
	return r, nil
}

// DeleteExpiredLoginRequests forgets the login requests that have expired
// at now, whatever their state (pending at the form, logged in, with a
// code, spent): none can be used any more, and the table holds live
// logins only.
func DeleteExpiredLoginRequests(ctx context.Context, st *store.Store, now time.Time) error {
	if _, err := st.Writer().ExecPrepared(ctx, `DELETE FROM login_requests WHERE expires_at <= $1`, store.TimeParam(now)); err != nil {
		return fmt.Errorf("idp: delete expired login requests: %w", err)
	}
	return nil
}

// DeleteExpiredPasswordResets forgets the password reset links that have
// expired at now, used or not.
func DeleteExpiredPasswordResets(ctx context.Context, st *store.Store, now time.Time) error {
	if _, err := st.Writer().ExecPrepared(ctx, `DELETE FROM password_resets WHERE expires_at <= $1`, store.TimeParam(now)); err != nil {
		return fmt.Errorf("idp: delete expired password resets: %w", err)
	}
	return nil
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

func scanRefresh(row store.Scanner) (RefreshToken, error) {
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
func CreateRefreshToken(ctx context.Context, st *store.Store, t RefreshToken, previous string) error {
	const insert = `INSERT INTO refresh_tokens (` + refreshColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	if previous == "" {
		// A code's first token: one statement, no transaction.
		_, err := st.Writer().ExecPrepared(ctx, insert, t.Hash, t.TenantID, t.ClientID, t.UserID, strings.Join(t.Scopes, " "),
			store.TimeParam(t.AuthTime), store.TimeParam(t.CreatedAt), store.TimeParam(t.ExpiresAt))
		if err != nil {
			return fmt.Errorf("idp: create refresh token: %w", err)
		}
		return nil
	}
	// The rotation's transaction; the statements name the token by its
	// hash, unique across tenants.
	return st.InTx(tenancy.With(ctx, t.TenantID), func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE refresh_tokens SET used = TRUE WHERE token_hash = $1 AND NOT used`, previous)
		if err != nil {
			return fmt.Errorf("idp: rotate refresh token: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrCodeUsed
		}
		_, err = tx.Exec(ctx, insert,
			t.Hash, t.TenantID, t.ClientID, t.UserID, strings.Join(t.Scopes, " "), store.TimeParam(t.AuthTime), store.TimeParam(t.CreatedAt), store.TimeParam(t.ExpiresAt))
		if err != nil {
			return fmt.Errorf("idp: create refresh token: %w", err)
		}
		return nil
	})
}

// LiveRefreshToken returns the unused, unexpired token with hash h, or
// store.ErrNotFound.
func LiveRefreshToken(ctx context.Context, st *store.Store, h string, now time.Time) (RefreshToken, error) {
	t, err := scanRefresh(st.Writer().QueryRowPrepared(ctx, `SELECT `+refreshColumns+` FROM refresh_tokens
		WHERE token_hash = $1 AND NOT used AND expires_at > $2`, h, store.TimeParam(now)))
	if err != nil {
		return RefreshToken{}, fmt.Errorf("idp: refresh token: %w", store.NotFound(err))
	}
	return t, nil
}

// RevokeRefreshToken makes the token with hash h unusable.
func RevokeRefreshToken(ctx context.Context, st *store.Store, h string) error {
	if _, err := st.Writer().ExecPrepared(ctx, `UPDATE refresh_tokens SET used = TRUE WHERE token_hash = $1`, h); err != nil {
		return fmt.Errorf("idp: revoke refresh token: %w", err)
	}
	return nil
}

// EndLoginSessions revokes every refresh token userID holds at clientID
// (logout).
func EndLoginSessions(ctx context.Context, st *store.Store, userID, clientID string) error {
	if _, err := st.Writer().ExecPrepared(ctx, `UPDATE refresh_tokens SET used = TRUE WHERE user_id = $1 AND client_id = $2`, userID, clientID); err != nil {
		return fmt.Errorf("idp: end login sessions: %w", err)
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
func CreateLoginSession(ctx context.Context, st *store.Store, sess LoginSession) error {
	if _, err := st.Writer().ExecPrepared(ctx, `DELETE FROM login_sessions WHERE expires_at < $1`, store.TimeParam(sess.AuthTime)); err != nil {
		return fmt.Errorf("idp: forget expired login sessions: %w", err)
	}
	_, err := st.Writer().ExecPrepared(ctx, `INSERT INTO login_sessions (token_hash, tenant_id, user_id, auth_time, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, sess.Hash, sess.TenantID, sess.UserID, store.TimeParam(sess.AuthTime), store.TimeParam(sess.ExpiresAt))
	if err != nil {
		return fmt.Errorf("idp: create login session: %w", err)
	}
	return nil
}

// LiveLoginSession returns the session with hash h if it has not expired
// at now, or store.ErrNotFound.
func LiveLoginSession(ctx context.Context, st *store.Store, h string, now time.Time) (LoginSession, error) {
	var sess LoginSession
	err := st.Reader().QueryRow(ctx, `SELECT token_hash, tenant_id, user_id, auth_time, expires_at FROM login_sessions
		WHERE token_hash = $1 AND expires_at > $2`, h, store.TimeParam(now)).Scan(&sess.Hash, &sess.TenantID, &sess.UserID, &sess.AuthTime, &sess.ExpiresAt)
	if err != nil {
		return LoginSession{}, fmt.Errorf("idp: login session: %w", store.NotFound(err))
	}
	sess.AuthTime, sess.ExpiresAt = sess.AuthTime.UTC(), sess.ExpiresAt.UTC()
	return sess, nil
}

// EndLoginSession ends the session with hash h (logout); an unknown one
// is no error.
func EndLoginSession(ctx context.Context, st *store.Store, h string) error {
	if _, err := st.Writer().ExecPrepared(ctx, `DELETE FROM login_sessions WHERE token_hash = $1`, h); err != nil {
		return fmt.Errorf("idp: end login session: %w", err)
	}
	return nil
}

// EndUserLoginSessions ends every login session of userID (its password
// changed: a browser that knew the old one must log in again).
func EndUserLoginSessions(ctx context.Context, st *store.Store, userID string) error {
	if !store.ValidID(userID) {
		return nil
	}
	if _, err := st.Writer().ExecPrepared(ctx, `DELETE FROM login_sessions WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("idp: end login sessions of %s: %w", userID, err)
	}
	return nil
}

// CreatePasswordReset stores a reset link's token hash for userID.
func CreatePasswordReset(ctx context.Context, st *store.Store, tokenHash, tenantID, userID string, now, expires time.Time) error {
	_, err := st.Writer().ExecPrepared(ctx, `INSERT INTO password_resets (token_hash, tenant_id, user_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, tokenHash, tenantID, userID, store.TimeParam(now), store.TimeParam(expires))
	if err != nil {
		return fmt.Errorf("idp: create password reset: %w", err)
	}
	return nil
}

// UsePasswordReset spends the reset token with hash h and returns its
// tenant and user; store.ErrNotFound when it is unknown, used or expired.
func UsePasswordReset(ctx context.Context, st *store.Store, h string, now time.Time) (tenantID, userID string, err error) {
	err = st.Writer().QueryRowPrepared(ctx, `UPDATE password_resets SET used = TRUE WHERE token_hash = $1 AND NOT used AND expires_at > $2
		RETURNING tenant_id, user_id`, h, store.TimeParam(now)).Scan(&tenantID, &userID)
	if err != nil {
		return "", "", fmt.Errorf("idp: password reset: %w", store.NotFound(err))
	}
	return tenantID, userID, nil
}

// LivePasswordReset reports whether reset token hash h can still be used.
func LivePasswordReset(ctx context.Context, st *store.Store, h string, now time.Time) bool {
	var one int
	return st.Reader().QueryRow(ctx, `SELECT 1 FROM password_resets WHERE token_hash = $1 AND NOT used AND expires_at > $2`, h, store.TimeParam(now)).Scan(&one) == nil
}

// OrganizationLogo returns the logo address of tenantID's organization
// named name (ignoring case), "" when there is none: the login page's
// logo. A prepared read of the first 100 organizations, as the page
// always looked.
func OrganizationLogo(ctx context.Context, st *store.Store, tenantID, name string) (string, error) {
	rows, err := st.Reader().QueryPrepared(ctx, `SELECT name, logo_url FROM organizations WHERE tenant_id = $1 ORDER BY id LIMIT 100`, tenantID)
	if err != nil {
		return "", fmt.Errorf("idp: organization logo: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n, logo string
		if err := rows.Scan(&n, &logo); err != nil {
			return "", fmt.Errorf("idp: organization logo: %w", err)
		}
		if strings.EqualFold(n, name) {
			return logo, nil
		}
	}
	return "", rows.Err()
}

// userParam is the parameter of the optional user_id column: NULL until a
// user logged in.
func userParam(id string) any {
	if id == "" {
		return nil
	}
	return id
}
