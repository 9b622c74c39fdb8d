-- +goose Up
-- Autogiro (docs/AUTOGIRO.md): the payee's accounts at Bankgirot, payers'
-- mandates, debit and refund transactions, the submission files exported
-- to Bankgirot (kept byte for byte) and the report files imported from it
-- (by their SHA-256, so the same file twice changes nothing).
CREATE TABLE autogiro_accounts (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    organization_id      uuid NOT NULL,
    customer_number      text NOT NULL,
    bankgiro_number      text NOT NULL,
    name                 text NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    deleted_at           timestamptz,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id)
);
CREATE INDEX autogiro_accounts_organization ON autogiro_accounts (tenant_id, organization_id);
CREATE UNIQUE INDEX autogiro_accounts_bankgiro ON autogiro_accounts (tenant_id, bankgiro_number) WHERE deleted_at IS NULL;

CREATE TABLE autogiro_export_files (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    organization_id      uuid NOT NULL,
    file_name            text NOT NULL,
    content              bytea NOT NULL,
    counts               text NOT NULL,
    debit_total          bigint NOT NULL,
    refund_total         bigint NOT NULL,
    created_at           timestamptz NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id)
);

CREATE TABLE autogiro_mandates (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    account_id           uuid NOT NULL,
    subscriber_id        uuid NOT NULL,
    payer_number         text NOT NULL,
    clearing_number      text NOT NULL,
    bank_account_number  text NOT NULL,
    payer_id             text NOT NULL,
    internet_bank        boolean NOT NULL,
    status               text NOT NULL CHECK (status IN ('Created', 'Sent', 'Active', 'Rejected', 'Cancelled')),
    status_code          text NOT NULL,
    cancelled_by         text NOT NULL,
    cancel_pending       boolean NOT NULL,
    released             boolean NOT NULL,
    sent_file_id         uuid,
    cancel_file_id       uuid,
    sent_on              text,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES autogiro_accounts (tenant_id, id),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id)
);
CREATE INDEX autogiro_mandates_account ON autogiro_mandates (tenant_id, account_id, payer_number);
CREATE INDEX autogiro_mandates_subscriber ON autogiro_mandates (tenant_id, subscriber_id);
CREATE INDEX autogiro_mandates_pending ON autogiro_mandates (tenant_id, account_id) WHERE status = 'Created' OR cancel_pending OR NOT released;

CREATE TABLE autogiro_transactions (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    mandate_id           uuid NOT NULL,
    account_id           uuid NOT NULL,
    kind                 text NOT NULL CHECK (kind IN ('Debit', 'Refund')),
    amount               bigint NOT NULL CHECK (amount > 0),
    payment_date         text NOT NULL,
    reference            text NOT NULL,
    invoice_id           uuid,
    status               text NOT NULL CHECK (status IN ('Created', 'Sent', 'Completed', 'Failed', 'Cancelled')),
    status_code          text NOT NULL,
    cancel_pending       boolean NOT NULL,
    settle_pending       boolean NOT NULL,
    payment_id           uuid,
    sent_file_id         uuid,
    cancel_file_id       uuid,
    sent_on              text,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, mandate_id) REFERENCES autogiro_mandates (tenant_id, id),
    FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id)
);
CREATE INDEX autogiro_transactions_mandate ON autogiro_transactions (tenant_id, mandate_id);
CREATE UNIQUE INDEX autogiro_transactions_invoice ON autogiro_transactions (tenant_id, invoice_id)
    WHERE invoice_id IS NOT NULL AND kind = 'Debit' AND status <> 'Cancelled';
CREATE INDEX autogiro_transactions_pending ON autogiro_transactions (tenant_id, account_id)
    WHERE status = 'Created' OR cancel_pending OR settle_pending;

CREATE TABLE autogiro_imports (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    sha256               text NOT NULL,
    kind                 text NOT NULL,
    summary              text NOT NULL,
    created_at           timestamptz NOT NULL,
    UNIQUE (tenant_id, sha256)
);

-- +goose Down
DROP TABLE autogiro_imports;
DROP TABLE autogiro_transactions;
DROP TABLE autogiro_mandates;
DROP TABLE autogiro_export_files;
DROP TABLE autogiro_accounts;
