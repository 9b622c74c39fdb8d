-- +goose Up
-- Process-wide settings a running server records for the operator commands
-- beside it, e.g. the public URLs `kadens client create` prints
-- (store/setting.go). Not tenant-owned.
CREATE TABLE settings (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);
