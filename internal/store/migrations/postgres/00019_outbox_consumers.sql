-- +goose Up
-- Consumers of the events outbox besides webhook delivery (bank collection,
-- e-invoice delivery, an audit log): docs/ARCHITECTURE.md, "Events and
-- their consumers". Each consumer has its own queue of claims, so a slow or
-- failing consumer never holds back another. Not tenant-owned: a consumer
-- serves every tenant and each job carries its event's tenant.

-- A consumer and the event kinds it takes (JSON array). The relay that
-- clears events' dispatch_pending mark writes one job per matching
-- consumer in the same transaction.
CREATE TABLE outbox_consumers (
    name          text PRIMARY KEY,
    event_types   text NOT NULL,
    registered_at timestamptz NOT NULL
);

-- One event for one consumer until its handler succeeds (then the row is
-- deleted) or its retries run out (Dead, kept for inspection and retry).
-- A claimed job has next_attempt_at pushed to the end of its lease;
-- attempts counts the claims, retry_base the attempts made before the
-- last manual retry (the backoff schedule starts over from there).
CREATE TABLE outbox_jobs (
    consumer        text NOT NULL REFERENCES outbox_consumers(name) ON DELETE CASCADE,
    event_id        uuid NOT NULL,
    tenant_id       uuid NOT NULL,
    status          text NOT NULL CHECK (status IN ('Pending', 'Dead')),
    attempts        integer NOT NULL DEFAULT 0,
    retry_base      integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    last_error      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (consumer, event_id)
);
CREATE INDEX outbox_jobs_due ON outbox_jobs (consumer, next_attempt_at) WHERE status = 'Pending';
CREATE INDEX outbox_jobs_dead ON outbox_jobs (consumer, event_id) WHERE status = 'Dead';
