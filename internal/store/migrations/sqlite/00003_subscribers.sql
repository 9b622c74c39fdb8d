-- +goose Up
-- Per-tenant counters: one row per (tenant, scope), e.g. the subscriber
-- number series or, later, an organization's invoice number series. Values
-- are taken inside the transaction that uses them (see counter.go).
CREATE TABLE counters (
    tenant_id  TEXT NOT NULL REFERENCES tenants(id),
    scope      TEXT NOT NULL,
    value      INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, scope)
);

CREATE TABLE subscribers (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    subscriber_number    INTEGER NOT NULL CHECK (subscriber_number >= 1),
    -- NULL when the client gave none, so that uniqueness binds given ids only.
    external_id          TEXT,
    name                 TEXT NOT NULL,
    email                TEXT NOT NULL,
    phone                TEXT NOT NULL,
    address_line1        TEXT NOT NULL,
    address_line2        TEXT NOT NULL,
    address_postal_code  TEXT NOT NULL,
    address_city         TEXT NOT NULL,
    address_country      TEXT NOT NULL,
    country              TEXT NOT NULL,
    -- JSON array of contacts (role, name, email, phone, address).
    contacts             TEXT NOT NULL,
    -- Lower-cased copies (folded in Go, identically on both engines) for the
    -- case-insensitive email and name filters.
    email_key            TEXT NOT NULL,
    name_key             TEXT NOT NULL,
    created_at           TIMESTAMP NOT NULL,
    updated_at           TIMESTAMP NOT NULL
);
CREATE INDEX subscribers_tenant ON subscribers (tenant_id, id);
CREATE UNIQUE INDEX subscribers_number ON subscribers (tenant_id, subscriber_number);
CREATE UNIQUE INDEX subscribers_external_id ON subscribers (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX subscribers_email ON subscribers (tenant_id, email_key);
