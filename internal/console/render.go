package console

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/staff"
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
func (p page) LangLink(l string) string {
	u, err := url.Parse(p.Path)
	if err != nil {
		return Prefix + "/?lang=" + l
	}
	q := u.Query()
	q.Set("lang", l)
	u.RawQuery = q.Encode()
	return u.String()
}

func (c *Console) funcs() template.FuncMap {
	return template.FuncMap{
		"money": formatMoney,
		"minor": func(minor int64, currency string) string {
			return formatMoney(catalog.Amount{Minor: minor, Digits: 2}, currency)
		},
		"amount":   amount,
		"add":      func(a, b int) int { return a + b },
		"monthKey": func(t time.Time) string { return t.In(c.zone).Format("2006-01") },
		"datetime": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.In(c.zone).Format("2006-01-02 15:04")
		},
		"date": func(t any) string {
			switch v := t.(type) {
			case time.Time:
				if v.IsZero() {
					return ""
				}
				return v.In(c.zone).Format("2006-01-02")
			case *time.Time:
				if v == nil {
					return ""
				}
				return v.In(c.zone).Format("2006-01-02")
			}
			return ""
		},
		"deref": func(t *time.Time) time.Time {
			if t == nil {
				return time.Time{}
			}
			return *t
		},
		"derefStr": func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		},
		"roles": func() []staff.Role { return []staff.Role{staff.RoleSupport, staff.RoleFinance, staff.RoleAdmin} },
	}
}

// formatMoney writes an amount the Nordic way: a space between thousands,
// a comma before the øre, the currency after ("1 234,50 NOK").
func formatMoney(a catalog.Amount, currency string) string {
	s := a.Decimal().StringFixed(int32(a.Digits))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteRune('\u00a0')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if frac != "" {
		out += "," + frac
	}
	if neg {
		out = "−" + out
	}
	if currency != "" {
		out += "\u00a0" + currency
	}
	return out
}

// parsePages parses each page template with the layout.
func parsePages(funcs template.FuncMap) (map[string]*template.Template, error) {
	names, err := fs.Glob(assets, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(assets, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", base, err)
		}
		pages[base] = t
	}
	return pages, nil
}

// render writes page name with status. The page is rendered into a
// buffer first, so a template error is a clean 500, not half a page.
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
	u := *r.URL
	q := u.Query()
	q.Del("lang")
	u.RawQuery = q.Encode()
	p.Path = u.RequestURI()
	if r.Method != http.MethodGet {
		p.Path = Prefix + "/"
	}
	t := c.pages[name]
	var buf bytes.Buffer
	if t == nil {
		c.log.ErrorContext(r.Context(), "console: no page", "page", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		c.log.ErrorContext(r.Context(), "console: render", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders the error page with the text of key (what went wrong and
// what to do next).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, status int, key string) {
	c.render(w, r, s, status, "error", page{Title: http.StatusText(status), Data: key})
}

// language is the page's language: ?lang= (remembered in a cookie), the
// cookie, the browser's Accept-Language, English.
func (c *Console) language(w http.ResponseWriter, r *http.Request) string {
	if l := r.URL.Query().Get("lang"); l != "" {
		if _, ok := texts[l]; ok {
			http.SetCookie(w, &http.Cookie{Name: "kadens-console-lang", Value: l, Path: Prefix + "/", MaxAge: 365 * 24 * 3600,
				HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteLaxMode})
			return l
		}
	}
	if ck, err := r.Cookie("kadens-console-lang"); err == nil {
		if _, ok := texts[ck.Value]; ok {
			return ck.Value
		}
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		tag = strings.ToLower(tag)
		base, _, _ := strings.Cut(tag, "-")
		switch base {
		case "nb", "no", "nn":
			return "nb"
		case "en":
			return "en"
		}
	}
	return "en"
}

// tokenMatches reports whether a form's token is the session's, taking
// the same time wherever they differ.
func (s *session) tokenMatches(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRF)) == 1
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
