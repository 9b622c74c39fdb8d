package idp

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/throttle"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// csrfCookie carries the login request's CSRF token in the browser that
// opened the page; the form must carry the same token, so a form posted
// from another site (login CSRF) fails.
const csrfCookie = "kadens_login"

// ssoCookie carries the browser's login session token (only its SHA-256
// is stored): a later /authorize of the same tenant skips the form.
const ssoCookie = "kadens_sso"

// authorize checks Kadens' own rules of an authorization request (its
// parameters' bounds, known client, exact redirect address, the connection
// is the client's tenant, PKCE by S256 only) and shows an error page for a
// bad one instead of redirecting anywhere; the rest of the request is the
// library's. Each address may make Config.AuthorizeRate requests (every
// request counts, good or bad), and a request is stored only once all of
// it is valid.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost: // OpenID Connect Core §3.1.2.1: GET and POST
	default:
		w.Header().Set("Allow", "GET, POST")
		s.errorPage(w, http.StatusMethodNotAllowed, "", "invalid_request", "the authorization endpoint takes GET or POST")
		return
	}
	addr, now := throttle.AddressKey(r.RemoteAddr), s.now()
	if wait := s.byAuthorizeAddress.Wait(addr, now); wait > 0 {
		lang := Language(r.URL.Query().Get("language"))
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		s.errorPage(w, http.StatusTooManyRequests, lang, "temporarily_unavailable", texts[lang].TooMany)
		return
	}
	s.byAuthorizeAddress.Fail(addr, now)
	// A parameter beyond its bounds is an error page, before anything is
	// looked up: no well-behaved client sends one, and refusing it costs
	// no database read (as for Kadens' other own checks below, the page
	// rather than a redirect to the client).
	if len(r.URL.RawQuery) > maxQuery {
		s.errorPage(w, http.StatusBadRequest, "", "invalid_request", (&paramError{"query", fmt.Sprintf("is longer than %d bytes", maxQuery)}).Error())
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	formErr := r.ParseForm()
	q := r.Form
	lang := Language(q.Get("language"))
	t := texts[lang]
	if formErr != nil {
		s.errorPage(w, http.StatusBadRequest, lang, "invalid_request", "the query or form cannot be read: "+formErr.Error())
		return
	}
	if e := checkValues(q); e != nil {
		s.errorPage(w, http.StatusBadRequest, lang, "invalid_request", e.Error())
		return
	}
	client, err := LoginClientByID(r.Context(), s.store, q.Get("client_id"))
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.ErrorContext(r.Context(), "authorize: client", "err", err)
			s.errorPage(w, http.StatusInternalServerError, lang, "server_error", t.Failed)
			return
		}
		s.errorPage(w, http.StatusBadRequest, lang, "invalid_client", t.UnknownClient)
		return
	}
	redirect := q.Get("redirect_uri")
	if !slices.Contains(client.RedirectURIs, redirect) {
		s.errorPage(w, http.StatusBadRequest, lang, "invalid_request", t.BadRedirect)
		return
	}
	if conn := q.Get("connection"); conn != "" {
		ten, err := s.store.TenantIDByName(r.Context(), conn)
		if err != nil || ten != client.TenantID {
			s.errorPage(w, http.StatusBadRequest, lang, "invalid_request", t.BadConnection)
			return
		}
	}
	if m := q.Get("code_challenge_method"); q.Get("code_challenge") != "" && m != "S256" {
		s.errorPage(w, http.StatusBadRequest, lang, "invalid_request", "code_challenge_method must be S256")
		return
	}
	if !slices.Contains(strings.Fields(q.Get("scope")), "openid") {
		// The client and its address are known good: tell it there, as
		// RFC 6749 §4.1.2.1 asks.
		redirectError(w, r, redirect, "invalid_scope", "the scope must include openid", q.Get("state"))
		return
	}
	org := clip(strings.TrimSpace(q.Get("orgname")), 200)
	// The rest is the library's op.Authorize, step by step with its own
	// parts, so that a request the browser's login session completes is
	// answered with the code at once instead of by a redirect to the
	// login page (or a callback hop), and so that the client read above
	// is not read again.
	ctx := op.ContextWithIssuer(r.Context(), s.cfg.Issuer)
	sso := &ssoState{session: s.browserSession(r, client.TenantID)}
	ctx = context.WithValue(ctx, authorizeKey{}, authorizeParams{tenantID: client.TenantID, orgName: org, language: lang, sso: sso})
	r = r.WithContext(ctx)
	authReq, err := op.ParseAuthorizeRequest(r, s.provider.Decoder())
	if err != nil {
		op.AuthRequestError(w, r, nil, err, s.provider)
		return
	}
	if authReq.ClientID != client.ID || authReq.RedirectURI != q.Get("redirect_uri") {
		s.errorPage(w, http.StatusBadRequest, lang, "invalid_request", t.BadRedirect)
		return
	}
	if authReq.RequestParam != "" {
		op.AuthRequestError(w, r, authReq, oidc.ErrRequestNotSupported(), s.provider)
		return
	}
	lc := s.opStorage.opClient(client)
	hinted, err := op.ValidateAuthRequestClient(ctx, authReq, lc, s.provider.IDTokenHintVerifier(ctx))
	if err != nil {
		op.AuthRequestError(w, r, authReq, err, s.provider)
		return
	}
	req, err := s.opStorage.CreateAuthRequest(ctx, authReq, hinted)
	if err != nil {
		op.AuthRequestError(w, r, authReq, oidc.DefaultToServerError(err, "unable to save the authorization request"), s.provider)
		return
	}
	if sso.done {
		op.AuthResponse(req, s.provider, w, r) // the code, to the client
		return
	}
	op.RedirectToLogin(req.GetID(), lc, w, r)
}

// redirectError sends the browser back to the client's registered
// redirect address with an OAuth error (RFC 6749 §4.1.2.1) and state.
func redirectError(w http.ResponseWriter, r *http.Request, redirect, code, desc, state string) {
	back, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, desc, http.StatusBadRequest) // not reached: registered addresses parse
		return
	}
	bq := back.Query()
	bq.Set("error", code)
	bq.Set("error_description", desc)
	if state != "" {
		bq.Set("state", state)
	}
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// clip is s cut to at most n bytes, at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// browserSession returns the live login session of the browser that sent
// r, if it is tenantID's and its user is still active; nil otherwise (then
// the form is shown, as without a session).
func (s *Server) browserSession(r *http.Request, tenantID string) *LoginSession {
	c, err := r.Cookie(ssoCookie)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil
	}
	sess, err := LiveLoginSession(r.Context(), s.store, sha(c.Value), s.now())
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.ErrorContext(r.Context(), "authorize: login session", "err", err)
		}
		return nil
	}
	if sess.TenantID != tenantID {
		return nil // another tenant's login: its users are not this tenant's
	}
	u, err := subscriberuser.UserByID(tenancy.With(r.Context(), tenantID), s.store, sess.UserID)
	if err != nil || u.Disabled {
		return nil
	}
	return &sess
}

// startSession gives the browser a login session for userID after a
// password check at now. A failure only costs the next login its form.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, tenantID, userID string, now time.Time) {
	token := randomToken()
	now = now.UTC()
	if err := CreateLoginSession(r.Context(), s.store, LoginSession{Hash: sha(token), TenantID: tenantID, UserID: userID,
		AuthTime: now, ExpiresAt: now.Add(SessionTTL)}); err != nil {
		s.log.ErrorContext(r.Context(), "login session", "err", err)
		return
	}
	if old, err := r.Cookie(ssoCookie); err == nil && old.Value != "" {
		// The browser's previous session (prompt=login, or another user)
		// ends with the new one.
		_ = EndLoginSession(r.Context(), s.store, sha(old.Value))
	}
	s.setSessionCookie(w, token, int(SessionTTL.Seconds()))
}

// setSessionCookie sets the login session cookie (maxAge < 0 removes it).
func (s *Server) setSessionCookie(w http.ResponseWriter, token string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: ssoCookie, Value: token, Path: s.cookiePath(), HttpOnly: true,
		Secure: strings.HasPrefix(s.cfg.Issuer, "https://"), SameSite: http.SameSiteLaxMode, MaxAge: maxAge})
}

// endSession is the library's RP-initiated logout, with the browser's
// login session ended (and its cookie removed) once the library has
// accepted the request (opStorage.TerminateSession).
func (s *Server) endSession(w http.ResponseWriter, r *http.Request) {
	end := func() error {
		c, err := r.Cookie(ssoCookie)
		if err != nil || c.Value == "" {
			return nil
		}
		s.setSessionCookie(w, "", -1)
		return EndLoginSession(r.Context(), s.store, sha(c.Value))
	}
	s.provider.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), endBrowserSession{}, end)))
}

type loginView struct {
	T        Texts
	Lang     string
	Title    string
	Org      string
	LogoURL  string
	ID, CSRF string
	Email    string
	Error    string
	Code     string
	Reset    bool // password reset is on: link to it
}

// logo is the logo of the tenant's organization named org, if it is
// served over https.
func (s *Server) logo(ctx context.Context, tenantID, org string) string {
	if org == "" {
		return ""
	}
	logo, err := OrganizationLogo(ctx, s.store, tenantID, org)
	if err != nil || !strings.HasPrefix(logo, "https://") {
		return ""
	}
	return logo
}

func (s *Server) view(ctx context.Context, lr LoginRequest) loginView {
	v := textView(lr)
	v.LogoURL = s.logo(ctx, lr.TenantID, lr.OrgName)
	v.Reset = s.mail != nil
	return v
}

// textView is the view of lr without its logo (which costs a read), for
// the form post, which looks the logo up only for a page it shows.
func textView(lr LoginRequest) loginView {
	t := texts[Language(lr.Language)]
	title := t.Title
	if lr.OrgName != "" {
		title = lr.OrgName + " – " + t.Title
	}
	return loginView{T: t, Lang: Language(lr.Language), Title: title, Org: lr.OrgName, ID: lr.ID, CSRF: lr.CSRF}
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	lr, err := LiveLoginRequest(r.Context(), s.store, r.URL.Query().Get("id"), s.now())
	if err != nil {
		s.expired(w, r, err)
		return
	}
	if lr.UserID != "" {
		http.Redirect(w, r, op.AuthCallbackURL(s.provider)(op.ContextWithIssuer(r.Context(), s.cfg.Issuer), lr.ID), http.StatusFound)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: lr.CSRF, Path: s.cookiePath(), HttpOnly: true,
		Secure: strings.HasPrefix(s.cfg.Issuer, "https://"), SameSite: http.SameSiteLaxMode, MaxAge: int(LoginTTL.Seconds())})
	s.render(w, http.StatusOK, "login.html", s.view(r.Context(), lr))
}

func (s *Server) cookiePath() string {
	u, err := url.Parse(s.cfg.Issuer)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}

func (s *Server) expired(w http.ResponseWriter, r *http.Request, err error) {
	if !errors.Is(err, store.ErrNotFound) {
		s.log.ErrorContext(r.Context(), "login request", "err", err)
	}
	lang := Language(r.URL.Query().Get("language"))
	s.errorPage(w, http.StatusBadRequest, lang, "invalid_request", texts[lang].Expired)
}

// loginPost checks the form: CSRF token (form = cookie = the request's),
// the failure limits per account and per address, then the password
// (argon2id in internal/subscriberuser, constant time for unknown e-mails).
func (s *Server) loginPost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, http.StatusBadRequest, "en", "invalid_request", "bad form")
		return
	}
	lr, err := LiveLoginRequest(r.Context(), s.store, r.PostForm.Get("id"), s.now())
	if err != nil {
		s.expired(w, r, err)
		return
	}
	v := textView(lr)
	if s.foreignOrigin(w, r, v.Lang) {
		return
	}
	form := func() loginView { // the form again, whole
		full := s.view(r.Context(), lr)
		full.Email, full.Error = v.Email, v.Error
		return full
	}
	cookie, _ := r.Cookie(csrfCookie)
	csrf := r.PostForm.Get("csrf")
	if cookie == nil || subtle.ConstantTimeCompare([]byte(csrf), []byte(lr.CSRF)) != 1 ||
		subtle.ConstantTimeCompare([]byte(cookie.Value), []byte(lr.CSRF)) != 1 {
		s.errorPage(w, http.StatusForbidden, v.Lang, "access_denied", v.T.BadForm)
		return
	}
	if lr.UserID != "" {
		http.Redirect(w, r, op.AuthCallbackURL(s.provider)(op.ContextWithIssuer(r.Context(), s.cfg.Issuer), lr.ID), http.StatusSeeOther)
		return
	}
	email := strings.TrimSpace(r.PostForm.Get("email"))
	v.Email = email
	account := lr.TenantID + "\x00" + strings.ToLower(email)
	addr := throttle.AddressKey(r.RemoteAddr)
	now := s.now()
	if wait := max(s.byAccount.Wait(account, now), s.byLoginAddress.Wait(addr, now)); wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		v.Error = v.T.TooMany
		s.render(w, http.StatusTooManyRequests, "login.html", form())
		return
	}
	u, err := s.users.Authenticate(r.Context(), lr.TenantID, email, r.PostForm.Get("password"))
	if err != nil {
		if !errors.Is(err, subscriberuser.ErrInvalidCredentials) && !errors.Is(err, subscriberuser.ErrDisabled) {
			s.log.ErrorContext(r.Context(), "login", "err", err)
			s.errorPage(w, http.StatusInternalServerError, v.Lang, "server_error", v.T.Failed)
			return
		}
		s.byAccount.Fail(account, now)
		s.byLoginAddress.Fail(addr, now)
		v.Error = v.T.Wrong
		s.render(w, http.StatusUnauthorized, "login.html", form())
		return
	}
	if err := CompleteLoginRequest(r.Context(), s.store, lr.ID, u.ID, now); err != nil {
		s.expired(w, r, err)
		return
	}
	s.startSession(w, r, lr.TenantID, u.ID, now)
	http.Redirect(w, r, op.AuthCallbackURL(s.provider)(op.ContextWithIssuer(r.Context(), s.cfg.Issuer), lr.ID), http.StatusSeeOther)
}

func (s *Server) errorPage(w http.ResponseWriter, status int, lang, code, msg string) {
	t := texts[Language(lang)]
	s.render(w, status, "error.html", loginView{T: t, Lang: Language(lang), Title: t.ErrorTitle, Error: msg, Code: code})
}

func (s *Server) render(w http.ResponseWriter, status int, name string, v loginView) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src https:; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "same-origin") // not no-referrer: the form post's Origin would be "null" (origin.go)
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, name, v); err != nil {
		s.log.Error("render login page", "err", err)
	}
}
