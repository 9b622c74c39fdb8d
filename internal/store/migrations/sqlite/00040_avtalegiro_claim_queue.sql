-- +goose Up
-- PostgreSQL's 00040 makes the export's updates (up to 100,000 claims
-- Scheduled → Sent) HOT: no index of avtalegiro_claims names a column the
-- export changes; what the next file sends is a row of
-- avtalegiro_claim_queue kept by triggers, and the claims to cancel are
-- found through the generated column cancel_pending. SQLite gets the same
-- table and column (one set of SQL) but no triggers and its old indexes:
-- here the export stays one UPDATE through the due index and the queue
-- stays empty.
CREATE TABLE avtalegiro_claim_queue (
    tenant_id   TEXT NOT NULL,
    account_id  TEXT NOT NULL,
    due_date    TEXT NOT NULL,
    claim_id    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, account_id, due_date, claim_id),
    FOREIGN KEY (tenant_id, claim_id) REFERENCES avtalegiro_claims (tenant_id, id) ON DELETE CASCADE
);
ALTER TABLE avtalegiro_claims ADD COLUMN cancel_pending BOOLEAN
    GENERATED ALWAYS AS (status = 'CancellationPending') VIRTUAL;

-- +goose Down
ALTER TABLE avtalegiro_claims DROP COLUMN cancel_pending;
DROP TABLE avtalegiro_claim_queue;
