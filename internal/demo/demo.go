// Package demo seeds a test tenant with realistic data so a newcomer can try
// Kadens with one command.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// TenantName is the name of the demo tenant.
const TenantName = "demo"

// Credentials are what a demo user needs to call the API.
type Credentials struct {
	TenantID     string `json:"tenantId"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// credentialsFile keeps the demo client's secret, which the database only
// holds hashed, so later runs can print the same ready-to-paste commands.
const credentialsFile = "demo-credentials.json"

// Ensure creates the demo tenant, organization and client on first run and
// returns their credentials; on later runs it returns the saved ones.
func Ensure(ctx context.Context, s *store.Store, dataDir string, now time.Time) (Credentials, bool, error) {
	path := filepath.Join(dataDir, credentialsFile)
	if t, err := s.TenantByName(ctx, TenantName); err == nil {
		b, err := os.ReadFile(path)
		if err != nil {
			return Credentials{}, false, fmt.Errorf("demo tenant exists but %s is missing: create a client with `kadens client create --tenant %s`: %w", path, TenantName, err)
		}
		var c Credentials
		if err := json.Unmarshal(b, &c); err != nil || c.TenantID != t.ID {
			return Credentials{}, false, fmt.Errorf("demo: %s does not match this database; remove it and the demo tenant, or use another --data-dir", path)
		}
		return c, false, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return Credentials{}, false, err
	}
	t, err := s.CreateTenant(ctx, TenantName, true, now)
	if err != nil {
		return Credentials{}, false, err
	}
	tctx := tenancy.With(ctx, t.ID)
	if _, err := s.CreateOrganization(tctx, store.Organization{
		Name: "Nordavis AS", OrganizationNumber: "923609016", Country: "NO", Currency: "NOK",
		TimeZone: "Europe/Oslo", PricesIncludeVAT: true, LogoURL: "",
	}, now); err != nil {
		return Credentials{}, false, err
	}
	id, secret, err := idp.NewClientCredentials(ctx, s, t.ID, "demo client", now)
	if err != nil {
		return Credentials{}, false, err
	}
	c := Credentials{TenantID: t.ID, ClientID: id, ClientSecret: secret}
	b, _ := json.MarshalIndent(c, "", "  ")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return Credentials{}, false, err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return Credentials{}, false, fmt.Errorf("demo: save credentials: %w", err)
	}
	return c, true, nil
}

// Instructions returns the text printed after the demo is ready: the
// credentials and commands that fetch a token and list organizations.
func Instructions(c Credentials, baseURL, idpURL string) string {
	return fmt.Sprintf(`
Demo tenant ready.
  tenant id      %s
  client id      %s
  client secret  %s

Try it:

  TOKEN=$(curl -s -u '%s:%s' -d grant_type=client_credentials %s/oauth/token | sed -E 's/.*"access_token":"([^"]+)".*/\1/')
  curl -s -H "Authorization: Bearer $TOKEN" -H 'S4-TenantId: %s' %s/organization

API reference: %s/swagger/
`, c.TenantID, c.ClientID, c.ClientSecret, c.ClientID, c.ClientSecret, idpURL, c.TenantID, baseURL, baseURL)
}
