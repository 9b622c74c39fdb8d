// Package oio is the OIO provider: Danish e-invoices (OIOUBL) to a recipient
// named by its CVR number or GLN. Like EHF, its delivery hook is where
// internal/peppol plugs in.
package oio

import (
	"context"
	"strings"

	"github.com/kadens/kadens/internal/checkdigit"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/validation"
)

// Type is the provider type.
const Type = "OIO"

// Provider registers the OIO type.
var Provider = provider.Provider{Type: Type, Check: Check}

// Check requires a Danish CVR number (8 digits, modulus 11) or a GLN (13
// digits, GS1 check digit), told apart by length, and the method eInvoice.
func Check(_ context.Context, a *provider.Agreement) error {
	var errs validation.Errors
	check, what := checkdigit.CVR, "a Danish CVR number"
	if n := len(strings.ReplaceAll(a.Reference, " ", "")); n != 8 {
		check, what = checkdigit.GLN, "a GLN"
	}
	provider.Identifier(&errs, a, "a Danish CVR number (8 digits) or a GLN (13 digits)", what, check)
	provider.FixedMethod(&errs, a, Type, provider.MethodEInvoice)
	return errs.Err()
}
