-- +goose Up
CREATE TABLE tenants (
    id          uuid PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    test        boolean NOT NULL DEFAULT false,
    clock       timestamptz,
    created_at  timestamptz NOT NULL
);

CREATE TABLE api_clients (
    id           text PRIMARY KEY,
    tenant_id    uuid NOT NULL REFERENCES tenants(id),
    name         text NOT NULL,
    secret_hash  text NOT NULL,
    scopes       text NOT NULL,
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX api_clients_tenant ON api_clients (tenant_id);

CREATE TABLE signing_keys (
    id           text PRIMARY KEY,
    algorithm    text NOT NULL,
    private_jwe  text NOT NULL,
    public_jwk   text NOT NULL,
    created_at   timestamptz NOT NULL,
    retired_at   timestamptz
);
-- One active (signing) key per algorithm, so processes starting at once
-- cannot both create a first key.
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (algorithm) WHERE retired_at IS NULL;

CREATE TABLE organizations (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    name                 text NOT NULL,
    organization_number  text NOT NULL,
    country              text NOT NULL,
    currency             text NOT NULL,
    time_zone            text NOT NULL,
    prices_include_vat   boolean NOT NULL,
    logo_url             text NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX organizations_tenant ON organizations (tenant_id, id);

CREATE TABLE idempotency_keys (
    tenant_id     uuid NOT NULL REFERENCES tenants(id),
    key           text NOT NULL,
    method        text NOT NULL,
    path          text NOT NULL,
    request_hash  text NOT NULL,
    status_code   integer,
    location      text NOT NULL DEFAULT '',
    content_type  text NOT NULL DEFAULT '',
    body          bytea,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
