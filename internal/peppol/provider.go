package peppol

import (
	"context"
	"fmt"

	"github.com/kadens/kadens/internal/provider"
)

// Hook is the delivery hook of the EHF and OIO providers: the outbox
// consumer of invoice events hands it every issued invoice and credit note
// of such an agreement, and Deliver records and sends it once.
func (d *Deliverer) Hook(ctx context.Context, doc provider.Document) error {
	kind := PeppolInvoice
	switch doc.Kind {
	case provider.DocumentInvoice:
	case provider.DocumentCreditNote:
		kind = PeppolCreditNote
	default:
		return fmt.Errorf("peppol: document kind %q", doc.Kind)
	}
	return d.Deliver(ctx, doc.TenantID, kind, doc.ID)
}
