package console

import (
	"html/template"
	"net/http"
	"net/url"

	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/webui"
)

// page is what every template gets: the language and its texts, the
// logged-in user (nil on the public pages), the form token, and the
// page's own data.
type page struct {
	Lang  string
	Title string
	// Path is the page's path and query without lang, for the language
	// links.
	Path    string
	Session *session
	CSRF    string
	Error   string
	Notice  string
	Data    any
	texts   map[string]string
}

// T is the text key in the page's language (the key itself when a text
// is missing, which TestTextsComplete keeps from happening).
func (p page) T(key string) string {
	if s, ok := p.texts[key]; ok {
		return s
	}
	return key
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

// LangLink is the page's path in language l.
func (p page) LangLink(l string) string { return webui.LangLink(p.Path, Prefix+"/", l) }

func (c *Console) funcs() template.FuncMap {
	f := webui.Funcs(c.zone)
	f["roles"] = func() []staff.Role { return []staff.Role{staff.RoleSupport, staff.RoleFinance, staff.RoleAdmin} }
	return f
}

// formatMoney writes an amount the Nordic way ("1 234,50 NOK").
var formatMoney = webui.FormatMoney

// render writes page name with status (webui.Render: buffered, so a
// template error is a clean 500).
func (c *Console) render(w http.ResponseWriter, r *http.Request, s *session, status int, name string, p page) {
	p.Lang = c.language(w, r)
	p.texts = texts[p.Lang]
	p.Session = s
	if s != nil {
		p.CSRF = s.CSRF
	}
	if p.Title == "" {
		p.Title = p.T(name)
	}
	p.Path = webui.PagePath(r, Prefix+"/")
	webui.Render(w, r, c.log, c.pages[name], status, p)
}

// fail renders the error page with the text of key (what went wrong and
// what to do next).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, status int, key string) {
	c.render(w, r, s, status, "error", page{Title: http.StatusText(status), Data: key})
}

// languages: ?lang=nb|en (remembered), else the browser's; Nynorsk
// readers get bokmål, everyone else English.
func (c *Console) language(w http.ResponseWriter, r *http.Request) string {
	return webui.Languages{Cookie: "kadens-console-lang", Path: Prefix + "/", Secure: c.secure,
		Of: map[string]string{"nb": "nb", "no": "nb", "nn": "nb", "en": "en"}, Default: "en"}.Choose(w, r)
}

// tokenMatches reports whether a form's token is the session's, taking
// the same time wherever they differ.
func (s *session) tokenMatches(token string) bool { return webui.TokenMatches(token, s.CSRF) }

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
