package api

import (
	"errors"
	"net/http"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// LoginClientInput registers a subscriber-login client (docs/LOGIN.md).
type LoginClientInput struct {
	Name                   *string  `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Web site" description:"What the client is, for operators."`
	RedirectURIs           []string `json:"redirectUris" required:"true" minItems:"1" description:"Addresses the login may return to with a code; compared exactly. https, or http for localhost only."`
	PostLogoutRedirectURIs []string `json:"postLogoutRedirectUris" description:"Addresses a logout (end_session) may return to; compared exactly."`
	Scopes                 []string `json:"scopes" description:"Scopes the client may ask for besides openid, email and offline_access; never api."`
}

// LoginClientCreated is a new login client with its secret, shown once.
type LoginClientCreated struct {
	idp.LoginClient
	Secret string `json:"secret" required:"true" description:"The client secret; only a hash is kept, so it is never shown again."`
}

func (s *Server) loginClientRoutes() {
	const tag = "LoginClient"
	s.add(route{method: http.MethodPost, path: "/loginclient", id: "createLoginClient", tag: tag,
		summary: "Register a subscriber-login client",
		desc: "A relying party (web site, app) that sends the tenant's subscribers to the identity provider's login page " +
			"with the authorization code flow. The answer carries the client secret, which is shown only here.",
		request: new(LoginClientInput),
		responses: common(response{status: http.StatusCreated, body: new(LoginClientCreated), desc: "Created, with the secret.",
			headers: map[string]string{"Location": "Address of the new resource."}}),
		handle: s.createLoginClient})
	s.add(route{method: http.MethodGet, path: "/loginclient", id: "listLoginClients", tag: tag,
		summary: "List the tenant's login clients", desc: "Oldest first, all in one page; secrets are never shown.",
		responses: common(respList(new([]idp.LoginClient))), handle: s.listLoginClients})
	s.add(route{method: http.MethodGet, path: "/loginclient/{id}", id: "getLoginClient", tag: tag,
		summary: "Get a login client", desc: "The secret is never shown again.", request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(idp.LoginClient)}, respNotFound), handle: s.getLoginClient})
	s.add(route{method: http.MethodDelete, path: "/loginclient/{id}", id: "deleteLoginClient", tag: tag,
		summary: "Delete a login client",
		desc: "Its pending logins, unused codes and refresh tokens go with it; access tokens it obtained live out their " +
			"lifetime.", request: new(apikit.IDParam),
		responses: common(respNoContent, respNotFound), handle: s.deleteLoginClient})
}

func (s *Server) createLoginClient(w http.ResponseWriter, r *http.Request) error {
	var in LoginClientInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	tenant, err := tenancy.From(r.Context())
	if err != nil {
		return err
	}
	spec := idp.LoginClientSpec{RedirectURIs: in.RedirectURIs, PostLogoutRedirectURIs: in.PostLogoutRedirectURIs, Scopes: in.Scopes}
	if in.Name != nil {
		spec.Name = *in.Name
	}
	c, secret, err := idp.NewLoginClient(r.Context(), s.store, tenant, spec, s.now())
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.baseURL+"/loginclient/"+c.ID)
	apikit.WriteJSON(w, http.StatusCreated, LoginClientCreated{LoginClient: c, Secret: secret})
	return nil
}

func (s *Server) listLoginClients(w http.ResponseWriter, r *http.Request) error {
	tenant, err := tenancy.From(r.Context())
	if err != nil {
		return err
	}
	list, err := idp.LoginClients(r.Context(), s.store, tenant)
	if err != nil {
		return err
	}
	if list == nil {
		list = []idp.LoginClient{}
	}
	s.writeList(w, r, list, "")
	return nil
}

// tenantLoginClient returns the context tenant's client id, or ErrNotFound
// (also for another tenant's).
func (s *Server) tenantLoginClient(r *http.Request) (idp.LoginClient, error) {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return idp.LoginClient{}, err
	}
	tenant, err := tenancy.From(r.Context())
	if err != nil {
		return idp.LoginClient{}, err
	}
	c, err := idp.LoginClientByID(r.Context(), s.store, id)
	if err == nil && c.TenantID != tenant {
		err = store.ErrNotFound
	}
	return c, err
}

func (s *Server) getLoginClient(w http.ResponseWriter, r *http.Request) error {
	c, err := s.tenantLoginClient(r)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) deleteLoginClient(w http.ResponseWriter, r *http.Request) error {
	c, err := s.tenantLoginClient(r)
	if err != nil {
		return err
	}
	if err := idp.DeleteLoginClient(r.Context(), s.store, c.TenantID, c.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
