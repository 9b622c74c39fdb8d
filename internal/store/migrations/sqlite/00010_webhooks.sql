-- +goose Up
-- Webhooks (docs/WEBHOOKS.md): registrations, the outbox marker on events,
-- deliveries and their attempts. See the PostgreSQL migration for notes.

-- New events are marked 1 by default; events recorded before webhooks
-- existed are unmarked (SQLite fills existing rows with the default, hence
-- the UPDATE).
ALTER TABLE events ADD COLUMN dispatch_pending INTEGER DEFAULT 1;
UPDATE events SET dispatch_pending = NULL;
CREATE INDEX events_dispatch_pending ON events (id) WHERE dispatch_pending IS NOT NULL;

CREATE TABLE webhooks (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants(id),
    url                  TEXT NOT NULL,
    event_types          TEXT NOT NULL,
    format               TEXT NOT NULL CHECK (format IN ('EventGrid', 'CloudEvents')),
    secret               TEXT NOT NULL,
    status               TEXT NOT NULL CHECK (status IN ('Pending', 'Validated')),
    disable_validation   BOOLEAN NOT NULL,
    validation_token     TEXT,
    validation_issued_at TIMESTAMP,
    validated_at         TIMESTAMP,
    created_at           TIMESTAMP NOT NULL,
    updated_at           TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id)
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id, id);
CREATE UNIQUE INDEX webhooks_validation_token ON webhooks (validation_token) WHERE validation_token IS NOT NULL;

CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL,
    webhook_id      TEXT NOT NULL,
    event_ids       TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    retry_base      INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP,
    created_at      TIMESTAMP NOT NULL,
    completed_at    TIMESTAMP,
    FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (tenant_id, webhook_id, id);

CREATE TABLE webhook_attempts (
    delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    number       INTEGER NOT NULL,
    attempted_at TIMESTAMP NOT NULL,
    status_code  INTEGER,
    latency_ms   INTEGER NOT NULL,
    error        TEXT NOT NULL,
    PRIMARY KEY (delivery_id, number)
);
