-- +goose Up
-- PostgreSQL's 00035 makes the export's claim (100,000 updates Created →
-- Sent) HOT: no index of autogiro_transactions names a column the claim
-- changes, what waits to be sent is a row of autogiro_payment_queue kept by
-- triggers, and "one live debit per invoice" is a unique index on the
-- generated column open_invoice_id. SQLite gets the same tables, columns and
-- indexes (one schema, one set of SQL) but no triggers and its old pending
-- predicate: here an update costs the same whichever index it touches, so
-- the claim stays one UPDATE through the pending index and the queue table
-- stays empty.
CREATE TABLE autogiro_payment_queue (
    tenant_id            TEXT NOT NULL,
    account_id           TEXT NOT NULL,
    transaction_id       TEXT NOT NULL,
    mandate_id           TEXT NOT NULL,
    PRIMARY KEY (tenant_id, account_id, transaction_id),
    FOREIGN KEY (tenant_id, transaction_id) REFERENCES autogiro_transactions (tenant_id, id) ON DELETE CASCADE
);

ALTER TABLE autogiro_transactions ADD COLUMN open_invoice_id TEXT
    GENERATED ALWAYS AS (CASE WHEN kind = 'Debit' AND status <> 'Cancelled' THEN invoice_id END) VIRTUAL;
DROP INDEX autogiro_transactions_invoice;
CREATE UNIQUE INDEX autogiro_transactions_invoice ON autogiro_transactions (tenant_id, open_invoice_id)
    WHERE open_invoice_id IS NOT NULL;

-- A stored export file in pieces of at most 256 KiB, written as the export
-- writes and read back one at a time by the download, so neither holds the
-- whole file (8 MB per 100,000 payments). Files stored before keep their
-- bytes in autogiro_export_files.content; a file in chunks has it empty.
CREATE TABLE autogiro_export_file_chunks (
    tenant_id            TEXT NOT NULL,
    file_id              TEXT NOT NULL,
    seq                  INTEGER NOT NULL,
    content              BLOB NOT NULL,
    PRIMARY KEY (tenant_id, file_id, seq),
    FOREIGN KEY (tenant_id, file_id) REFERENCES autogiro_export_files (tenant_id, id) ON DELETE CASCADE
);

-- The file's length in bytes, so describing a file does not read its content.
ALTER TABLE autogiro_export_files ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
UPDATE autogiro_export_files SET size = length(content);

-- +goose Down
-- (Going down drops the chunks: files exported since keep their row but
-- lose their content.)
ALTER TABLE autogiro_export_files DROP COLUMN size;
DROP TABLE autogiro_export_file_chunks;
DROP INDEX autogiro_transactions_invoice;
ALTER TABLE autogiro_transactions DROP COLUMN open_invoice_id;
CREATE UNIQUE INDEX autogiro_transactions_invoice ON autogiro_transactions (tenant_id, invoice_id)
    WHERE invoice_id IS NOT NULL AND kind = 'Debit' AND status <> 'Cancelled';
DROP TABLE autogiro_payment_queue;
