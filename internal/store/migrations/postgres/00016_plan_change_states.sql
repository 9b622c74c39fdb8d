-- +goose Up
-- Plan changes become a state machine (docs/ORDERS.md, "Plan changes"):
-- Registered → Executed | Revoked | Expired, with the reason a change was
-- revoked or expired. A change keeps the period it was registered on
-- (registered_on_id, never rewritten) apart from the period whose renewal
-- it currently waits for (subscription_id, which follows renewals).
ALTER TABLE scheduled_changes ADD COLUMN registered_on_id uuid;
ALTER TABLE scheduled_changes ADD COLUMN reason TEXT;
ALTER TABLE scheduled_changes ADD COLUMN price_change_id uuid;
ALTER TABLE scheduled_changes ADD COLUMN expired_at timestamptz;
UPDATE scheduled_changes SET registered_on_id = subscription_id;
-- Void was the old name of Expired.
UPDATE scheduled_changes SET status = 'Expired', expired_at = executed_at, executed_at = NULL, reason = 'CannotRun'
    WHERE status = 'Void';
-- At most one registered change per series: of changes registered on the
-- same period before this rule, the latest stays and the others are
-- superseded by it.
UPDATE scheduled_changes SET status = 'Revoked', reason = 'Superseded', revoked_at = registered_at
    WHERE status = 'Registered' AND EXISTS (
        SELECT 1 FROM scheduled_changes o
        WHERE o.tenant_id = scheduled_changes.tenant_id AND o.subscription_id = scheduled_changes.subscription_id
          AND o.status = 'Registered'
          AND (o.registered_at > scheduled_changes.registered_at
               OR (o.registered_at = scheduled_changes.registered_at AND o.id > scheduled_changes.id)));
CREATE UNIQUE INDEX scheduled_changes_one_registered ON scheduled_changes (tenant_id, subscription_id)
    WHERE status = 'Registered';
CREATE INDEX scheduled_changes_registered_on ON scheduled_changes (tenant_id, registered_on_id);

-- An OnRenewal change registered by a price change applies at the first
-- renewal whose new period starts at or after not_before.
ALTER TABLE scheduled_changes ADD COLUMN not_before timestamptz;

-- The template a series was ordered from or last changed to: what a price
-- change of that template finds. Bookkeeping, not a link (the package is a
-- copy), so no foreign key on the table every renewal writes. Existing
-- periods take their order's template.
ALTER TABLE subscriptions ADD COLUMN template_package_id uuid;
UPDATE subscriptions SET template_package_id = (SELECT o.template_package_id FROM orders o
    WHERE o.tenant_id = subscriptions.tenant_id AND o.id = subscriptions.order_id)
    WHERE order_id IS NOT NULL;
CREATE INDEX subscriptions_template_live ON subscriptions (tenant_id, template_package_id)
    WHERE next_id IS NULL AND cancelled_at IS NULL AND deactivated_at IS NULL;

-- Price changes: a bulk OnRenewal plan change of every running series of a
-- template, announced notice_days before it takes effect.
CREATE TABLE price_changes (
    id                          uuid PRIMARY KEY,
    tenant_id                   uuid NOT NULL REFERENCES tenants(id),
    template_package_id         uuid NOT NULL,
    target_template_package_id  uuid NOT NULL,
    effective_from              timestamptz NOT NULL,
    notice_days                 INTEGER NOT NULL CHECK (notice_days >= 0),
    starts_at                   timestamptz NOT NULL,
    status                      TEXT NOT NULL,
    created_at                  timestamptz NOT NULL,
    started_at                  timestamptz,
    revoked_at                  timestamptz,
    registered                  INTEGER NOT NULL DEFAULT 0,
    skipped                     INTEGER NOT NULL DEFAULT 0,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, template_package_id) REFERENCES template_packages (tenant_id, id),
    FOREIGN KEY (tenant_id, target_template_package_id) REFERENCES template_packages (tenant_id, id)
);
CREATE INDEX price_changes_template ON price_changes (tenant_id, template_package_id, id);
CREATE INDEX price_changes_due ON price_changes (tenant_id, starts_at) WHERE status = 'Scheduled';

-- +goose Down
DROP TABLE price_changes;
DROP INDEX subscriptions_template_live;
ALTER TABLE subscriptions DROP COLUMN template_package_id;
ALTER TABLE scheduled_changes DROP COLUMN not_before;
DROP INDEX scheduled_changes_registered_on;
DROP INDEX scheduled_changes_one_registered;
UPDATE scheduled_changes SET status = 'Void', executed_at = expired_at WHERE status = 'Expired';
ALTER TABLE scheduled_changes DROP COLUMN expired_at;
ALTER TABLE scheduled_changes DROP COLUMN price_change_id;
ALTER TABLE scheduled_changes DROP COLUMN reason;
ALTER TABLE scheduled_changes DROP COLUMN registered_on_id;
