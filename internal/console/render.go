package console

import (
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/webui"
)

// page is what every template gets: the shared part (language, texts,
// form token, title, the page's own data) and the logged-in user (nil on
// the public pages).
type page struct {
	webui.Page
	Session *session
}

// Can reports whether the page's user may use a route of access a (to
// show only the actions the user can take); the guard decides.
func (p page) Can(what string) bool {
	if p.Session == nil {
		return false
	}
	a := map[string]access{"support": supportWork, "finance": financeWork, "admin": adminWork, "audit": auditReaders}[what]
	return a&roleAccess(p.Session.User.Role) != 0
}

func (c *Console) funcs() template.FuncMap {
	f := webui.Funcs(c.zone)
	f["amount"] = amount
	f["add"] = func(a, b int) int { return a + b }
	f["monthKey"] = func(t time.Time) string { return t.In(c.zone).Format("2006-01") }
	f["derefStr"] = func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	f["roles"] = func() []staff.Role { return []staff.Role{staff.RoleSupport, staff.RoleFinance, staff.RoleAdmin} }
	return f
}

// formatMoney writes an amount the Nordic way ("1 234,50 NOK").
var formatMoney = webui.FormatMoney

// render writes page name with status (webui.Render: buffered, so a
// template error is a clean 500).
func (c *Console) render(w http.ResponseWriter, r *http.Request, s *session, status int, name string, p page) {
	csrf := ""
	if s != nil {
		csrf = s.CSRF
	}
	p.Prepare(w, r, c.languages(), texts, webui.Frame{Home: Prefix + "/", Style: "console.css", Product: "product"}, name, csrf)
	p.Session = s
	webui.Render(w, r, c.log, c.pages[name], status, p)
}

// fail renders the error page with the text of key (what went wrong and
// what to do next).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, status int, key string) {
	c.render(w, r, s, status, "error", page{Page: webui.Page{Title: http.StatusText(status), Data: key}})
}

// languages: ?lang=nb|en (remembered), else the browser's; Nynorsk
// readers get bokmål, everyone else English.
func (c *Console) languages() webui.Languages {
	return webui.Languages{Cookie: "kadens-console-lang", Path: Prefix + "/", Secure: c.secure,
		Of: map[string]string{"nb": "nb", "no": "nb", "nn": "nb", "en": "en"}, Default: "en"}
}

// tokenMatches reports whether a form's token is the session's, taking
// the same time wherever they differ.
func (s *session) tokenMatches(token string) bool { return webui.TokenMatches(token, s.CSRF) }

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
