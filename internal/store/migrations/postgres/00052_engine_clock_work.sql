-- +goose Up
-- What the engine performed for advances of test clocks, one row per
-- committed batch, written in the batch's transaction (issue 27). An
-- advance's answer counts the rows of its range instead of what its own
-- process did: when two processes advance the same tenant, one does the
-- work and the other waits for the lease and finds nothing left, and with
-- a short --engine-lease the work may pass from one to the other halfway;
-- both answered 0 renewals before. target is the time the performing
-- advance ran to, due_at the latest due time of the batch's actions;
-- recorded_at (wall clock) lets old rows be pruned.
CREATE TABLE engine_clock_work (
    tenant_id            uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id                   uuid NOT NULL,
    target               timestamptz NOT NULL,
    due_at               timestamptz NOT NULL,
    renewals             integer NOT NULL,
    deactivations        integer NOT NULL,
    plan_changes         integer NOT NULL,
    reminders            integer NOT NULL,
    payment_stops        integer NOT NULL,
    price_change_notices integer NOT NULL,
    recorded_at          timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX engine_clock_work_target ON engine_clock_work (tenant_id, target);

-- +goose Down
DROP TABLE engine_clock_work;
