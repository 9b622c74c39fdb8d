package staff

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/kadens/kadens/internal/password"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// userRow is a staff_users row: the User and what never leaves the
// package.
type userRow struct {
	User
	hash, totpSecret, totpPending string
	// totpLastStep is the time step of the last TOTP code accepted.
	totpLastStep int64
}

const userColumns = `id, tenant_id, email, name, role, password_hash, disabled, totp_secret, totp_pending_secret, totp_last_step, created_at, updated_at`

// dest are the scan destinations of userColumns.
func (u *userRow) dest() []any {
	return []any{&u.ID, &u.TenantID, &u.Email, &u.Name, &u.Role, &u.hash, &u.Disabled, &u.totpSecret, &u.totpPending,
		&u.totpLastStep, &u.CreatedAt, &u.UpdatedAt}
}

// finish sets what is derived from the scanned columns.
func (u *userRow) finish() {
	u.HasPassword, u.TOTPEnabled = u.hash != "", u.totpSecret != ""
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
}

func scanUser(r store.Scanner) (userRow, error) {
	var u userRow
	if err := r.Scan(u.dest()...); err != nil {
		return userRow{}, err
	}
	u.finish()
	return u, nil
}

// emailKey is the form of an address that uniqueness and logins compare,
// folded in Go so that both engines compare alike.
func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CreateUser checks in and stores a new staff user of tenantID. Problems
// with the input are validation.Errors naming the field; an address
// another staff user of the tenant has (ignoring case) is ErrEmailTaken.
// With no password the user can log in only after using a set-password
// link (SetPasswordLink).
func (d *Directory) CreateUser(ctx context.Context, tenantID string, in NewUser) (User, error) {
	in.Email, in.Name = strings.TrimSpace(in.Email), strings.TrimSpace(in.Name)
	var errs validation.Errors
	checkEmail(&errs, in.Email)
	if p := validation.TextProblem(in.Name, false); p != "" {
		errs.Add("name", "%s", p)
	} else if len([]rune(in.Name)) > maxName {
		errs.Add("name", "must be at most %d characters", maxName)
	}
	if _, err := ParseRole(string(in.Role)); err != nil {
		errs.Add("role", "must be admin, support or finance")
	}
	if in.Password != "" {
		checkPassword(&errs, in.Password)
	}
	if err := errs.Err(); err != nil {
		return User{}, err
	}
	if !store.ValidID(tenantID) {
		return User{}, fmt.Errorf("staff: create user: tenant %q: %w", tenantID, store.ErrNotFound)
	}
	hash := ""
	if in.Password != "" {
		var err error
		if hash, err = password.Hash(in.Password, d.o.Params); err != nil {
			return User{}, err
		}
	}
	now := d.now()
	u := User{ID: store.NewID(), TenantID: tenantID, Email: in.Email, Name: in.Name, Role: in.Role, HasPassword: hash != "",
		CreatedAt: now, UpdatedAt: now}
	err := d.inTx(ctx, tenantID, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO staff_users (id, tenant_id, email, email_key, name, role, password_hash,
		disabled, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			u.ID, tenantID, u.Email, emailKey(u.Email), u.Name, string(u.Role), hash, false, store.TimeParam(now), store.TimeParam(now))
		if store.IsUniqueViolation(err) {
			return ErrEmailTaken
		}
		if err != nil {
			return err
		}
		return audit(ctx, tx, EventUserCreated, u, nil, now)
	})
	if errors.Is(err, ErrEmailTaken) {
		return User{}, err
	}
	if err != nil {
		return User{}, fmt.Errorf("staff: create user: %w", err)
	}
	return u, nil
}

// rowQuerier is a store.Pool or a *store.Tx.
type rowQuerier interface {
	QueryRow(ctx context.Context, query string, args ...any) *sql.Row
}

// user reads user id of tenantID from q, or store.ErrNotFound (also for
// another tenant's user).
func user(ctx context.Context, q rowQuerier, tenantID, id string) (userRow, error) {
	if !store.ValidID(tenantID) || !store.ValidID(id) {
		return userRow{}, store.ErrNotFound
	}
	u, err := scanUser(q.QueryRow(ctx, `SELECT `+userColumns+` FROM staff_users WHERE tenant_id = $1 AND id = $2`, tenantID, id))
	if err != nil {
		return userRow{}, fmt.Errorf("staff: user %s: %w", id, store.NotFound(err))
	}
	return u, nil
}

// User returns staff user id of tenantID, or store.ErrNotFound when there
// is none or it is another tenant's.
func (d *Directory) User(ctx context.Context, tenantID, id string) (User, error) {
	u, err := user(ctx, d.st.Reader(), tenantID, id)
	return u.User, err
}

// Users returns tenantID's staff users ordered by e-mail address.
func (d *Directory) Users(ctx context.Context, tenantID string) ([]User, error) {
	if !store.ValidID(tenantID) {
		return []User{}, nil
	}
	rows, err := store.QueryAll(ctx, d.st.Reader(), scanUser,
		`SELECT `+userColumns+` FROM staff_users WHERE tenant_id = $1 ORDER BY email_key, id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("staff: users: %w", err)
	}
	out := make([]User, len(rows))
	for i, r := range rows {
		out[i] = r.User
	}
	return out, nil
}

// inTx runs fn in a write transaction of tenantID.
func (d *Directory) inTx(ctx context.Context, tenantID string, fn func(tx *store.Tx) error) error {
	return d.st.InTx(tenancy.With(ctx, tenantID), fn)
}

// adminChecked, when set (by a test), runs after UpdateUser's last-admin
// check passed and before its write: a test holds two updates there to
// show that the check cannot pass for both.
var adminChecked func()

// UpdateUser sets user id's role and whether it is disabled. A change that
// would leave tenantID without an enabled admin is ErrLastAdmin; disabling
// a user ends its sessions in the same transaction.
func (d *Directory) UpdateUser(ctx context.Context, tenantID, id string, role Role, disabled bool) (User, error) {
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	if !store.ValidID(tenantID) || !store.ValidID(id) {
		return User{}, store.ErrNotFound
	}
	var out User
	err := d.inTx(ctx, tenantID, func(tx *store.Tx) error {
		// The tenant's enabled admins, locked on PostgreSQL so that two
		// admins demoting each other at once cannot both pass the check
		// (the second waits, then sees the first's change); SQLite has one
		// writer.
		q := `SELECT id FROM staff_users WHERE tenant_id = $1 AND role = 'admin' AND NOT disabled`
		if tx.Engine() == store.Postgres {
			q += ` FOR UPDATE`
		}
		admins, err := store.QueryAll(ctx, tx, func(r store.Scanner) (string, error) {
			var s string
			return s, r.Scan(&s)
		}, q, tenantID)
		if err != nil {
			return err
		}
		u, err := user(ctx, tx, tenantID, id)
		if err != nil {
			return err
		}
		wasAdmin := u.Role == RoleAdmin && !u.Disabled
		if wasAdmin && (role != RoleAdmin || disabled) && len(admins) <= 1 {
			return ErrLastAdmin
		}
		if adminChecked != nil {
			adminChecked()
		}
		now := d.now()
		if _, err := tx.Exec(ctx, `UPDATE staff_users SET role = $3, disabled = $4, updated_at = $5 WHERE tenant_id = $1 AND id = $2`,
			tenantID, id, string(role), disabled, store.TimeParam(now)); err != nil {
			return err
		}
		if disabled {
			if _, err := tx.Exec(ctx, `DELETE FROM staff_sessions WHERE tenant_id = $1 AND user_id = $2`, tenantID, id); err != nil {
				return err
			}
		}
		before := auditBefore{Role: u.Role, Disabled: u.Disabled}
		u.Role, u.Disabled, u.UpdatedAt = role, disabled, now
		out = u.User
		if before.Role == role && before.Disabled == disabled {
			return nil // nothing changed: nothing to record
		}
		return audit(ctx, tx, EventUserChanged, out, &before, now)
	})
	if err != nil {
		if errors.Is(err, ErrLastAdmin) || errors.Is(err, store.ErrNotFound) {
			return User{}, err
		}
		return User{}, fmt.Errorf("staff: update user %s: %w", id, err)
	}
	return out, nil
}

// Authenticate checks email and password against tenantID's staff users
// and returns the user. An unknown address, a wrong password, a user
// without a password and a disabled user are all ErrBadCredentials, and
// every attempt costs exactly one argon2id run (a dummy hash stands in
// for a missing one), so neither the answer nor its time tells them
// apart. A hash made under other parameters is replaced after a right
// password.
func (d *Directory) Authenticate(ctx context.Context, tenantID, email, pw string) (User, error) {
	var u userRow
	if store.ValidID(tenantID) {
		var err error
		u, err = scanUser(d.st.Reader().QueryRow(ctx,
			`SELECT `+userColumns+` FROM staff_users WHERE tenant_id = $1 AND email_key = $2`, tenantID, emailKey(email)))
		if err != nil && !errors.Is(store.NotFound(err), store.ErrNotFound) {
			return User{}, fmt.Errorf("staff: authenticate: %w", err)
		}
	}
	hash := u.hash
	if hash == "" {
		hash = d.dummyHash()
	}
	ok, err := password.Verify(hash, pw)
	if err != nil {
		return User{}, fmt.Errorf("staff: authenticate user %s: %w", u.ID, err)
	}
	if !ok || u.hash == "" || u.Disabled {
		return User{}, ErrBadCredentials
	}
	if password.NeedsRehash(u.hash, d.o.Params) {
		// Best effort: the login succeeded whatever this does.
		if h, err := password.Hash(pw, d.o.Params); err == nil {
			now := d.now()
			if _, err := d.st.Writer().Exec(ctx, `UPDATE staff_users SET password_hash = $3, updated_at = $4
				WHERE tenant_id = $1 AND id = $2 AND password_hash = $5`,
				tenantID, u.ID, h, store.TimeParam(now), u.hash); err == nil {
				u.UpdatedAt = now
			}
		}
	}
	return u.User, nil
}
