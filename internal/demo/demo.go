// Package demo seeds a test tenant with realistic data so a newcomer can try
// Kadens with one command.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kadens/kadens/internal/atomicfile"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// TenantName is the name of the demo tenant.
const TenantName = "demo"

// Credentials are what a demo user needs to call the API.
type Credentials struct {
	TenantID     string `json:"tenantId"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	// ConsoleEmail and ConsolePassword log in to the merchant console
	// (/console/) as the demo tenant's administrator.
	ConsoleEmail    string `json:"consoleEmail,omitempty"`
	ConsolePassword string `json:"consolePassword,omitempty"`
	// MyEmail and MyPassword log in to Min side (/my/) as the demo
	// subscriber Kari Nordmann, through the identity provider's login page.
	MyEmail    string `json:"myEmail,omitempty"`
	MyPassword string `json:"myPassword,omitempty"`
}

// MyEmail is the demo subscriber user who logs in to Min side.
const MyEmail = "kari@example.no"

// ConsoleEmail is the demo tenant's console administrator.
const ConsoleEmail = "admin@demo.example"

// credentialsFile keeps the demo client's secret, which the database only
// holds hashed, so later runs can print the same ready-to-paste commands.
const credentialsFile = "demo-credentials.json"

// Ensure creates the demo tenant, organization and client on first run and
// returns their credentials; on later runs it returns the saved ones.
func Ensure(ctx context.Context, s *store.Store, eng *engine.Engine, dataDir string, now time.Time) (Credentials, bool, error) {
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
		if c.ConsoleEmail == "" {
			// A demo made before the console had one: give it its
			// administrator now.
			if c.ConsolePassword, err = consoleAdmin(ctx, s, t.ID); err != nil {
				return Credentials{}, false, err
			}
			c.ConsoleEmail = ConsoleEmail
			if err := saveCredentials(dataDir, path, c); err != nil {
				return Credentials{}, false, err
			}
		}
		if c.MyEmail == "" {
			// A demo made before Min side: give Kari her login now.
			if c.MyPassword, err = subscriberLogin(ctx, s, t.ID); err != nil {
				return Credentials{}, false, err
			}
			c.MyEmail = MyEmail
			if err := saveCredentials(dataDir, path, c); err != nil {
				return Credentials{}, false, err
			}
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
	org, err := s.CreateOrganization(tctx, store.Organization{
		Name: "Nordavis AS", OrganizationNumber: "923609016", Country: "NO", Currency: "NOK",
		TimeZone: "Europe/Oslo", PricesIncludeVAT: true, LogoURL: "",
		// Payable demo invoices: an address and the registry's example
		// account (NO93 8601 1117 947), VAT-registered, an AS.
		Address:       store.Address{Line1: "Storgata 10", PostalCode: "0155", City: "Oslo", Country: "NO"},
		BankAccount:   store.BankAccount{AccountNumber: "86011117947", IBAN: "NO9386011117947", BIC: "DNBANOKK"},
		VATRegistered: true, BusinessRegister: true,
	}, now)
	if err != nil {
		return Credentials{}, false, err
	}
	if err := seedCatalog(tctx, s, now); err != nil {
		return Credentials{}, false, fmt.Errorf("demo: catalog: %w", err)
	}
	if err := seedSubscriptions(tctx, s, eng, org, now); err != nil {
		return Credentials{}, false, err
	}
	id, secret, err := idp.NewClientCredentials(ctx, s, t.ID, "demo client", now)
	if err != nil {
		return Credentials{}, false, err
	}
	c := Credentials{TenantID: t.ID, ClientID: id, ClientSecret: secret, ConsoleEmail: ConsoleEmail, MyEmail: MyEmail}
	if c.ConsolePassword, err = consoleAdmin(ctx, s, t.ID); err != nil {
		return Credentials{}, false, err
	}
	if c.MyPassword, err = subscriberLogin(ctx, s, t.ID); err != nil {
		return Credentials{}, false, err
	}
	if err := saveCredentials(dataDir, path, c); err != nil {
		return Credentials{}, false, err
	}
	return c, true, nil
}

// saveCredentials writes c to path, whole or not at all: a start killed
// here must not leave an empty file that the next start would call "does
// not match this database".
func saveCredentials(dataDir, path string, c Credentials) error {
	b, _ := json.MarshalIndent(c, "", "  ")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("demo: save credentials: %w", err)
	}
	return nil
}

// randomPassword is a demo user's password: 20 random characters.
func randomPassword() (string, error) {
	raw := make([]byte, 15)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// subscriberLogin gives the demo subscriber MyEmail a subscriber user with
// a random password (the identity provider's login, and so Min side's)
// and returns the password.
func subscriberLogin(ctx context.Context, s *store.Store, tenantID string) (string, error) {
	pw, err := randomPassword()
	if err != nil {
		return "", err
	}
	tctx := tenancy.With(ctx, tenantID)
	subs, _, err := s.ListSubscribers(tctx, store.SubscriberFilter{Email: MyEmail}, store.Page{Limit: 1})
	if err != nil {
		return "", err
	}
	if len(subs) == 0 {
		return "", fmt.Errorf("demo: no subscriber %s", MyEmail)
	}
	if _, err := (&subscriberuser.Directory{Store: s}).Create(tctx, MyEmail, pw, subs[0].ID); err != nil {
		return "", fmt.Errorf("demo: subscriber login: %w", err)
	}
	return pw, nil
}

// consoleAdmin makes the demo tenant's console administrator with a
// random password and returns the password.
func consoleAdmin(ctx context.Context, s *store.Store, tenantID string) (string, error) {
	pw, err := randomPassword()
	if err != nil {
		return "", err
	}
	if _, err := staff.New(s, staff.Options{}).CreateUser(ctx, tenantID, staff.NewUser{Email: ConsoleEmail, Name: "Demo administrator",
		Role: staff.RoleAdmin, Password: pw}); err != nil {
		return "", fmt.Errorf("demo: console administrator: %w", err)
	}
	return pw, nil
}

// Instructions returns the text printed after the demo is ready: the
// credentials and commands that fetch a token and list organizations.
func Instructions(c Credentials, baseURL, idpURL, consoleURL string) string {
	return fmt.Sprintf(`
Demo tenant ready.
  tenant id      %s
  client id      %s
  client secret  %s

Merchant console: %[6]s/console/ (organisation demo, e-mail %[7]s, password %[8]s)
Min side (a subscriber's own pages): %[5]s/my/login?tenant=demo (e-mail %[9]s, password %[10]s)

Try it:

  TOKEN=$(curl -s -u '%[2]s:%[3]s' -d grant_type=client_credentials %[4]s/oauth/token | sed -E 's/.*"access_token":"([^"]+)".*/\1/')
  curl -s -H "Authorization: Bearer $TOKEN" -H 'S4-TenantId: %[1]s' %[5]s/organization

The demo is a test tenant with its own clock. Move it a year ahead and list the renewals:

  curl -s -X POST -H "Authorization: Bearer $TOKEN" -H 'S4-TenantId: %[1]s' -H 'Content-Type: application/json' \
       -d "{\"to\": \"$(date -u -v+1y +%%Y-%%m-%%dT%%H:%%M:%%SZ 2>/dev/null || date -u -d '+1 year' +%%Y-%%m-%%dT%%H:%%M:%%SZ)\"}" %[5]s/testclock/advance
  curl -s -H "Authorization: Bearer $TOKEN" -H 'S4-TenantId: %[1]s' '%[5]s/subscription?status=Completed'

API reference: %[5]s/swagger/
`, c.TenantID, c.ClientID, c.ClientSecret, idpURL, baseURL, consoleURL, c.ConsoleEmail, c.ConsolePassword, c.MyEmail, c.MyPassword)
}

// seedCatalog gives the demo tenant a realistic Norwegian news catalog:
// a digital news product, a printed paper sold with it as a bundle, a
// puzzle add-on, monthly and yearly billing plans in NOK, and the intro
// offer "1 month at 99, then 3 months at 149, then 199/month" as a package
// chain whose entry is the 99 template. Everything is checked with the
// same rules the API applies.
func seedCatalog(ctx context.Context, s *store.Store, now time.Time) error {
	nok, _ := money.LookupCurrency("NOK")
	kr := func(major int64) catalog.Amount { return catalog.NewAmount(major*100, nok) }
	share := func(n int64) *catalog.Percent { p := catalog.PercentOf(n); return &p }

	products := map[string]catalog.Product{}
	for key, p := range map[string]catalog.Product{
		"digital": {Name: "Nordavis Digital", Description: "Alle artikler, eAvis og arkiv på nett og i appen", Category: "digital", VATRate: catalog.PercentOf(0)},
		"print":   {Name: "Nordavis Papiravis", Description: "Papiravisen levert hver morgen, mandag til lørdag", Category: "print", VATRate: catalog.PercentOf(0)},
		"puzzles": {Name: "Nordavis Spill", Description: "Kryssord, sudoku og quiz", Category: "digital", VATRate: catalog.PercentOf(25)},
	} {
		p.Active = true
		created, err := catalogdb.CreateProduct(ctx, s, p, now)
		if err != nil {
			return err
		}
		products[key] = created
	}
	plans := map[string]catalog.BillingPlan{}
	for key, b := range map[string]catalog.BillingPlan{
		"monthly": {Name: "Månedlig", Description: "Faktura hver måned, sendt 14 dager før perioden", IntervalUnit: period.Month, IntervalCount: 1, MinimumDueDays: 14, PaymentTermsDays: 14},
		"yearly":  {Name: "Årlig", Description: "Faktura én gang i året, sendt 30 dager før perioden", IntervalUnit: period.Year, IntervalCount: 1, MinimumDueDays: 30, PaymentTermsDays: 14},
	} {
		created, err := catalogdb.CreateBillingPlan(ctx, s, b, now)
		if err != nil {
			return err
		}
		plans[key] = created
	}
	refs := catalog.Refs{Products: map[string]catalog.Product{}, BillingPlans: map[string]catalog.BillingPlan{}}
	for _, p := range products {
		refs.Products[p.ID] = p
	}
	for _, b := range plans {
		refs.BillingPlans[b.ID] = b
	}
	digitalOnly := func(name, desc string, price int64, plan string) catalog.TemplatePackage {
		return catalog.TemplatePackage{
			Name: name, Description: desc, Currency: "NOK", Price: kr(price), Units: 1,
			PermanentDiscount:  catalog.PercentOf(0),
			Products:           []catalog.PackageProduct{{ProductID: products["digital"].ID}},
			AdditionalProducts: []catalog.AdditionalProduct{{ProductID: products["puzzles"].ID, Price: kr(39)}},
			BillingPlans:       []string{plans[plan].ID},
			AllowedChoices:     catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1},
		}
	}
	editions := 26
	templates := []catalog.TemplatePackage{
		digitalOnly("Digital – månedlig", "Nordavis Digital, 199 kr i måneden", 199, "monthly"),
		digitalOnly("Digital – årlig", "Nordavis Digital for et helt år: to måneder gratis", 1990, "yearly"),
		{
			Name: "Papir + digital", Description: "Papiravisen seks dager i uka og alt digitalt", Currency: "NOK",
			Price: kr(549), Units: 1, NumberOfEditions: &editions, PermanentDiscount: catalog.PercentOf(0),
			Products: []catalog.PackageProduct{
				{ProductID: products["print"].ID, Share: share(80)},
				{ProductID: products["digital"].ID, Share: share(20)},
			},
			AdditionalProducts: []catalog.AdditionalProduct{{ProductID: products["puzzles"].ID, Price: kr(39)}},
			BillingPlans:       []string{plans["monthly"].ID},
			Contract:           &catalog.Contract{BindingPeriods: 6, Terms: "Bindingstid 6 måneder"},
			AllowedChoices:     catalog.AllowedChoices{MinUnits: 1, MaxUnits: 3},
		},
		digitalOnly("Digital – intro 99", "Første måned for 99 kr, så 149 kr i tre måneder, deretter 199 kr", 99, "monthly"),
		digitalOnly("Digital – intro 149", "Introtilbudets andre steg: 149 kr i måneden", 149, "monthly"),
	}
	ids := make([]string, len(templates))
	for i, tp := range templates {
		if errs := catalog.CheckTemplate(tp, refs); len(errs) > 0 {
			return fmt.Errorf("template %q: %w", tp.Name, errs)
		}
		created, err := catalogdb.CreatePackage(ctx, s, tp, now)
		if err != nil {
			return err
		}
		ids[i], templates[i] = created.ID, created
	}
	monthly, intro99, intro149 := 0, 3, 4
	chain := catalog.Chain{
		Name:        "Introtilbud",
		Description: "1 måned for 99 kr, så 3 måneder for 149 kr, deretter 199 kr i måneden",
		PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
			{Step: 1, NextPackageID: ids[intro99], Periods: 1},
			{Step: 2, NextPackageID: ids[intro149], Periods: 3},
			{Step: 3, NextPackageID: ids[monthly], Periods: 1},
		}},
	}
	byID := map[string]catalog.TemplatePackage{}
	for _, tp := range templates {
		byID[tp.ID] = tp
	}
	if errs := catalog.CheckChain(chain, byID); len(errs) > 0 {
		return fmt.Errorf("chain: %w", errs)
	}
	chain, err := catalogdb.CreatePackageChain(ctx, s, chain, now)
	if err != nil {
		return err
	}
	entry := templates[intro99]
	entry.PackageChainID = &chain.ID
	_, err = catalogdb.UpdatePackage(ctx, s, entry, now)
	return err
}
