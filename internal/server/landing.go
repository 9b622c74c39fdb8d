package server

import (
	"bytes"
	"html/template"
	"net/http"
	"strings"

	"github.com/kadens/kadens/internal/config"
)

// landingPage is what `/` answers on the main listener: a small page for
// whoever opens the server's address in a browser, with the way to each
// surface's self-description. Plain HTML and a little inline CSS, no
// script; English, with its language declared, headings and link texts
// that make sense read out of context (screen readers list links alone).
var landingPage = template.Must(template.New("landing").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kadens</title>
<style>
body { font-family: system-ui, sans-serif; line-height: 1.5; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; background: #fff; }
a { color: #0645ad; }
a:focus { outline: 3px solid #1a1a1a; outline-offset: 2px; }
code { font-size: 0.95em; }
</style>
</head>
<body>
<main>
<h1>Kadens</h1>
<p>Subscription management and billing. This server answers these addresses:</p>
<ul>
<li><a href="{{.Swagger}}">API reference (Swagger UI)</a>: every operation of the main API, to try with a token.</li>
<li><a href="{{.OpenAPI}}">OpenAPI document</a> (<code>openapi.json</code>): the main API's contract, for client generators.</li>
<li><a href="{{.Discovery}}">OpenID Connect discovery</a> (<code>openid-configuration</code>): the identity provider's endpoints and keys.</li>
<li><a href="{{.Metadata}}">Analytics metadata</a> (<code>$metadata</code>, OData CSDL): the read-only analytics API's entities; needs a token.</li>
</ul>
</main>
</body>
</html>
`))

// landing renders the page once: the links are the configured public
// addresses, relative where they are on the main API's own address (so
// they work whatever host name the browser used).
func landing(cfg *config.Config) http.Handler {
	rel := func(u string) string {
		if p, ok := strings.CutPrefix(u, cfg.BaseURL); ok && strings.HasPrefix(p, "/") {
			return p
		}
		return u
	}
	var buf bytes.Buffer
	_ = landingPage.Execute(&buf, map[string]string{
		"Swagger":   "/swagger/",
		"OpenAPI":   "/openapi.json",
		"Discovery": rel(cfg.IdPURL + "/.well-known/openid-configuration"),
		"Metadata":  rel(cfg.AnalyticsURL + "/$metadata"),
	})
	page := buf.Bytes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(page)
	})
}
