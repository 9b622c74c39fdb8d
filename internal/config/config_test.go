package config

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func load(t *testing.T, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := Register(fs, func(k string) string { return env[k] })
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return c, c.Finish()
}

func TestDerivedURLs(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://127.0.0.1:8080" || c.IdPURL != "http://127.0.0.1:8080/idp" || c.AnalyticsURL != "http://127.0.0.1:8080/analytics" {
		t.Fatalf("defaults: %s %s %s", c.BaseURL, c.IdPURL, c.AnalyticsURL)
	}
	c, err = load(t, map[string]string{"KADENS_BASE_URL": "https://api.example.com/", "KADENS_IDP_LISTEN": "0.0.0.0:9000"})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "https://api.example.com" || c.IdPURL != "http://0.0.0.0:9000" || c.AnalyticsURL != "https://api.example.com/analytics" {
		t.Fatalf("derived: %s %s %s", c.BaseURL, c.IdPURL, c.AnalyticsURL)
	}
}

func TestFlagOverridesEnvironment(t *testing.T) {
	c, err := load(t, map[string]string{"KADENS_LISTEN": "127.0.0.1:1"}, "--listen", "127.0.0.1:2")
	if err != nil || c.Listen != "127.0.0.1:2" {
		t.Fatalf("listen %q, %v", c.Listen, err)
	}
}

func TestInvalidSettings(t *testing.T) {
	cases := map[string]map[string]string{
		"listen without port":    {"KADENS_LISTEN": "localhost"},
		"mysql url":              {"KADENS_DATABASE_URL": "mysql://x"},
		"relative base url":      {"KADENS_BASE_URL": "api.example.com"},
		"token ttl too short":    {"KADENS_TOKEN_TTL": "10s"},
		"tiny body limit":        {"KADENS_BODY_LIMIT": "10"},
		"log format":             {"KADENS_LOG_FORMAT": "xml"},
		"issuers not json":       {"KADENS_TRUSTED_ISSUERS": "login.example"},
		"issuer lacks jwks url":  {"KADENS_TRUSTED_ISSUERS": `[{"issuer":"https://x","audience":"a","tenantClaim":"t"}]`},
		"issuer lacks tenant id": {"KADENS_TRUSTED_ISSUERS": `[{"issuer":"https://x","jwksUrl":"https://x/j","audience":"a"}]`},
	}
	for name, env := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := load(t, env); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestDescribeMasksSecrets(t *testing.T) {
	c, err := load(t, map[string]string{"KADENS_MASTER_KEY": "c2VjcmV0", "KADENS_DATABASE_URL": "postgres://kadens:hunter2@db:5432/k"})
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Join(c.Describe(), "\n")
	if strings.Contains(out, "c2VjcmV0") || strings.Contains(out, "hunter2") {
		t.Fatalf("secret printed:\n%s", out)
	}
	if !strings.Contains(out, "postgres://kadens:xxxxx@db:5432/k") || !strings.Contains(out, "*****") {
		t.Fatalf("masked values missing:\n%s", out)
	}
}

// A malformed KADENS_* value is refused like a malformed flag, naming the
// variable, instead of running with the default.
func TestMalformedEnvironmentRefused(t *testing.T) {
	cases := []struct{ env, value string }{
		{"KADENS_TOKEN_TTL", "abc"},
		{"KADENS_TOKEN_TTL", "60"}, // a duration needs a unit
		{"KADENS_EGRESS_ALLOW_PRIVATE", "yes"},
		{"KADENS_EGRESS_ALLOW_LINK_LOCAL", "on"},
		{"KADENS_WEBHOOK_ALLOW_PRIVATE", "yes"},
		{"KADENS_WEBHOOK_ALLOW_LINK_LOCAL", "on"},
		{"KADENS_DEMO", "y"},
		{"KADENS_BODY_LIMIT", "1MB"},
		{"KADENS_WEBHOOK_CONCURRENCY", "many"},
		{"KADENS_ENGINE_INTERVAL", "-"},
		{"KADENS_ENGINE_LEASE", "20"},
		{"KADENS_SHUTDOWN_TIMEOUT", "soon"},
		{"KADENS_WEBHOOK_TIMEOUT", "10 s"},
		// Well-formed but out of range: named by the variable too.
		{"KADENS_TOKEN_TTL", "48h"},
		{"KADENS_LISTEN", "localhost"},
		{"KADENS_LOG_LEVEL", "verbose"},
		{"KADENS_WEBHOOK_RETRY_SCHEDULE", "never"},
	}
	for _, c := range cases {
		t.Run(c.env+"="+c.value, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			cfg := Register(fs, func(k string) string { return map[string]string{c.env: c.value}[k] })
			cfg.RegisterDemo()
			if err := fs.Parse(nil); err != nil {
				t.Fatal(err)
			}
			err := cfg.Finish()
			if err == nil || !strings.Contains(err.Error(), c.env) {
				t.Fatalf("Finish: %v, want an error naming %s", err, c.env)
			}
		})
	}
}

// Well-formed environment values take effect; a flag overrides a
// malformed one (the command line is what the operator meant).
func TestEnvironmentValues(t *testing.T) {
	c, err := load(t, map[string]string{"KADENS_TOKEN_TTL": "2h", "KADENS_EGRESS_ALLOW_PRIVATE": "true",
		"KADENS_BODY_LIMIT": "2048", "KADENS_WEBHOOK_CONCURRENCY": "8"})
	if err != nil {
		t.Fatal(err)
	}
	if c.TokenTTL.String() != "2h0m0s" || !c.EgressAllowPrivate || c.EgressAllowLinkLocal || c.BodyLimit != 2048 || c.WebhookConcurrency != 8 {
		t.Fatalf("environment not applied: %+v", c)
	}
	c, err = load(t, map[string]string{"KADENS_TOKEN_TTL": "abc"}, "--token-ttl", "30m")
	if err != nil || c.TokenTTL.String() != "30m0s" {
		t.Fatalf("flag over a malformed variable: %v %v", c, err)
	}
	if _, err := load(t, nil, "--token-ttl", "48h"); err == nil || !strings.Contains(err.Error(), "--token-ttl") {
		t.Fatalf("a bad flag is named as the flag: %v", err)
	}
}

// The printed configuration is one aligned column of values.
func TestDescribeAligned(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for _, line := range c.Describe() {
		name, _, _ := strings.Cut(line, " ")
		at := len(name) + len(line[len(name):]) - len(strings.TrimLeft(line[len(name):], " "))
		if col == -1 {
			col = at
		}
		if at != col {
			t.Fatalf("value of %q starts at column %d, others at %d:\n%s", name, at, col, strings.Join(c.Describe(), "\n"))
		}
	}
}

// serve -h shows environment values as defaults, but never the master key
// or a database password.
func TestHelpHidesSecretsFromEnvironment(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var out strings.Builder
	fs.SetOutput(&out)
	Register(fs, func(k string) string {
		return map[string]string{"KADENS_MASTER_KEY": "c2VjcmV0", "KADENS_DATABASE_URL": "postgres://kadens:hunter2@db:5432/k",
			"KADENS_TOKEN_TTL": "2h"}[k]
	})
	fs.PrintDefaults()
	if strings.Contains(out.String(), "c2VjcmV0") || strings.Contains(out.String(), "hunter2") {
		t.Fatalf("secret in -h:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "2h0m0s") {
		t.Fatalf("environment default not shown:\n%s", out.String())
	}
}

// The egress policy has one setting per range, as flags and variables;
// the webhook-only names it replaced are aliases of them. When the old and
// the new variable disagree, the new one wins; on the command line the
// last flag does.
func TestEgressSettingsAndAliases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		env             map[string]string
		args            []string
		private, linkLo bool
	}{
		{"default", nil, nil, false, false},
		{"new flag", nil, []string{"--egress-allow-private"}, true, false},
		{"new link-local flag", nil, []string{"--egress-allow-link-local"}, false, true},
		{"old flag", nil, []string{"--webhook-allow-private"}, true, false},
		{"old link-local flag", nil, []string{"--webhook-allow-link-local=true"}, false, true},
		{"new variable", map[string]string{"KADENS_EGRESS_ALLOW_PRIVATE": "true"}, nil, true, false},
		{"new link-local variable", map[string]string{"KADENS_EGRESS_ALLOW_LINK_LOCAL": "1"}, nil, false, true},
		{"old variable", map[string]string{"KADENS_WEBHOOK_ALLOW_PRIVATE": "true"}, nil, true, false},
		{"old link-local variable", map[string]string{"KADENS_WEBHOOK_ALLOW_LINK_LOCAL": "true"}, nil, false, true},
		{"new variable wins", map[string]string{"KADENS_WEBHOOK_ALLOW_PRIVATE": "true", "KADENS_EGRESS_ALLOW_PRIVATE": "false"}, nil, false, false},
		{"flag over variable", map[string]string{"KADENS_EGRESS_ALLOW_PRIVATE": "true"}, []string{"--webhook-allow-private=false"}, false, false},
		{"last flag wins", nil, []string{"--egress-allow-private=false", "--webhook-allow-private"}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := load(t, c.env, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if p := cfg.Egress(); p.Private != c.private || p.LinkLocal != c.linkLo {
				t.Fatalf("policy %+v, want private=%v link-local=%v", p, c.private, c.linkLo)
			}
		})
	}
}

// Operator settings that Kadens calls are checked against the egress
// policy at start-up, without DNS: an address or a localhost name the
// policy refuses stops the start with an error naming the setting and the
// setting that would allow it.
func TestOperatorDestinationsFollowEgressPolicy(t *testing.T) {
	t.Parallel()
	issuer := func(jwks string) string {
		return `[{"issuer":"https://login.example","jwksUrl":"` + jwks + `","audience":"a","tenantClaim":"t"}]`
	}
	cases := []struct {
		setting, env, value string
	}{
		{"--peppol-ap-url", "KADENS_PEPPOL_AP_URL", "http://127.0.0.1:8443/ap"},
		{"--peppol-ap-url", "KADENS_PEPPOL_AP_URL", "https://localhost/ap"},
		{"--peppol-directory-url", "KADENS_PEPPOL_DIRECTORY_URL", "http://10.0.0.7"},
		{"--trusted-issuers", "KADENS_TRUSTED_ISSUERS", issuer("http://[::1]:9000/jwks")},
		{"--trusted-issuers", "KADENS_TRUSTED_ISSUERS", issuer("http://localhost:9000/jwks")},
		{"--smtp-url", "KADENS_SMTP_URL", "smtp://127.0.0.1:25?from=login@example.com"},
		{"--smtp-url", "KADENS_SMTP_URL", "smtp://localhost?from=login@example.com"},
	}
	for _, c := range cases {
		t.Run(c.env+"="+c.value, func(t *testing.T) {
			_, err := load(t, map[string]string{c.env: c.value})
			if err == nil || !strings.Contains(err.Error(), c.env) || !strings.Contains(err.Error(), "--egress-allow-private") {
				t.Fatalf("Finish: %v, want an error naming %s and --egress-allow-private", err, c.env)
			}
			// Given as a flag, the error names the flag.
			_, err = load(t, nil, c.setting, c.value)
			if err == nil || !strings.Contains(err.Error(), c.setting) {
				t.Fatalf("Finish with %s: %v", c.setting, err)
			}
			// Allowed by the policy (old name), it starts.
			if _, err := load(t, map[string]string{c.env: c.value, "KADENS_WEBHOOK_ALLOW_PRIVATE": "true"}); err != nil {
				t.Fatalf("with private addresses allowed: %v", err)
			}
		})
	}
	// Metadata addresses need the link-local setting even with private
	// addresses allowed.
	_, err := load(t, map[string]string{"KADENS_PEPPOL_AP_URL": "http://169.254.169.254/", "KADENS_EGRESS_ALLOW_PRIVATE": "true"})
	if err == nil || !strings.Contains(err.Error(), "--egress-allow-link-local") {
		t.Fatalf("metadata address: %v", err)
	}
	// Host names are not resolved at start-up, and public addresses pass.
	if _, err := load(t, map[string]string{"KADENS_PEPPOL_AP_URL": "https://ap.invalid/api", "KADENS_SMTP_URL": "smtp://93.184.215.14:587?from=a@b.c",
		"KADENS_TRUSTED_ISSUERS": issuer("https://login.invalid/jwks")}); err != nil {
		t.Fatalf("public destinations: %v", err)
	}
}
