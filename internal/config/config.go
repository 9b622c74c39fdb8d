// Package config holds Kadens' settings. Every setting is a flag with a
// KADENS_* environment variable as its default, so operators can use either;
// the parsed Config is passed down explicitly (no globals).
package config

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/webhook"
)

// Config is the effective configuration of a kadens process.
type Config struct {
	Listen          string
	IdPListen       string
	AnalyticsListen string
	DataDir         string
	DatabaseURL     string
	BaseURL         string
	IdPURL          string
	AnalyticsURL    string
	ClaimsNamespace string
	TokenTTL        time.Duration
	// MasterKey encrypts signing keys at rest (base64, 32 bytes). Empty
	// means a key file in DataDir, created on first use.
	MasterKey string
	// TrustedIssuers is a JSON array of external token issuers.
	TrustedIssuers  string
	BodyLimit       int64
	LogLevel        string
	LogFormat       string
	ShutdownTimeout time.Duration
	EngineInterval  time.Duration
	EngineLease     time.Duration
	Demo            bool
	// Webhook delivery (docs/WEBHOOKS.md).
	WebhookAllowPrivate  bool
	WebhookRetrySchedule string
	WebhookTimeout       time.Duration
	WebhookConcurrency   int

	issuers []TrustedIssuer
	fs      *flag.FlagSet
	secrets map[string]bool
}

// TrustedIssuer describes an external OpenID Connect issuer whose access
// tokens the API accepts, and which claims carry the tenant and scope.
type TrustedIssuer struct {
	Issuer        string `json:"issuer"`
	JWKSURL       string `json:"jwksUrl"`
	Audience      string `json:"audience"`
	TenantClaim   string `json:"tenantClaim"`
	ScopeClaim    string `json:"scopeClaim"`
	RequiredScope string `json:"requiredScope"`
}

// Register defines every setting as a flag on fs, defaulting to its
// environment variable (read with getenv) or the built-in default.
func Register(fs *flag.FlagSet, getenv func(string) string) *Config {
	c := &Config{fs: fs, secrets: map[string]bool{}}
	str := func(p *string, name, env, def, usage string) {
		if v := getenv(env); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, usage+" ["+env+"]")
	}
	dur := func(p *time.Duration, name, env string, def time.Duration, usage string) {
		if v, err := time.ParseDuration(getenv(env)); err == nil {
			def = v
		}
		fs.DurationVar(p, name, def, usage+" ["+env+"]")
	}
	str(&c.Listen, "listen", "KADENS_LISTEN", "127.0.0.1:8080", "address of the main API (and, unless given their own, the /idp and /analytics surfaces)")
	str(&c.IdPListen, "idp-listen", "KADENS_IDP_LISTEN", "", "separate listen address for the identity provider (default: under /idp on --listen)")
	str(&c.AnalyticsListen, "analytics-listen", "KADENS_ANALYTICS_LISTEN", "", "separate listen address for the analytics API (default: under /analytics on --listen)")
	str(&c.DataDir, "data-dir", "KADENS_DATA_DIR", "./kadens-data", "directory for the SQLite database and key files")
	str(&c.DatabaseURL, "database-url", "KADENS_DATABASE_URL", "", "postgres:// URL to use PostgreSQL instead of SQLite")
	str(&c.BaseURL, "base-url", "KADENS_BASE_URL", "", "public address of the main API; the audience of API tokens (default http://<listen>)")
	str(&c.IdPURL, "idp-url", "KADENS_IDP_URL", "", "public address of the identity provider; the token issuer (default <base-url>/idp)")
	str(&c.AnalyticsURL, "analytics-url", "KADENS_ANALYTICS_URL", "", "public address of the analytics API (default <base-url>/analytics)")
	str(&c.ClaimsNamespace, "claims-namespace", "KADENS_CLAIMS_NAMESPACE", "https://kadens.dev/claims", "prefix of Kadens' own token claims (<ns>/tenantId, <ns>/subscriberId)")
	dur(&c.TokenTTL, "token-ttl", "KADENS_TOKEN_TTL", time.Hour, "lifetime of issued access tokens")
	str(&c.MasterKey, "master-key", "KADENS_MASTER_KEY", "", "base64 32-byte key that encrypts signing keys at rest (default: <data-dir>/master.key, created on first use; set it when several processes share PostgreSQL)")
	c.secrets["master-key"] = true
	str(&c.TrustedIssuers, "trusted-issuers", "KADENS_TRUSTED_ISSUERS", "", `JSON array of external token issuers: [{"issuer","jwksUrl","audience","tenantClaim","scopeClaim","requiredScope"}]`)
	limit := int64(1 << 20)
	if v, err := strconv.ParseInt(getenv("KADENS_BODY_LIMIT"), 10, 64); err == nil {
		limit = v
	}
	fs.Int64Var(&c.BodyLimit, "body-limit", limit, "largest accepted request body in bytes [KADENS_BODY_LIMIT]")
	str(&c.LogLevel, "log-level", "KADENS_LOG_LEVEL", "info", "debug, info, warn or error")
	str(&c.LogFormat, "log-format", "KADENS_LOG_FORMAT", "text", "text or json")
	dur(&c.EngineInterval, "engine-interval", "KADENS_ENGINE_INTERVAL", 30*time.Second, "how often the billing engine advances every (non-test) tenant to the current time")
	dur(&c.EngineLease, "engine-lease", "KADENS_ENGINE_LEASE", 20*time.Second, "how long a tenant stays locked to an engine worker that stopped renewing its lease (e.g. a crashed process)")
	dur(&c.ShutdownTimeout, "shutdown-timeout", "KADENS_SHUTDOWN_TIMEOUT", 20*time.Second, "how long a shutdown waits for in-flight requests")
	allowPrivate, _ := strconv.ParseBool(getenv("KADENS_WEBHOOK_ALLOW_PRIVATE"))
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", allowPrivate, "let webhook URLs reach loopback and private addresses (tests, local development) [KADENS_WEBHOOK_ALLOW_PRIVATE]")
	str(&c.WebhookRetrySchedule, "webhook-retry-schedule", "KADENS_WEBHOOK_RETRY_SCHEDULE", webhook.DefaultSchedule, "delays before the retries of a failed webhook delivery, comma-separated (d*n repeats d n times); then the delivery is Failed")
	dur(&c.WebhookTimeout, "webhook-timeout", "KADENS_WEBHOOK_TIMEOUT", 10*time.Second, "how long a webhook endpoint has to answer one delivery attempt")
	conc := 64
	if v, err := strconv.Atoi(getenv("KADENS_WEBHOOK_CONCURRENCY")); err == nil {
		conc = v
	}
	fs.IntVar(&c.WebhookConcurrency, "webhook-concurrency", conc, "webhook delivery attempts in flight at once, per process [KADENS_WEBHOOK_CONCURRENCY]")
	return c
}

// Finish derives defaults that depend on other settings and validates the
// result. Call it after parsing the flags.
func (c *Config) Finish() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("--listen %q: want host:port: %w", c.Listen, err)
	}
	if c.DatabaseURL != "" && !store.IsPostgresURL(c.DatabaseURL) {
		return fmt.Errorf("--database-url must start with postgres:// or postgresql:// (leave it empty for SQLite)")
	}
	if c.BaseURL == "" {
		c.BaseURL = "http://" + c.Listen
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.IdPURL == "" {
		if c.IdPListen != "" {
			c.IdPURL = "http://" + c.IdPListen
		} else {
			c.IdPURL = c.BaseURL + "/idp"
		}
	}
	c.IdPURL = strings.TrimRight(c.IdPURL, "/")
	if c.AnalyticsURL == "" {
		if c.AnalyticsListen != "" {
			c.AnalyticsURL = "http://" + c.AnalyticsListen
		} else {
			c.AnalyticsURL = c.BaseURL + "/analytics"
		}
	}
	c.AnalyticsURL = strings.TrimRight(c.AnalyticsURL, "/")
	for name, u := range map[string]string{"--base-url": c.BaseURL, "--idp-url": c.IdPURL, "--analytics-url": c.AnalyticsURL} {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("%s %q: want an absolute http(s) URL", name, u)
		}
	}
	if c.TokenTTL < time.Minute || c.TokenTTL > 24*time.Hour {
		return fmt.Errorf("--token-ttl %s: want between 1m and 24h", c.TokenTTL)
	}
	if c.EngineInterval < time.Second {
		return fmt.Errorf("--engine-interval %s: want at least 1s", c.EngineInterval)
	}
	if c.EngineLease < time.Second {
		return fmt.Errorf("--engine-lease %s: want at least 1s", c.EngineLease)
	}
	if _, err := webhook.ParseSchedule(c.WebhookRetrySchedule); err != nil {
		return fmt.Errorf("--webhook-retry-schedule: %w", err)
	}
	if c.WebhookTimeout < 100*time.Millisecond || c.WebhookTimeout > 5*time.Minute {
		return fmt.Errorf("--webhook-timeout %s: want between 100ms and 5m", c.WebhookTimeout)
	}
	if c.WebhookConcurrency < 1 || c.WebhookConcurrency > 4096 {
		return fmt.Errorf("--webhook-concurrency %d: want 1 to 4096", c.WebhookConcurrency)
	}
	if c.BodyLimit < 1024 {
		return fmt.Errorf("--body-limit %d: want at least 1024 bytes", c.BodyLimit)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("--log-format %q: want text or json", c.LogFormat)
	}
	if c.TrustedIssuers != "" {
		if err := json.Unmarshal([]byte(c.TrustedIssuers), &c.issuers); err != nil {
			return fmt.Errorf("--trusted-issuers: not a JSON array of issuers: %w", err)
		}
		for i, ti := range c.issuers {
			if ti.Issuer == "" || ti.JWKSURL == "" || ti.Audience == "" || ti.TenantClaim == "" {
				return fmt.Errorf("--trusted-issuers[%d]: issuer, jwksUrl, audience and tenantClaim are required", i)
			}
		}
	}
	return nil
}

// Issuers returns the parsed trusted external issuers.
func (c *Config) Issuers() []TrustedIssuer { return c.issuers }

// StoreOptions returns where the database is.
func (c *Config) StoreOptions() store.Options {
	return store.Options{DatabaseURL: c.DatabaseURL, DataDir: c.DataDir}
}

// Describe lists the effective settings as "name = value" lines with
// secrets masked, for printing at start.
func (c *Config) Describe() []string {
	var lines []string
	c.fs.VisitAll(func(f *flag.Flag) {
		v := f.Value.String()
		switch {
		case c.secrets[f.Name] && v != "":
			v = "*****"
		case f.Name == "database-url":
			v = store.RedactURL(v)
		}
		switch f.Name {
		case "base-url":
			v = c.BaseURL
		case "idp-url":
			v = c.IdPURL
		case "analytics-url":
			v = c.AnalyticsURL
		}
		if v == "" {
			v = "(unset)"
		}
		lines = append(lines, fmt.Sprintf("%-18s %s", f.Name, v))
	})
	return lines
}
