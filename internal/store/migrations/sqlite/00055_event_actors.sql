-- +goose Up
-- Who caused each event (internal/actor): a machine client of the API, a
-- staff user of the console, a subscriber, or Kadens itself ('system', the
-- default, which every event recorded before this migration keeps: they
-- came from the API's clients or the engine, and which one was not kept).
-- The label is the actor's name as it was then (a client id, an e-mail),
-- so an audit log still reads after the user is gone.
ALTER TABLE events ADD COLUMN actor_kind text NOT NULL DEFAULT 'system';
ALTER TABLE events ADD COLUMN actor_id text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN actor_label text NOT NULL DEFAULT '';
-- The audit log's question: what did this client or user do, newest pages
-- by id like every list.
CREATE INDEX events_actor ON events (tenant_id, actor_kind, actor_id, id);

-- +goose Down
DROP INDEX events_actor;
ALTER TABLE events DROP COLUMN actor_label;
ALTER TABLE events DROP COLUMN actor_id;
ALTER TABLE events DROP COLUMN actor_kind;
