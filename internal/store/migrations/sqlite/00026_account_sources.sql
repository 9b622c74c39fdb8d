-- +goose Up
-- Account sources and identity-provider accounts (docs/AUTHORIZATIONS.md).
--
-- An account source gives a subscriber user the access of a subscriber
-- account: the subscriptions of the account's subscriber in the account's
-- currency (the subscriptions that account bills).
CREATE TABLE account_sources (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id),
    user_id     TEXT NOT NULL,
    account_id  TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, user_id, account_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES subscriber_users (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES subscriber_accounts (tenant_id, id)
);
CREATE INDEX account_sources_account ON account_sources (tenant_id, account_id);

-- An identity-provider account binds an identifier at an identity
-- provider to a subscriber user. kind 'idp-a' is Kadens' own directory: the
-- identifier is another login name of the user (key: lower-cased).
-- kind 'idp-b' is a trusted external OpenID Connect issuer: the identifier
-- is the token's subject at issuer (key: as given, subjects are
-- case-sensitive); a token of that issuer and subject acts as the user on
-- the entitlement endpoint. The path of the API names an account by kind
-- and identifier, so (tenant, kind, key) is unique.
CREATE TABLE identity_provider_accounts (
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants(id),
    kind            TEXT NOT NULL CHECK (kind IN ('idp-a', 'idp-b')),
    identifier      TEXT NOT NULL,
    identifier_key  TEXT NOT NULL,
    -- The issuer of an idp-b account; '' for idp-a.
    issuer          TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, kind, identifier_key),
    FOREIGN KEY (tenant_id, user_id) REFERENCES subscriber_users (tenant_id, id)
);
CREATE INDEX identity_provider_accounts_user ON identity_provider_accounts (tenant_id, user_id);

-- The entitlement query reads a subscriber's periods that have not ended
-- yet: with period_end in the key it skips the ended ones (a monthly
-- subscriber has twelve more every year).
CREATE INDEX subscriptions_subscriber_end ON subscriptions (tenant_id, subscriber_id, period_end);

-- +goose Down
DROP INDEX subscriptions_subscriber_end;
DROP TABLE identity_provider_accounts;
DROP TABLE account_sources;
