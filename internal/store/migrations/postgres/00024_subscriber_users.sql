-- +goose Up
-- Subscriber users (docs/AUTHORIZATIONS.md): the people who log in at the
-- identity provider, a user set of their own per tenant, separate from the
-- administrators' and machines' clients. A user may be linked to one
-- subscriber, to none, or (through account sources, 00026) to subscriber
-- accounts.
CREATE TABLE subscriber_users (
    id             uuid PRIMARY KEY,
    tenant_id      uuid NOT NULL REFERENCES tenants(id),
    -- The address as given, and its lower-cased copy (folded in Go, the
    -- same on both engines) that uniqueness and look-ups use.
    email          text NOT NULL,
    email_key      text NOT NULL,
    -- An argon2id PHC string ($argon2id$v=19$m=...,t=...,p=...$salt$hash);
    -- empty for a user who cannot log in with a password (e.g. one who only
    -- logs in through an external identity provider).
    password_hash  text NOT NULL,
    disabled       boolean NOT NULL DEFAULT false,
    -- The subscriber the user acts for. Deleting the subscriber unlinks the
    -- user (the user stays); the store checks that the subscriber is the
    -- user's tenant's when it links.
    subscriber_id  uuid REFERENCES subscribers(id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
-- The target of account sources' and identity-provider accounts' foreign
-- keys, and the tenant-scoped look-up by id.
CREATE UNIQUE INDEX subscriber_users_tenant ON subscriber_users (tenant_id, id);
CREATE UNIQUE INDEX subscriber_users_email ON subscriber_users (tenant_id, email_key);
CREATE INDEX subscriber_users_subscriber ON subscriber_users (tenant_id, subscriber_id) WHERE subscriber_id IS NOT NULL;

-- +goose Down
DROP TABLE subscriber_users;
