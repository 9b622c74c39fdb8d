-- +goose Up
-- Webhooks (docs/WEBHOOKS.md): registrations, the outbox marker on events,
-- deliveries and their attempts.

-- The outbox marker. Every new event gets dispatch_pending = 1 by default
-- (so tx.AddEvents needs no change and no extra statement); the dispatcher
-- claims marked events through the partial index, fans them out to
-- deliveries and clears the mark in one transaction. Claiming by mark
-- rather than "ids after the last one seen" is what makes out-of-order
-- commits safe: an event committed late is still marked. Events recorded
-- before webhooks existed are not marked.
ALTER TABLE events ADD COLUMN dispatch_pending smallint;
ALTER TABLE events ALTER COLUMN dispatch_pending SET DEFAULT 1;
CREATE INDEX events_dispatch_pending ON events (id) WHERE dispatch_pending IS NOT NULL;

CREATE TABLE webhooks (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    url                  text NOT NULL,
    event_types          text NOT NULL,            -- JSON array of kinds
    format               text NOT NULL CHECK (format IN ('EventGrid', 'CloudEvents')),
    secret               text NOT NULL,            -- whsec_...
    status               text NOT NULL CHECK (status IN ('Pending', 'Validated')),
    disable_validation   boolean NOT NULL,
    -- The manual validation URL: sha256 of its token and when it was
    -- issued (on the tenant's clock); both cleared once validated.
    validation_token     text,
    validation_issued_at timestamptz,
    validated_at         timestamptz,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    UNIQUE (tenant_id, id)
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id, id);
CREATE UNIQUE INDEX webhooks_validation_token ON webhooks (validation_token) WHERE validation_token IS NOT NULL;

-- A delivery is one message to one registration: one event (CloudEvents)
-- or a batch of events fanned out together (EventGrid's array). Its id is
-- the webhook-id header, the same on every attempt. Pending deliveries are due at next_attempt_at;
-- a claimed one has next_attempt_at pushed to the end of its lease, so a
-- process that dies mid-attempt only delays it.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY,
    tenant_id       uuid NOT NULL,
    webhook_id      uuid NOT NULL,
    event_ids       text NOT NULL,            -- JSON array: the events of the POST, in order
    status          text NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Failed')),
    attempts        integer NOT NULL DEFAULT 0,
    -- attempts made before the last redelivery: the retry schedule restarts there.
    retry_base      integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    created_at      timestamptz NOT NULL,
    completed_at    timestamptz,
    FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (tenant_id, webhook_id, id);

CREATE TABLE webhook_attempts (
    delivery_id  uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    number       integer NOT NULL,
    attempted_at timestamptz NOT NULL,
    status_code  integer,
    latency_ms   integer NOT NULL,
    error        text NOT NULL,
    PRIMARY KEY (delivery_id, number)
);
