-- +goose Up
-- A completed debit the payer's bank paid back (TK77 in a payment
-- specification, docs/AUTOGIRO.md): when and why, and the charge that puts
-- the amount back on the subscriber's account. refund_pending marks a
-- refund recorded by an import whose charge is not booked yet (the import's
-- transaction commits first, the charge follows, as payments do).
ALTER TABLE autogiro_transactions ADD COLUMN refund_date text;
ALTER TABLE autogiro_transactions ADD COLUMN refund_code text NOT NULL DEFAULT '';
ALTER TABLE autogiro_transactions ADD COLUMN refund_pending boolean NOT NULL DEFAULT FALSE;
ALTER TABLE autogiro_transactions ADD COLUMN refund_item_id uuid;
CREATE INDEX autogiro_transactions_refund_pending ON autogiro_transactions (tenant_id) WHERE refund_pending;

-- +goose Down
DROP INDEX autogiro_transactions_refund_pending;
ALTER TABLE autogiro_transactions DROP COLUMN refund_item_id;
ALTER TABLE autogiro_transactions DROP COLUMN refund_pending;
ALTER TABLE autogiro_transactions DROP COLUMN refund_code;
ALTER TABLE autogiro_transactions DROP COLUMN refund_date;
