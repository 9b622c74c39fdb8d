package staff

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/password"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// SetPasswordLink makes a set-password link for tenantID's user userID
// and returns its token (32 random bytes, base64url; only its hash is
// stored) and when it expires (LinkTTL from now). The user's earlier
// unused links stop working: only the newest one handed out can be used.
// A user that is not the tenant's is store.ErrNotFound.
func (d *Directory) SetPasswordLink(ctx context.Context, tenantID, userID string) (string, time.Time, error) {
	token, err := newToken()
	if err != nil {
		return "", time.Time{}, err
	}
	expires := d.now().Add(d.o.LinkTTL)
	if !store.ValidID(tenantID) || !store.ValidID(userID) {
		return "", time.Time{}, store.ErrNotFound
	}
	err = d.inTx(ctx, tenantID, func(tx *store.Tx) error {
		u, err := user(ctx, tx, tenantID, userID)
		if err != nil {
			return err
		}
		if err := audit(ctx, tx, EventPasswordLinkIssued, u.User, nil, d.now()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM staff_password_links WHERE tenant_id = $1 AND user_id = $2 AND NOT used`,
			tenantID, userID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO staff_password_links (token_hash, tenant_id, user_id, expires_at, used)
			VALUES ($1, $2, $3, $4, $5)`, tokenHash(token), tenantID, userID, store.TimeParam(expires), false)
		return err
	})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("staff: set-password link: %w", err)
	}
	return token, expires, nil
}

// UsePasswordLink sets the password of the user whose link token is and
// spends the link: a token that is unknown, used, superseded or expired
// is ErrBadLink, and of several uses of one token at once exactly one
// succeeds (the link is claimed by one UPDATE of its unused row). The
// user's sessions end in the same transaction: whoever had the old
// password is logged out. A password too short or too long is a
// validation.Errors on "password", and spends nothing.
func (d *Directory) UsePasswordLink(ctx context.Context, token, pw string) (User, error) {
	var errs validation.Errors
	checkPassword(&errs, pw)
	if err := errs.Err(); err != nil {
		return User{}, err
	}
	var (
		tenantID, userID string
		expires          time.Time
		used             bool
	)
	// The token names the link, and so its tenant; everything after this
	// read is scoped by that tenant.
	err := d.st.Reader().QueryRow(ctx, `SELECT tenant_id, user_id, expires_at, used FROM staff_password_links WHERE token_hash = $1`,
		tokenHash(token)).Scan(&tenantID, &userID, &expires, &used)
	if errors.Is(store.NotFound(err), store.ErrNotFound) {
		return User{}, ErrBadLink
	}
	if err != nil {
		return User{}, fmt.Errorf("staff: password link: %w", err)
	}
	if used || !d.now().Before(expires) {
		return User{}, ErrBadLink
	}
	// Hashed before the transaction, which holds the writer meanwhile.
	hash, err := password.Hash(pw, d.o.Params)
	if err != nil {
		return User{}, err
	}
	var out User
	err = d.inTx(ctx, tenantID, func(tx *store.Tx) error {
		now := d.now()
		res, err := tx.Exec(ctx, `UPDATE staff_password_links SET used = $4 WHERE tenant_id = $1 AND token_hash = $2
			AND NOT used AND expires_at > $3`, tenantID, tokenHash(token), store.TimeParam(now), true)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return ErrBadLink
		}
		if _, err := tx.Exec(ctx, `UPDATE staff_users SET password_hash = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2`,
			tenantID, userID, hash, store.TimeParam(now)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM staff_sessions WHERE tenant_id = $1 AND user_id = $2`, tenantID, userID); err != nil {
			return err
		}
		u, err := user(ctx, tx, tenantID, userID)
		if err != nil {
			return err
		}
		out = u.User
		return audit(ctx, tx, EventPasswordSet, out, nil, now)
	})
	if errors.Is(err, ErrBadLink) {
		return User{}, err
	}
	if err != nil {
		return User{}, fmt.Errorf("staff: use password link: %w", err)
	}
	return out, nil
}
