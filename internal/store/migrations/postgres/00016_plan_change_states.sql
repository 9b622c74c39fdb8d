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

-- +goose Down
DROP INDEX scheduled_changes_registered_on;
DROP INDEX scheduled_changes_one_registered;
UPDATE scheduled_changes SET status = 'Void', executed_at = expired_at WHERE status = 'Expired';
ALTER TABLE scheduled_changes DROP COLUMN expired_at;
ALTER TABLE scheduled_changes DROP COLUMN price_change_id;
ALTER TABLE scheduled_changes DROP COLUMN reason;
ALTER TABLE scheduled_changes DROP COLUMN registered_on_id;
