-- +goose Up
-- The export marked up to 100,000 claims Sent by updating their rows (HOT
-- since 00040, still ≈0.3–0.4 s of server CPU per 100,000 claims, and
-- SQLite's rewrite of the wide rows was half its export: docs/PERFORMANCE.md,
-- "AvtaleGiro files"). Now it records the sending in a narrow row per
-- claim (claim → file), written from the queue rows it deletes in the same
-- statement, and leaves the claim row alone:
--
-- * avtalegiro_sent_claims: one row per claim sent in a file.
-- * avtalegiro_claim_states: the claims as readers see them. A claim whose
--   row says Scheduled and that has a sending is Sent, with that file as
--   its claim file; sent_at is the file's time (updatedAt is the later of
--   the two). Any later change (paid, cancellation pending, cancelled) is
--   written to the claim row as before and wins.
-- * A cancellation of a scheduled claim deletes its queue row first: the
--   queue row is where it and an export meet (store.unqueueClaim).
--
-- No foreign keys on the sendings: each would be a check per sent claim.
-- The export writes them from queue rows (whose claims exist) with the file
-- it inserts in the same transaction; claims and files are never deleted.
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
-- Sendings recorded apart go back into the claim rows.
UPDATE avtalegiro_claims c SET claim_file_id = s.file_id FROM avtalegiro_sent_claims s
    WHERE s.tenant_id = c.tenant_id AND s.claim_id = c.id AND c.claim_file_id IS NULL;
UPDATE avtalegiro_claims c SET status = 'Sent' FROM avtalegiro_sent_claims s
    WHERE s.tenant_id = c.tenant_id AND s.claim_id = c.id AND c.status = 'Scheduled';
DROP VIEW avtalegiro_claim_states;
DROP TABLE avtalegiro_sent_claims;
