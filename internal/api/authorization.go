package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/validation"
)

// Subscriber users, account sources, identity-provider accounts and
// entitlements: the /authorizations/... routes (docs/AUTHORIZATIONS.md).

// SubscriberUserCreate is the body of POST /authorizations/user.
type SubscriberUserCreate struct {
	Email        *string `json:"email" required:"true" format:"email" maxLength:"254" example:"kari@example.no" description:"The login name; unique in the tenant, ignoring case."`
	Password     *string `json:"password" minLength:"8" maxLength:"256" description:"Leave out for a user who cannot log in with a password (e.g. one who logs in through an external identity provider, idp-b). Stored as an argon2id hash, never shown."`
	SubscriberID *string `json:"subscriberId" format:"uuid" description:"The subscriber the user acts for; leave out for none."`
	Disabled     *bool   `json:"disabled" description:"Create the user disabled (default false)."`
}

// SubscriberUser is a subscriber user as the API shows it.
type SubscriberUser struct {
	ID           string    `json:"id" format:"uuid"`
	Email        string    `json:"email"`
	Disabled     bool      `json:"disabled" description:"A disabled user cannot log in and has no access."`
	HasPassword  bool      `json:"hasPassword" description:"Whether the user can log in with a password."`
	SubscriberID *string   `json:"subscriberId" format:"uuid" description:"The linked subscriber; null when none."`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

func userView(u subscriberuser.SubscriberUser) SubscriberUser {
	v := SubscriberUser{ID: u.ID, Email: u.Email, Disabled: u.Disabled, HasPassword: u.PasswordHash != "",
		CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
	if u.SubscriberID != "" {
		v.SubscriberID = &u.SubscriberID
	}
	return v
}

// SubscriberUserLink is the body of PUT /authorizations/user/{id}/subscriber.
type SubscriberUserLink struct {
	SubscriberID *string `json:"subscriberId" format:"uuid" description:"The subscriber to link the user to; null (or left out) unlinks."`
}

// SubscriberUserPassword is the body of PUT /authorizations/user/{id}/password.
type SubscriberUserPassword struct {
	Password *string `json:"password" minLength:"8" maxLength:"256" description:"The new password; null (or left out) removes password login."`
}

type userListParams struct {
	apikit.ListParams
	Email        string `query:"email" description:"Only the user with this e-mail (whole address, ignoring case)."`
	SubscriberID string `query:"subscriberId" format:"uuid" description:"Only users linked to this subscriber."`
	Disabled     string `query:"disabled" enum:"true,false" description:"Only disabled (true) or enabled (false) users."`
}

type userLinkRequest struct {
	apikit.IDParam
	SubscriberUserLink
}

type userPasswordRequest struct {
	apikit.IDParam
	SubscriberUserPassword
}

type userIDParam struct {
	UserID string `path:"userId" format:"uuid"`
}

// AccountSourceCreate is the body of POST /authorizations/source/account.
type AccountSourceCreate struct {
	UserID              *string `json:"userId" required:"true" format:"uuid" description:"The subscriber user that gets the account's access."`
	SubscriberAccountID *string `json:"subscriberAccountId" required:"true" format:"uuid" description:"The subscriber account whose subscriptions (its subscriber's, in its currency) grant the access."`
}

type accountSourceListParams struct {
	apikit.ListParams
	UserID              string `query:"userId" format:"uuid" description:"Only sources of this user. The contract spells it UserId; names match ignoring case."`
	SubscriberAccountID string `query:"subscriberAccountId" format:"uuid" description:"Only sources of this subscriber account. The contract spells it SubscriberAccountId."`
}

var (
	respAccepted = response{status: http.StatusAccepted, desc: "Accepted; no body."}
	respBare400  = response{status: http.StatusBadRequest, desc: "Invalid query (a filter that is not a uuid, a bad limit or cursor, an undeclared parameter); no body, as the contract says."}
)

func (s *Server) authorizationRoutes() {
	const tag = "Authorizations"
	s.add(route{method: http.MethodPost, path: "/authorizations/user", id: "createSubscriberUser", tag: tag,
		summary: "Create a subscriber user",
		desc: "A person who logs in at the identity provider for the tenant's subscribers. An e-mail another user of the tenant " +
			"has (ignoring case) is a 400 naming `email`; a subscriberId the tenant does not have is a 400 naming `subscriberId`.",
		request: new(SubscriberUserCreate), responses: common(respCreated), handle: s.createUser})
	s.add(route{method: http.MethodGet, path: "/authorizations/user", id: "listSubscriberUsers", tag: tag,
		summary: "List subscriber users", desc: "Filters combine with AND.",
		request: new(userListParams), responses: common(respList(new([]SubscriberUser))), handle: s.listUsers})
	s.add(route{method: http.MethodGet, path: "/authorizations/user/{id}", id: "getSubscriberUser", tag: tag,
		summary: "Get a subscriber user", request: new(apikit.IDParam),
		responses: common(respOK(new(SubscriberUser)), respNotFound),
		handle: apikit.GetOne(func(ctx context.Context, id string) (SubscriberUser, error) {
			u, err := subscriberuser.UserByID(ctx, s.store, id)
			return userView(u), err
		})})
	s.add(route{method: http.MethodPost, path: "/authorizations/user/{id}/disable", id: "disableSubscriberUser", tag: tag,
		summary: "Disable a subscriber user", desc: "The user can no longer log in and has no access; its links stay. Disabling a disabled user changes nothing.",
		request: new(apikit.IDParam), responses: common(respNoContent, respNotFound), handle: s.setUserDisabled(true)})
	s.add(route{method: http.MethodPost, path: "/authorizations/user/{id}/enable", id: "enableSubscriberUser", tag: tag,
		summary: "Enable a subscriber user", desc: "Undoes a disable.",
		request: new(apikit.IDParam), responses: common(respNoContent, respNotFound), handle: s.setUserDisabled(false)})
	s.add(route{method: http.MethodPut, path: "/authorizations/user/{id}/subscriber", id: "linkSubscriberUser", tag: tag,
		summary: "Link a subscriber user to a subscriber, or unlink it",
		desc:    "A subscriberId the tenant does not have is a 400 naming `subscriberId`.",
		request: new(userLinkRequest), responses: common(respNoContent, respNotFound), handle: s.linkUser})
	s.add(route{method: http.MethodPut, path: "/authorizations/user/{id}/password", id: "setSubscriberUserPassword", tag: tag,
		summary: "Set or remove a subscriber user's password",
		request: new(userPasswordRequest), responses: common(respNoContent, respNotFound), handle: s.setUserPassword})
	s.add(route{method: http.MethodDelete, path: "/authorizations/user/{id}", id: "deleteSubscriberUser", tag: tag,
		summary: "Delete a subscriber user", desc: "Its account sources and identity-provider accounts go with it.",
		request: new(apikit.IDParam), responses: common(respNoContent, respNotFound), handle: s.deleteUser})
	s.add(route{method: http.MethodGet, path: "/authorizations/user/{userId}/access", id: "getSubscriberUserAccess", tag: tag,
		summary: "List the products a subscriber user may use now",
		desc: "From the subscriptions of the user's subscriber and of its account sources' accounts that have started and " +
			"not ended, with no cancellation or deactivation in effect, at the tenant's time (a test tenant's clock). " +
			"Administrative tokens may ask for any user of the tenant. A subscriber's token (Kadens' own login, whose subject is " +
			"the user id, or a trusted external issuer's whose subject an idp-b account binds to a user) is admitted for its own " +
			"user only: 403 for another. A disabled user has no products.",
		request: new(userIDParam), responses: common(respOK(new(subscriberuser.UserAccess)), respNotFound),
		subscriber: true, handle: s.userAccess})

	s.add(route{method: http.MethodPost, path: "/authorizations/source/account", id: "createAccountSource", tag: tag,
		summary: "Give a subscriber user the access of a subscriber account",
		desc: "The user may then use what the subscriptions of the account's subscriber in the account's currency grant. " +
			"A user or account the tenant does not have, or a pair that exists already, is a 400 naming the field.",
		request: new(AccountSourceCreate), responses: common(respCreated), handle: s.createAccountSource})
	s.add(route{method: http.MethodGet, path: "/authorizations/source/account", id: "listAccountSources", tag: tag,
		summary: "List account sources", desc: "Filters combine with AND. A bad query is a 400 without a body.",
		request:   new(accountSourceListParams),
		responses: []response{respList(new([]subscriberuser.AccountSource)), respBare400, respNoBody401, respNoBody403, respServer},
		bare400:   true, handle: s.listAccountSources})
	s.add(route{method: http.MethodGet, path: "/authorizations/source/account/{id}", id: "getAccountSource", tag: tag,
		summary: "Get an account source", request: new(apikit.IDParam),
		responses: common(respOK(new(subscriberuser.AccountSource)), respNotFound), handle: apikit.GetOne(func(ctx context.Context, id string) (subscriberuser.AccountSource, error) {
			return subscriberuser.AccountSourceByID(ctx, s.store, id)
		})})
	s.add(route{method: http.MethodDelete, path: "/authorizations/source/account/{id}", id: "deleteAccountSource", tag: tag,
		summary: "Delete an account source", request: new(apikit.IDParam),
		responses: common(respNoContent, respNotFound), handle: func(w http.ResponseWriter, r *http.Request) error {
			id, err := apikit.PathID(r, "id")
			if err != nil {
				return err
			}
			if err := s.deleteAccountSource(r.Context(), id); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		}})
	s.idpAccountRoutes(tag)
}

func (s *Server) createUser(w http.ResponseWriter, r *http.Request) error {
	var in SubscriberUserCreate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	email := apikit.Trimmed(in.Email)
	switch {
	case email == "":
		errs.Add("email", "is required")
	case len(email) > 254 || !isEmailAddress(email):
		errs.Add("email", "%q is not an e-mail address such as name@example.com", email)
	}
	password := passwordField(&errs, in.Password)
	subscriber := optionalID(&errs, "subscriberId", in.SubscriberID)
	if err := errs.Err(); err != nil {
		return err
	}
	at, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	u, err := s.users.CreateUserAt(r.Context(), subscriberuser.SubscriberUser{Email: email, SubscriberID: subscriber,
		Disabled: in.Disabled != nil && *in.Disabled}, password, at)
	if err != nil {
		return userStoreError(err, email, subscriber)
	}
	s.created(w, "/authorizations/user/"+u.ID, u.ID)
	return nil
}

// passwordField checks a password given in a body ("" when none).
func passwordField(errs *validation.Errors, p *string) string {
	if p == nil {
		return ""
	}
	switch n := utf8.RuneCountInString(*p); {
	case n < 8:
		errs.Add("password", "must be at least 8 characters")
	case len(*p) > 256:
		errs.Add("password", "must be at most 256 bytes")
	}
	return *p
}

// optionalID reads an optional uuid of a body ("" when none).
func optionalID(errs *validation.Errors, field string, p *string) string {
	v := strings.ToLower(apikit.Trimmed(p))
	if v != "" && !store.ValidID(v) {
		errs.Add(field, "must be a uuid")
	}
	return v
}

// userStoreError explains the store's reference and uniqueness errors in
// terms of the request's fields.
func userStoreError(err error, email, subscriber string) error {
	switch {
	case errors.Is(err, subscriberuser.ErrEmailTaken):
		return validation.Field("email", "%q is already the e-mail of another user of this tenant", email)
	case errors.Is(err, subscriberuser.ErrNoSuchSubscriber):
		return validation.Field("subscriberId", "no subscriber %s in this tenant", subscriber)
	}
	return err
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := subscriberuser.SubscriberUserFilter{Email: strings.TrimSpace(q.Get("email")), SubscriberID: strings.ToLower(strings.TrimSpace(q.Get("subscriberId")))}
	if f.SubscriberID != "" && !store.ValidID(f.SubscriberID) {
		errs.Add("subscriberId", "must be a uuid")
	}
	switch v := strings.ToLower(strings.TrimSpace(q.Get("disabled"))); v {
	case "":
	case "true", "false":
		b := v == "true"
		f.Disabled = &b
	default:
		errs.Add("disabled", "must be true or false")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	us, next, err := subscriberuser.ListSubscriberUsers(r.Context(), s.store, f, p)
	if err != nil {
		return err
	}
	out := make([]SubscriberUser, len(us))
	for i, u := range us {
		out[i] = userView(u)
	}
	s.writeList(w, r, out, next)
	return nil
}

func (s *Server) setUserDisabled(disabled bool) apikit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := apikit.PathID(r, "id")
		if err != nil {
			return err
		}
		if _, err := subscriberuser.SetSubscriberUserDisabled(r.Context(), s.store, id, disabled, s.now()); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

func (s *Server) linkUser(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in SubscriberUserLink
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	subscriber := optionalID(&errs, "subscriberId", in.SubscriberID)
	if err := errs.Err(); err != nil {
		return err
	}
	if _, err := s.linkSubscriberUser(r.Context(), id, subscriber); err != nil {
		return userStoreError(err, "", subscriber)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) setUserPassword(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in SubscriberUserPassword
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	password := passwordField(&errs, in.Password)
	if err := errs.Err(); err != nil {
		return err
	}
	// Existence first: a hash is the expensive part.
	if _, err := subscriberuser.UserByID(r.Context(), s.store, id); err != nil {
		return err
	}
	if _, err := s.users.SetPassword(r.Context(), id, password); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := subscriberuser.DeleteSubscriberUser(r.Context(), s.store, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// userAccess answers the entitlement question. It is the busiest route of
// the service: one statement for the access (subscriberuser.UserAccess) and the
// tenant's time from the tenant cache (a test tenant's clock is read
// fresh); an external subscriber token costs one more read, of the idp-b
// account that names its user. Administrative tokens may ask for any user,
// Kadens' subscriber tokens for their own (auth.Principal.MayActFor), an
// external subscriber token for the user its idp-b account binds. 403
// otherwise, also for a user that does not exist.
func (s *Server) userAccess(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "userId")
	if err != nil {
		return err
	}
	ctx := r.Context()
	if p, _ := PrincipalFrom(ctx); !p.MayActFor(id) {
		if !p.ExternalSubscriber {
			return errForbidden
		}
		own, err := subscriberuser.ExternalUser(ctx, s.store, p.Issuer, p.Subject)
		if errors.Is(err, store.ErrNotFound) || (err == nil && own != id) {
			return errForbidden
		} else if err != nil {
			return err
		}
	}
	now, err := s.tenantNow(ctx)
	if err != nil {
		return err
	}
	access, err := subscriberuser.AccessOf(ctx, s.store, id, now)
	if err != nil {
		return err
	}
	writeAccess(w, access)
	return nil
}

// IdpAAccountCreate is the body of POST
// /authorizations/identityprovider/account/idp-a/{id}: the path id (the
// login name) becomes a further login name of the user.
type IdpAAccountCreate struct {
	UserID *string `json:"userId" required:"true" format:"uuid" description:"The subscriber user who logs in with the identifier."`
}

// IdpAAccountUpdate is the body of PUT
// /authorizations/identityprovider/account/idp-a/{id}.
type IdpAAccountUpdate struct {
	UserID *string `json:"userId" required:"true" format:"uuid" description:"The subscriber user who logs in with the identifier."`
}

// IdpAAccount is an account in Kadens' own user directory: a login name
// (besides the e-mail) of a subscriber user.
type IdpAAccount struct {
	ID         string    `json:"id" format:"uuid"`
	Identifier string    `json:"identifier" description:"The login name (the path id), matched ignoring case."`
	UserID     string    `json:"userId" format:"uuid"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// IdpBAccountCreate is the body of POST
// /authorizations/identityprovider/account/idp-b/{id}: the path id is the
// subject of a trusted external issuer's tokens.
type IdpBAccountCreate struct {
	UserID *string `json:"userId" required:"true" format:"uuid" description:"The subscriber user the external subject acts as."`
	Issuer *string `json:"issuer" required:"true" maxLength:"500" example:"https://login.example.com/" description:"The external issuer; one of the configured trusted issuers with subscriberTokens."`
}

// IdpBAccountUpdate is the body of PUT
// /authorizations/identityprovider/account/idp-b/{id}.
type IdpBAccountUpdate struct {
	UserID *string `json:"userId" required:"true" format:"uuid" description:"The subscriber user the external subject acts as."`
	Issuer *string `json:"issuer" required:"true" maxLength:"500" description:"The external issuer; one of the configured trusted issuers with subscriberTokens."`
}

// IdpBAccount binds the subject of a trusted external OpenID Connect
// issuer to a subscriber user.
type IdpBAccount struct {
	ID         string    `json:"id" format:"uuid"`
	Identifier string    `json:"identifier" description:"The subject (sub claim) at the issuer (the path id), matched exactly."`
	Issuer     string    `json:"issuer"`
	UserID     string    `json:"userId" format:"uuid"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// identifierParam documents the {id} of an identity-provider account: the
// identifier at the provider, not a uuid.
type identifierParam struct {
	ID string `path:"id" maxLength:"255" description:"The identifier at the identity provider (URL-escaped)."`
}

type idpACreateRequest struct {
	identifierParam
	IdpAAccountCreate
}

type idpAUpdateRequest struct {
	identifierParam
	IdpAAccountUpdate
}

type idpBCreateRequest struct {
	identifierParam
	IdpBAccountCreate
}

type idpBUpdateRequest struct {
	identifierParam
	IdpBAccountUpdate
}

func (s *Server) idpAccountRoutes(tag string) {
	for _, k := range []struct {
		kind, name     string
		create, update any
		view, list     any
		what           string
	}{
		{subscriberuser.IdPA, "IdpA", new(idpACreateRequest), new(idpAUpdateRequest), new(IdpAAccount), new([]IdpAAccount),
			"an idp-a account (a further login name of a subscriber user in Kadens' own directory)"},
		{subscriberuser.IdPB, "IdpB", new(idpBCreateRequest), new(idpBUpdateRequest), new(IdpBAccount), new([]IdpBAccount),
			"an idp-b account (a trusted external issuer's subject, acting as a subscriber user)"},
	} {
		base := "/authorizations/identityprovider/account/" + k.kind
		s.add(route{method: http.MethodPost, path: base + "/{id}", id: "create" + k.name + "Account", tag: tag,
			summary: "Create " + k.what,
			desc: "The path id is the identifier at the identity provider. One the kind has already, a user the tenant does not have" +
				map[string]string{subscriberuser.IdPA: "", subscriberuser.IdPB: ", or an issuer that is not a trusted issuer with subscriberTokens"}[k.kind] +
				" is a 400 naming the field.",
			request: k.create, responses: common(respCreated), handle: s.createIdPAccount(k.kind)})
		s.add(route{method: http.MethodGet, path: base + "/{id}", id: "get" + k.name + "Account", tag: tag,
			summary: "Get " + k.what, request: new(identifierParam),
			responses: common(respOK(k.view), respNotFound), handle: s.getIdPAccount(k.kind)})
		s.add(route{method: http.MethodPut, path: base + "/{id}", id: "update" + k.name + "Account", tag: tag,
			summary: "Rebind " + k.what, desc: "Accepted and done before the answer.",
			request: k.update, responses: common(respAccepted, respNotFound), handle: s.updateIdPAccount(k.kind)})
		s.add(route{method: http.MethodDelete, path: base + "/{id}", id: "delete" + k.name + "Account", tag: tag,
			summary: "Delete " + k.what, request: new(identifierParam),
			responses: common(respNoContent, respNotFound), handle: s.deleteIdPAccount(k.kind)})
		s.add(route{method: http.MethodGet, path: base, id: "list" + k.name + "Accounts", tag: tag,
			summary: "List the " + k.kind + " accounts", request: new(apikit.ListParams),
			responses: common(respList(k.list)), handle: s.listIdPAccounts(k.kind)})
	}
}

// pathIdentifier returns the {id} of an identity-provider account route:
// 1 to 255 characters of one line.
func pathIdentifier(r *http.Request) (string, error) {
	id := r.PathValue("id") // unescaped by the mux
	switch {
	case id == "":
		return "", fieldErr("id", "is required")
	case len(id) > 255:
		return "", fieldErr("id", "must be at most 255 bytes")
	case !utf8.ValidString(id) || strings.ContainsFunc(id, func(c rune) bool { return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) }):
		return "", fieldErr("id", "must be one line of text")
	}
	return id, nil
}

// idpBody reads a create or update body into user and issuer.
func (s *Server) idpBody(r *http.Request, kind string, isCreate bool) (user, issuer string, err error) {
	var errs validation.Errors
	switch {
	case kind == subscriberuser.IdPA && isCreate:
		var in IdpAAccountCreate
		if err := apikit.DecodeJSON(r, &in); err != nil {
			return "", "", err
		}
		user = requiredID(&errs, "userId", in.UserID)
	case kind == subscriberuser.IdPA:
		var in IdpAAccountUpdate
		if err := apikit.DecodeJSON(r, &in); err != nil {
			return "", "", err
		}
		user = requiredID(&errs, "userId", in.UserID)
	default:
		var in IdpBAccountCreate
		if isCreate {
			if err := apikit.DecodeJSON(r, &in); err != nil {
				return "", "", err
			}
		} else {
			var up IdpBAccountUpdate
			if err := apikit.DecodeJSON(r, &up); err != nil {
				return "", "", err
			}
			in = IdpBAccountCreate(up)
		}
		user = requiredID(&errs, "userId", in.UserID)
		issuer = apikit.Trimmed(in.Issuer)
		switch {
		case issuer == "":
			errs.Add("issuer", "is required")
		case !s.verifier.TrustsExternal(issuer):
			errs.Add("issuer", "%q is not a trusted issuer whose subscriber tokens are admitted (--trusted-issuers with subscriberTokens)", issuer)
		}
	}
	return user, issuer, errs.Err()
}

func idpStoreError(err error, user string) error {
	switch {
	case errors.Is(err, subscriberuser.ErrNoSuchUser):
		return validation.Field("userId", "no subscriber user %s in this tenant", user)
	case errors.Is(err, subscriberuser.ErrIdentifierTaken):
		return validation.Field("id", "an account of this kind with this identifier exists")
	}
	return err
}

func (s *Server) createIdPAccount(kind string) apikit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ident, err := pathIdentifier(r)
		if err != nil {
			return err
		}
		user, issuer, err := s.idpBody(r, kind, true)
		if err != nil {
			return err
		}
		a, err := subscriberuser.CreateIdPAccount(r.Context(), s.store, subscriberuser.IdPAccount{Kind: kind, Identifier: ident, Issuer: issuer, UserID: user}, s.now())
		if err != nil {
			return idpStoreError(err, user)
		}
		s.created(w, "/authorizations/identityprovider/account/"+kind+"/"+url.PathEscape(ident), a.ID)
		return nil
	}
}

// idpView is the API shape of a of kind.
func idpView(kind string, a subscriberuser.IdPAccount) any {
	if kind == subscriberuser.IdPA {
		return IdpAAccount{ID: a.ID, Identifier: a.Identifier, UserID: a.UserID, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	}
	return IdpBAccount{ID: a.ID, Identifier: a.Identifier, Issuer: a.Issuer, UserID: a.UserID, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

func (s *Server) getIdPAccount(kind string) apikit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ident, err := pathIdentifier(r)
		if err != nil {
			return err
		}
		a, err := subscriberuser.IdPAccountByIdentifier(r.Context(), s.store, kind, ident)
		if err != nil {
			return err
		}
		apikit.WriteJSON(w, http.StatusOK, idpView(kind, a))
		return nil
	}
}

func (s *Server) updateIdPAccount(kind string) apikit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ident, err := pathIdentifier(r)
		if err != nil {
			return err
		}
		user, issuer, err := s.idpBody(r, kind, false)
		if err != nil {
			return err
		}
		if _, err := subscriberuser.UpdateIdPAccount(r.Context(), s.store, kind, ident, user, issuer, s.now()); err != nil {
			return idpStoreError(err, user)
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
}

func (s *Server) deleteIdPAccount(kind string) apikit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ident, err := pathIdentifier(r)
		if err != nil {
			return err
		}
		if err := subscriberuser.DeleteIdPAccount(r.Context(), s.store, kind, ident); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

func (s *Server) listIdPAccounts(kind string) apikit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var errs validation.Errors
		p := apikit.Page(r, &errs)
		if err := errs.Err(); err != nil {
			return err
		}
		as, next, err := subscriberuser.ListIdPAccounts(r.Context(), s.store, kind, p)
		if err != nil {
			return err
		}
		out := make([]any, len(as))
		for i, a := range as {
			out[i] = idpView(kind, a)
		}
		s.writeList(w, r, out, next)
		return nil
	}
}

func (s *Server) createAccountSource(w http.ResponseWriter, r *http.Request) error {
	var in AccountSourceCreate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	user := requiredID(&errs, "userId", in.UserID)
	account := requiredID(&errs, "subscriberAccountId", in.SubscriberAccountID)
	if err := errs.Err(); err != nil {
		return err
	}
	at, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	a, err := subscriberuser.CreateAccountSource(r.Context(), s.store, user, account, s.now(), at)
	switch {
	case errors.Is(err, subscriberuser.ErrNoSuchUser):
		return validation.Field("userId", "no subscriber user %s in this tenant", user)
	case errors.Is(err, subscriberuser.ErrNoSuchAccount):
		return validation.Field("subscriberAccountId", "no subscriber account %s in this tenant", account)
	case errors.Is(err, subscriberuser.ErrAccountSourceExists):
		return validation.Field("subscriberAccountId", "the user already has this account as a source")
	case err != nil:
		return err
	}
	s.created(w, "/authorizations/source/account/"+a.ID, a.ID)
	return nil
}

func (s *Server) listAccountSources(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := subscriberuser.AccountSourceFilter{UserID: strings.ToLower(strings.TrimSpace(q.Get("userId"))),
		SubscriberAccountID: strings.ToLower(strings.TrimSpace(q.Get("subscriberAccountId")))}
	if f.UserID != "" && !store.ValidID(f.UserID) {
		errs.Add("userId", "must be a uuid")
	}
	if f.SubscriberAccountID != "" && !store.ValidID(f.SubscriberAccountID) {
		errs.Add("subscriberAccountId", "must be a uuid")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	as, next, err := subscriberuser.ListAccountSources(r.Context(), s.store, f, p)
	if err != nil {
		return err
	}
	if as == nil {
		as = []subscriberuser.AccountSource{}
	}
	s.writeList(w, r, as, next)
	return nil
}

// bareBadRequest turns a 400 with a body into one without (bare400 routes).
func bareBadRequest(err error) error {
	var verrs validation.Errors
	if errors.As(err, &verrs) {
		return &statusError{http.StatusBadRequest, "bad request: " + verrs.Error()}
	}
	return err
}

// deleteAccountSource deletes account source id, its revoked access dated
// at the tenant's time.
func (s *Server) deleteAccountSource(ctx context.Context, id string) error {
	at, err := s.tenantNow(ctx)
	if err != nil {
		return err
	}
	return subscriberuser.DeleteAccountSource(ctx, s.store, id, at)
}

// linkSubscriberUser links user id to subscriber ("" unlinks), the
// access it changes dated at the tenant's time.
func (s *Server) linkSubscriberUser(ctx context.Context, id, subscriber string) (subscriberuser.SubscriberUser, error) {
	at, err := s.tenantNow(ctx)
	if err != nil {
		return subscriberuser.SubscriberUser{}, err
	}
	return subscriberuser.LinkSubscriberUser(ctx, s.store, id, subscriber, s.now(), at)
}
