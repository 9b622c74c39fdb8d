-- +goose Up
-- An export marks up to 100,000 claims Scheduled → Sent. With indexes
-- naming status (the due and cancelling partial indexes) that was a
-- non-HOT update: a new row version with new entries in every index of
-- the table, most of the 2.2 s of server CPU per 100,000 claims
-- (docs/PERFORMANCE.md, "AvtaleGiro files"). As for Autogiro (00035), no
-- index of avtalegiro_claims names a column the export changes (status,
-- claim_file_id, updated_at) any more, and the pages keep room for the new
-- versions, so the export's updates are HOT:
--
-- * What the next file sends is a row of avtalegiro_claim_queue, in file
--   order (due date, id), put there by a trigger when a claim is created
--   (or set back to Scheduled) and taken out by the export (or by a
--   trigger when a scheduled claim becomes anything but Sent: cancelled,
--   with its mandate or by itself).
-- * The claims to cancel in the next file are found through the generated
--   column cancel_pending, which Scheduled → Sent leaves false.
-- * claim_file_id loses its foreign key: its check was a query per
--   claimed row. The export sets it to the file it inserts in the same
--   transaction, and files are never deleted.
--
-- SQLite's 00040 has the same table and column (one set of SQL) but no
-- triggers: there the export stays one UPDATE through the due index and
-- the queue stays empty.
CREATE TABLE avtalegiro_claim_queue (
    tenant_id   uuid NOT NULL,
    account_id  uuid NOT NULL,
    due_date    text NOT NULL,
    claim_id    uuid NOT NULL,
    PRIMARY KEY (tenant_id, account_id, due_date, claim_id),
    FOREIGN KEY (tenant_id, claim_id) REFERENCES avtalegiro_claims (tenant_id, id) ON DELETE CASCADE
);

-- +goose StatementBegin
CREATE FUNCTION avtalegiro_queue_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO avtalegiro_claim_queue (tenant_id, account_id, due_date, claim_id)
    VALUES (NEW.tenant_id, NEW.account_id, NEW.due_date, NEW.id) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION avtalegiro_unqueue_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM avtalegiro_claim_queue WHERE tenant_id = OLD.tenant_id AND account_id = OLD.account_id
        AND due_date = OLD.due_date AND claim_id = OLD.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER avtalegiro_claims_queue AFTER INSERT OR UPDATE OF status ON avtalegiro_claims
    FOR EACH ROW WHEN (NEW.status = 'Scheduled') EXECUTE FUNCTION avtalegiro_queue_claim();
-- Not Scheduled → Sent: the export has taken those rows out already, and a
-- trigger call per sent claim would cost what HOT saves.
CREATE TRIGGER avtalegiro_claims_unqueue AFTER UPDATE OF status ON avtalegiro_claims
    FOR EACH ROW WHEN (OLD.status = 'Scheduled' AND NEW.status NOT IN ('Scheduled', 'Sent'))
    EXECUTE FUNCTION avtalegiro_unqueue_claim();

INSERT INTO avtalegiro_claim_queue (tenant_id, account_id, due_date, claim_id)
    SELECT tenant_id, account_id, due_date, id FROM avtalegiro_claims WHERE status = 'Scheduled';

ALTER TABLE avtalegiro_claims ADD COLUMN cancel_pending boolean
    GENERATED ALWAYS AS (status = 'CancellationPending') STORED;
DROP INDEX avtalegiro_claims_due;
DROP INDEX avtalegiro_claims_cancelling;
-- The same names and columns as SQLite's indexes (TestSchemasMatch
-- compares those, not predicates; so did 00035's pending index), with
-- predicates the export's change leaves alone. The due index now holds
-- the cancellations to send, in file order, which is how the export reads
-- them; the next file's claims are in the queue.
CREATE INDEX avtalegiro_claims_due ON avtalegiro_claims (tenant_id, account_id, due_date, id) WHERE cancel_pending;
CREATE INDEX avtalegiro_claims_cancelling ON avtalegiro_claims (tenant_id, account_id) WHERE cancel_pending;
ALTER TABLE avtalegiro_claims DROP CONSTRAINT avtalegiro_claims_tenant_id_claim_file_id_fkey;
-- Room on each page for the export's new row versions (a HOT update needs
-- it on the same page). Pages written before keep their fill until
-- rewritten.
ALTER TABLE avtalegiro_claims SET (fillfactor = 45);

-- File chunks (256 KiB of fixed-width records, mostly zeros and spaces)
-- were compressed with pglz, ≈0.2 s of server CPU per 18 MB claim file;
-- lz4 does it in a fraction of that. Chunks stored before stay pglz.
ALTER TABLE avtalegiro_file_chunks ALTER COLUMN data SET COMPRESSION lz4;

-- +goose Down
ALTER TABLE avtalegiro_file_chunks ALTER COLUMN data SET COMPRESSION default;
ALTER TABLE avtalegiro_claims RESET (fillfactor);
ALTER TABLE avtalegiro_claims ADD FOREIGN KEY (tenant_id, claim_file_id) REFERENCES avtalegiro_files (tenant_id, id);
DROP INDEX avtalegiro_claims_cancelling;
DROP INDEX avtalegiro_claims_due;
ALTER TABLE avtalegiro_claims DROP COLUMN cancel_pending;
CREATE INDEX avtalegiro_claims_due ON avtalegiro_claims (tenant_id, account_id, due_date, id) WHERE status = 'Scheduled';
CREATE INDEX avtalegiro_claims_cancelling ON avtalegiro_claims (tenant_id, account_id) WHERE status = 'CancellationPending';
DROP TRIGGER avtalegiro_claims_unqueue ON avtalegiro_claims;
DROP TRIGGER avtalegiro_claims_queue ON avtalegiro_claims;
DROP FUNCTION avtalegiro_unqueue_claim();
DROP FUNCTION avtalegiro_queue_claim();
DROP TABLE avtalegiro_claim_queue;
