-- +goose Up
-- Orders: a request to start a subscription, kept as it was made. An order
-- is Created, then Completed (once: completion creates the subscriber if the
-- order carries new-subscriber data, the payment agreement if none was
-- named, and the first subscription) or Cancelled. Every reference is by
-- (tenant_id, id), so an order can never point into another tenant.
CREATE TABLE orders (
    id                    uuid PRIMARY KEY,
    tenant_id             uuid NOT NULL REFERENCES tenants(id),
    status                text NOT NULL CHECK (status IN ('Created', 'Completed', 'Cancelled')),
    organization_id       uuid NOT NULL,
    template_package_id   uuid NOT NULL,
    -- The order's TemplatePackageChoices (JSON, store.EncodeChoices).
    choices               text NOT NULL,
    -- The existing subscriber, or, once a new one is created on completion,
    -- that one; NULL until then on a new-subscriber order.
    subscriber_id         uuid,
    -- JSON of the subscriber to create on completion; NULL when the order
    -- names an existing subscriber.
    new_subscriber        text,
    -- The agreement the order named, or the one completion used.
    payment_agreement_id  uuid,
    -- JSON contact (name, email, phone, address) that becomes the
    -- subscriber's Invoice contact on completion.
    invoice_contact       text,
    requested_start       timestamptz,
    subscription_id       uuid,
    created_at            timestamptz NOT NULL,
    completed_at          timestamptz,
    cancelled_at          timestamptz,
    UNIQUE (tenant_id, id),
    CHECK (subscriber_id IS NOT NULL OR new_subscriber IS NOT NULL),
    CHECK (status <> 'Completed' OR completed_at IS NOT NULL),
    CHECK (status <> 'Cancelled' OR cancelled_at IS NOT NULL),
    FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id),
    -- Templates that orders came from are archived, never deleted.
    FOREIGN KEY (tenant_id, template_package_id) REFERENCES template_packages (tenant_id, id),
    FOREIGN KEY (tenant_id, subscriber_id) REFERENCES subscribers (tenant_id, id),
    FOREIGN KEY (tenant_id, payment_agreement_id) REFERENCES payment_agreements (tenant_id, id),
    FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id)
);
CREATE INDEX orders_subscriber ON orders (tenant_id, subscriber_id);
CREATE INDEX orders_organization ON orders (tenant_id, organization_id);
CREATE INDEX orders_template_package ON orders (tenant_id, template_package_id);
CREATE INDEX orders_status ON orders (tenant_id, status, id);
