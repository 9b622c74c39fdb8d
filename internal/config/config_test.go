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
