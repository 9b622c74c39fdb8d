package subscriberuser

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/password"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Errors of Authenticate. A login page shows the same words for both
// ("wrong e-mail or password" / "account disabled" may differ only after
// the password was right), so an unknown address cannot be told apart
// from a wrong password.
var (
	// ErrInvalidCredentials: no such user, a wrong password, or a user
	// without a password.
	ErrInvalidCredentials = errors.New("subscriberuser: wrong e-mail or password")
	// ErrDisabled: the password was right but the user is disabled.
	ErrDisabled = errors.New("subscriberuser: user is disabled")
)

// Directory is the tenant-scoped user directory over the store.
type Directory struct {
	Store *store.Store
	// Params are the cost of new hashes; zero means password.DefaultParams.
	Params Params
	// Now is the clock of created/updated times; nil means time.Now.
	Now func() time.Time

	dummyOnce sync.Once
	dummy     string
}

func (d *Directory) params() Params {
	if d.Params == (Params{}) {
		return password.DefaultParams
	}
	return d.Params
}

func (d *Directory) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// dummyHash is a hash under the directory's parameters of a password no
// one knows, checked when there is no user, so that an unknown e-mail
// costs what a known one does.
func (d *Directory) dummyHash() string {
	d.dummyOnce.Do(func() {
		h, err := Hash("no user has this password", d.params())
		if err != nil {
			panic(fmt.Sprintf("subscriberuser: dummy hash: %v", err))
		}
		d.dummy = h
	})
	return d.dummy
}

// Authenticate checks login (an e-mail address, or the identifier of an
// idp-a account) and password against tenantID's users and returns the
// user. An unknown login, a user without a password and a
// wrong password are all ErrInvalidCredentials and all cost one argon2id
// check; a right password of a disabled user is ErrDisabled. A hash made
// under older parameters is replaced after a successful check.
func (d *Directory) Authenticate(ctx context.Context, tenantID, login, password string) (SubscriberUser, error) {
	ctx = tenancy.With(ctx, tenantID)
	var u SubscriberUser
	if store.ValidID(tenantID) {
		var err error
		u, err = SubscriberUserByLogin(ctx, d.Store, login)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return SubscriberUser{}, fmt.Errorf("subscriberuser: authenticate: %w", err)
		}
	}
	hash := u.PasswordHash
	if hash == "" {
		hash = d.dummyHash()
	}
	ok, err := Verify(hash, password)
	if err != nil {
		return SubscriberUser{}, fmt.Errorf("subscriberuser: authenticate user %s: %w", u.ID, err)
	}
	if !ok || u.PasswordHash == "" {
		return SubscriberUser{}, ErrInvalidCredentials
	}
	if u.Disabled {
		return SubscriberUser{}, ErrDisabled
	}
	if NeedsRehash(u.PasswordHash, d.params()) {
		// Best effort: the login succeeded whatever this does.
		if h, err := Hash(password, d.params()); err == nil {
			if nu, err := SetSubscriberUserPassword(ctx, d.Store, u.ID, h, d.now()); err == nil {
				u = nu
			}
		}
	}
	return u, nil
}

// Create hashes password (none when "") and stores a new user of the
// context's tenant. Errors are those of store.CreateSubscriberUser.
func (d *Directory) Create(ctx context.Context, email, password, subscriberID string) (SubscriberUser, error) {
	return d.CreateUser(ctx, SubscriberUser{Email: email, SubscriberID: subscriberID}, password)
}

// CreateUser is Create for a user given whole (e.g. created disabled), in
// one write. The access a linked user gets is dated at the directory's
// clock; CreateUserAt takes the tenant's time instead.
func (d *Directory) CreateUser(ctx context.Context, u SubscriberUser, password string) (SubscriberUser, error) {
	return d.CreateUserAt(ctx, u, password, d.now())
}

// CreateUserAt is CreateUser with the UserAuthorizationGranted of a user
// created linked to a subscriber dated at the tenant's time at (a test
// clock's, for a test tenant), as a later link would be.
func (d *Directory) CreateUserAt(ctx context.Context, u SubscriberUser, password string, at time.Time) (SubscriberUser, error) {
	if password != "" {
		h, err := Hash(password, d.params())
		if err != nil {
			return SubscriberUser{}, err
		}
		u.PasswordHash = h
	}
	return CreateSubscriberUser(ctx, d.Store, u, d.now(), at)
}

// SetPassword replaces user id's password (none when "").
func (d *Directory) SetPassword(ctx context.Context, id, password string) (SubscriberUser, error) {
	h := ""
	if password != "" {
		var err error
		if h, err = Hash(password, d.params()); err != nil {
			return SubscriberUser{}, err
		}
	}
	return SetSubscriberUserPassword(ctx, d.Store, id, h, d.now())
}
