-- +goose Up
-- The order of a stop's or an address's series (docs/PRINT.md, "The
-- distribution list"). subscription_id moves with every renewal; the order
-- does not (an order begins one series, and its renewals and plan changes
-- keep it), so the day's list finds a copy's stop and addresses by its
-- order with one index probe, instead of joining every copy to all of the
-- day's stops.
ALTER TABLE delivery_stops ADD COLUMN order_id TEXT;
UPDATE delivery_stops SET order_id = (SELECT s.order_id FROM subscriptions s
    WHERE s.tenant_id = delivery_stops.tenant_id AND s.id = delivery_stops.subscription_id);
CREATE INDEX delivery_stops_order ON delivery_stops (tenant_id, order_id, first_date) WHERE deleted_at IS NULL;
ALTER TABLE delivery_addresses ADD COLUMN order_id TEXT;
UPDATE delivery_addresses SET order_id = (SELECT s.order_id FROM subscriptions s
    WHERE s.tenant_id = delivery_addresses.tenant_id AND s.id = delivery_addresses.subscription_id);
CREATE INDEX delivery_addresses_order ON delivery_addresses (tenant_id, order_id, kind, first_date, id) WHERE deleted_at IS NULL;

-- A day's distribution list published (POST /distribution/{date}/publish,
-- `kadens distribution publish`): the list is final enough to print from,
-- and DistributionListAvailable tells the carriers' systems. Publishing
-- again (a correction after a late change) raises the revision.
CREATE TABLE delivery_distribution_publications (
    tenant_id     TEXT NOT NULL REFERENCES tenants(id),
    day           TEXT NOT NULL,
    revision      INTEGER NOT NULL,
    copies        INTEGER NOT NULL,
    published_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, day)
);

-- +goose Down
DROP TABLE delivery_distribution_publications;
DROP INDEX delivery_addresses_order;
ALTER TABLE delivery_addresses DROP COLUMN order_id;
DROP INDEX delivery_stops_order;
ALTER TABLE delivery_stops DROP COLUMN order_id;
