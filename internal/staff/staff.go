// Package staff is the console's user wing: the merchant's own people
// (staff users) who log in to the console, their roles, passwords
// (argon2id through internal/password), set-password links, sessions and
// TOTP second factor. Its tables (migration 00056) and their SQL live here
// on the store's query kit (sql_*.go). docs/CONSOLE.md, "Staff users and
// sessions", says what the rules are and why.
//
// The console resolves the tenant at login, before a tenant context
// exists, so the methods take the tenant id explicitly; every statement
// is still scoped by tenant_id.
package staff

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/password"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// Role is what a staff user may do in the console.
type Role string

// The roles. An admin manages staff users and everything else; support
// works with subscribers and their subscriptions; finance with invoices,
// payments and exports. The console decides what each page allows.
const (
	RoleAdmin   Role = "admin"
	RoleSupport Role = "support"
	RoleFinance Role = "finance"
)

// ParseRole returns the role s names, or a validation.Errors naming the
// field "role".
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleAdmin, RoleSupport, RoleFinance:
		return r, nil
	}
	return "", validation.Field("role", "must be admin, support or finance")
}

// User is a staff user as the console sees it: the password hash and the
// TOTP secret never leave this package.
type User struct {
	ID, TenantID, Email, Name string
	Role                      Role
	// HasPassword: a password is set (until then only a set-password link
	// lets the user in). TOTPEnabled: logins need a TOTP code after the
	// password.
	Disabled, HasPassword, TOTPEnabled bool
	CreatedAt, UpdatedAt               time.Time
}

// Session is a console login. CSRF is the token the console's forms carry
// (compared with subtle.ConstantTimeCompare by the console).
// SecondFactorPending: the password was right and a TOTP code is still
// due; such a session grants nothing but CompleteSecondFactor.
type Session struct {
	ID, TenantID, UserID, CSRF string
	SecondFactorPending        bool
	CreatedAt, LastSeenAt      time.Time
}

// NewUser is what CreateUser needs. Password "" creates a user without one:
// the caller then makes a set-password link (SetPasswordLink) and hands it
// over, so that no one but the user ever knows the password.
type NewUser struct {
	Email, Name string
	Role        Role
	Password    string
}

// Options tune a Directory; zero values take the defaults.
type Options struct {
	// Now is the clock (time.Now).
	Now func() time.Time
	// IdleTimeout ends a session not used for this long (30 min);
	// AbsoluteTimeout ends one this long after login whatever its use
	// (12 h); LinkTTL is how long a set-password link works (72 h).
	IdleTimeout, AbsoluteTimeout, LinkTTL time.Duration
	// Params are the cost of new password hashes (password.DefaultParams).
	Params password.Params
}

// Errors.
var (
	// ErrEmailTaken: another staff user of the tenant has the address
	// (ignoring case). It matches store.ErrConflict.
	ErrEmailTaken = fmt.Errorf("staff: a staff user with that e-mail exists: %w", store.ErrConflict)
	// ErrBadCredentials: an unknown e-mail, a wrong password, a user
	// without a password or a disabled one (one answer for all, so a login
	// form tells nothing apart), or a wrong TOTP code.
	ErrBadCredentials = errors.New("staff: wrong e-mail, password or code")
	// ErrNoSession: no such session, or it has ended (timed out, logged
	// out, its user disabled or given a new password).
	ErrNoSession = errors.New("staff: no such session")
	// ErrBadLink: the set-password link is unknown, used, superseded or
	// expired.
	ErrBadLink = errors.New("staff: the link is not valid (used, replaced or expired)")
	// ErrLastAdmin: the change would leave the tenant without an enabled
	// admin, and so without anyone who can manage staff in the console.
	ErrLastAdmin = errors.New("staff: the tenant's last enabled admin cannot be disabled or demoted")
)

// Password length bounds: at least 12 characters (length is what makes a
// password hard to guess; no composition rules), at most 1024 bytes (a
// bound on what a request can hand the hasher).
const (
	minPassword = 12
	maxPassword = 1024
	maxEmail    = 254
	maxName     = 200
)

// Directory is the staff users, sessions and links over the store.
type Directory struct {
	st *store.Store
	o  Options

	dummyOnce sync.Once
	dummy     string
}

// New returns the directory of st with o's settings.
func New(st *store.Store, o Options) *Directory {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Minute
	}
	if o.AbsoluteTimeout <= 0 {
		o.AbsoluteTimeout = 12 * time.Hour
	}
	if o.LinkTTL <= 0 {
		o.LinkTTL = 72 * time.Hour
	}
	if o.Params == (password.Params{}) {
		o.Params = password.DefaultParams
	}
	d := &Directory{st: st, o: o}
	// Made now, not at the first unknown address, so that even that
	// attempt costs one hash and not two.
	d.dummyHash()
	return d
}

// now is the directory's clock at the precision both engines store.
func (d *Directory) now() time.Time { return d.o.Now().UTC().Truncate(time.Microsecond) }

// dummyHash is a hash, under the directory's parameters, of a password no
// one knows: checked when there is no user or no password, so that every
// login attempt costs one argon2id run.
func (d *Directory) dummyHash() string {
	d.dummyOnce.Do(func() {
		h, err := password.Hash("no staff user has this password", d.o.Params)
		if err != nil {
			panic(fmt.Sprintf("staff: dummy hash: %v", err))
		}
		d.dummy = h
	})
	return d.dummy
}

// newToken returns a fresh secret: 32 bytes from crypto/rand, base64url
// without padding.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("staff: random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// tokenHash is what the database keeps of a token: its SHA-256, in hex.
// The tokens carry 256 random bits, so no salt or slow hash is needed.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// checkEmail records what is wrong with a staff user's address.
func checkEmail(errs *validation.Errors, email string) {
	if p := validation.TextProblem(email, false); p != "" {
		errs.Add("email", "%s", p)
		return
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" || len(email) > maxEmail {
		errs.Add("email", "must be an e-mail address (at most %d characters)", maxEmail)
	}
}

// checkPassword records what is wrong with a new password.
func checkPassword(errs *validation.Errors, pw string) {
	switch {
	case utf8.RuneCountInString(pw) < minPassword:
		errs.Add("password", "must be at least %d characters", minPassword)
	case len(pw) > maxPassword:
		errs.Add("password", "must be at most %d bytes", maxPassword)
	case !utf8.ValidString(pw):
		errs.Add("password", "must be valid UTF-8 text")
	}
}
