package minside

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webui"
)

// flow is what the browser carries, sealed, from the redirect to the
// login page to the callback: the state it must come back with, the PKCE
// verifier and the nonce the ID token must name, the tenant and where to
// go after.
type flow struct {
	State, Verifier, Nonce string
	TenantID, TenantName   string
	Next                   string
}

// oidcProvider is the identity provider's discovery, read once.
func (m *MinSide) oidcProvider(ctx context.Context) (*oidc.Provider, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.provider != nil {
		return m.provider, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), m.http), m.o.Issuer)
	if err != nil {
		return nil, err
	}
	m.provider = p
	return p, nil
}

func (m *MinSide) oauth(ctx context.Context, tenantID string) (*oidc.Provider, oauth2.Config, error) {
	p, err := m.oidcProvider(ctx)
	if err != nil {
		return nil, oauth2.Config{}, err
	}
	c, err := m.o.Client(ctx, tenantID)
	if err != nil {
		return nil, oauth2.Config{}, err
	}
	return p, oauth2.Config{ClientID: c.ID, ClientSecret: c.Secret, Endpoint: p.Endpoint(), RedirectURL: RedirectURI(m.base),
		Scopes: []string{oidc.ScopeOpenID, "email"}}, nil
}

// safeNext is a Min side path to go to after the login, never another
// site's address.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix+"/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Prefix + "/"
	}
	return next
}

// login is the start: with ?tenant= (the organisation's name, as the
// merchant's site links to it) the browser goes to the identity
// provider's login page; without it the page asks for the organisation.
func (m *MinSide) login(w http.ResponseWriter, r *http.Request, _ *session) {
	q := r.URL.Query()
	name := strings.TrimSpace(q.Get("tenant"))
	next := safeNext(q.Get("next"))
	if name == "" {
		m.render(w, r, nil, http.StatusOK, "login", page{Page: webui.Page{Data: loginView{Next: next}}})
		return
	}
	if len(name) > 200 || validation.TextProblem(name, false) != "" {
		m.render(w, r, nil, http.StatusBadRequest, "login", page{Page: webui.Page{Error: "badTenant", Data: loginView{Next: next}}})
		return
	}
	t, err := m.o.Store.TenantByName(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		m.render(w, r, nil, http.StatusNotFound, "login", page{Page: webui.Page{Error: "noTenant", Data: loginView{Tenant: name, Next: next}}})
		return
	}
	if m.failed(w, r, nil, err) {
		return
	}
	_, cfg, err := m.oauth(r.Context(), t.ID)
	if m.failed(w, r, nil, err) {
		return
	}
	f := flow{State: rand.Text(), Verifier: oauth2.GenerateVerifier(), Nonce: rand.Text(), TenantID: t.ID, TenantName: t.Name, Next: next}
	if m.failed(w, r, nil, m.setCookie(w, m.flow, m.flowCookie(), f)) {
		return
	}
	lang := m.languages().Choose(w, r)
	http.Redirect(w, r, cfg.AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce),
		oauth2.SetAuthURLParam("connection", t.Name), oauth2.SetAuthURLParam("language", lang),
		oauth2.SetAuthURLParam("orgname", t.Name)), http.StatusSeeOther)
}

type loginView struct{ Tenant, Next string }

// callback is where the identity provider sends the browser back: the
// state must be the flow's, the code is exchanged with the PKCE verifier,
// and the ID token must verify (issuer, audience, signature, expiry,
// nonce) and name the flow's tenant.
func (m *MinSide) callback(w http.ResponseWriter, r *http.Request, _ *session) {
	ck, err := r.Cookie(m.flowCookie())
	var f flow
	if err != nil || m.flow.Decode(m.flowCookie(), ck.Value, &f) != nil {
		m.fail(w, r, nil, http.StatusBadRequest, "loginExpired")
		return
	}
	m.clearCookie(w, m.flowCookie())
	q := r.URL.Query()
	if q.Get("state") != f.State {
		m.fail(w, r, nil, http.StatusBadRequest, "loginExpired")
		return
	}
	if e := q.Get("error"); e != "" || q.Get("code") == "" {
		m.fail(w, r, nil, http.StatusBadRequest, "loginRefused")
		return
	}
	ctx := oidc.ClientContext(r.Context(), m.http)
	p, cfg, err := m.oauth(ctx, f.TenantID)
	if m.failed(w, r, nil, err) {
		return
	}
	tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		m.log.WarnContext(r.Context(), "minside: code exchange", "err", err)
		m.fail(w, r, nil, http.StatusBadRequest, "loginRefused")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := p.Verifier(&oidc.Config{ClientID: cfg.ClientID}).Verify(ctx, raw)
	if err != nil || idt.Nonce != f.Nonce {
		m.log.WarnContext(r.Context(), "minside: id token", "err", err)
		m.fail(w, r, nil, http.StatusBadRequest, "loginRefused")
		return
	}
	var claims map[string]any
	if m.failed(w, r, nil, idt.Claims(&claims)) {
		return
	}
	ns := strings.TrimSuffix(m.o.ClaimsNamespace, "/")
	str := func(k string) string { v, _ := claims[k].(string); return v }
	if str(ns+"/tenantId") != f.TenantID {
		m.fail(w, r, nil, http.StatusBadRequest, "loginRefused")
		return
	}
	s := session{TenantID: f.TenantID, TenantName: f.TenantName, UserID: idt.Subject, Email: str("email"),
		SubscriberID: str(ns + "/subscriberId"), IDToken: raw, CSRF: rand.Text()}
	if m.failed(w, r, nil, m.setCookie(w, m.seal, m.cookieName(), s)) {
		return
	}
	http.Redirect(w, r, safeNext(f.Next), http.StatusSeeOther)
}

// logout ends the Min side session (the cookie) and then, at the identity
// provider's end_session endpoint with the ID token as the hint, its
// login session and the user's refresh tokens at this client; the
// provider sends the browser back to the login page.
func (m *MinSide) logout(w http.ResponseWriter, r *http.Request, s *session) {
	m.clearCookie(w, m.cookieName())
	p, err := m.oidcProvider(r.Context())
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err != nil || p.Claims(&meta) != nil || meta.EndSession == "" {
		http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
		return
	}
	c, err := m.o.Client(r.Context(), s.TenantID)
	if m.failed(w, r, nil, err) {
		return
	}
	v := url.Values{"id_token_hint": {s.IDToken}, "client_id": {c.ID}, "post_logout_redirect_uri": {LogoutURI(m.base)}}
	http.Redirect(w, r, meta.EndSession+"?"+v.Encode(), http.StatusSeeOther)
}
