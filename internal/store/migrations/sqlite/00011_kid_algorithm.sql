-- +goose Up
-- The check digit algorithm of the KIDs an organization's invoices carry
-- (docs/BILLING.md, "Invoice content"). Existing organizations keep MOD10,
-- which is what they issued before.
ALTER TABLE organizations ADD COLUMN kid_algorithm TEXT NOT NULL DEFAULT 'MOD10'
    CHECK (kid_algorithm IN ('MOD10', 'MOD11'));

