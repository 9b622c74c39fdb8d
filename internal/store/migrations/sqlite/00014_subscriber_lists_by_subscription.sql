-- +goose Up
-- Invoices and payment demands of a subscriber are found through the
-- subscriber's subscriptions (subscriptions_subscriber, then
-- invoices_subscription / payment_demands_period), not through indexes of
-- their own. Every invoice and demand belongs to a subscription period,
-- and each renewal's period id is new and time-ordered, so those indexes
-- grow at their right edge; an index keyed by subscriber takes each
-- renewal's entry at a random page instead, and a batch of renewals for
-- a thousand subscribers rewrote a thousand pages of each such index
-- (with billing on a tenant with a month of invoices: 5,150 → 6,400
-- renewals/s on SQLite; docs/PERFORMANCE.md).
DROP INDEX invoices_subscriber;
DROP INDEX payment_demands_subscriber;

-- +goose Down
CREATE INDEX invoices_subscriber ON invoices (tenant_id, subscriber_id, id);
CREATE INDEX payment_demands_subscriber ON payment_demands (tenant_id, subscriber_id, id);
