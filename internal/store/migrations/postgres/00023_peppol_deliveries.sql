-- +goose Up
-- Peppol deliveries (docs/PEPPOL.md): one row per invoice or credit note
-- sent through the e-invoicing network, claimed in the database before each
-- attempt so that no two processes send the same document, and keyed by
-- (tenant, kind, document) so that asking twice records one delivery.
CREATE TABLE peppol_deliveries (
    id              uuid PRIMARY KEY,
    tenant_id       uuid NOT NULL REFERENCES tenants(id),
    document_kind   text NOT NULL CHECK (document_kind IN ('Invoice', 'CreditNote')),
    document_id     uuid NOT NULL,
    invoice_id      uuid NOT NULL,
    recipient       text NOT NULL,
    adapter         text NOT NULL,
    status          text NOT NULL CHECK (status IN ('Pending', 'Sent', 'Delivered', 'Failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    claim_token     text,
    claimed_until   timestamptz,
    message_id      text NOT NULL DEFAULT '',
    failure_reason  text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (tenant_id, document_kind, document_id),
    FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id)
);
CREATE INDEX peppol_deliveries_due ON peppol_deliveries (next_attempt_at) WHERE status IN ('Pending', 'Sent');
CREATE INDEX peppol_deliveries_invoice ON peppol_deliveries (tenant_id, invoice_id);

-- +goose Down
DROP TABLE peppol_deliveries;
