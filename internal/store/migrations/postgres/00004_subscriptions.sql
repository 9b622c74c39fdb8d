-- +goose Up
-- Parents that subscriptions reference by (tenant_id, id), so a row can
-- never point into another tenant.
CREATE UNIQUE INDEX subscribers_tenant_id ON subscribers (tenant_id, id);
CREATE UNIQUE INDEX organizations_tenant_id ON organizations (tenant_id, id);

-- How a subscriber pays. Issue-level detail (provider checks, import,
-- lifecycle events) builds on this table; Invoice is the default type.
CREATE TABLE payment_agreements (
    id                            uuid PRIMARY KEY,
    tenant_id                     uuid NOT NULL REFERENCES tenants(id),
    subscriber_id                 uuid NOT NULL,
    provider_type                 text NOT NULL,
    provider_agreement_reference  text NOT NULL,
    payment_method                text NOT NULL,
    created_at                    timestamptz NOT NULL,
    deleted_at                    timestamptz,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id)
);
CREATE INDEX payment_agreements_subscriber ON payment_agreements (tenant_id, subscriber_id);

-- One row per subscription period. A renewal creates the next row and links
-- the two; the package is a JSON copy of the merged subscription package.
CREATE TABLE subscriptions (
    id                    uuid PRIMARY KEY,
    tenant_id             uuid NOT NULL REFERENCES tenants(id),
    subscriber_id         uuid NOT NULL,
    organization_id       uuid NOT NULL,
    order_id              uuid,
    payment_agreement_id  uuid,
    currency              text NOT NULL,
    package               text NOT NULL,
    choices               text NOT NULL,
    chain_id              uuid,
    chain_step            integer,
    step_period           integer NOT NULL,
    time_zone             text NOT NULL,
    anchor                timestamptz NOT NULL,
    period_index          integer NOT NULL,
    period_start          timestamptz NOT NULL,
    period_end            timestamptz NOT NULL,
    renew_at              timestamptz,
    previous_id           uuid,
    next_id               uuid,
    cancelled_at          timestamptz,
    cancel_effective_at   timestamptz,
    cancel_reason         text NOT NULL DEFAULT '',
    deactivated_at        timestamptz,
    next_action_at        timestamptz,
    -- Incremented by every update; updates check it (optimistic locking),
    -- so two engine workers can never both apply the same action.
    version               integer NOT NULL DEFAULT 1,
    created_at            timestamptz NOT NULL,
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
    id                      uuid PRIMARY KEY,
    tenant_id               uuid NOT NULL REFERENCES tenants(id),
    subscription_id         uuid NOT NULL,
    processing_type         text NOT NULL,
    scheduled_at            timestamptz,
    template_package_id     uuid NOT NULL,
    choices                 text NOT NULL,
    status                  text NOT NULL,
    registered_at           timestamptz NOT NULL,
    executed_at             timestamptz,
    revoked_at              timestamptz,
    result_subscription_id  uuid,
    FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id)
);
CREATE INDEX scheduled_changes_subscription ON scheduled_changes (tenant_id, subscription_id);
CREATE INDEX scheduled_changes_due ON scheduled_changes (tenant_id, scheduled_at, id) WHERE status = 'Registered' AND scheduled_at IS NOT NULL;

-- Events, written in the same transaction as the change they describe (the
-- outbox that webhook delivery reads). event_time is business time (the
-- tenant's clock); created_at is when the row was written.
CREATE TABLE events (
    id          uuid PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants(id),
    event_type  text NOT NULL,
    subject     text NOT NULL,
    data        text NOT NULL,
    event_time  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL
);
CREATE INDEX events_tenant ON events (tenant_id, id);

-- Engine leases: one worker advances a tenant at a time.
ALTER TABLE tenants ADD COLUMN engine_holder text;
ALTER TABLE tenants ADD COLUMN engine_lease_until timestamptz;
