-- +goose Up
-- The catalog: products, billing plans, template packages and package
-- chains. Money is bigint minor units of the package currency;
-- percentages (VAT rates, discounts, shares) are exact numerics with at
-- most four decimals, read and written as decimal text such as '25' or
-- '12.5'. UNIQUE (tenant_id, id) on each parent lets children reference it
-- together with the tenant, so a row can never point into another tenant.

CREATE TABLE products (
    id           uuid PRIMARY KEY,
    tenant_id    uuid NOT NULL REFERENCES tenants(id),
    name         text NOT NULL,
    description  text NOT NULL,
    category     text NOT NULL,
    vat_rate     numeric(7,4) NOT NULL,
    active       boolean NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (tenant_id, id)
);

CREATE TABLE billing_plans (
    id                  uuid PRIMARY KEY,
    tenant_id           uuid NOT NULL REFERENCES tenants(id),
    name                text NOT NULL,
    description         text NOT NULL,
    interval_unit       text NOT NULL,
    interval_count      integer NOT NULL,
    minimum_due_days    integer NOT NULL,
    payment_terms_days  integer NOT NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    UNIQUE (tenant_id, id)
);

CREATE TABLE package_chains (
    id           uuid PRIMARY KEY,
    tenant_id    uuid NOT NULL REFERENCES tenants(id),
    name         text NOT NULL,
    description  text NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (tenant_id, id)
);

CREATE TABLE template_packages (
    id                        uuid PRIMARY KEY,
    tenant_id                 uuid NOT NULL REFERENCES tenants(id),
    name                      text NOT NULL,
    description               text NOT NULL,
    currency                  text NOT NULL,
    price                     bigint NOT NULL,
    units                     integer NOT NULL,
    min_units                 integer NOT NULL,
    max_units                 integer NOT NULL,
    allow_price_override      boolean NOT NULL,
    allow_discount_override   boolean NOT NULL,
    number_of_editions        integer,
    automatic_stop            boolean NOT NULL,
    permanent_discount        numeric(7,4) NOT NULL,
    contract_binding_periods  integer,
    contract_terms            text NOT NULL,
    package_chain_id          uuid,
    archived_at               timestamptz,
    created_at                timestamptz NOT NULL,
    updated_at                timestamptz NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, package_chain_id) REFERENCES package_chains (tenant_id, id)
);
CREATE INDEX template_packages_chain ON template_packages (tenant_id, package_chain_id);

-- Included (additional = false) and additional products of a template, in
-- the order given. share: percent of the base price (included products);
-- price: minor units per billing period (additional products).
CREATE TABLE template_package_products (
    tenant_id            uuid NOT NULL,
    package_id           uuid NOT NULL,
    additional           boolean NOT NULL,
    position             integer NOT NULL,
    product_id           uuid NOT NULL,
    share                numeric(7,4),
    price                bigint,
    selected_by_default  boolean NOT NULL,
    PRIMARY KEY (package_id, additional, position),
    UNIQUE (package_id, product_id),
    FOREIGN KEY (tenant_id, package_id) REFERENCES template_packages (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, product_id) REFERENCES products (tenant_id, id)
);
CREATE INDEX template_package_products_product ON template_package_products (tenant_id, product_id);

CREATE TABLE template_package_billing_plans (
    tenant_id        uuid NOT NULL,
    package_id       uuid NOT NULL,
    position         integer NOT NULL,
    billing_plan_id  uuid NOT NULL,
    PRIMARY KEY (package_id, position),
    UNIQUE (package_id, billing_plan_id),
    FOREIGN KEY (tenant_id, package_id) REFERENCES template_packages (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, billing_plan_id) REFERENCES billing_plans (tenant_id, id)
);
CREATE INDEX template_package_billing_plans_plan ON template_package_billing_plans (tenant_id, billing_plan_id);

CREATE TABLE package_chain_steps (
    tenant_id   uuid NOT NULL,
    chain_id    uuid NOT NULL,
    step        integer NOT NULL,
    package_id  uuid NOT NULL,
    periods     integer NOT NULL,
    PRIMARY KEY (chain_id, step),
    FOREIGN KEY (tenant_id, chain_id) REFERENCES package_chains (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, package_id) REFERENCES template_packages (tenant_id, id)
);
CREATE INDEX package_chain_steps_package ON package_chain_steps (tenant_id, package_id);
