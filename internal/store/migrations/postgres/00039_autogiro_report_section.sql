-- +goose Up
-- The report section (docs/AUTOGIRO.md "Import") that last changed a
-- transaction's state. The import matches a payment specification's
-- records against the database a batch at a time instead of holding the
-- account's open transactions in memory; a transaction an earlier batch
-- of the same section settled must still be found by a later record that
-- names it (reported as unchanged, as before), and this mark is how. Not
-- indexed: the lookup goes through the mandate, and an unindexed column
-- keeps the state update a HOT update.
ALTER TABLE autogiro_transactions ADD COLUMN report_section text;

-- +goose Down
ALTER TABLE autogiro_transactions DROP COLUMN report_section;
