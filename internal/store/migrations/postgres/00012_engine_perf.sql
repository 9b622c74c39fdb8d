-- +goose Up
-- subscriptions_tenant duplicated the index of UNIQUE (tenant_id, id),
-- which serves the same lookups; every renewal inserts one subscription and
-- updates another, so each index costs the engine two entries per renewal
-- (docs/PERFORMANCE.md, "Subscription engine").
DROP INDEX IF EXISTS subscriptions_tenant;
