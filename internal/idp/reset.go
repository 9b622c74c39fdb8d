package idp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/throttle"
)

// ResetTTL is how long a password reset link works (once).
const ResetTTL = time.Hour

// Password reset by e-mail link, enabled by Config.SMTPURL: the login page
// links to /reset?id=<login>, the form sends a single-use link
// (/reset?token=...) to the address if it belongs to an active user of the
// login's tenant, and the link's form sets a new password. The answers do
// not tell whether the address has an account.

type resetView struct {
	loginView
	Mode  string // request, sent, choose, done, bad
	Token string
}

func (s *Server) renderReset(w http.ResponseWriter, status int, v resetView) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // not no-referrer: the form post's Origin would be "null" (origin.go)
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, "reset.html", v); err != nil {
		s.log.Error("render reset page", "err", err)
	}
}

func (s *Server) resetPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if s.mail == nil {
		s.errorPage(w, http.StatusNotFound, q.Get("language"), "not_found", texts[Language(q.Get("language"))].Failed)
		return
	}
	if tok := q.Get("token"); tok != "" {
		lang := Language(q.Get("language"))
		v := resetView{loginView: loginView{T: texts[lang], Lang: lang, Title: texts[lang].ResetHeading}, Mode: "choose", Token: tok}
		if !LivePasswordReset(r.Context(), s.store, sha(tok), s.now()) {
			v.Mode = "bad"
			s.renderReset(w, http.StatusBadRequest, v)
			return
		}
		s.renderReset(w, http.StatusOK, v)
		return
	}
	lr, err := LiveLoginRequest(r.Context(), s.store, q.Get("id"), s.now())
	if err != nil {
		s.expired(w, r, err)
		return
	}
	v := resetView{loginView: s.view(r.Context(), lr), Mode: "request"}
	v.Title = v.T.ResetHeading
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: lr.CSRF, Path: s.cookiePath(), HttpOnly: true,
		Secure: strings.HasPrefix(s.cfg.Issuer, "https://"), SameSite: http.SameSiteLaxMode, MaxAge: int(LoginTTL.Seconds())})
	s.renderReset(w, http.StatusOK, v)
}

func (s *Server) resetPost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if s.mail == nil || r.ParseForm() != nil {
		s.errorPage(w, http.StatusBadRequest, "en", "invalid_request", texts["en"].Failed)
		return
	}
	if tok := r.PostForm.Get("token"); tok != "" {
		if s.foreignOrigin(w, r, r.PostForm.Get("language")) {
			return
		}
		s.resetChoose(w, r, tok)
		return
	}
	lr, err := LiveLoginRequest(r.Context(), s.store, r.PostForm.Get("id"), s.now())
	if err != nil {
		s.expired(w, r, err)
		return
	}
	v := resetView{loginView: s.view(r.Context(), lr), Mode: "sent"}
	v.Title = v.T.ResetHeading
	if s.foreignOrigin(w, r, v.Lang) {
		return
	}
	cookie, _ := r.Cookie(csrfCookie)
	if cookie == nil || subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(lr.CSRF)) != 1 ||
		subtle.ConstantTimeCompare([]byte(cookie.Value), []byte(lr.CSRF)) != 1 {
		s.errorPage(w, http.StatusForbidden, v.Lang, "access_denied", v.T.BadForm)
		return
	}
	email := strings.TrimSpace(r.PostForm.Get("email"))
	// Each request counts against the account's and the address's login
	// failure budget, so the form cannot flood a mailbox.
	account := lr.TenantID + "\x00" + strings.ToLower(email)
	addr := throttle.AddressKey(r.RemoteAddr)
	now := s.now()
	if wait := max(s.byAccount.Wait(account, now), s.byLoginAddress.Wait(addr, now)); wait > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(int((wait+time.Second-1)/time.Second)))
		v.Mode, v.Error = "request", v.T.TooMany
		s.renderReset(w, http.StatusTooManyRequests, v)
		return
	}
	s.byAccount.Fail(account, now)
	s.byLoginAddress.Fail(addr, now)
	u, err := subscriberuser.SubscriberUserByEmail(tenancy.With(r.Context(), lr.TenantID), s.store, email)
	if err == nil && !u.Disabled {
		tok := randomToken()
		if err := CreatePasswordReset(r.Context(), s.store, sha(tok), lr.TenantID, u.ID, now, now.Add(ResetTTL)); err != nil {
			s.log.ErrorContext(r.Context(), "password reset", "err", err)
		} else {
			link := s.cfg.Issuer + "/reset?" + url.Values{"token": {tok}, "language": {v.Lang}}.Encode()
			to := u.Email
			// Sent in the background: the answer takes as long whether the
			// address has an account or not.
			go func() {
				if err := s.mail.Send(context.WithoutCancel(r.Context()), to, v.T.ResetSubject, v.T.ResetBody+"\n\n"+link+"\n"); err != nil {
					s.log.Error("send password reset mail", "err", err)
				}
			}()
		}
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.ErrorContext(r.Context(), "password reset", "err", err)
	}
	s.renderReset(w, http.StatusOK, v)
}

func (s *Server) resetChoose(w http.ResponseWriter, r *http.Request, tok string) {
	lang := Language(r.PostForm.Get("language"))
	v := resetView{loginView: loginView{T: texts[lang], Lang: lang, Title: texts[lang].ResetHeading}, Mode: "done"}
	pw := r.PostForm.Get("password")
	if n := utf8.RuneCountInString(pw); n < 8 || n > 1000 {
		v.Mode, v.Token, v.Error = "choose", tok, "8–1000"
		s.renderReset(w, http.StatusBadRequest, v)
		return
	}
	tenant, userID, err := UsePasswordReset(r.Context(), s.store, sha(tok), s.now())
	if err != nil {
		v.Mode = "bad"
		s.renderReset(w, http.StatusBadRequest, v)
		return
	}
	if _, err := s.users.SetPassword(tenancy.With(context.WithoutCancel(r.Context()), tenant), userID, pw); err != nil {
		s.log.ErrorContext(r.Context(), "set password", "err", err)
		s.errorPage(w, http.StatusInternalServerError, lang, "server_error", v.T.Failed)
		return
	}
	// Whoever knew the old password is logged out of every browser.
	if err := EndUserLoginSessions(context.WithoutCancel(r.Context()), s.store, userID); err != nil {
		s.log.ErrorContext(r.Context(), "end login sessions after a password reset", "err", err)
	}
	s.renderReset(w, http.StatusOK, v)
}
