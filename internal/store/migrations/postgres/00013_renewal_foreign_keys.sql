-- +goose Up
-- Foreign-key checks were over a third of PostgreSQL's work per renewal
-- with billing (each is a query that also locks the parent row;
-- docs/PERFORMANCE.md). This drops the checks that other keys already
-- imply, folds two into one stronger key, and drops the events' tenant
-- key (below).
--
-- tenant_id REFERENCES tenants: every one of these rows also references a
-- parent by (tenant_id, …), and that parent references the tenant.
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_tenant_id_fkey;
ALTER TABLE invoices DROP CONSTRAINT invoices_tenant_id_fkey;
ALTER TABLE payment_demands DROP CONSTRAINT payment_demands_tenant_id_fkey;
ALTER TABLE account_entries DROP CONSTRAINT account_entries_tenant_id_fkey;

-- Events (the outbox) are written only by the store, for the tenant of
-- the transaction that records them, which exists (the API resolves it
-- from an authenticated token, the engine holds its lease row) and is
-- never deleted: the key checked a fact that cannot be false, twice per
-- renewal, at 5 % of the throughput.
ALTER TABLE events DROP CONSTRAINT events_tenant_id_fkey;

-- An invoice's (and a payment demand's) account must be the account of
-- its subscriber: one key on (tenant_id, account_id, subscriber_id)
-- instead of one for the account and one for the subscriber. It still
-- keeps a subscriber with invoices from being deleted (through the
-- account).
ALTER TABLE subscriber_accounts ADD CONSTRAINT subscriber_accounts_tenant_id_id_subscriber_id_key
    UNIQUE (tenant_id, id, subscriber_id);
ALTER TABLE invoices
    DROP CONSTRAINT invoices_tenant_id_account_id_fkey,
    DROP CONSTRAINT invoices_tenant_id_subscriber_id_fkey,
    ADD CONSTRAINT invoices_account_subscriber_fkey FOREIGN KEY (tenant_id, account_id, subscriber_id)
        REFERENCES subscriber_accounts (tenant_id, id, subscriber_id);
ALTER TABLE payment_demands
    DROP CONSTRAINT payment_demands_tenant_id_account_id_fkey,
    ADD CONSTRAINT payment_demands_account_subscriber_fkey FOREIGN KEY (tenant_id, account_id, subscriber_id)
        REFERENCES subscriber_accounts (tenant_id, id, subscriber_id);

-- +goose Down
ALTER TABLE payment_demands
    DROP CONSTRAINT payment_demands_account_subscriber_fkey,
    ADD CONSTRAINT payment_demands_tenant_id_account_id_fkey FOREIGN KEY (tenant_id, account_id)
        REFERENCES subscriber_accounts (tenant_id, id);
ALTER TABLE invoices
    DROP CONSTRAINT invoices_account_subscriber_fkey,
    ADD CONSTRAINT invoices_tenant_id_account_id_fkey FOREIGN KEY (tenant_id, account_id)
        REFERENCES subscriber_accounts (tenant_id, id),
    ADD CONSTRAINT invoices_tenant_id_subscriber_id_fkey FOREIGN KEY (tenant_id, subscriber_id)
        REFERENCES subscribers (tenant_id, id);
ALTER TABLE subscriber_accounts DROP CONSTRAINT subscriber_accounts_tenant_id_id_subscriber_id_key;
ALTER TABLE events ADD CONSTRAINT events_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id);
ALTER TABLE account_entries ADD CONSTRAINT account_entries_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id);
ALTER TABLE payment_demands ADD CONSTRAINT payment_demands_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id);
ALTER TABLE invoices ADD CONSTRAINT invoices_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id);
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id);
