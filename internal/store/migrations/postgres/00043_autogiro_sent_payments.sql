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

-- A waiting payment's queue row carries what its record needs (kind,
-- amount, date, reference), so the claim reads the queue rows it deletes
-- and no longer joins them to the transactions (≈ 70 ms of 100,000). The
-- copy is made by the queue trigger and kept by a trigger if one of those
-- columns of a waiting transaction ever changes (nothing changes them
-- today: only a sent payment's date moves).
ALTER TABLE autogiro_payment_queue ADD COLUMN kind text NOT NULL DEFAULT '';
ALTER TABLE autogiro_payment_queue ADD COLUMN amount bigint NOT NULL DEFAULT 0;
ALTER TABLE autogiro_payment_queue ADD COLUMN payment_date text NOT NULL DEFAULT '';
ALTER TABLE autogiro_payment_queue ADD COLUMN reference text NOT NULL DEFAULT '';
UPDATE autogiro_payment_queue q SET kind = t.kind, amount = t.amount, payment_date = t.payment_date, reference = t.reference
    FROM autogiro_transactions t WHERE t.tenant_id = q.tenant_id AND t.id = q.transaction_id;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION autogiro_queue_payment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO autogiro_payment_queue (tenant_id, account_id, transaction_id, mandate_id, kind, amount, payment_date, reference)
    VALUES (NEW.tenant_id, NEW.account_id, NEW.id, NEW.mandate_id, NEW.kind, NEW.amount, NEW.payment_date, NEW.reference)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION autogiro_requeue_payment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE autogiro_payment_queue SET kind = NEW.kind, amount = NEW.amount, payment_date = NEW.payment_date, reference = NEW.reference
    WHERE tenant_id = NEW.tenant_id AND account_id = NEW.account_id AND transaction_id = NEW.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER autogiro_transactions_requeue AFTER UPDATE OF kind, amount, payment_date, reference ON autogiro_transactions
    FOR EACH ROW WHEN (NEW.status = 'Created') EXECUTE FUNCTION autogiro_requeue_payment();

-- +goose Down
DROP TRIGGER autogiro_transactions_requeue ON autogiro_transactions;
DROP FUNCTION autogiro_requeue_payment();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION autogiro_queue_payment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO autogiro_payment_queue (tenant_id, account_id, transaction_id, mandate_id)
    VALUES (NEW.tenant_id, NEW.account_id, NEW.id, NEW.mandate_id) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd
ALTER TABLE autogiro_payment_queue DROP COLUMN reference;
ALTER TABLE autogiro_payment_queue DROP COLUMN payment_date;
ALTER TABLE autogiro_payment_queue DROP COLUMN amount;
ALTER TABLE autogiro_payment_queue DROP COLUMN kind;
ALTER TABLE autogiro_transactions ADD COLUMN sent_file_id uuid;
ALTER TABLE autogiro_transactions ADD COLUMN sent_on text;
UPDATE autogiro_transactions t SET sent_file_id = s.file_id, sent_on = s.sent_on,
    status = CASE WHEN t.status = 'Created' THEN 'Sent' ELSE t.status END
    FROM autogiro_sent_payments s WHERE s.tenant_id = t.tenant_id AND s.transaction_id = t.id;
DROP TABLE autogiro_sent_payments;
