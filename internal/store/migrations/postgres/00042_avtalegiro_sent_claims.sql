-- +goose Up
-- SQLite's 00042 records a claim's sending in a narrow row (claim → file)
-- instead of rewriting the wide claim row; readers see the claims through
-- avtalegiro_claim_states, where a claim whose row says Scheduled and that
-- has a sending is Sent. PostgreSQL gets the same table and view (one set
-- of SQL for the readers), but its export keeps marking the claims Sent
-- with its HOT update (00040), so here the table stays empty.
CREATE TABLE avtalegiro_sent_claims (
    tenant_id  uuid NOT NULL,
    claim_id   uuid NOT NULL,
    file_id    uuid NOT NULL,
    PRIMARY KEY (tenant_id, claim_id)
);

CREATE VIEW avtalegiro_claim_states AS
SELECT c.id, c.tenant_id, c.account_id, c.mandate_id, c.transaction_id, c.invoice_id, c.kid, c.amount, c.due_date, c.notify,
    c.short_name, c.external_reference, c.notice_lines,
    CASE WHEN c.status = 'Scheduled' AND s.file_id IS NOT NULL THEN 'Sent' ELSE c.status END AS status,
    COALESCE(c.claim_file_id, s.file_id) AS claim_file_id, c.cancellation_file_id, c.payment_id, c.created_at, c.updated_at,
    f.created_at AS sent_at
FROM avtalegiro_claims c
LEFT JOIN avtalegiro_sent_claims s ON s.tenant_id = c.tenant_id AND s.claim_id = c.id
LEFT JOIN avtalegiro_files f ON f.tenant_id = s.tenant_id AND f.id = s.file_id;

-- +goose Down
DROP VIEW avtalegiro_claim_states;
DROP TABLE avtalegiro_sent_claims;
