package minside

import (
	"errors"
	"html/template"
	"net/http"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/webui"
)

// page is what every template gets: the shared part (internal/webui)
// and the logged-in subscriber (nil on the public pages).
type page struct {
	webui.Page
	Session *session
}

// Languages are the page's language links, each in its own language.
func (p page) Languages() []langLink {
	out := make([]langLink, 0, len(languages))
	for _, l := range languages {
		out = append(out, langLink{Code: l, Name: texts[l]["languageName"], Href: p.LangLink(l), Current: l == p.Lang})
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

func (m *MinSide) languages() webui.Languages {
	return webui.Languages{Cookie: "kadens-my-lang", Path: Prefix + "/", Secure: m.secure,
		Of: map[string]string{"nb": "nb", "no": "nb", "nn": "nn", "sv": "sv", "da": "da", "fi": "fi", "en": "en"}, Default: "nb"}
}

// render shows page name; a session's pages carry its form token.
func (m *MinSide) render(w http.ResponseWriter, r *http.Request, s *session, status int, name string, p page) {
	var token string
	if s != nil {
		token = s.CSRF
	}
	p.Session = s
	p.Prepare(w, r, m.languages(), texts, webui.Frame{Home: Prefix + "/", Style: "minside.css", Product: "product"}, name, token)
	webui.Render(w, r, m.log, m.pages[name], status, p)
}

// fail renders the error page with the text of key.
func (m *MinSide) fail(w http.ResponseWriter, r *http.Request, s *session, status int, key string) {
	m.render(w, r, s, status, "error", page{Page: webui.Page{Title: http.StatusText(status), Data: key}})
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
