-- +goose Up
-- Marking 100,000 claims Scheduled → Sent rewrote every wide claim row
-- (each grows by the file id, so pages split) and took each out of the due
-- index: ≈0.45 s of the 1 s a claim file may take (docs/PERFORMANCE.md,
-- "AvtaleGiro files"). Here the export records the sending instead, in a
-- narrow row per claim (claim → file), and leaves the claim row alone:
--
-- * avtalegiro_sent_claims: one row per claim sent in a file, written by
--   the export in one INSERT … SELECT from the queue.
-- * avtalegiro_claim_states: the claims as readers see them. A claim whose
--   row says Scheduled and that has a sending is Sent, with that file as
--   its claim file; sent_at is the file's time (updatedAt is the later of
--   the two). Any later change (paid, cancellation pending, cancelled)
--   is written to the claim row as before and wins.
-- * What the next file sends is the queue, as on PostgreSQL (00040): kept
--   by triggers here too (a sent claim still says Scheduled, so the
--   partial index of Scheduled claims no longer tells), and taken out by
--   the export. WITHOUT ROWID (one b-tree) and without its foreign key
--   (SQLite deletes rows of a child table one by one with their old
--   values, and claims are never deleted): taking 100,000 rows out costs
--   ≈30 ms instead of ≈140 ms.
-- * The due and cancelling indexes take PostgreSQL's predicates
--   (cancel_pending): the export reads the cancellations through them.
--
-- PostgreSQL's 00042 has the same table and view, and its export records
-- sendings the same way.
DROP TABLE avtalegiro_claim_queue;
CREATE TABLE avtalegiro_claim_queue (
    tenant_id   TEXT NOT NULL,
    account_id  TEXT NOT NULL,
    due_date    TEXT NOT NULL,
    claim_id    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, account_id, due_date, claim_id)
) WITHOUT ROWID;
INSERT INTO avtalegiro_claim_queue (tenant_id, account_id, due_date, claim_id)
    SELECT tenant_id, account_id, due_date, id FROM avtalegiro_claims WHERE status = 'Scheduled';

-- +goose StatementBegin
CREATE TRIGGER avtalegiro_claims_queue AFTER INSERT ON avtalegiro_claims
    FOR EACH ROW WHEN NEW.status = 'Scheduled' BEGIN
    INSERT OR IGNORE INTO avtalegiro_claim_queue (tenant_id, account_id, due_date, claim_id)
    VALUES (NEW.tenant_id, NEW.account_id, NEW.due_date, NEW.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER avtalegiro_claims_requeue AFTER UPDATE OF status ON avtalegiro_claims
    FOR EACH ROW WHEN NEW.status = 'Scheduled' BEGIN
    INSERT OR IGNORE INTO avtalegiro_claim_queue (tenant_id, account_id, due_date, claim_id)
    VALUES (NEW.tenant_id, NEW.account_id, NEW.due_date, NEW.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER avtalegiro_claims_unqueue AFTER UPDATE OF status ON avtalegiro_claims
    FOR EACH ROW WHEN OLD.status = 'Scheduled' AND NEW.status <> 'Scheduled' BEGIN
    DELETE FROM avtalegiro_claim_queue WHERE tenant_id = OLD.tenant_id AND account_id = OLD.account_id
        AND due_date = OLD.due_date AND claim_id = OLD.id;
END;
-- +goose StatementEnd

-- No foreign keys: each would be a lookup per sent claim. The export
-- writes the rows from the queue (whose claims exist) with the file it
-- inserts in the same transaction; claims and files are never deleted.
CREATE TABLE avtalegiro_sent_claims (
    tenant_id  TEXT NOT NULL,
    claim_id   TEXT NOT NULL,
    file_id    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, claim_id)
) WITHOUT ROWID;

CREATE VIEW avtalegiro_claim_states AS
SELECT c.id, c.tenant_id, c.account_id, c.mandate_id, c.transaction_id, c.invoice_id, c.kid, c.amount, c.due_date, c.notify,
    c.short_name, c.external_reference, c.notice_lines,
    CASE WHEN c.status = 'Scheduled' AND s.file_id IS NOT NULL THEN 'Sent' ELSE c.status END AS status,
    COALESCE(c.claim_file_id, s.file_id) AS claim_file_id, c.cancellation_file_id, c.payment_id, c.created_at, c.updated_at,
    f.created_at AS sent_at
FROM avtalegiro_claims c
LEFT JOIN avtalegiro_sent_claims s ON s.tenant_id = c.tenant_id AND s.claim_id = c.id
LEFT JOIN avtalegiro_files f ON f.tenant_id = s.tenant_id AND f.id = s.file_id;

DROP INDEX avtalegiro_claims_due;
DROP INDEX avtalegiro_claims_cancelling;
CREATE INDEX avtalegiro_claims_due ON avtalegiro_claims (tenant_id, account_id, due_date, id) WHERE cancel_pending;
CREATE INDEX avtalegiro_claims_cancelling ON avtalegiro_claims (tenant_id, account_id) WHERE cancel_pending;

-- +goose Down
-- Sendings recorded apart go back into the claim rows.
UPDATE avtalegiro_claims SET claim_file_id = (SELECT s.file_id FROM avtalegiro_sent_claims s
    WHERE s.tenant_id = avtalegiro_claims.tenant_id AND s.claim_id = avtalegiro_claims.id)
    WHERE claim_file_id IS NULL AND EXISTS (SELECT 1 FROM avtalegiro_sent_claims s
    WHERE s.tenant_id = avtalegiro_claims.tenant_id AND s.claim_id = avtalegiro_claims.id);
UPDATE avtalegiro_claims SET status = 'Sent' WHERE status = 'Scheduled' AND EXISTS (SELECT 1 FROM avtalegiro_sent_claims s
    WHERE s.tenant_id = avtalegiro_claims.tenant_id AND s.claim_id = avtalegiro_claims.id);
DROP INDEX avtalegiro_claims_cancelling;
DROP INDEX avtalegiro_claims_due;
CREATE INDEX avtalegiro_claims_due ON avtalegiro_claims (tenant_id, account_id, due_date, id) WHERE status = 'Scheduled';
CREATE INDEX avtalegiro_claims_cancelling ON avtalegiro_claims (tenant_id, account_id) WHERE status = 'CancellationPending';
DROP VIEW avtalegiro_claim_states;
DROP TABLE avtalegiro_sent_claims;
DROP TRIGGER avtalegiro_claims_unqueue;
DROP TRIGGER avtalegiro_claims_requeue;
DROP TRIGGER avtalegiro_claims_queue;
DROP TABLE avtalegiro_claim_queue;
CREATE TABLE avtalegiro_claim_queue (
    tenant_id   TEXT NOT NULL,
    account_id  TEXT NOT NULL,
    due_date    TEXT NOT NULL,
    claim_id    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, account_id, due_date, claim_id),
    FOREIGN KEY (tenant_id, claim_id) REFERENCES avtalegiro_claims (tenant_id, id) ON DELETE CASCADE
);
