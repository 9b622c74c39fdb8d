-- +goose Up
-- An export claims 100,000 debits by changing them Created → Sent. With an
-- index naming status that change was a non-HOT update: a new row version
-- with new entries in every index of the table, 1 s of server CPU per
-- 100,000 (docs/PERFORMANCE.md, "Autogiro"). Here no index of
-- autogiro_transactions names a column the claim changes, and the pages
-- keep room for the new versions, so the claim's updates are HOT (heap
-- only, on the same page):
--
-- * What is waiting to be sent is a row of autogiro_payment_queue, put
--   there by a trigger when a transaction is created (or set back to
--   Created) and taken out by the export's claim (or by a trigger when a
--   waiting transaction is cancelled). The pending index keeps only the
--   cancellations and settlements to do.
-- * "One live debit per invoice" is a unique index on a generated column,
--   open_invoice_id (the invoice of a debit not cancelled): Created → Sent
--   leaves it as it was.
--
-- SQLite's 00035 has the same tables, columns and indexes but no triggers:
-- there an update costs the same whichever index it touches, and the claim
-- stays one UPDATE through the pending index (autogiro_payment_queue stays
-- empty).
CREATE TABLE autogiro_payment_queue (
    tenant_id            uuid NOT NULL,
    account_id           uuid NOT NULL,
    transaction_id       uuid NOT NULL,
    mandate_id           uuid NOT NULL,
    PRIMARY KEY (tenant_id, account_id, transaction_id),
    FOREIGN KEY (tenant_id, transaction_id) REFERENCES autogiro_transactions (tenant_id, id) ON DELETE CASCADE
);

-- +goose StatementBegin
CREATE FUNCTION autogiro_queue_payment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO autogiro_payment_queue (tenant_id, account_id, transaction_id, mandate_id)
    VALUES (NEW.tenant_id, NEW.account_id, NEW.id, NEW.mandate_id) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION autogiro_unqueue_payment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM autogiro_payment_queue WHERE tenant_id = OLD.tenant_id AND account_id = OLD.account_id
        AND transaction_id = OLD.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER autogiro_transactions_queue AFTER INSERT OR UPDATE OF status ON autogiro_transactions
    FOR EACH ROW WHEN (NEW.status = 'Created') EXECUTE FUNCTION autogiro_queue_payment();
-- Only a cancellation: the claim (Created → Sent) has taken its rows out
-- already, and a trigger call per claimed row would cost what HOT saves.
CREATE TRIGGER autogiro_transactions_unqueue AFTER UPDATE OF status ON autogiro_transactions
    FOR EACH ROW WHEN (OLD.status = 'Created' AND NEW.status = 'Cancelled') EXECUTE FUNCTION autogiro_unqueue_payment();

INSERT INTO autogiro_payment_queue (tenant_id, account_id, transaction_id, mandate_id)
    SELECT tenant_id, account_id, id, mandate_id FROM autogiro_transactions WHERE status = 'Created';

ALTER TABLE autogiro_transactions ADD COLUMN open_invoice_id uuid
    GENERATED ALWAYS AS (CASE WHEN kind = 'Debit' AND status <> 'Cancelled' THEN invoice_id END) STORED;
DROP INDEX autogiro_transactions_invoice;
CREATE UNIQUE INDEX autogiro_transactions_invoice ON autogiro_transactions (tenant_id, open_invoice_id)
    WHERE open_invoice_id IS NOT NULL;
DROP INDEX autogiro_transactions_pending;
CREATE INDEX autogiro_transactions_pending ON autogiro_transactions (tenant_id, account_id)
    WHERE cancel_pending OR settle_pending;
-- Room on each page for the claim's new row versions (a HOT update needs
-- it on the same page). Pages written before keep their fill until
-- rewritten.
ALTER TABLE autogiro_transactions SET (fillfactor = 45);

-- A stored export file in pieces of at most 256 KiB, written as the export
-- writes and read back one at a time by the download, so neither holds the
-- whole file (8 MB per 100,000 payments). Files stored before keep their
-- bytes in autogiro_export_files.content; a file in chunks has it empty.
CREATE TABLE autogiro_export_file_chunks (
    tenant_id            uuid NOT NULL,
    file_id              uuid NOT NULL,
    seq                  integer NOT NULL,
    content              bytea NOT NULL,
    PRIMARY KEY (tenant_id, file_id, seq),
    FOREIGN KEY (tenant_id, file_id) REFERENCES autogiro_export_files (tenant_id, id) ON DELETE CASCADE
);

-- The file's length in bytes, so describing a file does not read its content.
ALTER TABLE autogiro_export_files ADD COLUMN size bigint NOT NULL DEFAULT 0;
UPDATE autogiro_export_files SET size = length(content);

-- +goose Down
-- (Going down drops the chunks: files exported since keep their row but
-- lose their content.)
ALTER TABLE autogiro_export_files DROP COLUMN size;
DROP TABLE autogiro_export_file_chunks;
ALTER TABLE autogiro_transactions RESET (fillfactor);
DROP INDEX autogiro_transactions_pending;
CREATE INDEX autogiro_transactions_pending ON autogiro_transactions (tenant_id, account_id)
    WHERE status = 'Created' OR cancel_pending OR settle_pending;
DROP INDEX autogiro_transactions_invoice;
ALTER TABLE autogiro_transactions DROP COLUMN open_invoice_id;
CREATE UNIQUE INDEX autogiro_transactions_invoice ON autogiro_transactions (tenant_id, invoice_id)
    WHERE invoice_id IS NOT NULL AND kind = 'Debit' AND status <> 'Cancelled';
DROP TRIGGER autogiro_transactions_unqueue ON autogiro_transactions;
DROP TRIGGER autogiro_transactions_queue ON autogiro_transactions;
DROP FUNCTION autogiro_unqueue_payment();
DROP FUNCTION autogiro_queue_payment();
DROP TABLE autogiro_payment_queue;
