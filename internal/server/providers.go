package server

import (
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/ehf"
	"github.com/kadens/kadens/internal/provider/external"
	"github.com/kadens/kadens/internal/provider/invoice"
	"github.com/kadens/kadens/internal/provider/oio"
)

// providers registers the payment-agreement provider types, one line each,
// in the order error messages list them. A provider whose hooks need the
// store or settings (Autogiro, AvtaleGiro, Peppol delivery) is built here from
// what New has, e.g. autogiro.New(st, cfg).Provider() (docs/ARCHITECTURE.md,
// "Where a new payment provider goes").
func providers() *provider.Registry {
	return provider.NewRegistry(
		invoice.Provider,
		ehf.Provider,
		oio.Provider,
		external.Provider,
	)
}
