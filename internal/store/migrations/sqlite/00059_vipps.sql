-- +goose Up
-- Vipps MobilePay Recurring (docs/VIPPS.md). internal/vipps owns these
-- tables and their SQL.

-- One merchant's keys per tenant. The client secret and the subscription
-- key are sealed with the master key (a JWE, A256GCM, as the signing keys
-- are): whoever reads the database does not get them.
CREATE TABLE vipps_merchants (
    tenant_id               TEXT PRIMARY KEY REFERENCES tenants(id),
    client_id               TEXT NOT NULL,
    client_secret_sealed    TEXT NOT NULL,
    subscription_key_sealed TEXT NOT NULL,
    merchant_serial_number  TEXT NOT NULL,
    -- test: Vipps' test environment (apitest.vipps.no), production: the
    -- real one; base_url is the environment's address (a test server's in
    -- tests).
    mode                    TEXT NOT NULL CHECK (mode IN ('test', 'production')),
    base_url                TEXT NOT NULL,
    -- What the agreement drafts say (productName, the merchant's pages).
    -- The secret Vipps gave when the webhook was registered (its HMAC
    -- key), sealed like the others; empty: no webhooks, the poll only.
    webhook_secret_sealed   TEXT NOT NULL DEFAULT '',
    product_name            TEXT NOT NULL,
    merchant_agreement_url  TEXT NOT NULL,
    merchant_redirect_url   TEXT NOT NULL,
    -- Agreements are drafted VARIABLE with this suggested maximum (øre)
    -- and this interval until the catalog mapping lands (docs/VIPPS.md).
    max_amount              INTEGER NOT NULL,
    interval_unit           TEXT NOT NULL,
    interval_count          INTEGER NOT NULL,
    created_at              TIMESTAMP NOT NULL,
    updated_at              TIMESTAMP NOT NULL
);

-- The Vipps side of a payment agreement of type Vipps: the agreement
-- drafted (or imported) for it and its status as Vipps last told it.
-- reference is the payment agreement's providerAgreementReference: the
-- key Kadens drafted under (kvp-…), or the Vipps agreement id of an
-- imported one.
CREATE TABLE vipps_agreements (
    tenant_id             TEXT NOT NULL REFERENCES tenants(id),
    payment_agreement_id  TEXT NOT NULL,
    reference             TEXT NOT NULL,
    -- Empty until the draft was answered.
    vipps_agreement_id    TEXT NOT NULL DEFAULT '',
    status                TEXT NOT NULL CHECK (status IN ('NEW', 'PENDING', 'ACTIVE', 'STOPPED', 'EXPIRED')),
    confirmation_url      TEXT NOT NULL DEFAULT '',
    pricing_type          TEXT NOT NULL CHECK (pricing_type IN ('LEGACY', 'VARIABLE')),
    amount                INTEGER NOT NULL,
    interval_unit         TEXT NOT NULL,
    interval_count        INTEGER NOT NULL,
    created_at            TIMESTAMP NOT NULL,
    updated_at            TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, payment_agreement_id)
);
CREATE UNIQUE INDEX vipps_agreements_vipps_id ON vipps_agreements (tenant_id, vipps_agreement_id) WHERE vipps_agreement_id <> '';
CREATE INDEX vipps_agreements_open ON vipps_agreements (tenant_id, status) WHERE status IN ('NEW', 'PENDING', 'ACTIVE');

-- A live Vipps agreement's reference (the draft key, or the imported
-- Vipps agreement id) belongs to one payment agreement of the tenant.
CREATE UNIQUE INDEX payment_agreements_vipps_reference ON payment_agreements (tenant_id, provider_agreement_reference)
    WHERE provider_type = 'Vipps' AND deleted_at IS NULL;

-- One charge per invoice (the primary key is the rule that a retry never
-- makes two); charge_id is Vipps' id, which is the order id Kadens sends,
-- derived from the invoice.
CREATE TABLE vipps_charges (
    tenant_id             TEXT NOT NULL REFERENCES tenants(id),
    invoice_id            TEXT NOT NULL,
    payment_agreement_id  TEXT NOT NULL,
    vipps_agreement_id    TEXT NOT NULL,
    charge_id             TEXT NOT NULL,
    amount                INTEGER NOT NULL,
    refunded              INTEGER NOT NULL DEFAULT 0,
    due_date              TEXT NOT NULL,
    status                TEXT NOT NULL,
    created_at            TIMESTAMP NOT NULL,
    updated_at            TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, invoice_id)
);

CREATE INDEX vipps_charges_charge_id ON vipps_charges (tenant_id, charge_id);

-- Webhook notifications taken, by the SHA-256 of their body: one
-- delivered again (Vipps retries until it gets a 2xx) is answered and
-- not processed twice.
CREATE TABLE vipps_webhook_events (
    tenant_id    TEXT NOT NULL REFERENCES tenants(id),
    digest       TEXT NOT NULL,
    event_type   TEXT NOT NULL,
    received_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, digest)
);

-- +goose Down
DROP TABLE vipps_webhook_events;
DROP INDEX payment_agreements_vipps_reference;
DROP TABLE vipps_charges;
DROP TABLE vipps_agreements;
DROP TABLE vipps_merchants;
