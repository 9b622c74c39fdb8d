-- +goose Up
-- What `kadens import` created from another system's records (docs/MIGRATION.md):
-- one row per imported payment agreement or subscription, keyed by the
-- source system's id, so that running the same import again finds them and
-- creates nothing twice. fingerprint is a hash of the row as imported: a
-- row that changed in the source since is reported, not silently skipped.
CREATE TABLE import_records (
    tenant_id   uuid NOT NULL REFERENCES tenants(id),
    kind        text NOT NULL CHECK (kind IN ('PaymentAgreement', 'Subscription')),
    source_id   text NOT NULL,
    kadens_id   uuid NOT NULL,
    fingerprint text NOT NULL,
    imported_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, kind, source_id)
);

-- +goose Down
DROP TABLE import_records;
