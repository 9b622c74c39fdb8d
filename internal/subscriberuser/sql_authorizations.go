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

// AccountSource gives subscriber user UserID the access of subscriber
// account SubscriberAccountID: the subscriptions of the account's
// subscriber in the account's currency (docs/AUTHORIZATIONS.md).
type AccountSource struct {
	ID                  string `json:"id"`
	UserID              string `json:"userId"`
	SubscriberAccountID string `json:"subscriberAccountId"`
	// SubscriberID is the account's subscriber (read from the account).
	SubscriberID string    `json:"subscriberId"`
	CreatedAt    time.Time `json:"createdAt"`
}

// Errors of a reference in a request body that names nothing in the
// tenant: the caller's input is wrong (a 400 on the field), so they do not
// match store.ErrNotFound.
var (
	ErrNoSuchUser    = errors.New("subscriberuser: no such subscriber user in this tenant")
	ErrNoSuchAccount = errors.New("subscriberuser: no such subscriber account in this tenant")
)

// ErrAccountSourceExists: the user already has that account as a source.
// It matches store.ErrConflict.
var ErrAccountSourceExists = fmt.Errorf("the user already has that account source: %w", store.ErrConflict)

const accountSourceSelect = `SELECT a.id, a.user_id, a.account_id, sa.subscriber_id, a.created_at
	FROM account_sources a JOIN subscriber_accounts sa ON sa.tenant_id = a.tenant_id AND sa.id = a.account_id`

func scanAccountSource(row store.Scanner) (AccountSource, error) {
	var a AccountSource
	if err := row.Scan(&a.ID, &a.UserID, &a.SubscriberAccountID, &a.SubscriberID, &a.CreatedAt); err != nil {
		return AccountSource{}, err
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return a, nil
}

// rowExists reports whether query ($1 tenant, $2 id) finds a row.
func rowExists(ctx context.Context, tx *store.Tx, query, tenant, id string) (bool, error) {
	if !store.ValidID(id) {
		return false, nil
	}
	var one int
	err := tx.QueryRow(ctx, query, tenant, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// userInTenant returns ErrNoSuchUser unless the tenant has user id.
func userInTenant(ctx context.Context, tx *store.Tx, tenant, id string) error {
	ok, err := rowExists(ctx, tx, `SELECT 1 FROM subscriber_users WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if err == nil && !ok {
		err = ErrNoSuchUser
	}
	return err
}

// CreateAccountSource gives user userID the access of subscriber account
// accountID and returns the new source, created at now; the access it gives
// at the tenant's time at is recorded as a UserAuthorizationGranted event. A user or account the tenant does
// not have is ErrNoSuchUser or ErrNoSuchAccount; a pair that exists is
// ErrAccountSourceExists.
func CreateAccountSource(ctx context.Context, st *store.Store, userID, accountID string, now, at time.Time) (AccountSource, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AccountSource{}, err
	}
	a := AccountSource{ID: store.NewID(), UserID: userID, SubscriberAccountID: accountID, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	err = st.InTx(ctx, func(t *store.Tx) error {
		tx := t
		if err := userInTenant(ctx, tx, tenant, userID); err != nil {
			return err
		}
		if !store.ValidID(accountID) {
			return ErrNoSuchAccount
		}
		var currency string
		err := tx.QueryRow(ctx, `SELECT subscriber_id, currency FROM subscriber_accounts WHERE tenant_id = $1 AND id = $2`,
			tenant, accountID).Scan(&a.SubscriberID, &currency)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNoSuchAccount
		} else if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO account_sources (id, tenant_id, user_id, account_id, created_at)
			VALUES ($1, $2, $3, $4, $5)`, a.ID, tenant, userID, accountID, store.TimeParam(a.CreatedAt))
		if store.IsUniqueViolation(err) {
			return ErrAccountSourceExists
		} else if err != nil {
			return err
		}
		return addSourceEvent(ctx, st, t, store.EventUserAuthorizationGranted, userID, a.SubscriberID, accountID, a.ID, currency, at)
	})
	if err != nil {
		return AccountSource{}, fmt.Errorf("subscriberuser: create account source: %w", err)
	}
	return a, nil
}

// AccountSourceByID returns account source id of the context's tenant, or
// store.ErrNotFound.
func AccountSourceByID(ctx context.Context, st *store.Store, id string) (AccountSource, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AccountSource{}, err
	}
	if !store.ValidID(id) {
		return AccountSource{}, store.ErrNotFound
	}
	a, err := scanAccountSource(st.Reader().QueryRow(ctx, accountSourceSelect+` WHERE a.tenant_id = $1 AND a.id = $2`, tenant, id))
	if err != nil {
		return AccountSource{}, fmt.Errorf("subscriberuser: account source %s: %w", id, store.NotFound(err))
	}
	return a, nil
}

// AccountSourceFilter narrows ListAccountSources; zero fields do not
// filter. A filter naming a user or account the tenant does not have
// matches nothing: the contract's table for the list lists only 200 and
// 400 (product decisions §2).
type AccountSourceFilter struct {
	UserID, SubscriberAccountID string
}

// ListAccountSources returns one page of the tenant's account sources.
func ListAccountSources(ctx context.Context, st *store.Store, f AccountSourceFilter, p store.Page) ([]AccountSource, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("a", tenant)
	if f.UserID != "" {
		q.Add("a.user_id = ?", f.UserID)
	}
	if f.SubscriberAccountID != "" {
		q.Add("a.account_id = ?", f.SubscriberAccountID)
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanAccountSource, accountSourceSelect, q, "a.id", p,
		func(a AccountSource) string { return a.ID })
	if err != nil {
		return nil, "", fmt.Errorf("subscriberuser: list account sources: %w", err)
	}
	return out, next, nil
}

// DeleteAccountSource removes account source id, or returns store.ErrNotFound;
// the access it gave is revoked at the tenant's time at (a
// UserAuthorizationRevoked event).
func DeleteAccountSource(ctx context.Context, st *store.Store, id string, at time.Time) error {
	if _, err := tenancy.From(ctx); err != nil {
		return err
	}
	if !store.ValidID(id) {
		return fmt.Errorf("subscriberuser: delete account source %s: %w", id, store.ErrNotFound)
	}
	err := st.InTx(ctx, func(t *store.Tx) error {
		var user, account, subscriber, currency string
		err := t.QueryRow(ctx, `DELETE FROM account_sources WHERE tenant_id = $1 AND id = $2
			RETURNING user_id, account_id`, t.TenantID(), id).Scan(&user, &account)
		if err != nil {
			return store.NotFound(err)
		}
		if err := t.QueryRow(ctx, `SELECT subscriber_id, currency FROM subscriber_accounts WHERE tenant_id = $1 AND id = $2`,
			t.TenantID(), account).Scan(&subscriber, &currency); err != nil {
			return err
		}
		return addSourceEvent(ctx, st, t, store.EventUserAuthorizationRevoked, user, subscriber, account, id, currency, at)
	})
	if err != nil {
		return fmt.Errorf("subscriberuser: delete account source %s: %w", id, err)
	}
	return nil
}

// IdP account kinds (docs/AUTHORIZATIONS.md).
const (
	// IdPA is Kadens' own user directory: the identifier is another login
	// name of the user, matched ignoring case.
	IdPA = "idp-a"
	// IdPB is a trusted external OpenID Connect issuer: the identifier is
	// the subject of the issuer's tokens, matched exactly.
	IdPB = "idp-b"
)

// IdPAccount binds an identifier at an identity provider to a subscriber
// user.
type IdPAccount struct {
	ID         string
	Kind       string
	Identifier string
	// Issuer is the external issuer of an IdPB account; "" for IdPA.
	Issuer    string
	UserID    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ErrIdentifierTaken: the kind already has an account with the identifier.
// It matches store.ErrConflict.
var ErrIdentifierTaken = fmt.Errorf("an account with that identifier exists: %w", store.ErrConflict)

// identifierKey is how identifiers of kind are compared: idp-a login names
// ignoring case, external subjects exactly.
func identifierKey(kind, identifier string) string {
	if kind == IdPA {
		return emailKey(identifier)
	}
	return identifier
}

const idpAccountColumns = `id, kind, identifier, issuer, user_id, created_at, updated_at`

func scanIdPAccount(row store.Scanner) (IdPAccount, error) {
	var a IdPAccount
	if err := row.Scan(&a.ID, &a.Kind, &a.Identifier, &a.Issuer, &a.UserID, &a.CreatedAt, &a.UpdatedAt); err != nil {
		return IdPAccount{}, err
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, nil
}

// CreateIdPAccount stores a new account of a.Kind and returns it. A user
// the tenant does not have is ErrNoSuchUser; an identifier the kind has is
// ErrIdentifierTaken.
func CreateIdPAccount(ctx context.Context, st *store.Store, a IdPAccount, now time.Time) (IdPAccount, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return IdPAccount{}, err
	}
	a.ID = store.NewID()
	a.CreatedAt = now.UTC().Truncate(time.Microsecond)
	a.UpdatedAt = a.CreatedAt
	err = st.InTx(ctx, func(tx *store.Tx) error {
		if err := userInTenant(ctx, tx, tenant, a.UserID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO identity_provider_accounts (id, tenant_id, kind, identifier, identifier_key,
			issuer, user_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			a.ID, tenant, a.Kind, a.Identifier, identifierKey(a.Kind, a.Identifier), a.Issuer, a.UserID, store.TimeParam(a.CreatedAt), store.TimeParam(a.UpdatedAt))
		if store.IsUniqueViolation(err) {
			return ErrIdentifierTaken
		}
		return err
	})
	if err != nil {
		return IdPAccount{}, fmt.Errorf("subscriberuser: create %s account: %w", a.Kind, err)
	}
	return a, nil
}

// IdPAccountByIdentifier returns the account of kind with identifier, or store.ErrNotFound.
func IdPAccountByIdentifier(ctx context.Context, st *store.Store, kind, identifier string) (IdPAccount, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return IdPAccount{}, err
	}
	a, err := scanIdPAccount(st.Reader().QueryRow(ctx, `SELECT `+idpAccountColumns+` FROM identity_provider_accounts
		WHERE tenant_id = $1 AND kind = $2 AND identifier_key = $3`, tenant, kind, identifierKey(kind, identifier)))
	if err != nil {
		return IdPAccount{}, fmt.Errorf("subscriberuser: %s account %q: %w", kind, identifier, store.NotFound(err))
	}
	return a, nil
}

// ExternalUser returns the user an idp-b account binds to the subject of
// issuer, or store.ErrNotFound. It is how a token of a trusted external issuer
// becomes a subscriber user.
func ExternalUser(ctx context.Context, st *store.Store, issuer, subject string) (string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return "", err
	}
	var user string
	err = st.Reader().QueryRow(ctx, `SELECT user_id FROM identity_provider_accounts
		WHERE tenant_id = $1 AND kind = 'idp-b' AND identifier_key = $2 AND issuer = $3`, tenant, subject, issuer).Scan(&user)
	if err != nil {
		return "", fmt.Errorf("subscriberuser: external user of %s: %w", issuer, store.NotFound(err))
	}
	return user, nil
}

// ListIdPAccounts returns one page of the tenant's accounts of kind.
func ListIdPAccounts(ctx context.Context, st *store.Store, kind string, p store.Page) ([]IdPAccount, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("", tenant)
	q.Add("kind = ?", kind)
	out, next, err := store.ListPage(ctx, st.Reader(), scanIdPAccount, `SELECT `+idpAccountColumns+` FROM identity_provider_accounts`, q, "id", p,
		func(a IdPAccount) string { return a.ID })
	if err != nil {
		return nil, "", fmt.Errorf("subscriberuser: list %s accounts: %w", kind, err)
	}
	return out, next, nil
}

// UpdateIdPAccount rebinds the account of kind with identifier to userID
// (and, for idp-b, to issuer), or returns store.ErrNotFound. A user the tenant
// does not have is ErrNoSuchUser.
func UpdateIdPAccount(ctx context.Context, st *store.Store, kind, identifier, userID, issuer string, now time.Time) (IdPAccount, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return IdPAccount{}, err
	}
	var a IdPAccount
	err = st.InTx(ctx, func(tx *store.Tx) error {
		if err := userInTenant(ctx, tx, tenant, userID); err != nil {
			return err
		}
		var err error
		a, err = scanIdPAccount(tx.QueryRow(ctx, `UPDATE identity_provider_accounts SET user_id = $4, issuer = $5, updated_at = $6
			WHERE tenant_id = $1 AND kind = $2 AND identifier_key = $3 RETURNING `+idpAccountColumns,
			tenant, kind, identifierKey(kind, identifier), userID, issuer, store.TimeParam(now)))
		return store.NotFound(err)
	})
	if err != nil {
		return IdPAccount{}, fmt.Errorf("subscriberuser: update %s account %q: %w", kind, identifier, err)
	}
	return a, nil
}

// DeleteIdPAccount removes the account of kind with identifier, or returns
// store.ErrNotFound.
func DeleteIdPAccount(ctx context.Context, st *store.Store, kind, identifier string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	res, err := st.Writer().Exec(ctx, `DELETE FROM identity_provider_accounts WHERE tenant_id = $1 AND kind = $2 AND identifier_key = $3`,
		tenant, kind, identifierKey(kind, identifier))
	if err != nil {
		return fmt.Errorf("subscriberuser: delete %s account %q: %w", kind, identifier, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("subscriberuser: delete %s account %q: %w", kind, identifier, err)
	} else if n == 0 {
		return fmt.Errorf("subscriberuser: delete %s account %q: %w", kind, identifier, store.ErrNotFound)
	}
	return nil
}

// SubscriberUserByLogin returns the context's tenant's user who logs in
// with login: the user with that e-mail, or else the user an idp-a
// account with that identifier binds (both ignoring case), or
// store.ErrNotFound. One statement: a login is one read.
func SubscriberUserByLogin(ctx context.Context, st *store.Store, login string) (SubscriberUser, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return SubscriberUser{}, err
	}
	key := emailKey(login)
	cols := "u." + strings.ReplaceAll(subscriberUserColumns, ", ", ", u.")
	// The e-mail wins over an idp-a identifier that equals it (rank).
	u, err := scanSubscriberUser(rankedRow{st.Reader().QueryRow(ctx, `SELECT 0, `+cols+` FROM subscriber_users u
		WHERE u.tenant_id = $1 AND u.email_key = $2
		UNION ALL
		SELECT 1, `+cols+` FROM identity_provider_accounts a JOIN subscriber_users u ON u.tenant_id = a.tenant_id AND u.id = a.user_id
		WHERE a.tenant_id = $1 AND a.kind = 'idp-a' AND a.identifier_key = $2
		ORDER BY 1 LIMIT 1`, tenant, key)})
	if err != nil {
		return SubscriberUser{}, fmt.Errorf("subscriberuser: subscriber user by login: %w", store.NotFound(err))
	}
	return u, nil
}

// rankedRow reads a row whose first column is a rank the caller does not
// need.
type rankedRow struct{ row store.Scanner }

func (r rankedRow) Scan(dest ...any) error {
	var rank int
	return r.row.Scan(append([]any{&rank}, dest...)...)
}
