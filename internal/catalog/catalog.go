// Package catalog is what a merchant sells: products, billing plans,
// template packages and package chains, and the one function that turns a
// template package plus an order's choices into a subscription package
// instance (Merge).
//
// The package is pure: it knows nothing about the database or HTTP. The
// store persists these types and the API sends them as they are (their JSON
// tags are the API's output). Callers look up what a value refers to (the
// products of a template, the packages of a chain) in their tenant and hand
// it in; the rules about those references live here, so orders, plan
// changes and the demo data all apply the same ones. Every check reports
// all problems at once as validation.Errors, named by the field the client
// sent.
//
// docs/CATALOG.md explains the model for API users.
package catalog

import (
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/period"
)

// Product is something a subscription delivers (a digital news
// subscription, a printed paper, a magazine). Its VAT rate is what invoice
// lines of the product are taxed at; Norwegian news media are zero-rated,
// so 0 is a real rate, not a missing one. Inactive products stay valid in
// the template packages that already hold them but cannot be added to
// others.
type Product struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Category    string    `json:"category"`
	VATRate     Percent   `json:"vatRate"`
	Active      bool      `json:"active"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// BillingPlan says how often a subscription is billed (every IntervalCount
// IntervalUnits, calendar-based in the organization's time zone), how many
// days before a period starts its invoice is issued (MinimumDueDays), and
// how many days the subscriber then has to pay (PaymentTermsDays).
type BillingPlan struct {
	ID               string      `json:"id"`
	Name             string      `json:"name"`
	Description      string      `json:"description"`
	IntervalUnit     period.Unit `json:"intervalUnit"`
	IntervalCount    int         `json:"intervalCount"`
	MinimumDueDays   int         `json:"minimumDueDays"`
	PaymentTermsDays int         `json:"paymentTermsDays"`
	// DunningProcessID is the dunning process of invoices of this plan
	// (nil: the tenant's default process).
	DunningProcessID *string   `json:"dunningProcessId"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

// Interval returns the plan's billing interval.
func (b BillingPlan) Interval() period.Interval {
	return period.Interval{Unit: b.IntervalUnit, Count: b.IntervalCount}
}

// Limits of the catalog. They are generous; they exist so that no request
// can make a price computation overflow or a package unbounded.
const (
	MaxUnits            = 100_000
	MaxPackageProducts  = 100
	MaxPackagePlans     = 20
	MaxChainSteps       = 100
	MaxStepPeriods      = 1200
	MaxBindingPeriods   = 1200
	MaxNumberOfEditions = 100_000
	MaxDueDays          = 366
)

// indexed names the i-th element of a list field: products[0].productId.
func indexed(list string, i int, field string) string {
	if field == "" {
		return fmt.Sprintf("%s[%d]", list, i)
	}
	return fmt.Sprintf("%s[%d].%s", list, i, field)
}
