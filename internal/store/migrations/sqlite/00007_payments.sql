-- +goose Up
-- Payments (docs/BILLING.md, "Payments"): every reported payment result, a
-- success matched to its payment demand or a recorded failure. applied is
-- the part that reduced the demand's outstanding amount, surplus the rest,
-- booked as an allowance (allowance_item_id). A provider reference is
-- reported once: the unique key makes a repeated report find the first.
CREATE TABLE payments (
    id                    TEXT PRIMARY KEY,
    tenant_id             TEXT NOT NULL REFERENCES tenants(id),
    payment_demand_id     TEXT NOT NULL,
    invoice_id            TEXT NOT NULL,
    account_id            TEXT NOT NULL,
    subscriber_id         TEXT NOT NULL,
    payment_agreement_id  TEXT,
    status                TEXT NOT NULL CHECK (status IN ('Succeeded', 'Failed')),
    amount                INTEGER NOT NULL CHECK (amount > 0),
    applied               INTEGER NOT NULL CHECK (applied >= 0),
    surplus               INTEGER NOT NULL CHECK (surplus >= 0),
    allowance_item_id     TEXT,
    currency              TEXT NOT NULL,
    paid_at               TIMESTAMP NOT NULL,
    provider              TEXT NOT NULL,
    provider_reference    TEXT NOT NULL,
    failure_reason        TEXT,
    created_at            TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, provider, provider_reference),
    CHECK (status = 'Succeeded' OR (applied = 0 AND surplus = 0)),
    CHECK (applied + surplus = CASE WHEN status = 'Succeeded' THEN amount ELSE 0 END),
    FOREIGN KEY (tenant_id, payment_demand_id) REFERENCES payment_demands (tenant_id, id),
    FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES subscriber_accounts (tenant_id, id),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id),
    FOREIGN KEY (tenant_id, payment_agreement_id) REFERENCES payment_agreements (tenant_id, id),
    FOREIGN KEY (tenant_id, allowance_item_id) REFERENCES account_items (tenant_id, id)
);
CREATE INDEX payments_demand ON payments (tenant_id, payment_demand_id);
CREATE INDEX payments_invoice ON payments (tenant_id, invoice_id);
CREATE INDEX payments_subscriber ON payments (tenant_id, subscriber_id, id);

-- The Payment entry of a matched payment names it.
ALTER TABLE account_entries ADD COLUMN payment_id TEXT;
