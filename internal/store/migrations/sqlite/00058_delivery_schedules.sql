-- +goose Up
-- Print delivery (docs/PRINT.md, internal/delivery). A print product's
-- weekday pattern (bit d for time.Weekday d, Sunday 0; a product without
-- a row is not delivered), and the tenant's days without paper (public
-- holidays), which no product is delivered on. Days are YYYY-MM-DD text:
-- a publishing day is a local calendar day, not an instant.
CREATE TABLE delivery_schedules (
    tenant_id   TEXT NOT NULL REFERENCES tenants(id),
    product_id  TEXT NOT NULL,
    weekdays    INTEGER NOT NULL CHECK (weekdays BETWEEN 1 AND 127),
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, product_id),
    FOREIGN KEY (tenant_id, product_id) REFERENCES products (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE delivery_non_publishing_days (
    tenant_id   TEXT NOT NULL REFERENCES tenants(id),
    day         TEXT NOT NULL,
    name        TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, day)
);

-- A title's vacation stop rules, per organization (internal/delivery
-- StopRules); an organization without a row has DefaultStopRules.
CREATE TABLE delivery_stop_rules (
    tenant_id              TEXT NOT NULL REFERENCES tenants(id),
    organization_id        TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    min_days               INTEGER NOT NULL,
    max_days               INTEGER NOT NULL,
    cutoff_hour            INTEGER NOT NULL,
    notice_delivery_days   INTEGER NOT NULL,
    credit                 TEXT NOT NULL,
    max_credited_per_year  INTEGER NOT NULL,
    align_to_delivery_days BOOLEAN NOT NULL,
    allow_during_binding   BOOLEAN NOT NULL,
    updated_at             TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, organization_id)
);

-- +goose Down
DROP TABLE delivery_stop_rules;
DROP TABLE delivery_non_publishing_days;
DROP TABLE delivery_schedules;
