-- +goose Up
-- AvtaleGiro (docs/AVTALEGIRO.md): the payee's accounts at the bank, the
-- organizations that collect on them, payers' mandates, claims and the OCR
-- giro files exchanged with the bank. Accounts and mandates are deleted
-- softly: claims and files keep referring to them.
CREATE TABLE avtalegiro_accounts (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    name                 TEXT NOT NULL,
    bank_account_number  TEXT NOT NULL,
    customer_unit_id     TEXT NOT NULL,
    kid_algorithm        TEXT NOT NULL CHECK (kid_algorithm IN ('MOD10', 'MOD11')),
    kid_length           INTEGER NOT NULL CHECK (kid_length BETWEEN 2 AND 25),
    lead_days            INTEGER NOT NULL CHECK (lead_days BETWEEN 0 AND 30),
    endpoint_url         TEXT NOT NULL,
    transmission_serial  INTEGER NOT NULL DEFAULT 0,
    assignment_serial    INTEGER NOT NULL DEFAULT 0,
    created_at           TIMESTAMP NOT NULL,
    updated_at           TIMESTAMP NOT NULL,
    deleted_at           TIMESTAMP,
    UNIQUE (tenant_id, id)
);
-- One live account per bank account number and tenant.
CREATE UNIQUE INDEX avtalegiro_accounts_number ON avtalegiro_accounts (tenant_id, bank_account_number) WHERE deleted_at IS NULL;

CREATE TABLE avtalegiro_account_organizations (
    tenant_id        TEXT NOT NULL REFERENCES tenants(id),
    account_id       TEXT NOT NULL,
    organization_id  TEXT NOT NULL,
    created_at       TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, account_id, organization_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES avtalegiro_accounts (tenant_id, id),
    FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id)
);
CREATE INDEX avtalegiro_account_organizations_org ON avtalegiro_account_organizations (tenant_id, organization_id);

-- A payer's mandate (fast betalingsoppdrag) on an account, by KID. notify:
-- the payer wants notice from the bank (claims of type 21), else the payee
-- notifies (type 02). amount_limit in øre; null is no limit.
CREATE TABLE avtalegiro_mandates (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants(id),
    account_id     TEXT NOT NULL,
    kid            TEXT NOT NULL,
    subscriber_id  TEXT,
    notify         BOOLEAN NOT NULL,
    amount_limit   INTEGER CHECK (amount_limit > 0),
    source         TEXT NOT NULL CHECK (source IN ('Api', 'Bank')),
    created_at     TIMESTAMP NOT NULL,
    updated_at     TIMESTAMP NOT NULL,
    deleted_at     TIMESTAMP,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES avtalegiro_accounts (tenant_id, id),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id)
);
CREATE UNIQUE INDEX avtalegiro_mandates_kid ON avtalegiro_mandates (tenant_id, account_id, kid) WHERE deleted_at IS NULL;
CREATE INDEX avtalegiro_mandates_subscriber ON avtalegiro_mandates (tenant_id, subscriber_id);

-- Files exchanged with the bank: claim files Kadens writes (Out) and the
-- mandate and OCR giro files it reads (In). An incoming file is imported
-- once (sha256); an outgoing one is submitted under its transmission number.
CREATE TABLE avtalegiro_files (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    account_id           TEXT,
    direction            TEXT NOT NULL CHECK (direction IN ('Out', 'In')),
    kind                 TEXT NOT NULL CHECK (kind IN ('Claims', 'Mandates', 'Payments')),
    transmission_number  TEXT NOT NULL,
    sha256               TEXT NOT NULL,
    content              BLOB NOT NULL,
    transactions         INTEGER NOT NULL,
    created_at           TIMESTAMP NOT NULL,
    submitted_at         TIMESTAMP,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES avtalegiro_accounts (tenant_id, id)
);
CREATE UNIQUE INDEX avtalegiro_files_in ON avtalegiro_files (tenant_id, sha256) WHERE direction = 'In';
CREATE UNIQUE INDEX avtalegiro_files_out ON avtalegiro_files (tenant_id, account_id, transmission_number) WHERE direction = 'Out';

-- A claim on a mandate, due on due_date (YYYY-MM-DD). status: Scheduled
-- (not yet in a file), Sent (in a claim file), CancellationPending (to be
-- cancelled in the next file), Cancelled, Paid. invoice_id: the invoice it
-- collects (one live claim per invoice).
CREATE TABLE avtalegiro_claims (
    id                    TEXT PRIMARY KEY,
    tenant_id             TEXT NOT NULL REFERENCES tenants(id),
    account_id            TEXT NOT NULL,
    mandate_id            TEXT NOT NULL,
    transaction_id        TEXT NOT NULL,
    invoice_id            TEXT,
    kid                   TEXT NOT NULL,
    amount                INTEGER NOT NULL CHECK (amount > 0),
    due_date              TEXT NOT NULL,
    notify                BOOLEAN NOT NULL,
    short_name            TEXT NOT NULL,
    external_reference    TEXT NOT NULL,
    notice_lines          TEXT NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('Scheduled', 'Sent', 'CancellationPending', 'Cancelled', 'Paid')),
    claim_file_id         TEXT,
    cancellation_file_id  TEXT,
    payment_id            TEXT,
    created_at            TIMESTAMP NOT NULL,
    updated_at            TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, transaction_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES avtalegiro_accounts (tenant_id, id),
    FOREIGN KEY (tenant_id, mandate_id) REFERENCES avtalegiro_mandates (tenant_id, id),
    FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
    FOREIGN KEY (tenant_id, claim_file_id) REFERENCES avtalegiro_files (tenant_id, id),
    FOREIGN KEY (tenant_id, cancellation_file_id) REFERENCES avtalegiro_files (tenant_id, id)
);
CREATE UNIQUE INDEX avtalegiro_claims_invoice ON avtalegiro_claims (tenant_id, invoice_id) WHERE invoice_id IS NOT NULL;
CREATE INDEX avtalegiro_claims_mandate ON avtalegiro_claims (tenant_id, mandate_id, id);
CREATE INDEX avtalegiro_claims_kid ON avtalegiro_claims (tenant_id, kid);
-- What the account's next file sends; a sent claim leaves the index.
CREATE INDEX avtalegiro_claims_due ON avtalegiro_claims (tenant_id, account_id, due_date, id) WHERE status = 'Scheduled';
CREATE INDEX avtalegiro_claims_cancelling ON avtalegiro_claims (tenant_id, account_id) WHERE status = 'CancellationPending';

-- OCR giro payments read from the bank's files, settled through the
-- payment path (store.RecordPayment) after the file is stored: reference
-- is the payment's provider reference, so settling twice changes nothing.
CREATE TABLE avtalegiro_payments (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id),
    file_id      TEXT NOT NULL,
    reference    TEXT NOT NULL,
    kid          TEXT NOT NULL,
    amount       INTEGER NOT NULL,
    paid_on      TEXT NOT NULL,
    line         INTEGER NOT NULL,
    payment_id   TEXT,
    problem      TEXT,
    UNIQUE (tenant_id, reference),
    FOREIGN KEY (tenant_id, file_id) REFERENCES avtalegiro_files (tenant_id, id)
);
CREATE INDEX avtalegiro_payments_open ON avtalegiro_payments (tenant_id, file_id) WHERE payment_id IS NULL AND problem IS NULL;
