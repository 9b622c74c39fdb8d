-- +goose Up
CREATE TABLE tenants (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    test        BOOLEAN NOT NULL DEFAULT FALSE,
    clock       TIMESTAMP,
    created_at  TIMESTAMP NOT NULL
);

CREATE TABLE api_clients (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id),
    name         TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    revoked_at   TIMESTAMP
);
CREATE INDEX api_clients_tenant ON api_clients (tenant_id);

CREATE TABLE signing_keys (
    id           TEXT PRIMARY KEY,
    algorithm    TEXT NOT NULL,
    private_jwe  TEXT NOT NULL,
    public_jwk   TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    retired_at   TIMESTAMP
);
-- One active (signing) key per algorithm, so processes starting at once
-- cannot both create a first key.
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (algorithm) WHERE retired_at IS NULL;

CREATE TABLE organizations (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    name                 TEXT NOT NULL,
    organization_number  TEXT NOT NULL,
    country              TEXT NOT NULL,
    currency             TEXT NOT NULL,
    time_zone            TEXT NOT NULL,
    prices_include_vat   BOOLEAN NOT NULL,
    logo_url             TEXT NOT NULL,
    created_at           TIMESTAMP NOT NULL,
    updated_at           TIMESTAMP NOT NULL
);
CREATE INDEX organizations_tenant ON organizations (tenant_id, id);

CREATE TABLE idempotency_keys (
    tenant_id     TEXT NOT NULL REFERENCES tenants(id),
    key           TEXT NOT NULL,
    method        TEXT NOT NULL,
    path          TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    status_code   INTEGER,
    location      TEXT NOT NULL DEFAULT '',
    content_type  TEXT NOT NULL DEFAULT '',
    body          BLOB,
    created_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
