-- +goose Up
-- Subscribers' requests to delete their data (docs/MINSIDE.md, "Deletion
-- requests"): a task for the merchant, who must answer within a month
-- (GDPR art. 12(3)) and who decides what the bookkeeping rules let go;
-- never an instant delete of billing records. internal/privacy owns this
-- table and its SQL.
CREATE TABLE deletion_requests (
    id              uuid PRIMARY KEY,
    tenant_id       uuid NOT NULL REFERENCES tenants(id),
    subscriber_id   uuid NOT NULL,
    -- Who asked: the subscriber user's id and login as they were then.
    user_id         text NOT NULL,
    user_email      text NOT NULL DEFAULT '',
    message         text NOT NULL DEFAULT '',
    status          text NOT NULL CHECK (status IN ('Open', 'Completed', 'Rejected')),
    requested_at    timestamptz NOT NULL,
    -- The staff user who closed it, when, and what they wrote back.
    resolved_by     text NOT NULL DEFAULT '',
    resolved_at     timestamptz,
    resolution      text NOT NULL DEFAULT ''
);
-- One open request per subscriber: a second ask while one is open finds it.
CREATE UNIQUE INDEX deletion_requests_open ON deletion_requests (tenant_id, subscriber_id) WHERE status = 'Open';
-- The console's list: a tenant's requests, oldest first.
CREATE INDEX deletion_requests_tenant ON deletion_requests (tenant_id, requested_at, id);

-- +goose Down
DROP TABLE deletion_requests;
