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

-- +goose Down
DROP TABLE delivery_non_publishing_days;
DROP TABLE delivery_schedules;
