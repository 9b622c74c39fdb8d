-- +goose Up
-- Staff users (docs/CONSOLE.md, "Staff users and sessions"): the merchant's
-- own people who log in to the console, a user set of their own per tenant,
-- apart from the subscribers' users (00024) and the API's machine clients.
-- internal/staff owns these tables and their SQL.
CREATE TABLE staff_users (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    -- The address as given, and its lower-cased copy (folded in Go, so
    -- both engines compare alike) that uniqueness and logins use.
    email                text NOT NULL,
    email_key            text NOT NULL,
    name                 text NOT NULL DEFAULT '',
    -- What the user may do in the console; the check keeps a value Go
    -- does not know from ever being read back.
    role                 text NOT NULL CHECK (role IN ('admin', 'support', 'finance')),
    -- An argon2id PHC string (internal/password); empty until the user
    -- sets one through a set-password link.
    password_hash        text NOT NULL DEFAULT '',
    disabled             boolean NOT NULL DEFAULT false,
    -- The TOTP shared secret (base32) once enrolment is confirmed, and the
    -- one being enrolled until the first code confirms it; empty when
    -- none. It is kept as it is because checking a code needs it: whoever
    -- reads this table can make codes, as with any TOTP server.
    totp_secret          text NOT NULL DEFAULT '',
    totp_pending_secret  text NOT NULL DEFAULT '',
    -- The TOTP time step (Unix time / 30 s) of the last code accepted: a
    -- code is good for one use, so one seen over a shoulder or replayed
    -- within its minute of validity is refused.
    totp_last_step       bigint NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
-- The target of the sessions' and links' foreign keys, so that a row can
-- only point at a user of its own tenant.
CREATE UNIQUE INDEX staff_users_tenant ON staff_users (tenant_id, id);
-- One user per address in a tenant; logins and the list (ordered by
-- address) read it.
CREATE UNIQUE INDEX staff_users_email ON staff_users (tenant_id, email_key);

-- A console login. Only the SHA-256 of the cookie's token is kept, so a
-- copy of the database opens no session. The CSRF token is kept as it is:
-- the console puts it in its forms, and it is worth nothing without the
-- cookie. second_factor_pending: the password was right, the TOTP code is
-- still to come; the console grants nothing until it is false. Idle and
-- absolute timeouts are measured from last_seen_at and created_at.
CREATE TABLE staff_sessions (
    id                     uuid PRIMARY KEY,
    token_hash             text NOT NULL UNIQUE,
    tenant_id              uuid NOT NULL REFERENCES tenants(id),
    user_id                uuid NOT NULL,
    csrf                   text NOT NULL,
    second_factor_pending  boolean NOT NULL,
    created_at             timestamptz NOT NULL,
    last_seen_at           timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, user_id) REFERENCES staff_users (tenant_id, id) ON DELETE CASCADE
);
-- Ending a user's sessions (disabled, new password).
CREATE INDEX staff_sessions_user ON staff_sessions (tenant_id, user_id);
-- The sweep of expired sessions.
CREATE INDEX staff_sessions_seen ON staff_sessions (last_seen_at);
CREATE INDEX staff_sessions_created ON staff_sessions (created_at);

-- A set-password link, e-mailed or printed by `kadens user create`: single
-- use, until expires_at, and only the newest unused one of a user works.
-- Only the SHA-256 of the link's token is kept. A used link stays (used)
-- until the sweep, so using it twice is told apart from a typo.
CREATE TABLE staff_password_links (
    token_hash  text PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants(id),
    user_id     uuid NOT NULL,
    expires_at  timestamptz NOT NULL,
    used        boolean NOT NULL DEFAULT false,
    FOREIGN KEY (tenant_id, user_id) REFERENCES staff_users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX staff_password_links_user ON staff_password_links (tenant_id, user_id);
CREATE INDEX staff_password_links_expiry ON staff_password_links (expires_at);

-- +goose Down
DROP TABLE staff_password_links;
DROP TABLE staff_sessions;
DROP TABLE staff_users;
