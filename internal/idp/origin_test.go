package idp

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/smtpmail"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

func TestOriginSerialization(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"http://127.0.0.1:8080/idp":        "http://127.0.0.1:8080",
		"https://Login.Example:443/idp/":   "https://login.example",
		"http://login.example:80":          "http://login.example",
		"https://login.example:8443/x?y=z": "https://login.example:8443",
		"http://[::1]:9000/idp":            "http://[::1]:9000",
		"/idp":                             "",
	} {
		if got := origin(raw); got != want {
			t.Errorf("origin(%q) = %q, want %q", raw, got, want)
		}
	}
}

// The login form and the password reset forms are refused (403, a page
// that says why) when the browser says they were posted from another
// origin, whatever the form carries; from the IdP's own origin, or with
// no Origin at all (the CSRF token and the SameSite cookie then stand
// alone), they are accepted. A refused post leaves the login open.
func TestFormPostsCheckOrigin(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newLoginFixture(t, s)
		m, err := smtpmail.Parse("smtp://127.0.0.1:1?from=login@avisa.example", egress.Policy{}) // never reached
		if err != nil {
			t.Fatal(err)
		}
		f.Server.mail = m
		post := func(c *http.Client, path string, form url.Values, origins ...string) page {
			t.Helper()
			req, err := http.NewRequest("POST", f.url+path, strings.NewReader(form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for _, o := range origins {
				req.Header.Add("Origin", o)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return page{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(b), header: resp.Header}
		}
		// open starts a login in a new browser and returns its form.
		open := func(path string) (*http.Client, url.Values) {
			t.Helper()
			c := browser(t)
			p := fetch(t, c, "GET", f.authorizeURL(nil), nil)
			lp := fetch(t, c, "GET", p.location, nil)
			id := html.UnescapeString(idRE.FindStringSubmatch(lp.body)[1])
			if path == "/reset" {
				lp = fetch(t, c, "GET", f.url+"/reset?id="+url.QueryEscape(id), nil)
			}
			if rp := lp.header.Get("Referrer-Policy"); rp != "same-origin" {
				t.Fatalf("%s page: Referrer-Policy %q; under no-referrer a browser posts the form with Origin: null", path, rp)
			}
			return c, url.Values{"id": {id}, "csrf": {html.UnescapeString(csrfRE.FindStringSubmatch(lp.body)[1])}}
		}
		own := strings.TrimSuffix(f.url, "/")
		login := func(form url.Values) url.Values {
			form.Set("email", f.email)
			form.Set("password", testPassword)
			return form
		}
		for _, bad := range [][]string{{"https://evil.example"}, {"null"}, {own + ".evil.example"}, {strings.Replace(own, "http://", "https://", 1)},
			{own + "0"}, {own, "https://evil.example"}, {""}} {
			c, form := open("/login")
			p := post(c, "/login", login(form), bad...)
			if p.status != http.StatusForbidden || !strings.Contains(p.body, html.EscapeString(otherOrigin["nb"])) || p.location != "" {
				t.Errorf("login posted from %q: %d %s %.300s", bad, p.status, p.location, p.body)
			}
			// The login request is still open: the same form from the
			// page itself logs in.
			if p := post(c, "/login", form, own); p.status != http.StatusSeeOther {
				t.Errorf("login after a refused post from %q: %d %.300s", bad, p.status, p.body)
			}
		}
		c, form := open("/login")
		if p := post(c, "/login", login(form)); p.status != http.StatusSeeOther {
			t.Errorf("login without Origin: %d %.300s", p.status, p.body)
		}

		c, form = open("/reset")
		form.Set("email", f.email)
		if p := post(c, "/reset", form, "https://evil.example"); p.status != http.StatusForbidden || !strings.Contains(p.body, html.EscapeString(otherOrigin["nb"])) {
			t.Errorf("reset request from another origin: %d %.300s", p.status, p.body)
		}
		choose := url.Values{"token": {"some-token"}, "password": {"a new passphrase"}, "language": {"sv"}}
		if p := post(browser(t), "/reset", choose, "https://evil.example"); p.status != http.StatusForbidden || !strings.Contains(p.body, html.EscapeString(otherOrigin["sv"])) {
			t.Errorf("new password from another origin: %d %.300s", p.status, p.body)
		}
		if p := post(browser(t), "/reset", choose, own); p.status != http.StatusBadRequest || !strings.Contains(p.body, `data-reset="bad"`) {
			t.Errorf("new password with an unknown token from the IdP's origin: %d %.300s", p.status, p.body)
		}
	})
}

// Every language has the refusal's text.
func TestOtherOriginTexts(t *testing.T) {
	t.Parallel()
	for lang := range texts {
		if otherOrigin[lang] == "" {
			t.Errorf("%s: no text for a form posted from another origin", lang)
		}
	}
}
