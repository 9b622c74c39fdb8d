-- +goose Up
-- Indexes for the analytics API's reports (docs/PERFORMANCE.md, "Analytics").
-- SQLite has no INCLUDE: the columns PostgreSQL carries as payload are
-- trailing key columns here, which covers the same queries (and keeps the
-- column lists TestSchemasMatch compares the same on both engines).
CREATE INDEX payments_status_paid ON payments (tenant_id, status, paid_at, amount, currency);
CREATE INDEX subscriptions_period_end ON subscriptions (tenant_id, period_end, period_start, cancel_effective_at);
CREATE INDEX subscribers_city ON subscribers (tenant_id, address_city);
