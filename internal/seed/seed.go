// Package seed creates the test data that tests of many packages share —
// tenants, organizations, products, billing plans, template packages and
// subscribers — from typed options, in one of two ways:
//
//   - API writes through the HTTP API (apitest's Tenant.Seed), so the
//     records are made exactly as a client's would be: the API's input
//     rules, defaults and the contract check of every response apply.
//     Tests of the API, the engine and the examples use it.
//   - Store writes with the store's methods and returns the typed records.
//     Store tests use it: they cannot start a server, and they compare
//     records field by field.
//
// The two writers take the same options, and an option left out takes the
// API's default on both (time zone Europe/Oslo, prices including VAT,
// interval count 1, 14 days before a period and 14 days to pay, one unit),
// so one option literal means one record whichever way it was written.
//
// The store writer also makes the few fixtures that the store's tests and
// a wing's or the catalog's tests share (fixtures.go), so that no package
// keeps a copy of another's.
//
// Seed is for tests only; it stops the test (t.Fatal) on any failure.
package seed

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// Organization is a seller. Name, Country and Currency are required by the
// API; the others are left out when empty (nil).
type Organization struct {
	Name               string
	OrganizationNumber string
	Country            string // default "NO" (store writer only; the API requires it)
	Currency           string // default "NOK" (store writer only; the API requires it)
	TimeZone           string
	PricesIncludeVAT   *bool
}

// Product is a product; VATRate is a percentage ("25", "12.5").
type Product struct {
	Name, Category string
	VATRate        string
}

// Plan is a billing plan. Unit is Day, Week, Month or Year (any case).
type Plan struct {
	Name             string
	Unit             string
	Count            int  // 0: left out (1)
	MinimumDueDays   *int // nil: left out (14)
	PaymentTermsDays *int // nil: left out (14)
}

// Package is a template package.
type Package struct {
	Name          string
	Currency      string // default "NOK"
	Price         string // a decimal in the currency's major unit: "199.00"
	Units         int    // 0: left out (1)
	AutomaticStop bool
	// PermanentDiscount is a percentage ("12.5"); "" leaves it out (0).
	PermanentDiscount string
	Products          []string // product ids, equal shares
	Additional        []Additional
	Plans             []string // billing plan ids; the first is the default
	// MinUnits and MaxUnits bound an order's units; 0 leaves each out
	// (the template's Units).
	MinUnits, MaxUnits int
}

// Additional is an optional product of a package.
type Additional struct {
	ProductID         string
	Price             string
	SelectedByDefault bool
}

// Subscriber is a subscriber; empty fields are left out.
type Subscriber struct {
	Name, Email, Country, ExternalID string
}

// Days returns a pointer to n, for the day counts of a Plan.
func Days(n int) *int { return &n }

// Bool returns a pointer to b, for Organization.PricesIncludeVAT.
func Bool(b bool) *bool { return &b }

// The worked-example data many tests share.
var (
	// Nordavis is the usual Norwegian seller, selling in NOK from Oslo.
	Nordavis = Organization{Name: "Nordavis AS", OrganizationNumber: "923609016", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo"}
	// Kari is the usual subscriber.
	Kari = Subscriber{Name: "Kari Nordmann", Email: "kari@example.no", Country: "NO"}
)

// price reads a decimal option, naming it when it is not one.
func price(what, s string) (decimal.Decimal, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("seed: %s %q is not a decimal", what, s)
	}
	return d, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
