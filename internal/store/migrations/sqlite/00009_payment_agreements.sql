-- +goose Up
-- Payment agreements (docs/PAYMENT_AGREEMENTS.md). Agreements are deleted
-- softly (deleted_at): invoices and past periods keep referring to them.

-- External references are unique per tenant among live External
-- agreements: the integrator finds its agreement by its own reference.
CREATE UNIQUE INDEX payment_agreements_external_reference ON payment_agreements (tenant_id, provider_agreement_reference)
    WHERE provider_type = 'External' AND deleted_at IS NULL;
-- One live Invoice agreement per subscriber: the default every fallback
-- and every order without an agreement uses (store.Tx.InvoiceAgreement).
CREATE UNIQUE INDEX payment_agreements_invoice ON payment_agreements (tenant_id, subscriber_id)
    WHERE provider_type = 'Invoice' AND deleted_at IS NULL;
-- The providerType filter and the import's (providerType, reference) key.
CREATE INDEX payment_agreements_reference ON payment_agreements (tenant_id, provider_type, provider_agreement_reference);

-- An order may carry the parameters of a new agreement instead of an
-- agreement id (JSON of store.AgreementParams); completion creates it.
ALTER TABLE orders ADD COLUMN payment_agreement_params TEXT;
