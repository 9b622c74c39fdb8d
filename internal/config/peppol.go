package config

import (
	"fmt"
	"net"
	"time"
)

// Peppol holds the settings of e-invoicing through the Peppol network
// (docs/PEPPOL.md): where recipients are looked up and how documents leave.
type Peppol struct {
	SMLZone      string
	DNSServer    string
	DirectoryURL string
	LookupTTL    time.Duration
	// Delivery: an access point's HTTP API (APURL) or a drop directory
	// (DropDir); neither means documents are not sent.
	APURL, APToken         string
	APUsername, APPassword string
	DropDir                string
	DeliveryInterval       time.Duration
}

// registerPeppol defines the Peppol settings.
func (c *Config) registerPeppol() {
	fs, p := c.fs, &c.Peppol
	str := func(v *string, name, env, def, usage string) {
		fs.StringVar(v, name, def, usage)
		c.fromEnv(name, env)
	}
	dur := func(v *time.Duration, name, env string, def time.Duration, usage string) {
		fs.DurationVar(v, name, def, usage)
		c.fromEnv(name, env)
	}
	str(&p.SMLZone, "peppol-sml-zone", "KADENS_PEPPOL_SML_ZONE", "participant.sml.prod.tech.peppol.org", "DNS zone of the Peppol SML recipients are looked up in (test network: participant.sml.test.tech.peppol.org)")
	str(&p.DNSServer, "peppol-dns-server", "KADENS_PEPPOL_DNS_SERVER", "", "host:port of the DNS resolver asked for SML NAPTR records (default: the system's)")
	str(&p.DirectoryURL, "peppol-directory-url", "KADENS_PEPPOL_DIRECTORY_URL", "", "Peppol Directory asked when the SML cannot be, e.g. https://directory.peppol.eu (default: none)")
	dur(&p.LookupTTL, "peppol-lookup-ttl", "KADENS_PEPPOL_LOOKUP_TTL", time.Hour, "how long a recipient lookup is cached (\"not registered\" at most 5m)")
	str(&p.APURL, "peppol-ap-url", "KADENS_PEPPOL_AP_URL", "", "base URL of the access point's HTTP API invoices and credit notes are sent to")
	c.secrets["peppol-ap-token"] = true
	str(&p.APToken, "peppol-ap-token", "KADENS_PEPPOL_AP_TOKEN", "", "bearer token for the access point's API")
	str(&p.APUsername, "peppol-ap-username", "KADENS_PEPPOL_AP_USERNAME", "", "HTTP Basic user for the access point's API (when there is no token)")
	c.secrets["peppol-ap-password"] = true
	str(&p.APPassword, "peppol-ap-password", "KADENS_PEPPOL_AP_PASSWORD", "", "HTTP Basic password for the access point's API")
	str(&p.DropDir, "peppol-drop-dir", "KADENS_PEPPOL_DROP_DIR", "", "directory an access point picks UBL files up from (instead of --peppol-ap-url)")
	dur(&p.DeliveryInterval, "peppol-delivery-interval", "KADENS_PEPPOL_DELIVERY_INTERVAL", 5*time.Second, "how often due Peppol deliveries (retries, status questions) are looked for")
}

// finishPeppol validates the Peppol settings.
func (c *Config) finishPeppol() error {
	p := c.Peppol
	if p.APURL != "" && p.DropDir != "" {
		return fmt.Errorf("%s and %s: set one way of delivery, not both", c.Name("peppol-ap-url"), c.Name("peppol-drop-dir"))
	}
	for _, s := range []struct{ name, url string }{{"peppol-ap-url", p.APURL}, {"peppol-directory-url", p.DirectoryURL}} {
		if s.url == "" {
			continue
		}
		if err := c.checkEgressURL(s.url); err != nil {
			return fmt.Errorf("%s %q %w", c.Name(s.name), s.url, err)
		}
	}
	if p.DNSServer != "" {
		if _, _, err := net.SplitHostPort(p.DNSServer); err != nil {
			return fmt.Errorf("%s %q: want host:port", c.Name("peppol-dns-server"), p.DNSServer)
		}
	}
	if p.SMLZone == "" {
		return fmt.Errorf("%s: must not be empty", c.Name("peppol-sml-zone"))
	}
	if p.LookupTTL < time.Second {
		return fmt.Errorf("%s %s: want at least 1s", c.Name("peppol-lookup-ttl"), p.LookupTTL)
	}
	if p.DeliveryInterval < 10*time.Millisecond {
		return fmt.Errorf("%s %s: want at least 10ms", c.Name("peppol-delivery-interval"), p.DeliveryInterval)
	}
	return nil
}
