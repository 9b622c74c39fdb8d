-- +goose Up
-- Payments name their invoice by KID (POST /payment with a kid, OCR giro
-- and Autogiro settlement, GET /invoice?kid=): without this index each of
-- those read every invoice of the tenant.
CREATE INDEX invoices_kid ON invoices (tenant_id, kid);

-- +goose Down
DROP INDEX invoices_kid;
