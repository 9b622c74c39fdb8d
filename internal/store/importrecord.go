package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Kinds of import records.
const (
	ImportPaymentAgreement = "PaymentAgreement"
	ImportSubscription     = "Subscription"
)

// ImportRecord says that the record SourceID of another system (its kind
// of record Kind) was imported as KadensID (migration 00030). Fingerprint
// is the imported row's hash, to tell a rerun of the same row from a row
// that changed since.
type ImportRecord struct {
	Kind        string
	SourceID    string
	KadensID    string
	Fingerprint string
	ImportedAt  time.Time
}

// ImportRecords returns the tenant's import records of kind among
// sourceIDs, by source id.
func (tx *Tx) ImportRecords(ctx context.Context, kind string, sourceIDs []string) (map[string]ImportRecord, error) {
	out := make(map[string]ImportRecord, len(sourceIDs))
	err := tx.queryIn(ctx, `SELECT kind, source_id, kadens_id, fingerprint, imported_at FROM import_records
		WHERE tenant_id = $1 AND kind = $2 AND source_id IN `, ``, []any{kind}, sourceIDs,
		func(rows *sql.Rows) error {
			var r ImportRecord
			if err := rows.Scan(&r.Kind, &r.SourceID, &r.KadensID, &r.Fingerprint, &r.ImportedAt); err != nil {
				return err
			}
			r.ImportedAt = r.ImportedAt.UTC()
			out[r.SourceID] = r
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: import records: %w", err)
	}
	return out, nil
}

// LockImport makes imports of the tenant take turns (PostgreSQL: an
// advisory lock held to the end of tx; SQLite's one writer does it
// already). An import batch decides create or keep from the tenant's
// subscribers and import records, read in its transaction; without the
// turn, two imports of the same file at once would each read the other's
// rows as missing, under READ COMMITTED, and both write them (or fail on a
// unique key half-way). Taken first, the reads after it see what the
// other import committed.
func (tx *Tx) LockImport(ctx context.Context) error {
	if tx.s.engine != Postgres {
		return nil
	}
	if _, err := tx.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "tenant-import:"+tx.tenant); err != nil {
		return fmt.Errorf("store: import lock: %w", err)
	}
	return nil
}

// InsertImportRecords records imported rows in tx.
func (tx *Tx) InsertImportRecords(ctx context.Context, recs []ImportRecord) error {
	rows := make([][]any, len(recs))
	for i, r := range recs {
		rows[i] = []any{tx.tenant, r.Kind, r.SourceID, r.KadensID, r.Fingerprint, ts(r.ImportedAt)}
	}
	if err := tx.insertRows(ctx, "import_records", "tenant_id, kind, source_id, kadens_id, fingerprint, imported_at", rows, ""); err != nil {
		return fmt.Errorf("store: insert import records: %w", err)
	}
	return nil
}

// SubscribersByExternalID returns the tenant's subscribers among the
// external ids, by external id.
func (tx *Tx) SubscribersByExternalID(ctx context.Context, externalIDs []string) (map[string]Subscriber, error) {
	out := make(map[string]Subscriber, len(externalIDs))
	err := tx.queryIn(ctx, `SELECT `+subscriberColumns+` FROM subscribers WHERE tenant_id = $1 AND external_id IN `, ``, nil, externalIDs,
		func(rows *sql.Rows) error {
			sub, err := scanSubscriber(rows)
			if err != nil {
				return err
			}
			out[sub.ExternalID] = sub
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: subscribers by external id: %w", err)
	}
	return out, nil
}
