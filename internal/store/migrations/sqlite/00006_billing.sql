-- +goose Up
-- Billing (docs/BILLING.md). Money is in minor units of the row's currency;
-- amounts on the ledger are signed: positive means the subscriber owes more.

-- One billing account per (subscriber, currency), created on first use.
-- The balance is not stored: it is the sum of the account's entries.
CREATE TABLE subscriber_accounts (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants(id),
    subscriber_id  TEXT NOT NULL,
    currency       TEXT NOT NULL,
    created_at     TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, subscriber_id, currency),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id)
);

-- Charges and allowances a merchant adds to an account between invoices.
-- remaining is what the next invoices still have to bill (charge) or
-- apply (allowance); amounts are gross.
CREATE TABLE account_items (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id),
    account_id   TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('Charge', 'Allowance')),
    description  TEXT NOT NULL,
    amount       INTEGER NOT NULL CHECK (amount > 0),
    remaining    INTEGER NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
    vat_rate     TEXT NOT NULL,
    booked_at    TIMESTAMP NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES subscriber_accounts (tenant_id, id)
);
CREATE INDEX account_items_account ON account_items (tenant_id, account_id, id);
CREATE INDEX account_items_open ON account_items (tenant_id, account_id, booked_at, id) WHERE remaining > 0;

-- Invoices: immutable documents (only status changes). Seller, buyer,
-- lines and the VAT summary are JSON snapshots taken at issue.
CREATE TABLE invoices (
    id                    TEXT PRIMARY KEY,
    tenant_id             TEXT NOT NULL REFERENCES tenants(id),
    organization_id       TEXT NOT NULL,
    invoice_number        INTEGER NOT NULL CHECK (invoice_number >= 1),
    payment_demand_id     TEXT NOT NULL,
    account_id            TEXT NOT NULL,
    subscriber_id         TEXT NOT NULL,
    subscription_id       TEXT,
    payment_agreement_id  TEXT,
    currency              TEXT NOT NULL,
    prices_include_vat    BOOLEAN NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('Issued', 'PartiallyPaid', 'Paid', 'Credited')),
    issued_at             TIMESTAMP NOT NULL,
    due_at                TIMESTAMP NOT NULL,
    issue_date            TEXT NOT NULL,
    due_date              TEXT NOT NULL,
    period_start          TIMESTAMP,
    period_end            TIMESTAMP,
    seller                TEXT NOT NULL,
    buyer                 TEXT NOT NULL,
    lines                 TEXT NOT NULL,
    vat_totals            TEXT NOT NULL,
    net                   INTEGER NOT NULL,
    vat                   INTEGER NOT NULL,
    gross                 INTEGER NOT NULL,
    kid                   TEXT NOT NULL,
    created_at            TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, organization_id, invoice_number),
    FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES subscriber_accounts (tenant_id, id),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id),
    FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id),
    FOREIGN KEY (tenant_id, payment_agreement_id) REFERENCES payment_agreements (tenant_id, id)
);
CREATE INDEX invoices_subscriber ON invoices (tenant_id, subscriber_id, id);
CREATE INDEX invoices_subscription ON invoices (tenant_id, subscription_id);

-- Payment demands: the claim to be paid, one per invoice. A period demand
-- (kind Period) exists at most once per subscription period, which makes
-- issuing twice impossible even if the engine erred.
CREATE TABLE payment_demands (
    id                TEXT PRIMARY KEY,
    tenant_id         TEXT NOT NULL REFERENCES tenants(id),
    kind              TEXT NOT NULL CHECK (kind IN ('Period')),
    invoice_id        TEXT NOT NULL,
    account_id        TEXT NOT NULL,
    subscriber_id     TEXT NOT NULL,
    subscription_id   TEXT,
    organization_id   TEXT NOT NULL,
    currency          TEXT NOT NULL,
    amount            INTEGER NOT NULL,
    paid_amount       INTEGER NOT NULL DEFAULT 0,
    credited_amount   INTEGER NOT NULL DEFAULT 0,
    status            TEXT NOT NULL CHECK (status IN ('Open', 'PartiallyPaid', 'Paid', 'Credited')),
    issued_at         TIMESTAMP NOT NULL,
    due_at            TIMESTAMP NOT NULL,
    created_at        TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, invoice_id),
    FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES subscriber_accounts (tenant_id, id)
);
CREATE UNIQUE INDEX payment_demands_period ON payment_demands (tenant_id, subscription_id) WHERE kind = 'Period';
CREATE INDEX payment_demands_subscriber ON payment_demands (tenant_id, subscriber_id, id);

-- The ledger: append-only entries of an account. Part A writes Invoice
-- (+gross), Charge (+amount), Allowance (-amount), ChargeInvoiced (-billed:
-- the charge is now owed through the invoice) and AllowanceApplied
-- (+applied: the allowance now reduces the invoice). Part B adds
-- CreditNote (-) and Payment (-).
CREATE TABLE account_entries (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id),
    account_id  TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('Invoice', 'Charge', 'Allowance', 'ChargeInvoiced', 'AllowanceApplied', 'CreditNote', 'Payment')),
    amount      INTEGER NOT NULL,
    invoice_id  TEXT,
    item_id     TEXT,
    booked_at   TIMESTAMP NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    FOREIGN KEY (tenant_id, account_id) REFERENCES subscriber_accounts (tenant_id, id),
    FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
    FOREIGN KEY (tenant_id, item_id) REFERENCES account_items (tenant_id, id)
);
CREATE INDEX account_entries_account ON account_entries (tenant_id, account_id, id);
