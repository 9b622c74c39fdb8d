-- +goose Up
-- Temporary and permanent delivery addresses (docs/PRINT.md, "Delivery
-- addresses", internal/delivery). The daily distribution list reads these
-- tables as they are named here: columns may be added, never renamed.
--
-- The tenant's postal codes: each code's carrier and route, and whether
-- it is delivered at all (reason says why not, for the client to show).
CREATE TABLE delivery_postal_codes (
    tenant_id    uuid NOT NULL REFERENCES tenants(id),
    country      text NOT NULL,
    postal_code  text NOT NULL,
    carrier      text NOT NULL,
    route        text NOT NULL,
    deliverable  boolean NOT NULL,
    reason       text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, country, postal_code)
);

-- A delivery address of a subscription series: subscription_id is the
-- series' last period, moved forward by renewals like delivery_stops.
-- Temporary: first_date through last_date, both included. Permanent: from
-- first_date on (last_date NULL), until a later permanent one. carrier and
-- route are looked up in delivery_postal_codes when the row is saved, the
-- surcharges (minor units) taken from the organization's rules then. The
-- invoice address (subscribers.address_*) is never changed by these rows.
CREATE TABLE delivery_addresses (
    tenant_id        uuid NOT NULL REFERENCES tenants(id),
    id               uuid NOT NULL,
    subscription_id  uuid NOT NULL,
    asked_on_id      uuid NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('Temporary', 'Permanent')),
    first_date       text NOT NULL,
    last_date        text,
    name             text NOT NULL,
    line1            text NOT NULL,
    line2            text NOT NULL,
    postal_code      text NOT NULL,
    city             text NOT NULL,
    country          text NOT NULL,
    carrier          text NOT NULL,
    route            text NOT NULL,
    surcharge_per_change   bigint NOT NULL DEFAULT 0,
    surcharge_per_edition  bigint NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    deleted_at       timestamptz,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX delivery_addresses_subscription ON delivery_addresses (tenant_id, subscription_id);
CREATE INDEX delivery_addresses_days ON delivery_addresses (tenant_id, first_date) WHERE deleted_at IS NULL;

-- A title's address rules, per organization (internal/delivery
-- AddressRules); an organization without a row has DefaultAddressRules.
-- Surcharges in the organization's currency's minor units, 0: none.
CREATE TABLE delivery_address_rules (
    tenant_id              uuid NOT NULL REFERENCES tenants(id),
    organization_id        uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    min_days               integer NOT NULL,
    max_days               integer NOT NULL,
    cutoff_hour            integer NOT NULL,
    notice_delivery_days   integer NOT NULL,
    surcharge_per_change   bigint NOT NULL,
    surcharge_per_edition  bigint NOT NULL,
    updated_at             timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, organization_id)
);

-- The surcharge of one address, booked once (the unique key) as a charge
-- on the subscriber account (charge_item_id, the ledger check's document;
-- null when it is nothing).
CREATE TABLE delivery_address_charges (
    tenant_id       uuid NOT NULL REFERENCES tenants(id),
    id              uuid NOT NULL,
    address_id      uuid NOT NULL,
    period_id       uuid NOT NULL,
    editions        integer NOT NULL,
    amount          bigint NOT NULL,
    charge_item_id  uuid,
    booked_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, address_id),
    FOREIGN KEY (tenant_id, address_id) REFERENCES delivery_addresses (tenant_id, id)
);

-- +goose Down
DROP TABLE delivery_address_charges;
DROP TABLE delivery_address_rules;
DROP TABLE delivery_addresses;
DROP TABLE delivery_postal_codes;
