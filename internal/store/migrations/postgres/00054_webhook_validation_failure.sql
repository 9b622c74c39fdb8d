-- +goose Up
-- Why the last validation handshake of a registration did not validate it
-- (the endpoint's status, a missing echo, an unreachable host), shown on the
-- registration as statusReason while it is Pending (docs/WEBHOOKS.md);
-- NULL once it is Validated or while no handshake has failed.
ALTER TABLE webhooks ADD COLUMN validation_failure TEXT;

-- +goose Down
ALTER TABLE webhooks DROP COLUMN validation_failure;
