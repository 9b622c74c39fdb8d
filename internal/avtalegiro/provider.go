package avtalegiro

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// MethodDirectDebit is the payment method of AvtaleGiro agreements.
const MethodDirectDebit = "DirectDebit"

// Registration is the AvtaleGiro payment-agreement provider over st: an
// agreement references an active mandate of the tenant; an issued invoice
// gets its claim, a credited one loses an unprocessed claim (docs/AVTALEGIRO.md). The hooks
// run from the outbox consumer after the invoice's transaction committed.
// With sync.Every set, its Poll exchanges files with the banks' interface
// (Syncer.SyncAll) that often.
func Registration(st *store.Store, sync BankSync) provider.Provider {
	p := provider.Provider{
		Type: store.ProviderAvtaleGiro,
		Check: func(ctx context.Context, a *provider.Agreement) error {
			var errs validation.Errors
			provider.FixedMethod(&errs, a, store.ProviderAvtaleGiro, MethodDirectDebit)
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
			return []string{m.ID, m.KID}, nil
		},
		InvoiceIssued: func(ctx context.Context, inv provider.Invoice) error {
			return InvoiceIssued(ctx, st, inv.TenantID, inv.InvoiceID, inv.Now)
		},
		InvoiceCredited: func(ctx context.Context, inv provider.Invoice) error {
			return InvoiceCredited(ctx, st, inv.TenantID, inv.InvoiceID, inv.Now)
		},
	}
	if sync.Every > 0 {
		s := &Syncer{Store: st, Bank: sync.Bank}
		p.Poll = &provider.Poll{Every: sync.Every, Run: s.SyncAll}
	}
	return p
}

// BankSync is how the provider reaches the banks' interface: every Every (0:
// never; the files then move by hand, kadens avtalegiro export/import),
// through Bank (a run's error is logged by provider.RunPolls).
type BankSync struct {
	Every time.Duration
	Bank  *Bank
}
