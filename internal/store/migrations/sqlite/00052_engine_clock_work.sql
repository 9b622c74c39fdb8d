-- +goose Up
-- What the engine performed for advances of test clocks, one row per
-- committed batch (see the PostgreSQL migration).
CREATE TABLE engine_clock_work (
    tenant_id            TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id                   TEXT NOT NULL,
    target               TIMESTAMP NOT NULL,
    due_at               TIMESTAMP NOT NULL,
    renewals             INTEGER NOT NULL,
    deactivations        INTEGER NOT NULL,
    plan_changes         INTEGER NOT NULL,
    reminders            INTEGER NOT NULL,
    payment_stops        INTEGER NOT NULL,
    price_change_notices INTEGER NOT NULL,
    recorded_at          TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX engine_clock_work_target ON engine_clock_work (tenant_id, target);

-- +goose Down
DROP TABLE engine_clock_work;
