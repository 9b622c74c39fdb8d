-- +goose Up
-- AvtaleGiro file contents in chunks (store.avgChunkSize each, the last
-- shorter), so importing, exporting, downloading and submitting a file
-- holds one chunk in memory, not the file. A file stored before this
-- migration becomes one chunk of its whole content.
CREATE TABLE avtalegiro_file_chunks (
    tenant_id  TEXT NOT NULL,
    file_id    TEXT NOT NULL,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    data       BLOB NOT NULL,
    PRIMARY KEY (tenant_id, file_id, seq),
    FOREIGN KEY (tenant_id, file_id) REFERENCES avtalegiro_files (tenant_id, id)
);
INSERT INTO avtalegiro_file_chunks (tenant_id, file_id, seq, data)
    SELECT tenant_id, id, 0, content FROM avtalegiro_files WHERE length(content) > 0;
ALTER TABLE avtalegiro_files DROP COLUMN content;

-- Settlement reads the open payments in id order, a batch at a time: by
-- this index it starts where the open ones are, instead of sorting every
-- open payment for each batch (quadratic in a file's payments).
DROP INDEX avtalegiro_payments_open;
CREATE INDEX avtalegiro_payments_open ON avtalegiro_payments (tenant_id, id) WHERE payment_id IS NULL AND problem IS NULL;

-- +goose Down
DROP INDEX avtalegiro_payments_open;
CREATE INDEX avtalegiro_payments_open ON avtalegiro_payments (tenant_id, file_id) WHERE payment_id IS NULL AND problem IS NULL;
ALTER TABLE avtalegiro_files ADD COLUMN content BLOB NOT NULL DEFAULT X'';
UPDATE avtalegiro_files SET content = COALESCE((SELECT group_concat(data, '') FROM
    (SELECT data FROM avtalegiro_file_chunks c WHERE c.tenant_id = avtalegiro_files.tenant_id AND c.file_id = avtalegiro_files.id ORDER BY seq)), X'');
DROP TABLE avtalegiro_file_chunks;
