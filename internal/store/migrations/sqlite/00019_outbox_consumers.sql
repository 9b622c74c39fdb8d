-- +goose Up
-- Consumers of the events outbox besides webhook delivery. See the
-- PostgreSQL migration for notes.
CREATE TABLE outbox_consumers (
    name          TEXT PRIMARY KEY,
    event_types   TEXT NOT NULL,
    registered_at TIMESTAMP NOT NULL
);

CREATE TABLE outbox_jobs (
    consumer        TEXT NOT NULL REFERENCES outbox_consumers(name) ON DELETE CASCADE,
    event_id        TEXT NOT NULL,
    tenant_id       TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('Pending', 'Dead')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    retry_base      INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL,
    PRIMARY KEY (consumer, event_id)
);
CREATE INDEX outbox_jobs_due ON outbox_jobs (consumer, next_attempt_at) WHERE status = 'Pending';
CREATE INDEX outbox_jobs_dead ON outbox_jobs (consumer, event_id) WHERE status = 'Dead';
