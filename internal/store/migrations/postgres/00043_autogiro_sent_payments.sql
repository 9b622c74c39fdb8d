-- +goose Up
-- An export sends up to 100,000 debits. Marking each Sent rewrote its wide
-- transaction row (status, file, date, updated time): on PostgreSQL a HOT
-- update, still most of the server's CPU per file; on SQLite half of the
-- export (docs/PERFORMANCE.md, "Autogiro"). Now the export inserts one
-- narrow row per payment here and leaves the transaction as it is: a
-- transaction whose stored status is Created and that has a row here is
-- Sent, in file file_id on sent_on (the store derives the status; every
-- other status is stored as before). Sent payments of earlier files move
-- here, and the columns that held their file and day go.
--
-- No foreign keys: checking them was a lookup per inserted row. The export
-- inserts the row in the transaction that inserts the file, and neither
-- transactions nor files are ever deleted.
CREATE TABLE autogiro_sent_payments (
    tenant_id            uuid NOT NULL,
    transaction_id       uuid NOT NULL,
    file_id              uuid NOT NULL,
    sent_on              text NOT NULL,
    PRIMARY KEY (tenant_id, transaction_id)
);
INSERT INTO autogiro_sent_payments (tenant_id, transaction_id, file_id, sent_on)
    SELECT tenant_id, id, sent_file_id, sent_on FROM autogiro_transactions WHERE sent_file_id IS NOT NULL;
ALTER TABLE autogiro_transactions DROP COLUMN sent_file_id;
ALTER TABLE autogiro_transactions DROP COLUMN sent_on;

-- +goose Down
ALTER TABLE autogiro_transactions ADD COLUMN sent_file_id uuid;
ALTER TABLE autogiro_transactions ADD COLUMN sent_on text;
UPDATE autogiro_transactions t SET sent_file_id = s.file_id, sent_on = s.sent_on,
    status = CASE WHEN t.status = 'Created' THEN 'Sent' ELSE t.status END
    FROM autogiro_sent_payments s WHERE s.tenant_id = t.tenant_id AND s.transaction_id = t.id;
DROP TABLE autogiro_sent_payments;
