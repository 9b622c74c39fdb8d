package idp

import (
	"net/http"
	"net/url"
	"strings"
)

// The login and password reset forms are posted by the IdP's own pages.
// Besides their CSRF token (form = cookie) and the SameSite=Lax cookie, a
// post must not come from another origin: browsers send Origin with every
// form POST, and a page of another site cannot make it say the IdP's. An
// absent Origin (an older browser, a client that is not a browser) passes
// to the token checks; "null" (a sandboxed frame, a data: page, a
// cross-origin redirect) is another origin. The pages send
// Referrer-Policy: same-origin, because under no-referrer browsers
// serialize their own form posts' Origin as "null".

// otherOrigin is the refusal of a post from another origin, per language.
var otherOrigin = map[string]string{
	"en": "The form was sent from another web site than this login page, so it was not accepted. Go back to the site and start again.",
	"nb": "Skjemaet ble sendt fra et annet nettsted enn denne innloggingssiden, så det ble ikke godtatt. Gå tilbake til nettstedet og begynn på nytt.",
	"nn": "Skjemaet vart sendt frå ein annan nettstad enn denne innloggingssida, så det vart ikkje godteke. Gå attende til nettstaden og byrj på nytt.",
	"sv": "Formuläret skickades från en annan webbplats än den här inloggningssidan och togs därför inte emot. Gå tillbaka till webbplatsen och börja om.",
	"da": "Formularen blev sendt fra et andet websted end denne loginside og blev derfor ikke modtaget. Gå tilbage til webstedet og start forfra.",
	"fi": "Lomake lähetettiin toiselta sivustolta kuin tältä kirjautumissivulta, joten sitä ei hyväksytty. Palaa sivustolle ja aloita alusta.",
}

// origin is the origin of an absolute URL as a browser serializes it
// (RFC 6454 §6.2): lower-case scheme and host, the port only when it is
// not the scheme's default; "" when raw has none.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// foreignOrigin reports whether r, a form post, carries an Origin other
// than the IdP's own; if so it answers 403 with the refusal in lang.
func (s *Server) foreignOrigin(w http.ResponseWriter, r *http.Request, lang string) bool {
	sent := r.Header.Values("Origin")
	if len(sent) == 0 || len(sent) == 1 && sent[0] == s.origin && s.origin != "" {
		return false
	}
	s.log.WarnContext(r.Context(), "form post from another origin refused", "path", r.URL.Path, "origin", strings.Join(sent, ", "))
	lang = Language(lang)
	s.errorPage(w, http.StatusForbidden, lang, "access_denied", otherOrigin[lang])
	return true
}
