-- +goose Up
-- Where each charge and allowance came from (docs/BILLING.md, "Ledger
-- check"): source_kind names the document that booked it and source_id
-- that document — CreditNote (a credit note's surplus), Payment (an
-- overpayment), Reminder (a reminder's fee), AutogiroRefund (a debit the
-- payer's bank paid back: the Autogiro transaction), Proration (the
-- invoice whose unused days a cancellation gave back) — or Manual (booked
-- through POST /subscriberaccount/{id}/charge or /allowance; no id). The
-- ledger check refuses an item without a source, or whose document does
-- not name it back with the same amount: an allowance out of nothing.
-- Existing items get the source their documents name; an unnamed
-- allowance described as unused time is a cancellation's; the rest were
-- booked through the API.
ALTER TABLE account_items ADD COLUMN source_kind TEXT;
ALTER TABLE account_items ADD COLUMN source_id TEXT;
UPDATE account_items SET source_kind = 'CreditNote', source_id = (SELECT c.id FROM credit_notes c
    WHERE c.tenant_id = account_items.tenant_id AND c.allowance_item_id = account_items.id ORDER BY c.id LIMIT 1)
    WHERE EXISTS (SELECT 1 FROM credit_notes c WHERE c.tenant_id = account_items.tenant_id AND c.allowance_item_id = account_items.id);
UPDATE account_items SET source_kind = 'Payment', source_id = (SELECT p.id FROM payments p
    WHERE p.tenant_id = account_items.tenant_id AND p.allowance_item_id = account_items.id ORDER BY p.id LIMIT 1)
    WHERE source_kind IS NULL
    AND EXISTS (SELECT 1 FROM payments p WHERE p.tenant_id = account_items.tenant_id AND p.allowance_item_id = account_items.id);
UPDATE account_items SET source_kind = 'Reminder', source_id = (SELECT r.id FROM reminders r
    WHERE r.tenant_id = account_items.tenant_id AND r.fee_item_id = account_items.id ORDER BY r.id LIMIT 1)
    WHERE source_kind IS NULL
    AND EXISTS (SELECT 1 FROM reminders r WHERE r.tenant_id = account_items.tenant_id AND r.fee_item_id = account_items.id);
UPDATE account_items SET source_kind = 'AutogiroRefund', source_id = (SELECT t.id FROM autogiro_transactions t
    WHERE t.tenant_id = account_items.tenant_id AND t.refund_item_id = account_items.id ORDER BY t.id LIMIT 1)
    WHERE source_kind IS NULL
    AND EXISTS (SELECT 1 FROM autogiro_transactions t WHERE t.tenant_id = account_items.tenant_id AND t.refund_item_id = account_items.id);
UPDATE account_items SET source_kind = 'Proration', source_id = (SELECT i.id FROM invoices i
    WHERE i.tenant_id = account_items.tenant_id AND i.account_id = account_items.account_id
    AND account_items.description LIKE 'Unused time of invoice ' || i.invoice_number || ' (%' ORDER BY i.id LIMIT 1)
    WHERE source_kind IS NULL AND kind = 'Allowance' AND description LIKE 'Unused time of invoice %';
UPDATE account_items SET source_kind = NULL WHERE source_kind = 'Proration' AND source_id IS NULL;
UPDATE account_items SET source_kind = 'Manual' WHERE source_kind IS NULL;
CREATE INDEX account_items_source ON account_items (tenant_id, source_id) WHERE source_id IS NOT NULL;

-- +goose Down
DROP INDEX account_items_source;
ALTER TABLE account_items DROP COLUMN source_id;
ALTER TABLE account_items DROP COLUMN source_kind;
