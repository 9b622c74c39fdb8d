package subscriberuser

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

// SubscriberUser is a person who logs in at the identity provider on behalf
// of a tenant's subscriber: a user set of its own per tenant, apart from the
// administrators' and machines' clients (docs/AUTHORIZATIONS.md). A user is
// linked to one subscriber (SubscriberID), to subscriber accounts through
// account sources, or to nothing.
type SubscriberUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	// PasswordHash is the argon2id PHC string (internal/subscriberuser);
	// empty when the user cannot log in with a password. Never answered.
	PasswordHash string `json:"-"`
	Disabled     bool   `json:"disabled"`
	// SubscriberID is "" when the user is linked to no subscriber.
	SubscriberID string    `json:"subscriberId"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// ErrEmailTaken: another user of the tenant has the e-mail address
// (compared ignoring case). It matches store.ErrConflict.
var ErrEmailTaken = fmt.Errorf("a user with that e-mail exists: %w", store.ErrConflict)

// ErrNoSuchSubscriber: a user was to be linked to a subscriber that the
// tenant does not have. It is the caller's input that is wrong (a 400),
// so it does not match store.ErrNotFound.
var ErrNoSuchSubscriber = errors.New("subscriberuser: no such subscriber in this tenant")

const subscriberUserColumns = `id, email, password_hash, disabled, subscriber_id, created_at, updated_at`

func scanSubscriberUser(row store.Scanner) (SubscriberUser, error) {
	var (
		u   SubscriberUser
		sub sql.NullString
	)
	if err := row.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.Disabled, &sub, &u.CreatedAt, &u.UpdatedAt); err != nil {
		return SubscriberUser{}, err
	}
	u.SubscriberID = sub.String
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	return u, nil
}

// emailKey is the form of an address that uniqueness and look-ups compare:
// folded in Go so that both engines compare the same way.
func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// nullID is the parameter for an optional uuid column.
func nullID(id string) any {
	if id == "" {
		return nil
	}
	return id
}

// subscriberInTenant returns ErrNoSuchSubscriber unless the tenant has
// subscriber id ("" passes: no link).
func subscriberInTenant(ctx context.Context, tx *store.Tx, tenant, id string) error {
	if id == "" {
		return nil
	}
	if !store.ValidID(id) {
		return ErrNoSuchSubscriber
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM subscribers WHERE tenant_id = $1 AND id = $2`, tenant, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNoSuchSubscriber
	}
	return err
}

// CreateSubscriberUser stores u under the context's tenant with a new id
// and returns it as stored, created at now. u.PasswordHash must already be
// a hash. An e-mail another user of the tenant has is ErrEmailTaken; a
// SubscriberID the tenant does not have is ErrNoSuchSubscriber. A user
// created linked to a subscriber gets that subscriber's access the way a
// later link gives it: UserAuthorizationGranted at the tenant's time at,
// in the same transaction.
func CreateSubscriberUser(ctx context.Context, st *store.Store, u SubscriberUser, now, at time.Time) (SubscriberUser, error) {
	if _, err := tenancy.From(ctx); err != nil {
		return SubscriberUser{}, err
	}
	u.ID = store.NewID()
	u.Email = strings.TrimSpace(u.Email)
	u.CreatedAt = now.UTC().Truncate(time.Microsecond)
	u.UpdatedAt = u.CreatedAt
	err := st.InTx(ctx, func(t *store.Tx) error {
		// Checked in the transaction: the foreign key alone would accept
		// another tenant's subscriber.
		if err := subscriberInTenant(ctx, t, t.TenantID(), u.SubscriberID); err != nil {
			return err
		}
		_, err := t.Exec(ctx, `INSERT INTO subscriber_users (id, tenant_id, email, email_key, password_hash,
			disabled, subscriber_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			u.ID, t.TenantID(), u.Email, emailKey(u.Email), u.PasswordHash, u.Disabled, nullID(u.SubscriberID),
			store.TimeParam(u.CreatedAt), store.TimeParam(u.UpdatedAt))
		if store.IsUniqueViolation(err) {
			return ErrEmailTaken
		}
		if err != nil || u.SubscriberID == "" {
			return err
		}
		return addSourceEvent(ctx, st, t, store.EventUserAuthorizationGranted, u.ID, u.SubscriberID, "", "", "", at)
	})
	if err != nil {
		return SubscriberUser{}, fmt.Errorf("subscriberuser: create subscriber user: %w", err)
	}
	return u, nil
}

// UserByID returns user id of the context's tenant, or store.ErrNotFound
// (also for another tenant's user).
func UserByID(ctx context.Context, st *store.Store, id string) (SubscriberUser, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return SubscriberUser{}, err
	}
	if !store.ValidID(id) {
		return SubscriberUser{}, store.ErrNotFound
	}
	u, err := scanSubscriberUser(st.Reader().QueryRow(ctx,
		`SELECT `+subscriberUserColumns+` FROM subscriber_users WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return SubscriberUser{}, fmt.Errorf("subscriberuser: subscriber user %s: %w", id, store.NotFound(err))
	}
	return u, nil
}

// SubscriberUserByEmail returns the context's tenant's user with email
// (ignoring case), or store.ErrNotFound.
func SubscriberUserByEmail(ctx context.Context, st *store.Store, email string) (SubscriberUser, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return SubscriberUser{}, err
	}
	u, err := scanSubscriberUser(st.Reader().QueryRow(ctx,
		`SELECT `+subscriberUserColumns+` FROM subscriber_users WHERE tenant_id = $1 AND email_key = $2`, tenant, emailKey(email)))
	if err != nil {
		return SubscriberUser{}, fmt.Errorf("subscriberuser: subscriber user by e-mail: %w", store.NotFound(err))
	}
	return u, nil
}

// SubscriberUserFilter narrows ListSubscriberUsers; zero fields do not
// filter.
type SubscriberUserFilter struct {
	// Email matches the whole address, ignoring case.
	Email string
	// SubscriberID: only users linked to this subscriber.
	SubscriberID string
	// Disabled, when set, keeps only users that are (true) or are not
	// (false) disabled.
	Disabled *bool
}

// ListSubscriberUsers returns one page of the tenant's users and the cursor
// of the next page ("" on the last).
func ListSubscriberUsers(ctx context.Context, st *store.Store, f SubscriberUserFilter, p store.Page) ([]SubscriberUser, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("", tenant)
	if f.Email != "" {
		q.Add("email_key = ?", emailKey(f.Email))
	}
	if f.SubscriberID != "" {
		q.Add("subscriber_id = ?", f.SubscriberID)
	}
	if f.Disabled != nil {
		q.Add("disabled = ?", *f.Disabled)
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanSubscriberUser, `SELECT `+subscriberUserColumns+` FROM subscriber_users`, q, "id", p,
		func(u SubscriberUser) string { return u.ID })
	if err != nil {
		return nil, "", fmt.Errorf("subscriberuser: list subscriber users: %w", err)
	}
	return out, next, nil
}

// updateSubscriberUser runs one UPDATE of user id's row (set: "col = $3,
// ..." with updated_at as the last parameter) and returns the stored
// result, or store.ErrNotFound.
func updateSubscriberUser(ctx context.Context, st *store.Store, what, id, set string, args ...any) (SubscriberUser, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return SubscriberUser{}, err
	}
	if !store.ValidID(id) {
		return SubscriberUser{}, store.ErrNotFound
	}
	var u SubscriberUser
	err = st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		u, err = scanSubscriberUser(tx.QueryRow(ctx, `UPDATE subscriber_users SET `+set+`
			WHERE tenant_id = $1 AND id = $2 RETURNING `+subscriberUserColumns, append([]any{tenant, id}, args...)...))
		return store.NotFound(err)
	})
	if err != nil {
		return SubscriberUser{}, fmt.Errorf("subscriberuser: %s of subscriber user %s: %w", what, id, err)
	}
	return u, nil
}

// SetSubscriberUserDisabled disables or enables user id. A disabled user
// cannot log in and has no access (docs/AUTHORIZATIONS.md).
func SetSubscriberUserDisabled(ctx context.Context, st *store.Store, id string, disabled bool, now time.Time) (SubscriberUser, error) {
	return updateSubscriberUser(ctx, st, "disable", id, `disabled = $3, updated_at = $4`, disabled, store.TimeParam(now))
}

// SetSubscriberUserPassword replaces user id's password hash ("" removes
// password login).
func SetSubscriberUserPassword(ctx context.Context, st *store.Store, id, hash string, now time.Time) (SubscriberUser, error) {
	return updateSubscriberUser(ctx, st, "password", id, `password_hash = $3, updated_at = $4`, hash, store.TimeParam(now))
}

// SetSubscriberUserEmail changes user id's e-mail address; one another user
// of the tenant has is ErrEmailTaken.
func SetSubscriberUserEmail(ctx context.Context, st *store.Store, id, email string, now time.Time) (SubscriberUser, error) {
	email = strings.TrimSpace(email)
	u, err := updateSubscriberUser(ctx, st, "e-mail", id, `email = $3, email_key = $4, updated_at = $5`, email, emailKey(email), store.TimeParam(now))
	if store.IsUniqueViolation(err) {
		return SubscriberUser{}, fmt.Errorf("subscriberuser: e-mail of subscriber user %s: %w", id, ErrEmailTaken)
	}
	return u, err
}

// LinkSubscriberUser links user id to subscriber subscriberID of the same
// tenant ("" unlinks), updated at now; a changed link is recorded as
// UserAuthorizationRevoked (old subscriber) and Granted (new) at the
// tenant's time at. A subscriber the tenant does not have is
// ErrNoSuchSubscriber.
func LinkSubscriberUser(ctx context.Context, st *store.Store, id, subscriberID string, now, at time.Time) (SubscriberUser, error) {
	if _, err := tenancy.From(ctx); err != nil {
		return SubscriberUser{}, err
	}
	if !store.ValidID(id) {
		return SubscriberUser{}, fmt.Errorf("subscriberuser: link of subscriber user %s: %w", id, store.ErrNotFound)
	}
	var u SubscriberUser
	err := st.InTx(ctx, func(t *store.Tx) error {
		if err := subscriberInTenant(ctx, t, t.TenantID(), subscriberID); err != nil {
			return err
		}
		var before sql.NullString
		if err := t.QueryRow(ctx, `SELECT subscriber_id FROM subscriber_users WHERE tenant_id = $1 AND id = $2`,
			t.TenantID(), id).Scan(&before); err != nil {
			return store.NotFound(err)
		}
		var err error
		u, err = scanSubscriberUser(t.QueryRow(ctx, `UPDATE subscriber_users SET subscriber_id = $3, updated_at = $4
			WHERE tenant_id = $1 AND id = $2 RETURNING `+subscriberUserColumns, t.TenantID(), id, nullID(subscriberID), store.TimeParam(now)))
		if err != nil {
			return store.NotFound(err)
		}
		// A changed link takes the old subscriber's access and gives the
		// new one's (UserAuthorizationRevoked, then Granted).
		if before.String == subscriberID {
			return nil
		}
		if before.String != "" {
			if err := addSourceEvent(ctx, st, t, store.EventUserAuthorizationRevoked, id, before.String, "", "", "", at); err != nil {
				return err
			}
		}
		if subscriberID != "" {
			return addSourceEvent(ctx, st, t, store.EventUserAuthorizationGranted, id, subscriberID, "", "", "", at)
		}
		return nil
	})
	if err != nil {
		return SubscriberUser{}, fmt.Errorf("subscriberuser: link of subscriber user %s: %w", id, err)
	}
	return u, nil
}

// DeleteSubscriberUser removes user id and what hangs on it (its account
// sources and identity-provider accounts), or returns store.ErrNotFound.
func DeleteSubscriberUser(ctx context.Context, st *store.Store, id string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !store.ValidID(id) {
		return store.ErrNotFound
	}
	err = st.InTx(ctx, func(tx *store.Tx) error {
		for _, stmt := range subscriberUserDependents {
			if _, err := tx.Exec(ctx, stmt, tenant, id); err != nil {
				return err
			}
		}
		res, err := tx.Exec(ctx, `DELETE FROM subscriber_users WHERE tenant_id = $1 AND id = $2`, tenant, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("subscriberuser: delete subscriber user %s: %w", id, err)
	}
	return nil
}

// subscriberUserDependents delete the rows that refer to a user ($1 tenant,
// $2 user) before the user goes: they only ever meant "this user".
var subscriberUserDependents = []string{
	`DELETE FROM account_sources WHERE tenant_id = $1 AND user_id = $2`,
	`DELETE FROM identity_provider_accounts WHERE tenant_id = $1 AND user_id = $2`,
}

// SubscriberUserTenant returns the tenant of subscriber user id (ids are
// unique across tenants), for the identity provider, which meets a user id
// in a token before it knows the tenant; store.ErrNotFound if there is no user.
func SubscriberUserTenant(ctx context.Context, st *store.Store, id string) (string, error) {
	if !store.ValidID(id) {
		return "", store.ErrNotFound
	}
	var tenant string
	if err := st.Reader().QueryRow(ctx, `SELECT tenant_id FROM subscriber_users WHERE id = $1`, id).Scan(&tenant); err != nil {
		return "", fmt.Errorf("subscriberuser: subscriber user %s: %w", id, store.NotFound(err))
	}
	return tenant, nil
}
