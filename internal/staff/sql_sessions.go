package staff

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// touchEvery is how often Session writes last_seen_at: a page view a
// minute later than the last write moves it, so the idle timeout is
// measured to within a minute (it can only end a session early, never
// late) without a write per request.
const touchEvery = time.Minute

// StartSession opens a session for u, whose password was just checked: a
// fresh random token (returned, for the cookie; only its hash is stored)
// and CSRF token every time, so a login never reuses a token a browser
// brought along (the console calls it on every login: that is the
// rotation). Sessions the user already has stay valid, one per browser;
// the console ends the one the login replaces (EndSession). A user with
// TOTP gets a session whose SecondFactorPending is true. A user disabled
// or removed since the password check is ErrBadCredentials.
func (d *Directory) StartSession(ctx context.Context, u User) (string, Session, error) {
	token, err := newToken()
	if err != nil {
		return "", Session{}, err
	}
	csrf, err := newToken()
	if err != nil {
		return "", Session{}, err
	}
	if !store.ValidID(u.TenantID) || !store.ValidID(u.ID) {
		return "", Session{}, ErrBadCredentials
	}
	now := d.now()
	s := Session{ID: store.NewID(), TenantID: u.TenantID, UserID: u.ID, CSRF: csrf, CreatedAt: now, LastSeenAt: now}
	err = d.inTx(ctx, u.TenantID, func(tx *store.Tx) error {
		cur, err := user(ctx, tx, u.TenantID, u.ID)
		if errors.Is(err, store.ErrNotFound) || err == nil && cur.Disabled {
			return ErrBadCredentials
		}
		if err != nil {
			return err
		}
		// The stored state decides too: a TOTP enabled since u was read
		// is asked for.
		s.SecondFactorPending = u.TOTPEnabled || cur.TOTPEnabled
		_, err = tx.Exec(ctx, `INSERT INTO staff_sessions (id, token_hash, tenant_id, user_id, csrf, second_factor_pending,
			created_at, last_seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			s.ID, tokenHash(token), s.TenantID, s.UserID, s.CSRF, s.SecondFactorPending, store.TimeParam(now), store.TimeParam(now))
		return err
	})
	if errors.Is(err, ErrBadCredentials) {
		return "", Session{}, err
	}
	if err != nil {
		return "", Session{}, fmt.Errorf("staff: start session: %w", err)
	}
	return token, s, nil
}

// sessionColumns are the session's columns and its user's, of the join
// Session reads.
var sessionColumns = `s.id, s.tenant_id, s.user_id, s.csrf, s.second_factor_pending, s.created_at, s.last_seen_at, ` +
	"u." + strings.ReplaceAll(userColumns, ", ", ", u.")

// session reads the live session of token and its user; an ended or
// timed-out one is ErrNoSession (and a timed-out one is deleted).
func (d *Directory) session(ctx context.Context, token string) (Session, userRow, error) {
	if token == "" {
		return Session{}, userRow{}, ErrNoSession
	}
	// The token names the session, and so its tenant: the one look-up
	// that cannot start from a tenant id. The join stays on the tenant.
	row := d.st.Reader().QueryRow(ctx, `SELECT `+sessionColumns+` FROM staff_sessions s
		JOIN staff_users u ON u.tenant_id = s.tenant_id AND u.id = s.user_id WHERE s.token_hash = $1`, tokenHash(token))
	var s Session
	var u userRow
	err := row.Scan(append([]any{&s.ID, &s.TenantID, &s.UserID, &s.CSRF, &s.SecondFactorPending, &s.CreatedAt, &s.LastSeenAt},
		u.dest()...)...)
	if errors.Is(store.NotFound(err), store.ErrNotFound) {
		return Session{}, userRow{}, ErrNoSession
	}
	if err != nil {
		return Session{}, userRow{}, fmt.Errorf("staff: session: %w", err)
	}
	s.CreatedAt, s.LastSeenAt = s.CreatedAt.UTC(), s.LastSeenAt.UTC()
	u.finish()
	now := d.now()
	if now.Sub(s.LastSeenAt) > d.o.IdleTimeout || now.Sub(s.CreatedAt) > d.o.AbsoluteTimeout || u.Disabled {
		// Best effort: the sweep removes it otherwise.
		_, _ = d.st.Writer().Exec(ctx, `DELETE FROM staff_sessions WHERE tenant_id = $1 AND id = $2`, s.TenantID, s.ID)
		return Session{}, userRow{}, ErrNoSession
	}
	if now.Sub(s.LastSeenAt) >= touchEvery {
		if _, err := d.st.Writer().Exec(ctx, `UPDATE staff_sessions SET last_seen_at = $3 WHERE tenant_id = $1 AND id = $2`,
			s.TenantID, s.ID, store.TimeParam(now)); err != nil {
			return Session{}, userRow{}, fmt.Errorf("staff: session: touch: %w", err)
		}
		s.LastSeenAt = now
	}
	return s, u, nil
}

// Session returns the session of token and its user. A token that is
// unknown or ended, a session idle longer than IdleTimeout or older than
// AbsoluteTimeout, and one whose user is disabled are ErrNoSession. It
// moves the session's last_seen_at, at most once a minute. A session with
// SecondFactorPending is returned as it is: the console must let it do
// nothing but CompleteSecondFactor.
func (d *Directory) Session(ctx context.Context, token string) (Session, User, error) {
	s, u, err := d.session(ctx, token)
	return s, u.User, err
}

// CompleteSecondFactor checks code against the TOTP secret of the user of
// token's session, whose second factor is pending, and on success clears
// the pending mark and rotates the session's token and CSRF token: the
// old token stops working, and the new one is returned for the cookie. A
// wrong code, or one already accepted once (for any session, or to
// confirm the enrolment), is ErrBadCredentials (the session stays
// pending); a session
// with nothing pending, or one gone, is ErrNoSession.
func (d *Directory) CompleteSecondFactor(ctx context.Context, token, code string) (string, Session, error) {
	s, u, err := d.session(ctx, token)
	if err != nil {
		return "", Session{}, err
	}
	if !s.SecondFactorPending || u.totpSecret == "" {
		return "", Session{}, ErrNoSession
	}
	now := d.now()
	step := codeStep(code, u.totpSecret, now)
	if step <= u.totpLastStep {
		// Wrong, or already used (a code is good once).
		return "", Session{}, ErrBadCredentials
	}
	newTok, err := newToken()
	if err != nil {
		return "", Session{}, err
	}
	csrf, err := newToken()
	if err != nil {
		return "", Session{}, err
	}
	err = d.inTx(ctx, s.TenantID, func(tx *store.Tx) error {
		// The code's step is spent first, conditionally: of two uses of
		// one code (two sessions, or a replay) only one passes.
		res, err := tx.Exec(ctx, `UPDATE staff_users SET totp_last_step = $3 WHERE tenant_id = $1 AND id = $2
			AND totp_last_step < $3 AND totp_secret = $4`, s.TenantID, s.UserID, step, u.totpSecret)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return ErrBadCredentials
		}
		// The old token's hash in the WHERE: of two completions racing
		// with one token, one wins.
		res, err = tx.Exec(ctx, `UPDATE staff_sessions SET token_hash = $3, csrf = $4, second_factor_pending = $5,
			last_seen_at = $6 WHERE tenant_id = $1 AND id = $2 AND token_hash = $7 AND second_factor_pending`,
			s.TenantID, s.ID, tokenHash(newTok), csrf, false, store.TimeParam(now), tokenHash(token))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return ErrNoSession
		}
		return nil
	})
	if errors.Is(err, ErrBadCredentials) || errors.Is(err, ErrNoSession) {
		return "", Session{}, err
	}
	if err != nil {
		return "", Session{}, fmt.Errorf("staff: complete second factor: %w", err)
	}
	s.CSRF, s.SecondFactorPending, s.LastSeenAt = csrf, false, now
	return newTok, s, nil
}

// EndSession ends the session of token (a logout); an unknown token is no
// error.
func (d *Directory) EndSession(ctx context.Context, token string) error {
	if _, err := d.st.Writer().Exec(ctx, `DELETE FROM staff_sessions WHERE token_hash = $1`, tokenHash(token)); err != nil {
		return fmt.Errorf("staff: end session: %w", err)
	}
	return nil
}

// EndSessions ends every session of tenantID's user userID.
func (d *Directory) EndSessions(ctx context.Context, tenantID, userID string) error {
	if !store.ValidID(tenantID) || !store.ValidID(userID) {
		return nil
	}
	if _, err := d.st.Writer().Exec(ctx, `DELETE FROM staff_sessions WHERE tenant_id = $1 AND user_id = $2`, tenantID, userID); err != nil {
		return fmt.Errorf("staff: end sessions: %w", err)
	}
	return nil
}

// Sweep deletes the sessions past their idle or absolute timeout and the
// set-password links that are used or expired, in every tenant, and
// returns how many rows went. Session and UsePasswordLink refuse those
// already; the sweep keeps the tables small.
func (d *Directory) Sweep(ctx context.Context) (int, error) {
	now := d.now()
	res, err := d.st.Writer().Exec(ctx, `DELETE FROM staff_sessions WHERE last_seen_at < $1 OR created_at < $2`,
		store.TimeParam(now.Add(-d.o.IdleTimeout)), store.TimeParam(now.Add(-d.o.AbsoluteTimeout)))
	if err != nil {
		return 0, fmt.Errorf("staff: sweep sessions: %w", err)
	}
	sessions, _ := res.RowsAffected()
	res, err = d.st.Writer().Exec(ctx, `DELETE FROM staff_password_links WHERE used OR expires_at <= $1`, store.TimeParam(now))
	if err != nil {
		return int(sessions), fmt.Errorf("staff: sweep links: %w", err)
	}
	links, _ := res.RowsAffected()
	return int(sessions + links), nil
}
