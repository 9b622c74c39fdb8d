package console

import (
	"bytes"
	"encoding/base64"
	"errors"
	"html/template"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pquerna/otp"

	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webui"
)

// usersView is the user admin page's data.
type usersView struct {
	Users []staff.User
	// Link is a set-password link just made (shown once), for LinkEmail.
	Link, LinkEmail string
	LinkExpires     time.Time
	// Form is the create form as given, after a refusal.
	Form staff.NewUser
}

func (c *Console) usersPage(w http.ResponseWriter, r *http.Request, s *session, status int, v usersView, p page) {
	users, err := c.staff.Users(r.Context(), s.TenantID)
	if c.failed(w, r, s, err) {
		return
	}
	v.Users = users
	p.Data = v
	c.render(w, r, s, status, "users", p)
}

func (c *Console) users(w http.ResponseWriter, r *http.Request, s *session) {
	c.usersPage(w, r, s, http.StatusOK, usersView{}, page{})
}

// createUser adds a staff user without a password and shows the
// set-password link to hand over (it works once, for staff.Options'
// LinkTTL); the user chooses the password.
func (c *Console) createUser(w http.ResponseWriter, r *http.Request, s *session) {
	role, err := staff.ParseRole(r.PostFormValue("role"))
	in := staff.NewUser{Email: strings.TrimSpace(r.PostFormValue("email")), Name: strings.TrimSpace(r.PostFormValue("name")), Role: role}
	if err != nil {
		c.usersPage(w, r, s, http.StatusBadRequest, usersView{Form: in}, page{Page: webui.Page{Error: "badRole"}})
		return
	}
	u, err := c.staff.CreateUser(r.Context(), s.TenantID, in)
	var invalid validation.Errors
	switch {
	case errors.Is(err, staff.ErrEmailTaken):
		c.usersPage(w, r, s, http.StatusConflict, usersView{Form: in}, page{Page: webui.Page{Error: "emailTaken"}})
		return
	case errors.As(err, &invalid):
		c.usersPage(w, r, s, http.StatusBadRequest, usersView{Form: in}, page{Page: webui.Page{Error: "badUser"}})
		return
	case c.failed(w, r, s, err):
		return
	}
	c.linkFor(w, r, s, u, "userCreated")
}

// linkFor makes a set-password link for u and shows it on the users page.
func (c *Console) linkFor(w http.ResponseWriter, r *http.Request, s *session, u staff.User, notice string) {
	token, expires, err := c.staff.SetPasswordLink(r.Context(), s.TenantID, u.ID)
	if c.failed(w, r, s, err) {
		return
	}
	c.usersPage(w, r, s, http.StatusOK, usersView{Link: c.baseURL(r) + Prefix + "/setpassword?token=" + url.QueryEscape(token),
		LinkEmail: u.Email, LinkExpires: expires}, page{Page: webui.Page{Notice: notice}})
}

// baseURL is where the console's links point: the configured base URL,
// or the request's own host.
func (c *Console) baseURL(r *http.Request) string {
	if c.base != "" {
		return c.base
	}
	scheme := "http"
	if r.TLS != nil || c.secure {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// updateUser changes a user's role and whether it is disabled (which ends
// its sessions). The tenant keeps at least one enabled admin.
func (c *Console) updateUser(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	role, err := staff.ParseRole(r.PostFormValue("role"))
	if err != nil {
		c.usersPage(w, r, s, http.StatusBadRequest, usersView{}, page{Page: webui.Page{Error: "badRole"}})
		return
	}
	_, err = c.staff.UpdateUser(r.Context(), s.TenantID, r.PathValue("id"), role, r.PostFormValue("disabled") == "on")
	switch {
	case errors.Is(err, staff.ErrLastAdmin):
		c.usersPage(w, r, s, http.StatusConflict, usersView{}, page{Page: webui.Page{Error: "lastAdmin"}})
		return
	case c.notFound(w, r, s, err):
		return
	}
	c.usersPage(w, r, s, http.StatusOK, usersView{}, page{Page: webui.Page{Notice: "userSaved"}})
}

// userLink makes a new set-password link for a user (one who forgot the
// password, or whose first link expired); earlier links stop working.
func (c *Console) userLink(w http.ResponseWriter, r *http.Request, s *session) {
	if c.badID(w, r, s) {
		return
	}
	u, err := c.staff.User(r.Context(), s.TenantID, r.PathValue("id"))
	if c.notFound(w, r, s, err) {
		return
	}
	c.linkFor(w, r, s, u, "linkMade")
}

// accountView is the own-account page's data: the user, and while a
// second factor is being set up, its secret and QR code.
type accountView struct {
	User   staff.User
	Secret string
	QR     template.URL
}

func (c *Console) account(w http.ResponseWriter, r *http.Request, s *session) {
	c.render(w, r, s, http.StatusOK, "account", page{Page: webui.Page{Data: accountView{User: s.User}}})
}

// beginTOTP starts setting up an authenticator app: a new secret, shown
// as a QR code and as text, that becomes the second factor once a code
// from it is confirmed.
func (c *Console) beginTOTP(w http.ResponseWriter, r *http.Request, s *session) {
	secret, u, err := c.staff.BeginTOTP(r.Context(), s.TenantID, s.UserID, "Kadens "+s.Tenant.Name)
	if c.failed(w, r, s, err) {
		return
	}
	v := accountView{User: s.User, Secret: secret}
	if key, err := otp.NewKeyFromURL(u); err == nil {
		if img, err := key.Image(240, 240); err == nil {
			var buf bytes.Buffer
			if png.Encode(&buf, img) == nil {
				v.QR = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()))
			}
		}
	}
	c.render(w, r, s, http.StatusOK, "account", page{Page: webui.Page{Data: v}})
}

func (c *Console) confirmTOTP(w http.ResponseWriter, r *http.Request, s *session) {
	err := c.staff.ConfirmTOTP(r.Context(), s.TenantID, s.UserID, strings.TrimSpace(r.PostFormValue("code")))
	if errors.Is(err, staff.ErrBadCredentials) {
		c.render(w, r, s, http.StatusBadRequest, "account", page{Page: webui.Page{Data: accountView{User: s.User}, Error: "wrongCode"}})
		return
	}
	if c.failed(w, r, s, err) {
		return
	}
	s.User.TOTPEnabled = true
	c.render(w, r, s, http.StatusOK, "account", page{Page: webui.Page{Data: accountView{User: s.User}, Notice: "totpOn"}})
}

// disableTOTP turns the second factor off; it asks for the password
// again, so a session left open cannot do it.
func (c *Console) disableTOTP(w http.ResponseWriter, r *http.Request, s *session) {
	pw := r.PostFormValue("password")
	if pw == "" || len(pw) > maxField {
		c.render(w, r, s, http.StatusBadRequest, "account", page{Page: webui.Page{Data: accountView{User: s.User}, Error: "wrongPassword"}})
		return
	}
	if _, err := c.staff.Authenticate(r.Context(), s.TenantID, s.User.Email, pw); errors.Is(err, staff.ErrBadCredentials) {
		c.render(w, r, s, http.StatusBadRequest, "account", page{Page: webui.Page{Data: accountView{User: s.User}, Error: "wrongPassword"}})
		return
	} else if c.failed(w, r, s, err) {
		return
	}
	if c.failed(w, r, s, c.staff.DisableTOTP(r.Context(), s.TenantID, s.UserID)) {
		return
	}
	s.User.TOTPEnabled = false
	c.render(w, r, s, http.StatusOK, "account", page{Page: webui.Page{Data: accountView{User: s.User}, Notice: "totpOff"}})
}
