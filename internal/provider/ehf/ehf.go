// Package ehf is the EHF provider: Norwegian e-invoices (EHF, Peppol BIS
// Billing) to a recipient named by its organization number. Its delivery
// hook (Provider.Deliver) is where internal/peppol plugs in.
package ehf

import (
	"context"

	"github.com/kadens/kadens/internal/checkdigit"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/validation"
)

// Type is the provider type.
const Type = "EHF"

// Provider registers the EHF type: the reference checker; delivery comes
// with the Peppol integration.
var Provider = provider.Provider{Type: Type, Check: Check}

// Check requires the recipient's Norwegian organization number (9 digits,
// MOD11 check digit; spaces removed) and the method eInvoice.
func Check(_ context.Context, a *provider.Agreement) error {
	var errs validation.Errors
	provider.Identifier(&errs, a, "the recipient's Norwegian organization number (9 digits)",
		"a Norwegian organization number", checkdigit.NorwegianOrgNumber)
	provider.FixedMethod(&errs, a, Type, provider.MethodEInvoice)
	return errs.Err()
}
