// Package webui is what Kadens' server-rendered surfaces share: the
// merchant console (internal/console) and Min side (internal/minside).
// Both are html/template pages with one embedded style sheet and no
// script; this package holds the parts that are the same in both — the
// security headers, template parsing and buffered rendering, the Nordic
// number and date formats, the language choice and the form-token
// comparison. Each surface keeps its own routes, pages and texts.
package webui

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/catalog"
)

// CSS is the style sheet every surface serves from its own static path:
// mobile first, a visible focus outline, contrast of at least 4.5:1.
//
//go:embed static/kadens.css
var CSS []byte

// shared holds the templates every surface's layout uses: "head" (the
// document's start, the style sheet and the skip link) and "main" (the
// page's error and notice, then its "content", and the document's end).
//
//go:embed templates/*.html
var shared embed.FS

// CSP admits the page's own style sheet and nothing else: no script runs,
// nothing is loaded from elsewhere, forms post only to the page's origin,
// and no other site frames it.
const CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Headers sets what every answer of a surface carries: the CSP above, no
// framing, no sniffing, no referrer (a token in an address never leaks)
// and no caching of pages that show a tenant's data (the style sheet under
// staticPrefix may be cached).
func Headers(h http.Handler, staticPrefix string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		if !strings.HasPrefix(r.URL.Path, staticPrefix) {
			hd.Set("Cache-Control", "no-store")
		}
		h.ServeHTTP(w, r)
	})
}

// ServeCSS writes the style sheet.
func ServeCSS(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(CSS)
}

// Funcs are the template functions both surfaces use, with times shown in
// zone: money, minor (an amount in minor units), datetime, date, deref.
func Funcs(zone *time.Location) template.FuncMap {
	return template.FuncMap{
		"money": FormatMoney,
		"minor": func(minor int64, currency string) string {
			return FormatMoney(catalog.Amount{Minor: minor, Digits: 2}, currency)
		},
		"datetime": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.In(zone).Format("2006-01-02 15:04")
		},
		"date": func(t any) string {
			switch v := t.(type) {
			case time.Time:
				if v.IsZero() {
					return ""
				}
				return v.In(zone).Format("2006-01-02")
			case *time.Time:
				if v == nil {
					return ""
				}
				return v.In(zone).Format("2006-01-02")
			}
			return ""
		},
		"deref": func(t *time.Time) time.Time {
			if t == nil {
				return time.Time{}
			}
			return *t
		},
	}
}

// FormatMoney writes an amount the Nordic way: a space between thousands,
// a comma before the øre, the currency after ("1 234,50 NOK").
func FormatMoney(a catalog.Amount, currency string) string {
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

// ParsePages parses each templates/*.html of assets but layout.html
// together with layout.html and the shared templates, by the page's base
// name.
func ParsePages(assets fs.FS, funcs template.FuncMap) (map[string]*template.Template, error) {
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
		t, err := template.New(base).Funcs(funcs).ParseFS(shared, "templates/*.html")
		if err == nil {
			t, err = t.ParseFS(assets, "templates/layout.html", n)
		}
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", base, err)
		}
		pages[base] = t
	}
	return pages, nil
}

// Render writes page t's "layout" with data and status. The page is
// rendered into a buffer first, so a template error is a clean 500, not
// half a page.
func Render(w http.ResponseWriter, r *http.Request, log *slog.Logger, t *template.Template, status int, data any) {
	var buf bytes.Buffer
	if t == nil {
		log.ErrorContext(r.Context(), "no such page", "path", r.URL.Path)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		log.ErrorContext(r.Context(), "render", "page", t.Name(), "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// PagePath is the request's path and query without lang (for the language
// links); after a POST, home (the answer to a form has no address of its
// own to offer).
func PagePath(r *http.Request, home string) string {
	if r.Method != http.MethodGet {
		return home
	}
	u := *r.URL
	q := u.Query()
	q.Del("lang")
	u.RawQuery = q.Encode()
	return u.RequestURI()
}

// LangLink is path in language l.
func LangLink(path, home, l string) string {
	u, err := url.Parse(path)
	if err != nil {
		return home + "?lang=" + l
	}
	q := u.Query()
	q.Set("lang", l)
	u.RawQuery = q.Encode()
	return u.String()
}

// Languages chooses a page's language among a surface's.
type Languages struct {
	// Cookie remembers a ?lang= choice under Path.
	Cookie, Path string
	Secure       bool
	// Of maps a language tag's primary subtag of Accept-Language to one of
	// the surface's languages ("no" → "nb", say); Default is the fallback.
	Of      map[string]string
	Default string
}

// Choose is the page's language: ?lang= (remembered in the cookie), the
// cookie, the browser's Accept-Language, the default.
func (ls Languages) Choose(w http.ResponseWriter, r *http.Request) string {
	known := func(l string) bool {
		for _, v := range ls.Of {
			if v == l {
				return true
			}
		}
		return false
	}
	if l := r.URL.Query().Get("lang"); l != "" && known(l) {
		http.SetCookie(w, &http.Cookie{Name: ls.Cookie, Value: l, Path: ls.Path, MaxAge: 365 * 24 * 3600,
			HttpOnly: true, Secure: ls.Secure, SameSite: http.SameSiteLaxMode})
		return l
	}
	if ck, err := r.Cookie(ls.Cookie); err == nil && known(ck.Value) {
		return ck.Value
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if l, ok := ls.Of[base]; ok {
			return l
		}
	}
	return ls.Default
}

// TokenMatches reports whether a form's token is the session's, taking
// the same time wherever they differ.
func TokenMatches(form, session string) bool {
	return form != "" && subtle.ConstantTimeCompare([]byte(form), []byte(session)) == 1
}

// Page is what every page of a surface carries; a surface's own page type
// embeds it beside its session.
type Page struct {
	Lang  string
	Title string
	// Path is the page's path and query without lang, for the language
	// links.
	Path string
	Frame
	CSRF   string
	Error  string
	Notice string
	// Fields are a form's problems by field (text keys).
	Fields map[string]string
	Data   any
	texts  map[string]string
}

// T is the text key in the page's language (the key itself when a text
// is missing, which each surface's completeness test keeps from
// happening).
func (p Page) T(key string) string {
	if s, ok := p.texts[key]; ok {
		return s
	}
	return key
}

// LangLink is the page's path in language l.
func (p Page) LangLink(l string) string { return LangLink(p.Path, p.Home, l) }

// Frame is what a surface's pages share: the start page (its prefix and
// a slash), the style sheet's file name under Home+"static/", and the
// text key of the product's name for the window title.
type Frame struct{ Home, Style, Product string }

// Prepare fills in what the handler did not: the language (ls) and its
// texts, the form token, the title (the text of the page's name when it
// has none) and the path for the language links.
func (p *Page) Prepare(w http.ResponseWriter, r *http.Request, ls Languages, texts map[string]map[string]string, f Frame, name, csrf string) {
	p.Lang = ls.Choose(w, r)
	p.texts = texts[p.Lang]
	p.CSRF = csrf
	if p.Title == "" {
		p.Title = p.T(name)
	}
	p.Frame = f
	p.Path = PagePath(r, f.Home)
}

// Surface wraps a surface's routes: a page-not-found for every other path
// under prefix, Go's cross-origin protection (a state-changing request a
// browser marks as cross-site, or whose Origin is another host, is
// refused; the session's own form token covers older browsers), and the
// security headers. fail answers a refused request with the surface's
// error page and text key.
func Surface(mux *http.ServeMux, prefix string, fail func(w http.ResponseWriter, r *http.Request, status int, key string)) http.Handler {
	mux.HandleFunc(prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, http.StatusNotFound, "notFound")
	})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, http.StatusForbidden, "crossOrigin")
	}))
	return Headers(cop.Handler(mux), prefix+"/static/")
}

// ReadForm bounds a POST's body to max bytes and parses its form; false
// when it cannot be read (the caller answers 400).
func ReadForm(w http.ResponseWriter, r *http.Request, max int64) bool {
	if r.Method != http.MethodPost {
		return true
	}
	r.Body = http.MaxBytesReader(w, r.Body, max)
	return r.ParseForm() == nil
}

// Admit is the start of a surface's guard: it bounds and reads a POST's
// form (a 400 page, badForm, when it cannot) and then the request's
// session (a 500 page, failed, when reading it failed; the zero S when
// there is none). ok is false when the request has been answered.
func Admit[S any](w http.ResponseWriter, r *http.Request, log *slog.Logger, max int64, session func(*http.Request) (S, error),
	fail func(status int, key string)) (s S, ok bool) {
	if !ReadForm(w, r, max) {
		fail(http.StatusBadRequest, "badForm")
		return s, false
	}
	s, err := session(r)
	if err != nil {
		log.ErrorContext(r.Context(), "session", "path", r.URL.Path, "err", err)
		fail(http.StatusInternalServerError, "failed")
		return s, false
	}
	return s, true
}

// ToLogin answers a request that needs a session and has none: a page
// (GET) leads to the login page at login with next= (the surface follows
// only its own paths), a form answers 401 (loggedOut).
func ToLogin(w http.ResponseWriter, r *http.Request, login string, fail func(status int, key string)) {
	if r.Method == http.MethodGet {
		http.Redirect(w, r, login+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	fail(http.StatusUnauthorized, "loggedOut")
}

// CookieName is a surface's cookie called base: behind https with the
// __Host- prefix, which a browser accepts only from a secure origin for
// the whole host, so no other path or subdomain can plant or shadow it.
func CookieName(base string, secure bool) string {
	if secure {
		return "__Host-" + base
	}
	return base
}

// CookieValue is the request's cookie name; "" when it has none.
func CookieValue(r *http.Request, name string) string {
	ck, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return ck.Value
}
