package minside

import (
	"errors"
	"html/template"
	"net/http"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/webui"
)

// page is what every template gets.
type page struct {
	Lang    string
	Title   string
	Path    string
	Session *session
	CSRF    string
	Error   string
	Notice  string
	// Fields are a form's problems by field (validation.Errors).
	Fields map[string]string
	Data   any
	texts  map[string]string
}

// T is the text key in the page's language (the key itself when missing,
// which TestTextsComplete keeps from happening).
func (p page) T(key string) string {
	if s, ok := p.texts[key]; ok {
		return s
	}
	return key
}

// Languages are the page's language links, each in its own language.
func (p page) Languages() []langLink {
	out := make([]langLink, 0, len(languages))
	for _, l := range languages {
		out = append(out, langLink{Code: l, Name: texts[l]["languageName"], Href: webui.LangLink(p.Path, Prefix+"/", l), Current: l == p.Lang})
	}
	return out
}

type langLink struct {
	Code, Name, Href string
	Current          bool
}

// languages are the login page's six, in the order the links show them.
var languages = []string{"nb", "nn", "sv", "da", "fi", "en"}

func (m *MinSide) funcs() template.FuncMap {
	f := webui.Funcs(m.zone)
	f["field"] = func(p page, name, value, auto, typ string) formField {
		return formField{Page: p, Name: name, Value: value, Auto: auto, Type: typ, Problem: p.Fields[name]}
	}
	return f
}

// formField is one labelled input of a form, with its problem.
type formField struct {
	Page                             page
	Name, Value, Auto, Type, Problem string
}

func (m *MinSide) language(w http.ResponseWriter, r *http.Request) string {
	return webui.Languages{Cookie: "kadens-my-lang", Path: Prefix + "/", Secure: m.secure,
		Of: map[string]string{"nb": "nb", "no": "nb", "nn": "nn", "sv": "sv", "da": "da", "fi": "fi", "en": "en"}, Default: "nb"}.Choose(w, r)
}

func (m *MinSide) render(w http.ResponseWriter, r *http.Request, s *session, status int, name string, p page) {
	p.Lang = m.language(w, r)
	p.texts = texts[p.Lang]
	p.Session = s
	if s != nil {
		p.CSRF = s.CSRF
	}
	if p.Title == "" {
		p.Title = p.T(name)
	}
	p.Path = webui.PagePath(r, Prefix+"/")
	webui.Render(w, r, m.log, m.pages[name], status, p)
}

// fail renders the error page with the text of key.
func (m *MinSide) fail(w http.ResponseWriter, r *http.Request, s *session, status int, key string) {
	m.render(w, r, s, status, "error", page{Title: http.StatusText(status), Data: key})
}

// failed answers a failure (logged, a 500 page) and reports whether there
// was one.
func (m *MinSide) failed(w http.ResponseWriter, r *http.Request, s *session, err error) bool {
	if err == nil {
		return false
	}
	m.log.ErrorContext(r.Context(), "minside", "path", r.URL.Path, "err", err)
	m.fail(w, r, s, http.StatusInternalServerError, "failed")
	return true
}

// notFound answers a missing record (or another subscriber's, which is
// the same to this subscriber) with a 404 page, any other error as
// failed.
func (m *MinSide) notFound(w http.ResponseWriter, r *http.Request, s *session, err error) bool {
	if errors.Is(err, store.ErrNotFound) {
		m.fail(w, r, s, http.StatusNotFound, "notFound")
		return true
	}
	return m.failed(w, r, s, err)
}
