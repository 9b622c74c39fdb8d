-- +goose Up
-- Subscriber login at the identity provider (docs/LOGIN.md).

-- Login clients: the relying parties (a newspaper's web site, an app) that
-- send subscribers to the login page. One tenant each; only a bcrypt hash
-- of the secret is kept. Lists are space-separated (URIs cannot hold
-- spaces): redirect and post-logout addresses are compared exactly.
CREATE TABLE login_clients (
    id                 text PRIMARY KEY,
    tenant_id          uuid NOT NULL REFERENCES tenants(id),
    name               text NOT NULL,
    secret_hash        text NOT NULL,
    redirect_uris      text NOT NULL,
    post_logout_uris   text NOT NULL,
    scopes             text NOT NULL,
    created_at         timestamptz NOT NULL
);
CREATE INDEX login_clients_tenant ON login_clients (tenant_id);

-- A login request is one authorization request from its /authorize until
-- its code is exchanged (or it expires): the login session the page works
-- in (csrf binds the form to it), then, once the user logged in (user_id),
-- the code (only its SHA-256, code_hash) that may be exchanged once.
CREATE TABLE login_requests (
    id                 text PRIMARY KEY,
    tenant_id          uuid NOT NULL REFERENCES tenants(id),
    client_id          text NOT NULL REFERENCES login_clients(id) ON DELETE CASCADE,
    redirect_uri       text NOT NULL,
    state              text NOT NULL,
    nonce              text NOT NULL,
    scopes             text NOT NULL,
    response_mode      text NOT NULL,
    code_challenge     text NOT NULL,
    challenge_method   text NOT NULL,
    org_name           text NOT NULL,
    language           text NOT NULL,
    csrf               text NOT NULL,
    user_id            uuid REFERENCES subscriber_users(id) ON DELETE CASCADE,
    auth_time          timestamptz,
    code_hash          text UNIQUE,
    code_used          boolean NOT NULL DEFAULT FALSE,
    created_at         timestamptz NOT NULL,
    expires_at         timestamptz NOT NULL
);
CREATE INDEX login_requests_expiry ON login_requests (expires_at);

-- Refresh tokens (only their SHA-256 is kept). Rotating: using one marks it
-- used and issues its successor; a used or revoked token is refused.
CREATE TABLE refresh_tokens (
    token_hash         text PRIMARY KEY,
    tenant_id          uuid NOT NULL REFERENCES tenants(id),
    client_id          text NOT NULL REFERENCES login_clients(id) ON DELETE CASCADE,
    user_id            uuid NOT NULL REFERENCES subscriber_users(id) ON DELETE CASCADE,
    scopes             text NOT NULL,
    auth_time          timestamptz NOT NULL,
    created_at         timestamptz NOT NULL,
    expires_at         timestamptz NOT NULL,
    used               boolean NOT NULL DEFAULT FALSE
);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id, client_id);

-- Password reset links (only the token's SHA-256 is kept): single use,
-- short-lived.
CREATE TABLE password_resets (
    token_hash         text PRIMARY KEY,
    tenant_id          uuid NOT NULL REFERENCES tenants(id),
    user_id            uuid NOT NULL REFERENCES subscriber_users(id) ON DELETE CASCADE,
    created_at         timestamptz NOT NULL,
    expires_at         timestamptz NOT NULL,
    used               boolean NOT NULL DEFAULT FALSE
);

-- +goose Down
DROP TABLE password_resets;
DROP TABLE refresh_tokens;
DROP TABLE login_requests;
DROP TABLE login_clients;
