-- +goose Up
-- Autogiro (docs/AUTOGIRO.md): the payee's accounts at Bankgirot, payers'
-- mandates, debit and refund transactions, the submission files exported
-- to Bankgirot (kept byte for byte) and the report files imported from it
-- (by their SHA-256, so the same file twice changes nothing).
CREATE TABLE autogiro_accounts (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    organization_id      TEXT NOT NULL,
    customer_number      TEXT NOT NULL,
    bankgiro_number      TEXT NOT NULL,
    name                 TEXT NOT NULL,
    created_at           TIMESTAMP NOT NULL,
    updated_at           TIMESTAMP NOT NULL,
    deleted_at           TIMESTAMP,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id)
);
CREATE INDEX autogiro_accounts_organization ON autogiro_accounts (tenant_id, organization_id);
CREATE UNIQUE INDEX autogiro_accounts_bankgiro ON autogiro_accounts (tenant_id, bankgiro_number) WHERE deleted_at IS NULL;

CREATE TABLE autogiro_export_files (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    organization_id      TEXT NOT NULL,
    file_name            TEXT NOT NULL,
    content              BLOB NOT NULL,
    counts               TEXT NOT NULL,
    debit_total          INTEGER NOT NULL,
    refund_total         INTEGER NOT NULL,
    created_at           TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id)
);

CREATE TABLE autogiro_mandates (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    account_id           TEXT NOT NULL,
    subscriber_id        TEXT NOT NULL,
    payer_number         TEXT NOT NULL,
    clearing_number      TEXT NOT NULL,
    bank_account_number  TEXT NOT NULL,
    payer_id             TEXT NOT NULL,
    internet_bank        BOOLEAN NOT NULL,
    status               TEXT NOT NULL CHECK (status IN ('Created', 'Sent', 'Active', 'Rejected', 'Cancelled')),
    status_code          TEXT NOT NULL,
    cancelled_by         TEXT NOT NULL,
    cancel_pending       BOOLEAN NOT NULL,
    released             BOOLEAN NOT NULL,
    sent_file_id         TEXT,
    cancel_file_id       TEXT,
    sent_on              TEXT,
    created_at           TIMESTAMP NOT NULL,
    updated_at           TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES autogiro_accounts (tenant_id, id),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id)
);
CREATE INDEX autogiro_mandates_account ON autogiro_mandates (tenant_id, account_id, payer_number);
CREATE INDEX autogiro_mandates_subscriber ON autogiro_mandates (tenant_id, subscriber_id);
CREATE INDEX autogiro_mandates_pending ON autogiro_mandates (tenant_id, account_id) WHERE status = 'Created' OR cancel_pending OR NOT released;

CREATE TABLE autogiro_transactions (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    mandate_id           TEXT NOT NULL,
    account_id           TEXT NOT NULL,
    kind                 TEXT NOT NULL CHECK (kind IN ('Debit', 'Refund')),
    amount               INTEGER NOT NULL CHECK (amount > 0),
    payment_date         TEXT NOT NULL,
    reference            TEXT NOT NULL,
    invoice_id           TEXT,
    status               TEXT NOT NULL CHECK (status IN ('Created', 'Sent', 'Completed', 'Failed', 'Cancelled')),
    status_code          TEXT NOT NULL,
    cancel_pending       BOOLEAN NOT NULL,
    settle_pending       BOOLEAN NOT NULL,
    payment_id           TEXT,
    sent_file_id         TEXT,
    cancel_file_id       TEXT,
    sent_on              TEXT,
    created_at           TIMESTAMP NOT NULL,
    updated_at           TIMESTAMP NOT NULL,
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
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    sha256               TEXT NOT NULL,
    kind                 TEXT NOT NULL,
    summary              TEXT NOT NULL,
    created_at           TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, sha256)
);

-- +goose Down
DROP TABLE autogiro_imports;
DROP TABLE autogiro_transactions;
DROP TABLE autogiro_mandates;
DROP TABLE autogiro_export_files;
DROP TABLE autogiro_accounts;
