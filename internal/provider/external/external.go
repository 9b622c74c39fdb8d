// Package external is the External provider: an integrator collects the
// money its own way and reports payments through the API
// (docs/EXTERNAL_PROVIDER.md). Kadens keeps the integrator's reference,
// unique among the tenant's live External agreements.
package external

import (
	"context"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/validation"
)

// Type is the provider type.
const Type = "External"

// Provider registers the External type. The integrator learns of invoices
// from webhooks, so there are no hooks.
var Provider = provider.Provider{Type: Type, Check: Check, UniqueReference: true}

// Check requires a reference; the method is the integrator's label
// (External when left out).
func Check(_ context.Context, a *provider.Agreement) error {
	var errs validation.Errors
	if a.Reference == "" {
		errs.Add(provider.FieldReference, "is required: the integrator's reference of the agreement")
	}
	if a.PaymentMethod == "" {
		a.PaymentMethod = Type
	}
	return errs.Err()
}
