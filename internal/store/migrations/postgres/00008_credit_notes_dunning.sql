-- +goose Up
-- Credit notes, proration policies and dunning (docs/BILLING.md, part B).

-- How a plan change or cancellation settles the part of a period that will
-- not be used: a paid period gives an allowance for the remaining time; an
-- unpaid one has its invoice credited down to the consumed time.
CREATE TABLE proration_policies (
    id                  uuid PRIMARY KEY,
    tenant_id           uuid NOT NULL REFERENCES tenants(id),
    name                text NOT NULL,
    paid_proration      text NOT NULL CHECK (paid_proration IN ('GenerateAllowanceForRemainingTime', 'NoProration')),
    not_paid_proration  text NOT NULL CHECK (not_paid_proration IN ('GenerateChargeForConsumedTime', 'NoProration')),
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    UNIQUE (tenant_id, id)
);

-- Reminders after the due date and the payment stop. reminder_days is a
-- JSON array of days after the due date, ascending; the fee is a decimal
-- amount in the demand's currency, booked as a charge per reminder.
CREATE TABLE dunning_processes (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants(id),
    name                 text NOT NULL,
    reminder_days        text NOT NULL,
    reminder_fee         text NOT NULL,
    payment_stop_days    integer,
    proration_policy_id  uuid,
    is_default           boolean NOT NULL DEFAULT false,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, proration_policy_id) REFERENCES proration_policies (tenant_id, id)
);
CREATE UNIQUE INDEX dunning_processes_default ON dunning_processes (tenant_id) WHERE is_default;

ALTER TABLE billing_plans ADD COLUMN dunning_process_id uuid;

-- A demand's dunning: the process chosen at issue, how many reminders went
-- out, and when the next dunning action (reminder or payment stop) is due;
-- NULL once the demand is settled or dunning has finished.
ALTER TABLE payment_demands ADD COLUMN dunning_process_id uuid;
ALTER TABLE payment_demands ADD COLUMN reminders_sent integer NOT NULL DEFAULT 0;
ALTER TABLE payment_demands ADD COLUMN next_dunning_at timestamptz;
CREATE INDEX payment_demands_dunning ON payment_demands (tenant_id, next_dunning_at, id) WHERE next_dunning_at IS NOT NULL;

CREATE TABLE reminders (
    id                 uuid PRIMARY KEY,
    tenant_id          uuid NOT NULL REFERENCES tenants(id),
    payment_demand_id  uuid NOT NULL,
    invoice_id         uuid NOT NULL,
    subscriber_id      uuid NOT NULL,
    reminder_number    integer NOT NULL,
    fee                bigint NOT NULL,
    fee_item_id        uuid,
    issued_at          timestamptz NOT NULL,
    created_at         timestamptz NOT NULL,
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, payment_demand_id, reminder_number),
    FOREIGN KEY (tenant_id, payment_demand_id) REFERENCES payment_demands (tenant_id, id),
    FOREIGN KEY (tenant_id, fee_item_id) REFERENCES account_items (tenant_id, id)
);

-- Credit notes: immutable documents numbered in their own gap-free series
-- per organization. gross is what the note credits (positive); applied is
-- the part that reduced the demand's outstanding amount, surplus the rest,
-- booked as an allowance (allowance_item_id) on the subscriber account.
CREATE TABLE credit_notes (
    id                  uuid PRIMARY KEY,
    tenant_id           uuid NOT NULL REFERENCES tenants(id),
    organization_id     uuid NOT NULL,
    credit_note_number  bigint NOT NULL CHECK (credit_note_number >= 1),
    invoice_id          uuid NOT NULL,
    payment_demand_id   uuid NOT NULL,
    account_id          uuid NOT NULL,
    subscriber_id       uuid NOT NULL,
    subscription_id     uuid,
    currency            text NOT NULL,
    reason              text NOT NULL,
    issued_at           timestamptz NOT NULL,
    issue_date          text NOT NULL,
    lines               text NOT NULL,
    vat_totals          text NOT NULL,
    net                 bigint NOT NULL,
    vat                 bigint NOT NULL,
    gross               bigint NOT NULL CHECK (gross > 0),
    applied             bigint NOT NULL CHECK (applied >= 0),
    surplus             bigint NOT NULL CHECK (surplus >= 0),
    allowance_item_id   uuid,
    created_at          timestamptz NOT NULL,
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, organization_id, credit_note_number),
    FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
    FOREIGN KEY (tenant_id, payment_demand_id) REFERENCES payment_demands (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES subscriber_accounts (tenant_id, id),
    FOREIGN KEY (tenant_id, allowance_item_id) REFERENCES account_items (tenant_id, id)
);
CREATE INDEX credit_notes_invoice ON credit_notes (tenant_id, invoice_id);
CREATE INDEX credit_notes_subscriber ON credit_notes (tenant_id, subscriber_id, id);

ALTER TABLE account_entries ADD COLUMN credit_note_id uuid;
