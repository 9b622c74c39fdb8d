-- +goose Up
-- What an invoice needs to be paid and to be lawful (docs/BILLING.md,
-- "Seller details"): the organization's postal address, its bank account
-- (Norwegian kontonummer and/or IBAN with BIC), whether it is registered
-- for VAT ("MVA" after the organization number) and whether it is in the
-- Norwegian Register of Business Enterprises ("Foretaksregisteret").
-- Existing organizations are taken to be VAT-registered, since their plans
-- charge VAT, and Norwegian AS and ASA companies to be in the register,
-- where the law requires them to be.
ALTER TABLE organizations ADD COLUMN address_line1 text NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN address_line2 text NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN address_postal_code text NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN address_city text NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN address_country text NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN bank_account_number text NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN iban text NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN bic text NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN vat_registered boolean NOT NULL DEFAULT TRUE;
ALTER TABLE organizations ADD COLUMN business_register boolean NOT NULL DEFAULT FALSE;
UPDATE organizations SET business_register = TRUE
    WHERE country = 'NO' AND (upper(name) LIKE '% AS' OR upper(name) LIKE '% ASA');

-- +goose Down
ALTER TABLE organizations DROP COLUMN business_register;
ALTER TABLE organizations DROP COLUMN vat_registered;
ALTER TABLE organizations DROP COLUMN bic;
ALTER TABLE organizations DROP COLUMN iban;
ALTER TABLE organizations DROP COLUMN bank_account_number;
ALTER TABLE organizations DROP COLUMN address_country;
ALTER TABLE organizations DROP COLUMN address_city;
ALTER TABLE organizations DROP COLUMN address_postal_code;
ALTER TABLE organizations DROP COLUMN address_line2;
ALTER TABLE organizations DROP COLUMN address_line1;
