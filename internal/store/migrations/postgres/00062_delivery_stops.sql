-- +goose Up
-- Vacation stops (docs/PRINT.md, "Vacation stops", internal/delivery). A
-- stop belongs to a subscription series: subscription_id is the series'
-- last period, moved forward by each renewal (as a plan change waits on
-- it), so a stop follows its series through renewals and chain steps.
-- asked_on_id is the period it was made on. Days are YYYY-MM-DD text,
-- both included; missed and credited are the delivery days the rules
-- decided, comma-separated. A deleted stop keeps its row (deleted_at).
CREATE TABLE delivery_stops (
    tenant_id        uuid NOT NULL REFERENCES tenants(id),
    id               uuid NOT NULL,
    subscription_id  uuid NOT NULL,
    asked_on_id      uuid NOT NULL,
    first_date       text NOT NULL,
    last_date        text NOT NULL,
    missed           text NOT NULL,
    credited         text NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    deleted_at       timestamptz,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX delivery_stops_subscription ON delivery_stops (tenant_id, subscription_id);
CREATE INDEX delivery_stops_days ON delivery_stops (tenant_id, first_date) WHERE deleted_at IS NULL;

-- The credit of a stop's credited editions in one period of its series,
-- booked once (the unique key) as an allowance on the subscriber account
-- (allowance_item_id, the ledger check's document; null when the credit
-- rounds to nothing).
CREATE TABLE delivery_stop_credits (
    tenant_id          uuid NOT NULL REFERENCES tenants(id),
    id                 uuid NOT NULL,
    stop_id            uuid NOT NULL,
    period_id          uuid NOT NULL,
    editions           integer NOT NULL,
    credited           integer NOT NULL,
    amount             bigint NOT NULL,
    allowance_item_id  uuid,
    booked_at          timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, stop_id, period_id),
    FOREIGN KEY (tenant_id, stop_id) REFERENCES delivery_stops (tenant_id, id)
);

-- +goose Down
DROP TABLE delivery_stop_credits;
DROP TABLE delivery_stops;
