-- +goose Up
-- Per-tenant counters: one row per (tenant, scope), e.g. the subscriber
-- number series or, later, an organization's invoice number series. Values
-- are taken inside the transaction that uses them (see counter.go).
CREATE TABLE counters (
    tenant_id  uuid NOT NULL REFERENCES tenants(id),
    scope      text NOT NULL,
    value      bigint NOT NULL,
    PRIMARY KEY (tenant_id, scope)
);

CREATE TABLE subscribers (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    subscriber_number    bigint NOT NULL CHECK (subscriber_number >= 1),
    -- NULL when the client gave none, so that uniqueness binds given ids only.
    external_id          text,
    name                 text NOT NULL,
    email                text NOT NULL,
    phone                text NOT NULL,
    address_line1        text NOT NULL,
    address_line2        text NOT NULL,
    address_postal_code  text NOT NULL,
    address_city         text NOT NULL,
    address_country      text NOT NULL,
    country              text NOT NULL,
    -- JSON array of contacts (role, name, email, phone, address).
    contacts             text NOT NULL,
    -- Lower-cased copies (folded in Go, identically on both engines) for the
    -- case-insensitive email and name filters.
    email_key            text NOT NULL,
    name_key             text NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX subscribers_tenant ON subscribers (tenant_id, id);
CREATE UNIQUE INDEX subscribers_number ON subscribers (tenant_id, subscriber_number);
CREATE UNIQUE INDEX subscribers_external_id ON subscribers (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX subscribers_email ON subscribers (tenant_id, email_key);
