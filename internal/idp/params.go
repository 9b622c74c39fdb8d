package idp

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/validation"
)

// Every parameter of every /idp endpoint is checked at the edge, before a
// handler, the store or the OpenID provider library reads it: valid UTF-8,
// no NUL or other control character (PostgreSQL cannot store NUL or
// invalid UTF-8, and no parameter has a use for them), at most the length
// and the characters its specification allows, each at most once
// (RFC 6749 §3.1, §3.2). A request that fails is a 400 naming the
// parameter, and nothing of it is stored or looked up. The bounds are
// listed in docs/LOGIN.md ("Parameters").

// paramRule bounds one parameter's value. A value of "" is the parameter
// left out, which each handler judges itself; min applies only to
// non-empty values.
type paramRule struct {
	min, max int // bytes
	// chars, when set, is the only characters allowed and what names them
	// in an error; otherwise any single-line text (validation.TextProblem).
	chars func(rune) bool
	what  string
}

// Character sets of RFC 6749 Appendix A and RFC 7636 §4.1.
var (
	// vschar is VSCHAR: printable ASCII and space (client_id, client_secret,
	// code, refresh_token, state in the RFC's grammar).
	vschar = func(r rune) bool { return r >= 0x20 && r <= 0x7e }
	// scopeChars are NQCHAR (printable ASCII but `"` and `\`) and the
	// space that separates scope tokens.
	scopeChars = func(r rune) bool { return r == ' ' || r == 0x21 || r >= 0x23 && r <= 0x5b || r >= 0x5d && r <= 0x7e }
	// unreserved is RFC 3986's unreserved set, the alphabet of PKCE's
	// code_verifier and code_challenge.
	unreserved = func(r rune) bool {
		return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' || r == '~'
	}
	// notNUL admits any character but NUL: a password is hashed, never
	// stored or shown, so only what no store or hash input should carry is
	// refused.
	notNUL = func(r rune) bool { return r != 0 }
)

const (
	vscharWords     = "printable ASCII (RFC 6749 Appendix A)"
	unreservedWords = "A-Z, a-z, 0-9, '-', '.', '_' and '~' (RFC 7636 §4.1)"
	scopeWords      = "printable ASCII but '\"' and '\\', separated by spaces (RFC 6749 §3.3)"
)

// defaultParamMax bounds every parameter not in paramRules.
const defaultParamMax = 2048

// maxParams bounds the values of one request (query and form together);
// maxQuery its query string in bytes, as sent (escaped).
const (
	maxParams = 64
	maxQuery  = 32 << 10
)

// paramRules are the parameters with their own bounds; the rest get
// defaultParamMax and single-line text. The same name means the same
// thing on every endpoint, so one table serves them all (token is a
// refresh or access token at /revoke and a reset link's token at /reset:
// the larger bound).
var paramRules = map[string]paramRule{
	// OAuth 2.0 (RFC 6749 Appendix A) and OpenID Connect Core.
	"client_id":     {max: 255, chars: vschar, what: vscharWords},
	"client_secret": {max: 255, chars: vschar, what: vscharWords},
	"response_type": {max: 64, chars: scopeChars, what: scopeWords},
	"grant_type":    {max: 255, chars: vschar, what: vscharWords},
	"scope":         {max: 1024, chars: scopeChars, what: scopeWords},
	// state and nonce are the client's own values, returned unchanged;
	// 4 KB holds the protected state blobs of the largest relying party
	// libraries, 2 KB any nonce.
	"state":                    {max: 4096},
	"nonce":                    {max: 2048},
	"redirect_uri":             {max: 2048},
	"post_logout_redirect_uri": {max: 2048},
	"code":                     {max: 512, chars: vschar, what: vscharWords},
	"refresh_token":            {max: 512, chars: vschar, what: vscharWords},
	"code_challenge":           {min: 43, max: 128, chars: unreserved, what: unreservedWords},
	"code_verifier":            {min: 43, max: 128, chars: unreserved, what: unreservedWords},
	"code_challenge_method":    {max: 16, chars: unreserved, what: unreservedWords},
	"response_mode":            {max: 32, chars: vschar, what: vscharWords},
	"prompt":                   {max: 64, chars: scopeChars, what: scopeWords},
	"max_age":                  {max: 10, chars: func(r rune) bool { return r >= '0' && r <= '9' }, what: "digits"},
	"display":                  {max: 32, chars: vschar, what: vscharWords},
	"ui_locales":               {max: 256, chars: vschar, what: vscharWords},
	"acr_values":               {max: 256, chars: scopeChars, what: scopeWords},
	"login_hint":               {max: 255},
	"logout_hint":              {max: 255},
	"id_token_hint":            {max: 4096, chars: vschar, what: vscharWords},
	"token":                    {max: 4096, chars: vschar, what: vscharWords},
	"token_type_hint":          {max: 32, chars: vschar, what: vscharWords},
	"access_token":             {max: 4096, chars: vschar, what: vscharWords},
	// Kadens' own: the login request (id) and its CSRF token are 43
	// characters; connection is a tenant name; email is an e-mail address
	// (254) or an idp-a login name (255); a password set by a reset link
	// may be 1,000 characters.
	"connection": {max: 255},
	"language":   {max: 35},
	"orgname":    {max: 1024},
	"id":         {max: 64, chars: vschar, what: vscharWords},
	"csrf":       {max: 64, chars: vschar, what: vscharWords},
	"email":      {max: 255},
	"password":   {max: 4096, chars: notNUL, what: "any character but NUL"},
}

// paramProblem says what is wrong with value as parameter name, or "".
func paramProblem(name, value string) string {
	rule, ok := paramRules[name]
	if !ok {
		rule = paramRule{max: defaultParamMax}
	}
	if len(value) > rule.max {
		return fmt.Sprintf("is longer than %d bytes", rule.max)
	}
	if !utf8.ValidString(value) {
		return "must be valid UTF-8 text"
	}
	if rule.chars == nil {
		if p := validation.TextProblem(value, false); p != "" {
			return p
		}
	} else {
		for _, r := range value {
			if !rule.chars(r) {
				return "may hold only " + rule.what
			}
		}
	}
	if value != "" && len(value) < rule.min {
		return fmt.Sprintf("is shorter than %d characters", rule.min)
	}
	return ""
}

// paramError is a parameter that failed its check.
type paramError struct{ name, problem string }

func (e *paramError) Error() string { return quoteName(e.name) + " " + e.problem }

// quoteName is a parameter's name as an error shows it: bare when it is a
// plain name, quoted (ASCII-escaped) otherwise.
func quoteName(name string) string {
	for _, r := range name {
		if !unreserved(r) {
			return strconv.QuoteToASCII(name)
		}
	}
	return name
}

// checkValues checks every parameter of v (checkShape, then each value),
// in name order so that the same request always names the same parameter.
func checkValues(v url.Values) *paramError {
	if e := checkShape(v); e != nil {
		return e
	}
	for _, k := range sortedNames(v) {
		if p := paramProblem(k, v[k][0]); p != "" {
			return &paramError{k, p}
		}
	}
	return nil
}

func sortedNames(v url.Values) []string {
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// checkShape checks what v is made of without looking at its values: how
// many there are, the names, and that each is given once.
func checkShape(v url.Values) *paramError {
	n := 0
	for _, vals := range v {
		n += len(vals)
	}
	if n > maxParams {
		return &paramError{"request", fmt.Sprintf("has %d parameters; at most %d are accepted", n, maxParams)}
	}
	for _, k := range sortedNames(v) {
		if len(k) > 64 || !utf8.ValidString(k) || validation.TextProblem(k, false) != "" {
			return &paramError{k, "is not a parameter name (at most 64 bytes of single-line text)"}
		}
		if len(v[k]) > 1 {
			return &paramError{k, "is given more than once (RFC 6749 §3.1)"}
		}
	}
	return nil
}

// checkBasic checks the client credentials of an HTTP Basic header (after
// their form decoding, RFC 6749 §2.3.1) as the client_id and client_secret
// parameters they stand for.
func checkBasic(r *http.Request) *paramError {
	id, secret, ok := r.BasicAuth()
	if !ok {
		return nil
	}
	if u, err := url.QueryUnescape(id); err == nil {
		id = u
	}
	if p, err := url.QueryUnescape(secret); err == nil {
		secret = p
	}
	if p := paramProblem("client_id", id); p != "" {
		return &paramError{"client_id", p + " (HTTP Basic user name)"}
	}
	if p := paramProblem("client_secret", secret); p != "" {
		return &paramError{"client_secret", p + " (HTTP Basic password)"}
	}
	return nil
}

// Bodies of /idp requests are forms of a few parameters; 64 KB is far more
// than any holds.
const maxBody = 64 << 10

// htmlPaths answer a bad parameter with the HTML error page: a browser
// shows them. The rest are called by relying parties, which read OAuth's
// JSON error object.
var htmlPaths = []string{"/login", "/reset", "/authorize/callback"}

// edge checks every request's parameters before the routes see them
// (/authorize checks its own: it may answer with a redirect to the client,
// Server.authorize).
func (s *Server) edge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/authorize" {
			next.ServeHTTP(w, r)
			return
		}
		bad := func(e *paramError) {
			if slices.Contains(htmlPaths, r.URL.Path) {
				s.errorPage(w, http.StatusBadRequest, "", "invalid_request", e.Error())
				return
			}
			oauthError(w, http.StatusBadRequest, "invalid_request", e.Error())
		}
		if len(r.URL.RawQuery) > maxQuery {
			bad(&paramError{"query", fmt.Sprintf("is longer than %d bytes", maxQuery)})
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		if err := r.ParseForm(); err != nil {
			bad(&paramError{"request", "has a query or form that cannot be read: " + err.Error()})
			return
		}
		if e := checkValues(r.Form); e != nil {
			bad(e)
			return
		}
		if e := checkBasic(r); e != nil {
			bad(e)
			return
		}
		next.ServeHTTP(w, r)
	})
}
