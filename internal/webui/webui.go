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
	_ "embed"
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
// together with layout.html, by the page's base name.
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
		t, err := template.New(base).Funcs(funcs).ParseFS(assets, "templates/layout.html", n)
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
