package autogiro

import (
	"context"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// MethodDirectDebit is the payment method of Autogiro agreements.
const MethodDirectDebit = "DirectDebit"

// Registration is the Autogiro payment-agreement provider over st: an
// agreement references an active mandate of the tenant; an issued invoice
// gets its debit, a credited one loses it (docs/AUTOGIRO.md). The hooks
// run from the outbox consumer after the invoice's transaction committed.
func Registration(st *store.Store) provider.Provider {
	return provider.Provider{
		Type: store.ProviderAutogiro,
		Check: func(ctx context.Context, a *provider.Agreement) error {
			var errs validation.Errors
			provider.FixedMethod(&errs, a, store.ProviderAutogiro, MethodDirectDebit)
			if err := errs.Err(); err != nil {
				return err
			}
			tenant, err := tenancy.From(ctx)
			if err != nil {
				return err
			}
			return CheckReference(ctx, st, tenant, a.Reference)
		},
		Mandate: func(ctx context.Context, id string) ([]string, error) {
			m, err := Mandate(ctx, st, id)
			if err != nil {
				return nil, err
			}
			return []string{m.ID, m.PayerNumber}, nil
		},
		InvoiceIssued: func(ctx context.Context, inv provider.Invoice) error {
			return InvoiceIssued(ctx, st, inv.TenantID, inv.InvoiceID, inv.Now)
		},
		InvoiceCredited: func(ctx context.Context, inv provider.Invoice) error {
			return InvoiceCredited(ctx, st, inv.TenantID, inv.InvoiceID, inv.Now)
		},
	}
}
