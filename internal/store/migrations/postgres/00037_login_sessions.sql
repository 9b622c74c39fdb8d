-- +goose Up
-- A browser's login session at the identity provider (docs/LOGIN.md): set
-- by a successful password check, it lets a later /authorize of the same
-- tenant skip the form (single sign-on) until it expires or the user logs
-- out. Only the SHA-256 of the cookie's token is kept. auth_time is when
-- the password was checked: the auth_time of every token it leads to.
CREATE TABLE login_sessions (
    token_hash         text PRIMARY KEY,
    tenant_id          uuid NOT NULL REFERENCES tenants(id),
    user_id            uuid NOT NULL REFERENCES subscriber_users(id) ON DELETE CASCADE,
    auth_time          timestamptz NOT NULL,
    expires_at         timestamptz NOT NULL
);
CREATE INDEX login_sessions_user ON login_sessions (user_id);
CREATE INDEX login_sessions_expiry ON login_sessions (expires_at);

-- +goose Down
DROP TABLE login_sessions;
