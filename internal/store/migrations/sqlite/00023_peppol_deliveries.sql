-- +goose Up
-- Peppol deliveries (docs/PEPPOL.md): one row per invoice or credit note
-- sent through the e-invoicing network, claimed in the database before each
-- attempt so that no two processes send the same document, and keyed by
-- (tenant, kind, document) so that asking twice records one delivery.
CREATE TABLE peppol_deliveries (
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants(id),
    document_kind   TEXT NOT NULL CHECK (document_kind IN ('Invoice', 'CreditNote')),
    document_id     TEXT NOT NULL,
    invoice_id      TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    adapter         TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('Pending', 'Sent', 'Delivered', 'Failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP,
    claim_token     TEXT,
    claimed_until   TIMESTAMP,
    message_id      TEXT NOT NULL DEFAULT '',
    failure_reason  TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, document_kind, document_id),
    FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id)
);
CREATE INDEX peppol_deliveries_due ON peppol_deliveries (next_attempt_at) WHERE status IN ('Pending', 'Sent');
CREATE INDEX peppol_deliveries_invoice ON peppol_deliveries (tenant_id, invoice_id);

-- +goose Down
DROP TABLE peppol_deliveries;
