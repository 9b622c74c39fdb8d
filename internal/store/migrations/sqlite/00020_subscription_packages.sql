-- +goose Up
-- Subscription packages stored once per tenant and content, not copied into
-- every period: a tenant's periods share a handful of packages, and the
-- ~1 KB of JSON in every row made a list page of subscriptions read three
-- times the pages it needed (docs/PERFORMANCE.md, "List pages"). hash is
-- the lowercase hex SHA-256 of the package's JSON text, so equal packages
-- are one row. Rows are only added (a period that changes its package
-- points at another row), and a few unreferenced ones are harmless.
CREATE TABLE subscription_packages (
    tenant_id  TEXT NOT NULL REFERENCES tenants(id),
    hash       TEXT NOT NULL,
    package    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, hash)
);
-- kadens_sha256 is registered by the store (store/sqlitefunc.go).
INSERT INTO subscription_packages (tenant_id, hash, package)
    SELECT tenant_id, kadens_sha256(package), package FROM subscriptions GROUP BY tenant_id, package;
ALTER TABLE subscriptions ADD COLUMN package_hash TEXT NOT NULL DEFAULT '';
UPDATE subscriptions SET package_hash = kadens_sha256(package);
ALTER TABLE subscriptions DROP COLUMN package;

-- +goose Down
ALTER TABLE subscriptions ADD COLUMN package TEXT NOT NULL DEFAULT '';
UPDATE subscriptions SET package = (SELECT p.package FROM subscription_packages p
    WHERE p.tenant_id = subscriptions.tenant_id AND p.hash = subscriptions.package_hash);
ALTER TABLE subscriptions DROP COLUMN package_hash;
DROP TABLE subscription_packages;
