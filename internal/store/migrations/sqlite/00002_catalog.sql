-- +goose Up
-- The catalog: products, billing plans, template packages and package
-- chains. Money is INTEGER minor units of the package currency;
-- percentages (VAT rates, discounts, shares) are exact decimal text such
-- as '25' or '12.5'. UNIQUE (tenant_id, id) on each parent lets children
-- reference it together with the tenant, so a row can never point into
-- another tenant.

CREATE TABLE products (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id),
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    category     TEXT NOT NULL,
    vat_rate     TEXT NOT NULL,
    active       BOOLEAN NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id)
);

CREATE TABLE billing_plans (
    id                  TEXT PRIMARY KEY,
    tenant_id           TEXT NOT NULL REFERENCES tenants(id),
    name                TEXT NOT NULL,
    description         TEXT NOT NULL,
    interval_unit       TEXT NOT NULL,
    interval_count      INTEGER NOT NULL,
    minimum_due_days    INTEGER NOT NULL,
    payment_terms_days  INTEGER NOT NULL,
    created_at          TIMESTAMP NOT NULL,
    updated_at          TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id)
);

CREATE TABLE package_chains (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id),
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id)
);

CREATE TABLE template_packages (
    id                        TEXT PRIMARY KEY,
    tenant_id                 TEXT NOT NULL REFERENCES tenants(id),
    name                      TEXT NOT NULL,
    description               TEXT NOT NULL,
    currency                  TEXT NOT NULL,
    price                     INTEGER NOT NULL,
    units                     INTEGER NOT NULL,
    min_units                 INTEGER NOT NULL,
    max_units                 INTEGER NOT NULL,
    allow_price_override      BOOLEAN NOT NULL,
    allow_discount_override   BOOLEAN NOT NULL,
    number_of_editions        INTEGER,
    automatic_stop            BOOLEAN NOT NULL,
    permanent_discount        TEXT NOT NULL,
    contract_binding_periods  INTEGER,
    contract_terms            TEXT NOT NULL,
    package_chain_id          TEXT,
    archived_at               TIMESTAMP,
    created_at                TIMESTAMP NOT NULL,
    updated_at                TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, package_chain_id) REFERENCES package_chains (tenant_id, id)
);
CREATE INDEX template_packages_chain ON template_packages (tenant_id, package_chain_id);

-- Included (additional = false) and additional products of a template, in
-- the order given. share: percent of the base price (included products);
-- price: minor units per billing period (additional products).
CREATE TABLE template_package_products (
    tenant_id            TEXT NOT NULL,
    package_id           TEXT NOT NULL,
    additional           BOOLEAN NOT NULL,
    position             INTEGER NOT NULL,
    product_id           TEXT NOT NULL,
    share                TEXT,
    price                INTEGER,
    selected_by_default  BOOLEAN NOT NULL,
    PRIMARY KEY (package_id, additional, position),
    UNIQUE (package_id, product_id),
    FOREIGN KEY (tenant_id, package_id) REFERENCES template_packages (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, product_id) REFERENCES products (tenant_id, id)
);
CREATE INDEX template_package_products_product ON template_package_products (tenant_id, product_id);

CREATE TABLE template_package_billing_plans (
    tenant_id        TEXT NOT NULL,
    package_id       TEXT NOT NULL,
    position         INTEGER NOT NULL,
    billing_plan_id  TEXT NOT NULL,
    PRIMARY KEY (package_id, position),
    UNIQUE (package_id, billing_plan_id),
    FOREIGN KEY (tenant_id, package_id) REFERENCES template_packages (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, billing_plan_id) REFERENCES billing_plans (tenant_id, id)
);
CREATE INDEX template_package_billing_plans_plan ON template_package_billing_plans (tenant_id, billing_plan_id);

CREATE TABLE package_chain_steps (
    tenant_id   TEXT NOT NULL,
    chain_id    TEXT NOT NULL,
    step        INTEGER NOT NULL,
    package_id  TEXT NOT NULL,
    periods     INTEGER NOT NULL,
    PRIMARY KEY (chain_id, step),
    FOREIGN KEY (tenant_id, chain_id) REFERENCES package_chains (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, package_id) REFERENCES template_packages (tenant_id, id)
);
CREATE INDEX package_chain_steps_package ON package_chain_steps (tenant_id, package_id);
