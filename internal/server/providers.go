package server

import (
	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/config"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/ehf"
	"github.com/kadens/kadens/internal/provider/external"
	"github.com/kadens/kadens/internal/provider/invoice"
	"github.com/kadens/kadens/internal/provider/oio"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/vipps"
)

// providers registers the payment-agreement provider types, one line each,
// in the order error messages list them (docs/ARCHITECTURE.md, "Where a new
// payment provider goes"). EHF and OIO documents go through the Peppol
// network when delivery is configured (delivery non-nil); AvtaleGiro
// exchanges files with the banks' interface every --avtalegiro-sync-interval.
func providers(st *store.Store, delivery *peppol.Deliverer, cfg *config.Config, vw *vipps.Wing) *provider.Registry {
	ehfP, oioP := ehf.Provider, oio.Provider
	if delivery != nil {
		ehfP.Deliver, oioP.Deliver = delivery.Hook, delivery.Hook
	}
	return provider.NewRegistry(
		invoice.Provider,
		ehfP,
		oioP,
		external.Provider,
		autogiro.Registration(st),
		avtalegiro.Registration(st, avtalegiro.BankSync{Every: cfg.AvtaleGiroSync, Bank: avtalegiro.NewBank(cfg.Egress())}),
		vw.Registration(vipps.PollEvery),
	)
}
