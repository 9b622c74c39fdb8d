-- +goose Up
-- A chain instance is a package chain frozen for one subscription series
-- when it is ordered: each step's template merged with the order's choices
-- (catalog.ChainInstance). A subscription's chain_id names its instance;
-- periods written before this migration name the chain definition, and
-- the engine freezes an instance for them at their next step change
-- (docs/CATALOG.md). chain_id here is the definition the instance was made
-- from; it has no key, because the definition may be edited or deleted
-- while instances of it keep running. steps is the JSON of the steps with
-- their packages and choices, read and written whole.
CREATE TABLE chain_instances (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id),
    chain_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    steps       TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id)
);

-- +goose Down
DROP TABLE chain_instances;
