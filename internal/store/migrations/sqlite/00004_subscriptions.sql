-- +goose Up
-- Parents that subscriptions reference by (tenant_id, id), so a row can
-- never point into another tenant.
CREATE UNIQUE INDEX subscribers_tenant_id ON subscribers (tenant_id, id);
CREATE UNIQUE INDEX organizations_tenant_id ON organizations (tenant_id, id);

-- How a subscriber pays. Issue-level detail (provider checks, import,
-- lifecycle events) builds on this table; Invoice is the default type.
CREATE TABLE payment_agreements (
    id                            TEXT PRIMARY KEY,
    tenant_id                     TEXT NOT NULL REFERENCES tenants(id),
    subscriber_id                 TEXT NOT NULL,
    provider_type                 TEXT NOT NULL,
    provider_agreement_reference  TEXT NOT NULL,
    payment_method                TEXT NOT NULL,
    created_at                    TIMESTAMP NOT NULL,
    deleted_at                    TIMESTAMP,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id)
);
CREATE INDEX payment_agreements_subscriber ON payment_agreements (tenant_id, subscriber_id);

-- One row per subscription period. A renewal creates the next row and links
-- the two; the package is a JSON copy of the merged subscription package.
CREATE TABLE subscriptions (
    id                    TEXT PRIMARY KEY,
    tenant_id             TEXT NOT NULL REFERENCES tenants(id),
    subscriber_id         TEXT NOT NULL,
    organization_id       TEXT NOT NULL,
    order_id              TEXT,
    payment_agreement_id  TEXT,
    currency              TEXT NOT NULL,
    package               TEXT NOT NULL,
    choices               TEXT NOT NULL,
    chain_id              TEXT,
    chain_step            INTEGER,
    step_period           INTEGER NOT NULL,
    time_zone             TEXT NOT NULL,
    anchor                TIMESTAMP NOT NULL,
    period_index          INTEGER NOT NULL,
    period_start          TIMESTAMP NOT NULL,
    period_end            TIMESTAMP NOT NULL,
    renew_at              TIMESTAMP,
    previous_id           TEXT,
    next_id               TEXT,
    cancelled_at          TIMESTAMP,
    cancel_effective_at   TIMESTAMP,
    cancel_reason         TEXT NOT NULL DEFAULT '',
    deactivated_at        TIMESTAMP,
    next_action_at        TIMESTAMP,
    -- Incremented by every update; updates check it (optimistic locking),
    -- so two engine workers can never both apply the same action.
    version               INTEGER NOT NULL DEFAULT 1,
    created_at            TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id),
    FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id),
    FOREIGN KEY (tenant_id, payment_agreement_id) REFERENCES payment_agreements (tenant_id, id)
);
CREATE INDEX subscriptions_due ON subscriptions (tenant_id, next_action_at, id) WHERE next_action_at IS NOT NULL;
CREATE INDEX subscriptions_subscriber ON subscriptions (tenant_id, subscriber_id);
CREATE INDEX subscriptions_tenant ON subscriptions (tenant_id, id);
CREATE UNIQUE INDEX subscriptions_next ON subscriptions (next_id) WHERE next_id IS NOT NULL;

-- Plan changes registered on a subscription.
CREATE TABLE scheduled_changes (
    id                      TEXT PRIMARY KEY,
    tenant_id               TEXT NOT NULL REFERENCES tenants(id),
    subscription_id         TEXT NOT NULL,
    processing_type         TEXT NOT NULL,
    scheduled_at            TIMESTAMP,
    template_package_id     TEXT NOT NULL,
    choices                 TEXT NOT NULL,
    status                  TEXT NOT NULL,
    registered_at           TIMESTAMP NOT NULL,
    executed_at             TIMESTAMP,
    revoked_at              TIMESTAMP,
    result_subscription_id  TEXT,
    FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id)
);
CREATE INDEX scheduled_changes_subscription ON scheduled_changes (tenant_id, subscription_id);
CREATE INDEX scheduled_changes_due ON scheduled_changes (tenant_id, scheduled_at, id) WHERE status = 'Registered' AND scheduled_at IS NOT NULL;

-- Events, written in the same transaction as the change they describe (the
-- outbox that webhook delivery reads). event_time is business time (the
-- tenant's clock); created_at is when the row was written.
CREATE TABLE events (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id),
    event_type  TEXT NOT NULL,
    subject     TEXT NOT NULL,
    data        TEXT NOT NULL,
    event_time  TIMESTAMP NOT NULL,
    created_at  TIMESTAMP NOT NULL
);
CREATE INDEX events_tenant ON events (tenant_id, id);

-- Engine leases: one worker advances a tenant at a time.
ALTER TABLE tenants ADD COLUMN engine_holder text;
ALTER TABLE tenants ADD COLUMN engine_lease_until TIMESTAMP;
