// Package invoice is the Invoice provider: the subscriber pays by bank
// transfer with the invoice's KID. Every subscriber who has ordered has one
// live Invoice agreement, the fallback of every other (internal/store).
package invoice

import (
	"context"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/validation"
)

// Type is the provider type.
const Type = "Invoice"

// MethodBankTransfer is the Invoice agreement's one payment method.
const MethodBankTransfer = "BankTransfer"

// Provider registers the Invoice type: a checker and no hooks (the invoice
// is the document; payments are recorded as they arrive).
var Provider = provider.Provider{Type: Type, Check: Check}

// Check refuses a reference (there is none) and fixes the method.
func Check(_ context.Context, a *provider.Agreement) error {
	var errs validation.Errors
	if a.Reference != "" {
		errs.Add(provider.FieldReference, "must be empty for Invoice agreements: the subscriber pays by bank transfer with the invoice's KID")
	}
	provider.FixedMethod(&errs, a, Type, MethodBankTransfer)
	return errs.Err()
}
