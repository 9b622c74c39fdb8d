-- +goose Up
-- PostgreSQL's 00043: the export records each payment it sends as a narrow
-- row here instead of rewriting the transaction (on SQLite that rewrite,
-- with the pending index entry it removed, was half of a 100,000-payment
-- export). A transaction whose stored status is Created and that has a row
-- here is Sent, in file file_id on sent_on. WITHOUT ROWID: the key is the
-- row, one b-tree insert per payment. No foreign keys, as on PostgreSQL
-- (a lookup per row; nothing here is ever deleted).
CREATE TABLE autogiro_sent_payments (
    tenant_id            TEXT NOT NULL,
    transaction_id       TEXT NOT NULL,
    file_id              TEXT NOT NULL,
    sent_on              TEXT NOT NULL,
    PRIMARY KEY (tenant_id, transaction_id)
) WITHOUT ROWID;
INSERT INTO autogiro_sent_payments (tenant_id, transaction_id, file_id, sent_on)
    SELECT tenant_id, id, sent_file_id, sent_on FROM autogiro_transactions WHERE sent_file_id IS NOT NULL;
ALTER TABLE autogiro_transactions DROP COLUMN sent_file_id;
ALTER TABLE autogiro_transactions DROP COLUMN sent_on;

-- PostgreSQL's queue rows carry what a payment's record needs; the table
-- stays empty here (SQLite claims through the pending index).
ALTER TABLE autogiro_payment_queue ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE autogiro_payment_queue ADD COLUMN amount INTEGER NOT NULL DEFAULT 0;
ALTER TABLE autogiro_payment_queue ADD COLUMN payment_date TEXT NOT NULL DEFAULT '';
ALTER TABLE autogiro_payment_queue ADD COLUMN reference TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE autogiro_payment_queue DROP COLUMN reference;
ALTER TABLE autogiro_payment_queue DROP COLUMN payment_date;
ALTER TABLE autogiro_payment_queue DROP COLUMN amount;
ALTER TABLE autogiro_payment_queue DROP COLUMN kind;
ALTER TABLE autogiro_transactions ADD COLUMN sent_file_id TEXT;
ALTER TABLE autogiro_transactions ADD COLUMN sent_on TEXT;
UPDATE autogiro_transactions SET sent_file_id = (SELECT s.file_id FROM autogiro_sent_payments s
        WHERE s.tenant_id = autogiro_transactions.tenant_id AND s.transaction_id = autogiro_transactions.id),
    sent_on = (SELECT s.sent_on FROM autogiro_sent_payments s
        WHERE s.tenant_id = autogiro_transactions.tenant_id AND s.transaction_id = autogiro_transactions.id);
UPDATE autogiro_transactions SET status = 'Sent' WHERE status = 'Created' AND sent_file_id IS NOT NULL;
DROP TABLE autogiro_sent_payments;
