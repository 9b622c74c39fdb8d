-- +goose Up
-- Binding periods (docs/ORDERS.md, "Binding periods"). A template's
-- contract says how a cancellation during the binding is handled
-- (EndOfBinding or ChargeRemainder; '' on templates stored before, read as
-- EndOfBinding). A period carries its series' binding: when it ends and
-- the rule it was started with (renewals and chain steps copy them, a plan
-- change keeps or restarts them), and a cancellation asked during an
-- EndOfBinding binding, which waits on the series' last period until the
-- period ending at the binding end is created cancelled.
ALTER TABLE template_packages ADD COLUMN contract_early_cancellation TEXT NOT NULL DEFAULT '';
ALTER TABLE subscriptions ADD COLUMN binding_ends_at TIMESTAMP;
ALTER TABLE subscriptions ADD COLUMN binding_rule TEXT NOT NULL DEFAULT '';
ALTER TABLE subscriptions ADD COLUMN scheduled_cancel_at TIMESTAMP;
ALTER TABLE subscriptions ADD COLUMN scheduled_cancel_reason TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE subscriptions DROP COLUMN scheduled_cancel_reason;
ALTER TABLE subscriptions DROP COLUMN scheduled_cancel_at;
ALTER TABLE subscriptions DROP COLUMN binding_rule;
ALTER TABLE subscriptions DROP COLUMN binding_ends_at;
ALTER TABLE template_packages DROP COLUMN contract_early_cancellation;
