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
	c, err := load(t, map[string]string{"KADENS_TOKEN_TTL": "2h", "KADENS_WEBHOOK_ALLOW_PRIVATE": "true",
		"KADENS_BODY_LIMIT": "2048", "KADENS_WEBHOOK_CONCURRENCY": "8"})
	if err != nil {
		t.Fatal(err)
	}
	if c.TokenTTL.String() != "2h0m0s" || !c.WebhookAllowPrivate || c.WebhookAllowLinkLocal || c.BodyLimit != 2048 || c.WebhookConcurrency != 8 {
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
