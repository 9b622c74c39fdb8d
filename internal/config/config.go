// Package config holds Kadens' settings. Every setting is a flag with a
// KADENS_* environment variable as its default, so operators can use either;
// the parsed Config is passed down explicitly (no globals).
//
// It belongs to the composition layer: it parses the settings of the
// packages a process is built from (store.Options, auth.TrustedIssuer, the
// webhook retry schedule), whose types and checks live in those packages,
// so only cmd and internal/server (and the apitest helper) import it; no
// package they assemble does (internal/archtest enforces this).
package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/auth"
	"github.com/kadens/kadens/internal/dburl"
	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/retries"
	"github.com/kadens/kadens/internal/smtpmail"
)

// Config is the effective configuration of a kadens process.
type Config struct {
	Listen          string
	IdPListen       string
	AnalyticsListen string
	ConsoleListen   string
	DataDir         string
	DatabaseURL     string
	// AnalyticsDatabaseURL, when set, is a PostgreSQL (read replica) the
	// analytics API reads from instead of the main database.
	AnalyticsDatabaseURL string
	BaseURL              string
	IdPURL               string
	AnalyticsURL         string
	// ConsoleURL is the origin the merchant console's pages are served at
	// (under /console/): the base URL, or its own listener's.
	ConsoleURL      string
	ClaimsNamespace string
	TokenTTL        time.Duration
	// MasterKey encrypts signing keys at rest (base64, 32 bytes). Empty
	// means a key file in DataDir, created on first use.
	MasterKey string
	// TrustedIssuers is a JSON array of external token issuers.
	TrustedIssuers string
	// SMTPURL enables subscribers' password reset by e-mail.
	SMTPURL         string
	BodyLimit       int64
	LogLevel        string
	LogFormat       string
	ShutdownTimeout time.Duration
	EngineInterval  time.Duration
	EngineLease     time.Duration
	// AvtaleGiroSync is how often every AvtaleGiro account exchanges files
	// with its bank (0: never; operators then use import/export).
	AvtaleGiroSync time.Duration
	Demo           bool
	// The egress policy of every outbound connection (internal/egress):
	// EgressAllowPrivate opens loopback and private addresses,
	// EgressAllowLinkLocal link-local and cloud metadata addresses, which
	// EgressAllowPrivate alone does not.
	EgressAllowPrivate   bool
	EgressAllowLinkLocal bool
	// Webhook delivery (docs/WEBHOOKS.md).
	WebhookRetrySchedule string
	WebhookTimeout       time.Duration
	WebhookConcurrency   int

	// Peppol e-invoicing (docs/PEPPOL.md; internal/config/peppol.go).
	Peppol Peppol

	issuers []auth.TrustedIssuer
	fs      *flag.FlagSet
	getenv  func(string) string
	secrets map[string]bool
	env     map[string]string // flag name → environment variable
	envErrs []envError
}

// Register defines every setting as a flag on fs, defaulting to its
// environment variable (read with getenv) or the built-in default. An
// environment value goes through the flag's own parser, so a malformed one
// (KADENS_TOKEN_TTL=abc, KADENS_EGRESS_ALLOW_PRIVATE=yes) is refused by
// Finish just like a malformed flag, naming the variable.
func Register(fs *flag.FlagSet, getenv func(string) string) *Config {
	c := &Config{fs: fs, getenv: getenv, secrets: map[string]bool{}, env: map[string]string{}}
	str := func(p *string, name, env, def, usage string) {
		fs.StringVar(p, name, def, usage)
		c.fromEnv(name, env)
	}
	dur := func(p *time.Duration, name, env string, def time.Duration, usage string) {
		fs.DurationVar(p, name, def, usage)
		c.fromEnv(name, env)
	}
	str(&c.Listen, "listen", "KADENS_LISTEN", "127.0.0.1:8080", "address of the main API (and, unless given their own, the /idp and /analytics surfaces)")
	str(&c.IdPListen, "idp-listen", "KADENS_IDP_LISTEN", "", "separate listen address for the identity provider (default: under /idp on --listen)")
	str(&c.AnalyticsListen, "analytics-listen", "KADENS_ANALYTICS_LISTEN", "", "separate listen address for the analytics API (default: under /analytics on --listen)")
	str(&c.ConsoleListen, "console-listen", "KADENS_CONSOLE_LISTEN", "", "separate listen address for the merchant console (default: under /console on --listen)")
	str(&c.DataDir, "data-dir", "KADENS_DATA_DIR", "./kadens-data", "directory for the SQLite database and key files")
	str(&c.DatabaseURL, "database-url", "KADENS_DATABASE_URL", "", "postgres:// URL to use PostgreSQL instead of SQLite")
	str(&c.AnalyticsDatabaseURL, "analytics-database-url", "KADENS_ANALYTICS_DATABASE_URL", "", "postgres:// URL of a read replica the analytics API reads from (default: the main database)")
	str(&c.BaseURL, "base-url", "KADENS_BASE_URL", "", "public address of the main API; the audience of API tokens (default http://<listen>)")
	str(&c.IdPURL, "idp-url", "KADENS_IDP_URL", "", "public address of the identity provider; the token issuer (default <base-url>/idp)")
	str(&c.AnalyticsURL, "analytics-url", "KADENS_ANALYTICS_URL", "", "public address of the analytics API (default <base-url>/analytics)")
	str(&c.ConsoleURL, "console-url", "KADENS_CONSOLE_URL", "", "public origin of the merchant console, which serves /console/ (default <base-url>)")
	str(&c.ClaimsNamespace, "claims-namespace", "KADENS_CLAIMS_NAMESPACE", "https://kadens.dev/claims", "prefix of Kadens' own token claims (<ns>/tenantId, <ns>/subscriberId)")
	dur(&c.TokenTTL, "token-ttl", "KADENS_TOKEN_TTL", time.Hour, "lifetime of issued access tokens")
	c.secrets["master-key"] = true
	str(&c.MasterKey, "master-key", "KADENS_MASTER_KEY", "", "base64 32-byte key that encrypts signing keys at rest (default: <data-dir>/master.key, created on first use; set it when several processes share PostgreSQL)")
	str(&c.TrustedIssuers, "trusted-issuers", "KADENS_TRUSTED_ISSUERS", "", `JSON array of external token issuers: [{"issuer","jwksUrl","audience","tenantClaim","scopeClaim","requiredScope","subscriberTokens"}]`)
	c.secrets["smtp-url"] = true
	str(&c.SMTPURL, "smtp-url", "KADENS_SMTP_URL", "", "smtp://[user:password@]host:port?from=address for subscribers' password reset e-mails (default: no password reset)")
	fs.Int64Var(&c.BodyLimit, "body-limit", 1<<20, "largest accepted request body in bytes")
	c.fromEnv("body-limit", "KADENS_BODY_LIMIT")
	str(&c.LogLevel, "log-level", "KADENS_LOG_LEVEL", "info", "debug, info, warn or error")
	str(&c.LogFormat, "log-format", "KADENS_LOG_FORMAT", "text", "text or json")
	dur(&c.EngineInterval, "engine-interval", "KADENS_ENGINE_INTERVAL", 30*time.Second, "how often the billing engine advances every (non-test) tenant to the current time")
	dur(&c.AvtaleGiroSync, "avtalegiro-sync-interval", "KADENS_AVTALEGIRO_SYNC_INTERVAL", 15*time.Minute, "how often every AvtaleGiro account submits claim files to its bank and fetches mandate and payment files (0: never)")
	dur(&c.EngineLease, "engine-lease", "KADENS_ENGINE_LEASE", 20*time.Second, "how long a tenant stays locked to an engine worker that stopped renewing its lease (e.g. a crashed process)")
	dur(&c.ShutdownTimeout, "shutdown-timeout", "KADENS_SHUTDOWN_TIMEOUT", 20*time.Second, "how long a shutdown waits for in-flight requests")
	// The old webhook-only names are aliases, defined first so that the
	// new names' environment variables win when both are set.
	alias := func(p *bool, name, env, of string) {
		fs.Var(boolAlias{p}, name, "alias of --"+of+" (its older name)")
		c.fromEnv(name, env)
	}
	alias(&c.EgressAllowPrivate, "webhook-allow-private", "KADENS_WEBHOOK_ALLOW_PRIVATE", "egress-allow-private")
	alias(&c.EgressAllowLinkLocal, "webhook-allow-link-local", "KADENS_WEBHOOK_ALLOW_LINK_LOCAL", "egress-allow-link-local")
	fs.Var(boolAlias{&c.EgressAllowPrivate}, "egress-allow-private", "let outbound calls (webhooks, AvtaleGiro banks, Peppol, trusted issuers' key sets, SMTP) reach loopback and private addresses (tests, local development); link-local and cloud metadata addresses stay refused")
	c.fromEnv("egress-allow-private", egress.PrivateEnv)
	fs.Var(boolAlias{&c.EgressAllowLinkLocal}, "egress-allow-link-local", "also let outbound calls reach link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10, 100.100.100.200, fd00:ec2::254); only for a test network without a metadata service")
	c.fromEnv("egress-allow-link-local", egress.LinkLocalEnv)
	str(&c.WebhookRetrySchedule, "webhook-retry-schedule", "KADENS_WEBHOOK_RETRY_SCHEDULE", retries.Default, "delays before the retries of a failed webhook delivery, comma-separated (d*n repeats d n times); then the delivery is Failed")
	dur(&c.WebhookTimeout, "webhook-timeout", "KADENS_WEBHOOK_TIMEOUT", 10*time.Second, "how long a webhook endpoint has to answer one delivery attempt")
	fs.IntVar(&c.WebhookConcurrency, "webhook-concurrency", 64, "webhook delivery attempts in flight at once, per process")
	c.fromEnv("webhook-concurrency", "KADENS_WEBHOOK_CONCURRENCY")
	c.registerPeppol()
	return c
}

// RegisterDemo adds serve's --demo flag (KADENS_DEMO).
func (c *Config) RegisterDemo() {
	c.fs.BoolVar(&c.Demo, "demo", false, "create a demo test tenant with data and a client on first run, and print how to call it")
	c.fromEnv("demo", "KADENS_DEMO")
}

// fromEnv ties flag name to environment variable env: the variable's value,
// when set, replaces the flag's default, parsed by the flag itself, and the
// usage names the variable. A value the flag refuses is kept as an error
// for Finish.
func (c *Config) fromEnv(name, env string) {
	f := c.fs.Lookup(name)
	f.Usage += " [" + env + "]"
	c.env[name] = env
	v := c.getenv(env)
	if v == "" {
		return
	}
	if err := f.Value.Set(v); err != nil {
		// The flag package's own words ("parse error") say little.
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			err = errors.New("want true or false")
		} else if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case time.Duration:
				err = errors.New("want a duration with a unit, such as 90s, 15m or 2h")
			case int, int64:
				err = errors.New("want a whole number")
			}
		}
		c.envErrs = append(c.envErrs, envError{flag: name,
			err: fmt.Errorf("invalid value %q for %s (the environment default of --%s): %w", v, env, name, err)})
		return
	}
	// The default -h shows: never a secret, nor a database password.
	switch {
	case c.secrets[name]:
	case name == "database-url" || name == "analytics-database-url":
		f.DefValue = dburl.Redact(f.Value.String())
	default:
		f.DefValue = f.Value.String()
	}
}

// boolAlias is a boolean flag writing to a variable another flag owns
// too (flag.BoolVar would reset it to its default when defined).
type boolAlias struct{ p *bool }

func (b boolAlias) String() string {
	if b.p == nil {
		return "false"
	}
	return strconv.FormatBool(*b.p)
}

func (b boolAlias) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.p = v
	return nil
}

func (b boolAlias) IsBoolFlag() bool { return true }

type envError struct {
	flag string
	err  error
}

// Explicit reports whether the setting was given, on the command line or
// in its environment variable, rather than left to its default.
func (c *Config) Explicit(flagName string) bool {
	set := false
	c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == flagName })
	return set || c.env[flagName] != "" && c.getenv(c.env[flagName]) != ""
}

// Name is how an error names a setting: the flag when it was given on the
// command line, else its environment variable when that is set, else the
// flag.
func (c *Config) Name(flagName string) string {
	set := false
	c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == flagName })
	if env := c.env[flagName]; !set && env != "" && c.getenv(env) != "" {
		return env
	}
	return "--" + flagName
}

// Finish derives defaults that depend on other settings and validates the
// result. Call it after parsing the flags.
func (c *Config) Finish() error {
	// A malformed environment value counts unless the command line
	// overrides it.
	var errs []error
	for _, e := range c.envErrs {
		if c.Name(e.flag) != "--"+e.flag {
			errs = append(errs, e.err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("%s %q: want host:port: %w", c.Name("listen"), c.Listen, err)
	}
	if c.AnalyticsDatabaseURL != "" && !dburl.IsPostgres(c.AnalyticsDatabaseURL) {
		return fmt.Errorf("config: --analytics-database-url must be a postgres:// URL")
	}
	if c.DatabaseURL != "" && !dburl.IsPostgres(c.DatabaseURL) {
		return fmt.Errorf("%s must start with postgres:// or postgresql:// (leave it empty for SQLite)", c.Name("database-url"))
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
	if c.ConsoleURL == "" {
		if c.ConsoleListen != "" {
			c.ConsoleURL = "http://" + c.ConsoleListen
		} else {
			c.ConsoleURL = c.BaseURL
		}
	}
	c.ConsoleURL = strings.TrimRight(c.ConsoleURL, "/")
	for _, u := range []struct{ name, url string }{{"base-url", c.BaseURL}, {"idp-url", c.IdPURL}, {"analytics-url", c.AnalyticsURL}, {"console-url", c.ConsoleURL}} {
		if p, err := url.Parse(u.url); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("%s %q: want an absolute http(s) URL", c.Name(u.name), u.url)
		}
	}
	if c.TokenTTL < time.Minute || c.TokenTTL > 24*time.Hour {
		return fmt.Errorf("%s %s: want between 1m and 24h", c.Name("token-ttl"), c.TokenTTL)
	}
	if c.EngineInterval < time.Second {
		return fmt.Errorf("%s %s: want at least 1s", c.Name("engine-interval"), c.EngineInterval)
	}
	if c.AvtaleGiroSync != 0 && c.AvtaleGiroSync < time.Second {
		return fmt.Errorf("%s %s: want 0 (never) or at least 1s", c.Name("avtalegiro-sync-interval"), c.AvtaleGiroSync)
	}
	if c.EngineLease < time.Second {
		return fmt.Errorf("%s %s: want at least 1s", c.Name("engine-lease"), c.EngineLease)
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("%s %s: want zero or more", c.Name("shutdown-timeout"), c.ShutdownTimeout)
	}
	if _, err := retries.Parse(c.WebhookRetrySchedule); err != nil {
		return fmt.Errorf("%s: %w", c.Name("webhook-retry-schedule"), err)
	}
	if c.WebhookTimeout < 100*time.Millisecond || c.WebhookTimeout > 5*time.Minute {
		return fmt.Errorf("%s %s: want between 100ms and 5m", c.Name("webhook-timeout"), c.WebhookTimeout)
	}
	if c.WebhookConcurrency < 1 || c.WebhookConcurrency > 4096 {
		return fmt.Errorf("%s %d: want 1 to 4096", c.Name("webhook-concurrency"), c.WebhookConcurrency)
	}
	if err := c.finishPeppol(); err != nil {
		return err
	}
	if c.BodyLimit < 1024 {
		return fmt.Errorf("%s %d: want at least 1024 bytes", c.Name("body-limit"), c.BodyLimit)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("%s %q: want debug, info, warn or error", c.Name("log-level"), c.LogLevel)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("%s %q: want text or json", c.Name("log-format"), c.LogFormat)
	}
	if c.SMTPURL != "" {
		if err := smtpmail.Check(c.SMTPURL, c.Egress()); err != nil {
			return fmt.Errorf("%s: %w", c.Name("smtp-url"), err)
		}
	}
	if c.TrustedIssuers != "" {
		if err := json.Unmarshal([]byte(c.TrustedIssuers), &c.issuers); err != nil {
			return fmt.Errorf("%s: not a JSON array of issuers: %w", c.Name("trusted-issuers"), err)
		}
		for i, ti := range c.issuers {
			if err := ti.Check(); err != nil {
				return fmt.Errorf("%s[%d]: %w", c.Name("trusted-issuers"), i, err)
			}
			if err := c.checkEgressURL(ti.JWKSURL); err != nil {
				return fmt.Errorf("%s[%d].jwksUrl %q %w", c.Name("trusted-issuers"), i, ti.JWKSURL, err)
			}
		}
	}
	return nil
}

// Egress is the policy of every outbound connection.
func (c *Config) Egress() egress.Policy {
	return egress.Policy{Private: c.EgressAllowPrivate, LinkLocal: c.EgressAllowLinkLocal}
}

// checkEgressURL checks an operator's http(s) destination at start-up
// against the egress policy: its form, and its host when that is an
// address or a localhost name (without asking DNS, which start-up should
// not wait on; the dialer checks what a name resolves to).
func (c *Config) checkEgressURL(raw string) error {
	u, err := egress.ParseHTTP(raw)
	if err != nil {
		return err
	}
	return c.Egress().CheckLiteral(u.Hostname())
}

// Issuers returns the parsed trusted external issuers.
func (c *Config) Issuers() []auth.TrustedIssuer { return c.issuers }

// Describe lists the effective settings as "name = value" lines with
// secrets masked, for printing at start.
func (c *Config) Describe() []string {
	width := 0
	c.fs.VisitAll(func(f *flag.Flag) { width = max(width, len(f.Name)) })
	var lines []string
	c.fs.VisitAll(func(f *flag.Flag) {
		v := f.Value.String()
		switch {
		case c.secrets[f.Name] && v != "":
			v = "*****"
		case f.Name == "database-url" || f.Name == "analytics-database-url":
			v = dburl.Redact(v)
		}
		switch f.Name {
		case "base-url":
			v = c.BaseURL
		case "idp-url":
			v = c.IdPURL
		case "analytics-url":
			v = c.AnalyticsURL
		case "console-url":
			v = c.ConsoleURL
		}
		if v == "" {
			v = "(unset)"
		}
		lines = append(lines, fmt.Sprintf("%-*s  %s", width, f.Name, v))
	})
	return lines
}
