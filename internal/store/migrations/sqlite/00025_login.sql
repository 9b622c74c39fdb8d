-- +goose Up
-- Subscriber login at the identity provider (docs/LOGIN.md).

-- Login clients: the relying parties (a newspaper's web site, an app) that
-- send subscribers to the login page. One tenant each; only a bcrypt hash
-- of the secret is kept. Lists are space-separated (URIs cannot hold
-- spaces): redirect and post-logout addresses are compared exactly.
CREATE TABLE login_clients (
    id                 TEXT PRIMARY KEY,
    tenant_id          TEXT NOT NULL REFERENCES tenants(id),
    name               TEXT NOT NULL,
    secret_hash        TEXT NOT NULL,
    redirect_uris      TEXT NOT NULL,
    post_logout_uris   TEXT NOT NULL,
    scopes             TEXT NOT NULL,
    created_at         TIMESTAMP NOT NULL
);
CREATE INDEX login_clients_tenant ON login_clients (tenant_id);

-- A login request is one authorization request from its /authorize until
-- its code is exchanged (or it expires): the login session the page works
-- in (csrf binds the form to it), then, once the user logged in (user_id),
-- the code (only its SHA-256, code_hash) that may be exchanged once.
CREATE TABLE login_requests (
    id                 TEXT PRIMARY KEY,
    tenant_id          TEXT NOT NULL REFERENCES tenants(id),
    client_id          TEXT NOT NULL REFERENCES login_clients(id) ON DELETE CASCADE,
    redirect_uri       TEXT NOT NULL,
    state              TEXT NOT NULL,
    nonce              TEXT NOT NULL,
    scopes             TEXT NOT NULL,
    response_mode      TEXT NOT NULL,
    code_challenge     TEXT NOT NULL,
    challenge_method   TEXT NOT NULL,
    org_name           TEXT NOT NULL,
    language           TEXT NOT NULL,
    csrf               TEXT NOT NULL,
    user_id            TEXT REFERENCES subscriber_users(id) ON DELETE CASCADE,
    auth_time          TIMESTAMP,
    code_hash          TEXT UNIQUE,
    code_used          BOOLEAN NOT NULL DEFAULT FALSE,
    created_at         TIMESTAMP NOT NULL,
    expires_at         TIMESTAMP NOT NULL
);
CREATE INDEX login_requests_expiry ON login_requests (expires_at);

-- Refresh tokens (only their SHA-256 is kept). Rotating: using one marks it
-- used and issues its successor; a used or revoked token is refused.
CREATE TABLE refresh_tokens (
    token_hash         TEXT PRIMARY KEY,
    tenant_id          TEXT NOT NULL REFERENCES tenants(id),
    client_id          TEXT NOT NULL REFERENCES login_clients(id) ON DELETE CASCADE,
    user_id            TEXT NOT NULL REFERENCES subscriber_users(id) ON DELETE CASCADE,
    scopes             TEXT NOT NULL,
    auth_time          TIMESTAMP NOT NULL,
    created_at         TIMESTAMP NOT NULL,
    expires_at         TIMESTAMP NOT NULL,
    used               BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id, client_id);

-- Password reset links (only the token's SHA-256 is kept): single use,
-- short-lived.
CREATE TABLE password_resets (
    token_hash         TEXT PRIMARY KEY,
    tenant_id          TEXT NOT NULL REFERENCES tenants(id),
    user_id            TEXT NOT NULL REFERENCES subscriber_users(id) ON DELETE CASCADE,
    created_at         TIMESTAMP NOT NULL,
    expires_at         TIMESTAMP NOT NULL,
    used               BOOLEAN NOT NULL DEFAULT FALSE
);

-- +goose Down
DROP TABLE password_resets;
DROP TABLE refresh_tokens;
DROP TABLE login_requests;
DROP TABLE login_clients;
