-- +goose Up
-- Indexes for the analytics API's reports (docs/PERFORMANCE.md, "Analytics").
--
-- Payments by status and time: counts of a status and revenue by month read
-- this index only (amount and currency ride along), not the 640 MB table.
CREATE INDEX payments_status_paid ON payments (tenant_id, status, paid_at) INCLUDE (amount, currency);
-- Subscription periods by end: Status eq 'Active' (period_end > now, see
-- subscriptionStatusIs) is a range of it; the other two columns of the
-- status ride along so counting reads the index only.
CREATE INDEX subscriptions_period_end ON subscriptions (tenant_id, period_end) INCLUDE (period_start, cancel_effective_at);
-- Subscribers by city, a common filter of the reports.
CREATE INDEX subscribers_city ON subscribers (tenant_id, address_city);
