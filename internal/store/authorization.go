package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

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
// match ErrNotFound.
var (
	ErrNoSuchUser    = errors.New("store: no such subscriber user in this tenant")
	ErrNoSuchAccount = errors.New("store: no such subscriber account in this tenant")
)

// ErrAccountSourceExists: the user already has that account as a source.
// It matches ErrConflict.
var ErrAccountSourceExists = fmt.Errorf("the user already has that account source: %w", ErrConflict)

const accountSourceSelect = `SELECT a.id, a.user_id, a.account_id, sa.subscriber_id, a.created_at
	FROM account_sources a JOIN subscriber_accounts sa ON sa.tenant_id = a.tenant_id AND sa.id = a.account_id`

func scanAccountSource(row scanner) (AccountSource, error) {
	var a AccountSource
	if err := row.Scan(&a.ID, &a.UserID, &a.SubscriberAccountID, &a.SubscriberID, &a.CreatedAt); err != nil {
		return AccountSource{}, err
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return a, nil
}

// rowExists reports whether query ($1 tenant, $2 id) finds a row.
func rowExists(ctx context.Context, q queryer, query, tenant, id string) (bool, error) {
	if !ValidID(id) {
		return false, nil
	}
	var one int
	err := q.QueryRowContext(ctx, query, tenant, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// userInTenant returns ErrNoSuchUser unless the tenant has user id.
func userInTenant(ctx context.Context, q queryer, tenant, id string) error {
	ok, err := rowExists(ctx, q, `SELECT 1 FROM subscriber_users WHERE tenant_id = $1 AND id = $2`, tenant, id)
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
func (s *Store) CreateAccountSource(ctx context.Context, userID, accountID string, now, at time.Time) (AccountSource, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AccountSource{}, err
	}
	a := AccountSource{ID: NewID(), UserID: userID, SubscriberAccountID: accountID, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	err = s.InTx(ctx, func(t *Tx) error {
		tx := t.tx
		if err := userInTenant(ctx, tx, tenant, userID); err != nil {
			return err
		}
		if !ValidID(accountID) {
			return ErrNoSuchAccount
		}
		var currency string
		err := tx.QueryRowContext(ctx, `SELECT subscriber_id, currency FROM subscriber_accounts WHERE tenant_id = $1 AND id = $2`,
			tenant, accountID).Scan(&a.SubscriberID, &currency)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNoSuchAccount
		} else if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO account_sources (id, tenant_id, user_id, account_id, created_at)
			VALUES ($1, $2, $3, $4, $5)`, a.ID, tenant, userID, accountID, ts(a.CreatedAt))
		if isUniqueViolation(err) {
			return ErrAccountSourceExists
		} else if err != nil {
			return err
		}
		return t.addSourceEvent(ctx, EventUserAuthorizationGranted, userID, a.SubscriberID, accountID, a.ID, currency, at)
	})
	if err != nil {
		return AccountSource{}, fmt.Errorf("store: create account source: %w", err)
	}
	return a, nil
}

// AccountSource returns account source id of the context's tenant, or
// ErrNotFound.
func (s *Store) AccountSource(ctx context.Context, id string) (AccountSource, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AccountSource{}, err
	}
	if !ValidID(id) {
		return AccountSource{}, ErrNotFound
	}
	a, err := scanAccountSource(s.readRow(ctx, accountSourceSelect+` WHERE a.tenant_id = $1 AND a.id = $2`, tenant, id))
	if err != nil {
		return AccountSource{}, fmt.Errorf("store: account source %s: %w", id, notFound(err))
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
func (s *Store) ListAccountSources(ctx context.Context, f AccountSourceFilter, p Page) ([]AccountSource, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilterOn("a", tenant)
	if f.UserID != "" {
		q.add("a.user_id = ?", f.UserID)
	}
	if f.SubscriberAccountID != "" {
		q.add("a.account_id = ?", f.SubscriberAccountID)
	}
	tail := q.pageOn("a.id", p)
	out, err := queryAll(ctx, s.r, scanAccountSource, accountSourceSelect+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list account sources: %w", err)
	}
	out, next := trimPage(out, p, func(a AccountSource) string { return a.ID })
	return out, next, nil
}

// DeleteAccountSource removes account source id, or returns ErrNotFound;
// the access it gave is revoked at the tenant's time at (a
// UserAuthorizationRevoked event).
func (s *Store) DeleteAccountSource(ctx context.Context, id string, at time.Time) error {
	if _, err := tenancy.From(ctx); err != nil {
		return err
	}
	if !ValidID(id) {
		return fmt.Errorf("store: delete account source %s: %w", id, ErrNotFound)
	}
	err := s.InTx(ctx, func(t *Tx) error {
		var user, account, subscriber, currency string
		err := t.tx.QueryRowContext(ctx, `DELETE FROM account_sources WHERE tenant_id = $1 AND id = $2
			RETURNING user_id, account_id`, t.tenant, id).Scan(&user, &account)
		if err != nil {
			return notFound(err)
		}
		if err := t.tx.QueryRowContext(ctx, `SELECT subscriber_id, currency FROM subscriber_accounts WHERE tenant_id = $1 AND id = $2`,
			t.tenant, account).Scan(&subscriber, &currency); err != nil {
			return err
		}
		return t.addSourceEvent(ctx, EventUserAuthorizationRevoked, user, subscriber, account, id, currency, at)
	})
	if err != nil {
		return fmt.Errorf("store: delete account source %s: %w", id, err)
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
// It matches ErrConflict.
var ErrIdentifierTaken = fmt.Errorf("an account with that identifier exists: %w", ErrConflict)

// identifierKey is how identifiers of kind are compared: idp-a login names
// ignoring case, external subjects exactly.
func identifierKey(kind, identifier string) string {
	if kind == IdPA {
		return emailKey(identifier)
	}
	return identifier
}

const idpAccountColumns = `id, kind, identifier, issuer, user_id, created_at, updated_at`

func scanIdPAccount(row scanner) (IdPAccount, error) {
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
func (s *Store) CreateIdPAccount(ctx context.Context, a IdPAccount, now time.Time) (IdPAccount, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return IdPAccount{}, err
	}
	a.ID = NewID()
	a.CreatedAt = now.UTC().Truncate(time.Microsecond)
	a.UpdatedAt = a.CreatedAt
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := userInTenant(ctx, tx, tenant, a.UserID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO identity_provider_accounts (id, tenant_id, kind, identifier, identifier_key,
			issuer, user_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			a.ID, tenant, a.Kind, a.Identifier, identifierKey(a.Kind, a.Identifier), a.Issuer, a.UserID, ts(a.CreatedAt), ts(a.UpdatedAt))
		if isUniqueViolation(err) {
			return ErrIdentifierTaken
		}
		return err
	})
	if err != nil {
		return IdPAccount{}, fmt.Errorf("store: create %s account: %w", a.Kind, err)
	}
	return a, nil
}

// IdPAccount returns the account of kind with identifier, or ErrNotFound.
func (s *Store) IdPAccount(ctx context.Context, kind, identifier string) (IdPAccount, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return IdPAccount{}, err
	}
	a, err := scanIdPAccount(s.readRow(ctx, `SELECT `+idpAccountColumns+` FROM identity_provider_accounts
		WHERE tenant_id = $1 AND kind = $2 AND identifier_key = $3`, tenant, kind, identifierKey(kind, identifier)))
	if err != nil {
		return IdPAccount{}, fmt.Errorf("store: %s account %q: %w", kind, identifier, notFound(err))
	}
	return a, nil
}

// ExternalUser returns the user an idp-b account binds to the subject of
// issuer, or ErrNotFound. It is how a token of a trusted external issuer
// becomes a subscriber user.
func (s *Store) ExternalUser(ctx context.Context, issuer, subject string) (string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return "", err
	}
	var user string
	err = s.readRow(ctx, `SELECT user_id FROM identity_provider_accounts
		WHERE tenant_id = $1 AND kind = 'idp-b' AND identifier_key = $2 AND issuer = $3`, tenant, subject, issuer).Scan(&user)
	if err != nil {
		return "", fmt.Errorf("store: external user of %s: %w", issuer, notFound(err))
	}
	return user, nil
}

// ListIdPAccounts returns one page of the tenant's accounts of kind.
func (s *Store) ListIdPAccounts(ctx context.Context, kind string, p Page) ([]IdPAccount, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	q.add("kind = ?", kind)
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanIdPAccount, `SELECT `+idpAccountColumns+` FROM identity_provider_accounts`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list %s accounts: %w", kind, err)
	}
	out, next := trimPage(out, p, func(a IdPAccount) string { return a.ID })
	return out, next, nil
}

// UpdateIdPAccount rebinds the account of kind with identifier to userID
// (and, for idp-b, to issuer), or returns ErrNotFound. A user the tenant
// does not have is ErrNoSuchUser.
func (s *Store) UpdateIdPAccount(ctx context.Context, kind, identifier, userID, issuer string, now time.Time) (IdPAccount, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return IdPAccount{}, err
	}
	var a IdPAccount
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := userInTenant(ctx, tx, tenant, userID); err != nil {
			return err
		}
		var err error
		a, err = scanIdPAccount(tx.QueryRowContext(ctx, `UPDATE identity_provider_accounts SET user_id = $4, issuer = $5, updated_at = $6
			WHERE tenant_id = $1 AND kind = $2 AND identifier_key = $3 RETURNING `+idpAccountColumns,
			tenant, kind, identifierKey(kind, identifier), userID, issuer, ts(now)))
		return notFound(err)
	})
	if err != nil {
		return IdPAccount{}, fmt.Errorf("store: update %s account %q: %w", kind, identifier, err)
	}
	return a, nil
}

// DeleteIdPAccount removes the account of kind with identifier, or returns
// ErrNotFound.
func (s *Store) DeleteIdPAccount(ctx context.Context, kind, identifier string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM identity_provider_accounts WHERE tenant_id = $1 AND kind = $2 AND identifier_key = $3`,
		tenant, kind, identifierKey(kind, identifier))
	if err != nil {
		return fmt.Errorf("store: delete %s account %q: %w", kind, identifier, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: delete %s account %q: %w", kind, identifier, err)
	} else if n == 0 {
		return fmt.Errorf("store: delete %s account %q: %w", kind, identifier, ErrNotFound)
	}
	return nil
}

// SubscriberUserByLogin returns the context's tenant's user who logs in
// with login: the user with that e-mail, or else the user an idp-a
// account with that identifier binds (both ignoring case), or
// ErrNotFound. One statement: a login is one read.
func (s *Store) SubscriberUserByLogin(ctx context.Context, login string) (SubscriberUser, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return SubscriberUser{}, err
	}
	key := emailKey(login)
	cols := "u." + strings.ReplaceAll(subscriberUserColumns, ", ", ", u.")
	// The e-mail wins over an idp-a identifier that equals it (rank).
	u, err := scanSubscriberUser(rankedRow{s.readRow(ctx, `SELECT 0, `+cols+` FROM subscriber_users u
		WHERE u.tenant_id = $1 AND u.email_key = $2
		UNION ALL
		SELECT 1, `+cols+` FROM identity_provider_accounts a JOIN subscriber_users u ON u.tenant_id = a.tenant_id AND u.id = a.user_id
		WHERE a.tenant_id = $1 AND a.kind = 'idp-a' AND a.identifier_key = $2
		ORDER BY 1 LIMIT 1`, tenant, key)})
	if err != nil {
		return SubscriberUser{}, fmt.Errorf("store: subscriber user by login: %w", notFound(err))
	}
	return u, nil
}

// rankedRow reads a row whose first column is a rank the caller does not
// need.
type rankedRow struct{ row scanner }

func (r rankedRow) Scan(dest ...any) error {
	var rank int
	return r.row.Scan(append([]any{&rank}, dest...)...)
}
