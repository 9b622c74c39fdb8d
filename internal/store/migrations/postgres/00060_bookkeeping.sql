-- +goose Up
-- The general ledger (docs/BOOKKEEPING.md): internal/bookkeeping owns these
-- tables and their SQL. Nothing here is edited by hand: entries are posted
-- from billing documents by the bookkeeping outbox consumer and by the
-- recognition run.

-- An organization's chart of accounts, VAT codes and mapping rules, set
-- whole through the API (one JSON document: it is read whole by every
-- posting and every export, and replaced whole by the merchant).
CREATE TABLE books_charts (
    tenant_id        uuid NOT NULL REFERENCES tenants(id),
    organization_id  uuid NOT NULL,
    chart            jsonb NOT NULL,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, organization_id)
);

-- A journal entry: numbered gap-free per (organization, journal) from the
-- store's counters; one per source document (the unique key is what makes
-- a redelivered event post nothing).
CREATE TABLE books_entries (
    id               uuid PRIMARY KEY,
    tenant_id        uuid NOT NULL REFERENCES tenants(id),
    organization_id  uuid NOT NULL,
    journal          text NOT NULL,
    number           bigint NOT NULL,
    accounting_date  text NOT NULL,
    source_kind      text NOT NULL,
    source_id        text NOT NULL,
    description      text NOT NULL,
    -- Why the entry is dated otherwise than its document (a closed period).
    note             text NOT NULL DEFAULT '',
    posted_at        timestamptz NOT NULL,
    UNIQUE (tenant_id, organization_id, journal, number),
    UNIQUE (tenant_id, organization_id, source_kind, source_id)
);
CREATE INDEX books_entries_date ON books_entries (tenant_id, organization_id, accounting_date);

-- An entry's lines: amount in minor units, positive a debit, negative a credit.
CREATE TABLE books_lines (
    tenant_id    uuid NOT NULL REFERENCES tenants(id),
    entry_id     uuid NOT NULL REFERENCES books_entries(id),
    line_no      integer NOT NULL,
    account      text NOT NULL,
    amount       bigint NOT NULL,
    currency     text NOT NULL,
    vat_rate     text NOT NULL DEFAULT '',
    tax_code     text NOT NULL DEFAULT '',
    product_id   text NOT NULL DEFAULT '',
    customer_id  text NOT NULL DEFAULT '',
    PRIMARY KEY (entry_id, line_no)
);
CREATE INDEX books_lines_account ON books_lines (tenant_id, account);

-- What an invoice line for a service period left in unearned revenue, and
-- how much of it recognition runs have moved to revenue (recognized) or
-- credit notes have reversed; next_date is the first day not yet recognized.
CREATE TABLE books_deferrals (
    tenant_id         uuid NOT NULL REFERENCES tenants(id),
    organization_id   uuid NOT NULL,
    invoice_id        uuid NOT NULL,
    line_number       integer NOT NULL,
    product_id        text NOT NULL DEFAULT '',
    vat_rate          text NOT NULL DEFAULT '',
    currency          text NOT NULL,
    revenue_account   text NOT NULL,
    deferred_account  text NOT NULL,
    start_date        text NOT NULL,
    end_date          text NOT NULL,
    amount            bigint NOT NULL,
    recognized        bigint NOT NULL DEFAULT 0,
    reversed          bigint NOT NULL DEFAULT 0,
    next_date         text NOT NULL,
    PRIMARY KEY (tenant_id, invoice_id, line_number)
);
CREATE INDEX books_deferrals_open ON books_deferrals (tenant_id, organization_id, next_date);

-- Closed accounting periods (calendar months) of an organization.
CREATE TABLE books_closed_periods (
    tenant_id        uuid NOT NULL REFERENCES tenants(id),
    organization_id  uuid NOT NULL,
    month            text NOT NULL,
    closed_at        timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, organization_id, month)
);

-- +goose Down
DROP TABLE books_closed_periods;
DROP TABLE books_deferrals;
DROP TABLE books_lines;
DROP TABLE books_entries;
DROP TABLE books_charts;
