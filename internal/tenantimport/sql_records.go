package tenantimport

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// Kinds of import records.
const (
	KindPaymentAgreement = "PaymentAgreement"
	KindSubscription     = "Subscription"
)

// ImportRecord says that the record SourceID of another system (its kind
// of record Kind) was imported as KadensID (the import_records table,
// migration 00030). Fingerprint is the imported row's hash, to tell a
// rerun of the same row from a row that changed since.
type ImportRecord struct {
	Kind        string
	SourceID    string
	KadensID    string
	Fingerprint string
	ImportedAt  time.Time
}

// ImportRecords returns the tenant's import records of kind among
// sourceIDs, by source id, read in tx.
func ImportRecords(ctx context.Context, tx *store.Tx, kind string, sourceIDs []string) (map[string]ImportRecord, error) {
	out := make(map[string]ImportRecord, len(sourceIDs))
	for len(sourceIDs) > 0 {
		n := min(len(sourceIDs), store.MaxChunk)
		// The list is padded to a power of two, so the statement has few
		// texts and Query keeps each prepared.
		list, args := store.InList(sourceIDs[:n], 3)
		recs, err := store.QueryAll(ctx, tx, scanImportRecord,
			`SELECT kind, source_id, kadens_id, fingerprint, imported_at FROM import_records
			WHERE tenant_id = $1 AND kind = $2 AND source_id IN `+list, append([]any{tx.TenantID(), kind}, args...)...)
		if err != nil {
			return nil, fmt.Errorf("tenantimport: import records: %w", err)
		}
		for _, r := range recs {
			out[r.SourceID] = r
		}
		sourceIDs = sourceIDs[n:]
	}
	return out, nil
}

func scanImportRecord(row store.Scanner) (ImportRecord, error) {
	var r ImportRecord
	if err := row.Scan(&r.Kind, &r.SourceID, &r.KadensID, &r.Fingerprint, &r.ImportedAt); err != nil {
		return ImportRecord{}, err
	}
	r.ImportedAt = r.ImportedAt.UTC()
	return r, nil
}

// lockImport makes imports of the tenant take turns (PostgreSQL: an
// advisory lock held to the end of tx; SQLite's one writer does it
// already). An import batch decides create or keep from the tenant's
// subscribers and import records, read in its transaction; without the
// turn, two imports of the same file at once would each read the other's
// rows as missing, under READ COMMITTED, and both write them (or fail on a
// unique key half-way). Taken first, the reads after it see what the
// other import committed.
func lockImport(ctx context.Context, tx *store.Tx) error {
	if tx.Engine() != store.Postgres {
		return nil
	}
	// Once per batch: unprepared, as a statement kept prepared for it
	// would gain nothing.
	if _, err := tx.ExecBuilt(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "tenant-import:"+tx.TenantID()); err != nil {
		return fmt.Errorf("tenantimport: import lock: %w", err)
	}
	return nil
}

// insertImportRecords records imported rows in tx.
func insertImportRecords(ctx context.Context, tx *store.Tx, recs []ImportRecord) error {
	rows := make([][]any, len(recs))
	for i, r := range recs {
		rows[i] = []any{tx.TenantID(), r.Kind, r.SourceID, r.KadensID, r.Fingerprint, store.TimeParam(r.ImportedAt)}
	}
	if err := tx.InsertRows(ctx, "import_records", "tenant_id, kind, source_id, kadens_id, fingerprint, imported_at", rows, ""); err != nil {
		return fmt.Errorf("tenantimport: insert import records: %w", err)
	}
	return nil
}
