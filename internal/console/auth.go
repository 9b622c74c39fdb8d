package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/throttle"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webui"
)

// loginForm is what the login page shows again after a failed try.
type loginForm struct {
	Tenant, Email, Next string
}

// maxField bounds a login field: longer is no tenant name, address or
// password anyone has, and is refused before any work is done for it.
const maxField = 1024

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request, s *session) {
	if s != nil && !s.SecondFactorPending {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
		return
	}
	q := r.URL.Query()
	p := page{Page: webui.Page{Data: loginForm{Tenant: q.Get("tenant"), Next: safeNext(q.Get("next"))}}}
	if q.Get("done") == "password" {
		p.Notice = "passwordSet"
	}
	c.render(w, r, nil, http.StatusOK, "login", p)
}

// login checks the form's tenant, e-mail and password. Every try costs
// one password hash, whether the tenant and user exist or not, and
// failures are counted per account and per address like the subscriber
// login's; while either bucket is empty the page answers 429 without
// looking at the password. A success starts a new session (a session the
// browser had is ended: rotation on login).
func (c *Console) login(w http.ResponseWriter, r *http.Request, old *session) {
	f := loginForm{Tenant: strings.TrimSpace(r.PostFormValue("tenant")), Email: strings.TrimSpace(r.PostFormValue("email")),
		Next: safeNext(r.PostFormValue("next"))}
	password := r.PostFormValue("password")
	again := func(status int, msg string) {
		c.render(w, r, nil, status, "login", page{Page: webui.Page{Data: f, Error: msg}})
	}
	if f.Tenant == "" || f.Email == "" || password == "" || len(f.Tenant) > maxField || len(f.Email) > maxField || len(password) > maxField {
		again(http.StatusBadRequest, "loginIncomplete")
		return
	}
	account := strings.ToLower(f.Tenant) + "\x00" + strings.ToLower(f.Email)
	addr, now := throttle.AddressKey(r.RemoteAddr), c.now()
	if wait := max(c.byAccount.Wait(account, now), c.byAddress.Wait(addr, now)); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
		again(http.StatusTooManyRequests, "tooMany")
		return
	}
	tenantID := ""
	if t, err := c.tenantByName(r, f.Tenant); err == nil {
		tenantID = t.ID
	} else if !errors.Is(err, store.ErrNotFound) {
		c.log.ErrorContext(r.Context(), "console login: tenant", "err", err)
		again(http.StatusInternalServerError, "failed")
		return
	}
	// An unknown tenant is checked like an unknown user (one hash, the
	// same answer), so the form does not tell which tenants exist.
	u, err := c.staff.Authenticate(r.Context(), tenantID, f.Email, password)
	if errors.Is(err, staff.ErrBadCredentials) {
		c.byAccount.Fail(account, now)
		c.byAddress.Fail(addr, now)
		again(http.StatusUnauthorized, "wrongLogin")
		return
	}
	if err != nil {
		c.log.ErrorContext(r.Context(), "console login", "err", err)
		again(http.StatusInternalServerError, "failed")
		return
	}
	if old != nil {
		if err := c.endSession(r); err != nil {
			c.log.WarnContext(r.Context(), "console login: end the old session", "err", err)
		}
	}
	token, sess, err := c.staff.StartSession(r.Context(), u)
	if err != nil {
		c.log.ErrorContext(r.Context(), "console login: session", "err", err)
		again(http.StatusInternalServerError, "failed")
		return
	}
	c.setSession(w, token)
	if sess.SecondFactorPending {
		http.Redirect(w, r, Prefix+"/login/code?next="+urlQueryEscape(f.Next), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, f.Next, http.StatusSeeOther)
}

// tenantByName finds the tenant a staff user names at login: by name,
// or by id.
func (c *Console) tenantByName(r *http.Request, name string) (store.Tenant, error) {
	t, err := c.store.TenantByName(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) && store.ValidID(name) {
		t, err = c.store.TenantByID(r.Context(), name)
	}
	return t, err
}

// safeNext is where to go after logging in: a console path of this host,
// never another site (an open redirect).
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix+"/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") ||
		strings.HasPrefix(next, Prefix+"/login") {
		return Prefix + "/"
	}
	return next
}

func (c *Console) codePage(w http.ResponseWriter, r *http.Request, s *session) {
	if s == nil {
		http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
		return
	}
	c.render(w, r, s, http.StatusOK, "code", page{Page: webui.Page{Data: safeNext(r.URL.Query().Get("next"))}})
}

// code checks the second factor of a pending session; a right code
// rotates the session's token. Wrong codes count against the account
// like wrong passwords.
func (c *Console) code(w http.ResponseWriter, r *http.Request, s *session) {
	next := safeNext(r.PostFormValue("next"))
	if s == nil || !s.SecondFactorPending {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	account := s.TenantID + "\x00code\x00" + s.UserID
	addr, now := throttle.AddressKey(r.RemoteAddr), c.now()
	if wait := max(c.byAccount.Wait(account, now), c.byAddress.Wait(addr, now)); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
		c.render(w, r, s, http.StatusTooManyRequests, "code", page{Page: webui.Page{Data: next, Error: "tooMany"}})
		return
	}
	code := strings.TrimSpace(r.PostFormValue("code"))
	ck, _ := r.Cookie(c.cookieName())
	token, _, err := c.staff.CompleteSecondFactor(r.Context(), ck.Value, code)
	if errors.Is(err, staff.ErrBadCredentials) {
		c.byAccount.Fail(account, now)
		c.byAddress.Fail(addr, now)
		c.render(w, r, s, http.StatusUnauthorized, "code", page{Page: webui.Page{Data: next, Error: "wrongCode"}})
		return
	}
	if err != nil {
		c.log.ErrorContext(r.Context(), "console second factor", "err", err)
		c.fail(w, r, s, http.StatusInternalServerError, "failed")
		return
	}
	c.setSession(w, token)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) endSession(r *http.Request) error {
	ck, err := r.Cookie(c.cookieName())
	if err != nil {
		return nil
	}
	return c.staff.EndSession(r.Context(), ck.Value)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.endSession(r); err != nil {
		c.log.ErrorContext(r.Context(), "console logout", "err", err)
		c.fail(w, r, s, http.StatusInternalServerError, "failed")
		return
	}
	c.clearSession(w)
	http.Redirect(w, r, Prefix+"/login?tenant="+urlQueryEscape(s.Tenant.Name), http.StatusSeeOther)
}

func (c *Console) setPasswordPage(w http.ResponseWriter, r *http.Request, _ *session) {
	token := r.URL.Query().Get("token")
	if token == "" || len(token) > maxField {
		c.fail(w, r, nil, http.StatusBadRequest, "linkBad")
		return
	}
	c.render(w, r, nil, http.StatusOK, "setpassword", page{Page: webui.Page{Data: token}})
}

// setPassword sets a staff user's password from a set-password link (one
// use; every session of the user ends) and sends the user to log in.
func (c *Console) setPassword(w http.ResponseWriter, r *http.Request, _ *session) {
	token, pw, again := r.PostFormValue("token"), r.PostFormValue("password"), r.PostFormValue("confirm")
	if token == "" || len(token) > maxField {
		c.fail(w, r, nil, http.StatusBadRequest, "linkBad")
		return
	}
	if pw != again {
		c.render(w, r, nil, http.StatusBadRequest, "setpassword", page{Page: webui.Page{Data: token, Error: "passwordsDiffer"}})
		return
	}
	u, err := c.staff.UsePasswordLink(r.Context(), token, pw)
	var invalid validation.Errors
	switch {
	case errors.As(err, &invalid):
		c.render(w, r, nil, http.StatusBadRequest, "setpassword", page{Page: webui.Page{Data: token, Error: "passwordWeak"}})
		return
	case errors.Is(err, staff.ErrBadLink):
		c.fail(w, r, nil, http.StatusBadRequest, "linkBad")
		return
	case err != nil:
		c.log.ErrorContext(r.Context(), "console set password", "err", err)
		c.fail(w, r, nil, http.StatusInternalServerError, "failed")
		return
	}
	name := ""
	if t, err := c.store.TenantByID(r.Context(), u.TenantID); err == nil {
		name = t.Name
	}
	http.Redirect(w, r, Prefix+"/login?done=password&tenant="+urlQueryEscape(name), http.StatusSeeOther)
}
