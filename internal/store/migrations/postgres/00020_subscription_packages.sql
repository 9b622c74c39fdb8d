-- +goose Up
-- Subscription packages stored once per tenant and content, not copied into
-- every period: a tenant's periods share a handful of packages, and the
-- ~1 KB of JSON in every row made a list page of subscriptions read three
-- times the pages it needed (docs/PERFORMANCE.md, "List pages"). hash is
-- the lowercase hex SHA-256 of the package's JSON text, so equal packages
-- are one row. Rows are only added (a period that changes its package
-- points at another row), and a few unreferenced ones are harmless.
CREATE TABLE subscription_packages (
    tenant_id  uuid NOT NULL REFERENCES tenants(id),
    hash       text NOT NULL,
    package    text NOT NULL,
    PRIMARY KEY (tenant_id, hash)
);
INSERT INTO subscription_packages (tenant_id, hash, package)
    SELECT DISTINCT tenant_id, encode(sha256(convert_to(package, 'UTF8')), 'hex'), package FROM subscriptions;
ALTER TABLE subscriptions ADD COLUMN package_hash text NOT NULL DEFAULT '';
UPDATE subscriptions SET package_hash = encode(sha256(convert_to(package, 'UTF8')), 'hex');
ALTER TABLE subscriptions DROP COLUMN package;

-- +goose Down
ALTER TABLE subscriptions ADD COLUMN package text NOT NULL DEFAULT '';
UPDATE subscriptions SET package = p.package FROM subscription_packages p
    WHERE p.tenant_id = subscriptions.tenant_id AND p.hash = subscriptions.package_hash;
ALTER TABLE subscriptions DROP COLUMN package_hash;
DROP TABLE subscription_packages;
