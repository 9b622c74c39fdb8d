package autogiro

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Autogiro exports and imports: the SQL of internal/autogiro's export
// (claiming what is pending, so nothing goes out twice) and import
// (matching report records, recording files by their hash).

// AccountsOf returns an organization's live accounts, store.ErrNotFound
// when the tenant has no such organization.
func AccountsOf(ctx context.Context, tx *store.Tx, organizationID string) ([]AutogiroAccount, error) {
	var one int
	if !store.ValidID(organizationID) {
		return nil, store.ErrNotFound
	}
	if err := tx.QueryRow(ctx, `SELECT 1 FROM organizations WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), organizationID).Scan(&one); err != nil {
		return nil, store.NotFound(err)
	}
	return store.QueryAll(ctx, tx, scanAGAccount, `SELECT `+agAccountColumns+` FROM autogiro_accounts
		WHERE tenant_id = $1 AND organization_id = $2 AND deleted_at IS NULL ORDER BY bankgiro_number`, tx.TenantID(), organizationID)
}

// AutogiroMandateItem is a mandate as an export or import needs it.
type AutogiroMandateItem struct {
	ID, PayerNumber, Clearing, Account, PayerID string
	InternetBank                                bool
}

func scanAGItem(r store.Scanner) (AutogiroMandateItem, error) {
	var m AutogiroMandateItem
	return m, r.Scan(&m.ID, &m.PayerNumber, &m.Clearing, &m.Account, &m.PayerID, &m.InternetBank)
}

// ClaimMandates marks the account's new mandates Sent in file
// fileID and returns them. The UPDATE is the claim: a concurrent export
// waits for this one's row locks (PostgreSQL) or for the write lock
// (SQLite) and then finds them Sent, so no mandate goes out twice.
func ClaimMandates(ctx context.Context, tx *store.Tx, accountID, fileID, today string, now time.Time) ([]AutogiroMandateItem, error) {
	return store.QueryAll(ctx, tx, scanAGItem, `UPDATE autogiro_mandates SET status = 'Sent', sent_file_id = $3, sent_on = $4,
		updated_at = $5 WHERE tenant_id = $1 AND account_id = $2 AND status = 'Created'
		RETURNING id, payer_number, clearing_number, bank_account_number, payer_id, internet_bank`,
		tx.TenantID(), accountID, fileID, today, store.TimeParam(now))
}

// ClaimMandateCancellations takes the account's pending mandate
// cancellations (TK03) into file fileID, except those of mandates sent
// today: Bankgirot asks that a mandate and its cancellation not arrive on
// the same day.
func ClaimMandateCancellations(ctx context.Context, tx *store.Tx, accountID, fileID, today string, now time.Time) ([]AutogiroMandateItem, error) {
	return store.QueryAll(ctx, tx, scanAGItem, `UPDATE autogiro_mandates SET cancel_pending = FALSE, cancel_file_id = $3,
		updated_at = $5 WHERE tenant_id = $1 AND account_id = $2 AND cancel_pending AND (sent_on IS NULL OR sent_on < $4)
		RETURNING id, payer_number, clearing_number, bank_account_number, payer_id, internet_bank`,
		tx.TenantID(), accountID, fileID, today, store.TimeParam(now))
}

// PayerNumbers maps the account's mandates to their payer numbers.
func PayerNumbers(ctx context.Context, tx *store.Tx, accountID string) (map[string]string, error) {
	rows, err := tx.Query(ctx, `SELECT id, payer_number FROM autogiro_mandates WHERE tenant_id = $1 AND account_id = $2`,
		tx.TenantID(), accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, payer string
		if err := rows.Scan(&id, &payer); err != nil {
			return nil, err
		}
		out[id] = payer
	}
	return out, rows.Err()
}

// AutogiroPaymentItem is a transaction as an export or import needs it.
type AutogiroPaymentItem struct {
	ID, MandateID, Kind, PaymentDate, Reference, Status string
	Amount                                              int64
	PayerNumber                                         string // filled by the caller (export) or the query (import)
	// HasInvoice: a debit of an invoice, whose result becomes a payment.
	HasInvoice bool
	// Refunded: the payer's bank paid it back (CompletedDebits).
	Refunded bool
}

// ClaimPayments sends the account's new transactions of active
// mandates in file fileID, moving a payment date earlier than earliest
// (the lead time) to it, and hands them to fn in the file's order
// (payment date, payer number, id) with their payer numbers, one row at a
// time: the export holds none of them, so its memory does not grow with
// the file. Transactions of mandates not active yet wait: Bankgirot
// rejects a payment whose mandate it has not confirmed.
//
// Sending a transaction is a narrow row of autogiro_sent_payments
// (migration 00043), not a rewrite of the transaction: the transaction
// stays stored as Created and reads as Sent. Only a transaction whose
// date moves is updated (rare: it was created too close to its date).
//
// On PostgreSQL the claim takes the transactions out of
// autogiro_payment_queue (migration 00035), whose rows are exactly the
// waiting transactions (kept by triggers) and carry what the records need
// (migration 00043): a concurrent export's DELETE waits for this one's row
// locks and then finds the queue rows gone. The server sorts what was
// claimed. On SQLite, whose one write connection this transaction holds,
// the claimed rows are read in order through the pending index and then
// recorded by statements with the same condition: no other writer can
// change the set in between.
func ClaimPayments(ctx context.Context, tx *store.Tx, accountID, fileID, today, earliest string, now time.Time,
	fn func(AutogiroPaymentItem) error) error {
	if tx.Engine() == store.Postgres {
		// The server materializes the claimed rows and sorts them (≈100
		// bytes a payment): with the default 4 MB both went to temporary
		// files for 100,000 payments. The file's order (date, payer number
		// by length and digits, id) is sorted on one bigint, the day and
		// the payer's rank among the account's mandates (ranked once per
		// mandate), then the id: comparing text keys was a third of the
		// server's time (200 → 45 ms per 100,000 in EXPLAIN ANALYZE).
		if _, err := tx.ExecBuilt(ctx, `SET LOCAL work_mem = '64MB'`); err != nil {
			return fmt.Errorf("autogiro: claim payments: %w", err)
		}
		return eachPayment(ctx, tx, fn, `WITH c AS (DELETE FROM autogiro_payment_queue p
			WHERE p.tenant_id = $1 AND p.account_id = $2 AND EXISTS (SELECT 1 FROM autogiro_mandates m
				WHERE m.id = p.mandate_id AND m.tenant_id = $1 AND m.status = 'Active')
			RETURNING p.transaction_id AS id, p.mandate_id, p.kind, p.payment_date, p.reference, p.amount),
		sent AS (INSERT INTO autogiro_sent_payments (tenant_id, transaction_id, file_id, sent_on) SELECT $1, c.id, $3, $4 FROM c),
		moved AS (UPDATE autogiro_transactions t SET payment_date = $5, updated_at = $6
			FROM c WHERE c.payment_date < $5 AND t.tenant_id = $1 AND t.id = c.id),
		due AS (SELECT c.id, c.mandate_id, c.kind, CASE WHEN c.payment_date < $5 THEN $5 ELSE c.payment_date END AS payment_date,
			c.reference, c.amount, m.payer_number, m.payer_rank
			FROM c JOIN (SELECT id, payer_number, row_number() OVER (ORDER BY length(payer_number), payer_number COLLATE "C") AS payer_rank
				FROM autogiro_mandates WHERE tenant_id = $1 AND account_id = $2) m ON m.id = c.mandate_id)
		SELECT id, mandate_id, kind, payment_date, reference, amount, payer_number FROM due
		ORDER BY ((payment_date::date - DATE '2000-01-01')::bigint << 32) + payer_rank, id`,
			tx.TenantID(), accountID, fileID, today, earliest, store.TimeParam(now))
	}
	// What waits: stored Created, not sent, of an active mandate.
	const waiting = `t.tenant_id = $1 AND t.account_id = $2 AND t.status = 'Created'
		AND NOT EXISTS (SELECT 1 FROM autogiro_sent_payments s WHERE s.tenant_id = t.tenant_id AND s.transaction_id = t.id)
		AND EXISTS (SELECT 1 FROM autogiro_mandates m WHERE m.id = t.mandate_id AND m.tenant_id = $1 AND m.status = 'Active')`
	err := eachPayment(ctx, tx, fn, `SELECT t.id, t.mandate_id, t.kind,
			CASE WHEN t.payment_date < $3 THEN $3 ELSE t.payment_date END AS due, t.reference, t.amount, m.payer_number
		FROM autogiro_transactions t JOIN autogiro_mandates m ON m.tenant_id = t.tenant_id AND m.id = t.mandate_id
		WHERE t.tenant_id = $1 AND t.account_id = $2 AND t.status = 'Created' AND m.status = 'Active'
			AND NOT EXISTS (SELECT 1 FROM autogiro_sent_payments s WHERE s.tenant_id = t.tenant_id AND s.transaction_id = t.id)
		ORDER BY due, length(m.payer_number), m.payer_number, t.id`, tx.TenantID(), accountID, earliest)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE autogiro_transactions AS t SET payment_date = $3, updated_at = $4
		WHERE `+waiting+` AND t.payment_date < $3`, tx.TenantID(), accountID, earliest, store.TimeParam(now)); err != nil {
		return fmt.Errorf("autogiro: claim payments: %w", err)
	}
	// OR IGNORE instead of the NOT EXISTS: SQLite would otherwise copy the
	// whole SELECT to a temporary table first, since it reads the table
	// it inserts into; a row already there is exactly one already sent.
	if _, err := tx.Exec(ctx, `INSERT OR IGNORE INTO autogiro_sent_payments (tenant_id, transaction_id, file_id, sent_on)
		SELECT t.tenant_id, t.id, $3, $4 FROM autogiro_transactions t
		WHERE t.tenant_id = $1 AND t.account_id = $2 AND t.status = 'Created'
			AND EXISTS (SELECT 1 FROM autogiro_mandates m WHERE m.id = t.mandate_id AND m.tenant_id = $1 AND m.status = 'Active')`,
		tx.TenantID(), accountID, fileID, today); err != nil {
		return fmt.Errorf("autogiro: claim payments: %w", err)
	}
	return nil
}

// eachPayment hands the rows of query (id, mandate, kind, date,
// reference, amount, payer number) to fn one at a time.
func eachPayment(ctx context.Context, tx *store.Tx, fn func(AutogiroPaymentItem) error, query string, args ...any) error {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("autogiro: claim payments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p AutogiroPaymentItem
		if err := rows.Scan(&p.ID, &p.MandateID, &p.Kind, &p.PaymentDate, &p.Reference, &p.Amount, &p.PayerNumber); err != nil {
			return fmt.Errorf("autogiro: claim payments: %w", err)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("autogiro: claim payments: %w", err)
	}
	return nil
}

// ClaimPaymentCancellations takes the account's pending payment
// cancellations (TK25) into file fileID, except those of payments sent
// today.
func ClaimPaymentCancellations(ctx context.Context, tx *store.Tx, accountID, fileID, today string, now time.Time) ([]AutogiroPaymentItem, error) {
	return store.QueryAll(ctx, tx, func(r store.Scanner) (AutogiroPaymentItem, error) {
		var p AutogiroPaymentItem
		return p, r.Scan(&p.ID, &p.MandateID, &p.Kind, &p.PaymentDate, &p.Reference, &p.Amount)
	}, `UPDATE autogiro_transactions SET cancel_pending = FALSE, cancel_file_id = $3, updated_at = $5
		WHERE tenant_id = $1 AND account_id = $2 AND cancel_pending AND EXISTS (SELECT 1 FROM autogiro_sent_payments s
			WHERE s.tenant_id = autogiro_transactions.tenant_id AND s.transaction_id = autogiro_transactions.id AND s.sent_on < $4)
		RETURNING id, mandate_id, kind, payment_date, reference, amount`,
		tx.TenantID(), accountID, fileID, today, store.TimeParam(now))
}

// InsertExportFile stores a written file's row; its content
// follows through ExportFileWriter (the chunks reference the row).
func InsertExportFile(ctx context.Context, tx *store.Tx, f AutogiroExportFile) error {
	_, err := tx.Exec(ctx, `INSERT INTO autogiro_export_files (tenant_id, id, organization_id, file_name, content,
		counts, debit_total, refund_total, size, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		tx.TenantID(), f.ID, f.OrganizationID, f.FileName, []byte{}, f.Counts, f.DebitTotal, f.RefundTotal, f.Size, store.TimeParam(f.CreatedAt))
	if err != nil {
		return fmt.Errorf("autogiro: insert export file: %w", err)
	}
	return nil
}

// autogiroChunkSize is the most an export file's chunk holds: what the
// export and the download keep in memory of a file, whatever its size.
const autogiroChunkSize = 256 << 10

// AutogiroFileWriter stores an export file's content in chunks as it is
// written (migration 00035), in the export's transaction.
type AutogiroFileWriter struct {
	ctx    context.Context
	tx     *store.Tx
	fileID string
	buf    []byte
	seq    int
	size   int64
}

// ExportFileWriter returns the writer of file fileID's content
// (inserted by InsertExportFile); Close stores the last chunk.
func ExportFileWriter(ctx context.Context, tx *store.Tx, fileID string) *AutogiroFileWriter {
	return &AutogiroFileWriter{ctx: ctx, tx: tx, fileID: fileID, buf: make([]byte, 0, autogiroChunkSize)}
}

func (w *AutogiroFileWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := min(len(p)-n, autogiroChunkSize-len(w.buf))
		w.buf = append(w.buf, p[n:n+k]...)
		n += k
		if len(w.buf) == autogiroChunkSize {
			if err := w.flush(); err != nil {
				return n - k, err
			}
		}
	}
	return n, nil
}

func (w *AutogiroFileWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.tx.Exec(w.ctx, `INSERT INTO autogiro_export_file_chunks (tenant_id, file_id, seq, content)
		VALUES ($1, $2, $3, $4)`, w.tx.TenantID(), w.fileID, w.seq, w.buf); err != nil {
		return fmt.Errorf("autogiro: export file %s chunk %d: %w", w.fileID, w.seq, err)
	}
	w.size += int64(len(w.buf))
	w.seq++
	w.buf = w.buf[:0]
	return nil
}

// Close stores what is left.
func (w *AutogiroFileWriter) Close() error { return w.flush() }

// Size is the number of bytes stored so far.
func (w *AutogiroFileWriter) Size() int64 { return w.size }

// StoredExportFile describes a stored file of the context's tenant.
func StoredExportFile(ctx context.Context, st *store.Store, id string) (AutogiroExportFile, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroExportFile{}, err
	}
	if !store.ValidID(id) {
		return AutogiroExportFile{}, store.ErrNotFound
	}
	var f AutogiroExportFile
	err = st.Reader().QueryRow(ctx, `SELECT id, organization_id, file_name, size, counts, debit_total, refund_total, created_at
		FROM autogiro_export_files WHERE tenant_id = $1 AND id = $2`, tenant, id).Scan(&f.ID, &f.OrganizationID,
		&f.FileName, &f.Size, &f.Counts, &f.DebitTotal, &f.RefundTotal, &f.CreatedAt)
	if err != nil {
		return AutogiroExportFile{}, fmt.Errorf("autogiro: export file %s: %w", id, store.NotFound(err))
	}
	f.CreatedAt = f.CreatedAt.UTC()
	return f, nil
}

// CopyExportFile writes the content of a stored file of the
// context's tenant to w one chunk at a time. A file stored before
// migration 00035 has its content in one piece.
func CopyExportFile(ctx context.Context, st *store.Store, id string, w io.Writer) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !store.ValidID(id) {
		return store.ErrNotFound
	}
	var whole []byte
	if err := st.Reader().QueryRow(ctx, `SELECT content FROM autogiro_export_files WHERE tenant_id = $1 AND id = $2`,
		tenant, id).Scan(&whole); err != nil {
		return fmt.Errorf("autogiro: export file %s: %w", id, store.NotFound(err))
	}
	if len(whole) > 0 {
		_, err := w.Write(whole)
		return err
	}
	var chunk []byte
	for seq := 0; ; seq++ {
		err := st.Reader().QueryRow(ctx, `SELECT content FROM autogiro_export_file_chunks WHERE tenant_id = $1 AND file_id = $2 AND seq = $3`,
			tenant, id, seq).Scan(&chunk)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("autogiro: export file %s chunk %d: %w", id, seq, err)
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
}

// RecordImport records a report file by its SHA-256. A file
// imported before returns its first summary and true: importing it again
// changes nothing.
func RecordImport(ctx context.Context, tx *store.Tx, id, sha, kind string, now time.Time) (string, bool, error) {
	var got string
	err := tx.QueryRow(ctx, `INSERT INTO autogiro_imports (tenant_id, id, sha256, kind, summary, created_at)
		VALUES ($1, $2, $3, $4, '', $5) ON CONFLICT (tenant_id, sha256) DO NOTHING RETURNING id`,
		tx.TenantID(), id, sha, kind, store.TimeParam(now)).Scan(&got)
	if err == nil {
		return "", false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", false, fmt.Errorf("autogiro: record import: %w", err)
	}
	var summary string
	if err := tx.QueryRow(ctx, `SELECT summary FROM autogiro_imports WHERE tenant_id = $1 AND sha256 = $2`,
		tx.TenantID(), sha).Scan(&summary); err != nil {
		return "", false, fmt.Errorf("autogiro: import %s: %w", sha, err)
	}
	return summary, true, nil
}

// SetImportSummary stores what an import changed.
func SetImportSummary(ctx context.Context, tx *store.Tx, id, summary string) error {
	_, err := tx.Exec(ctx, `UPDATE autogiro_imports SET summary = $3 WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id, summary)
	return err
}

// AutogiroPaymentKey names what a report record matches transactions by
// in the database: the payer number and the amount (kind and reference
// are compared by the caller, since Bankgirot may return references
// zero-padded).
type AutogiroPaymentKey struct {
	Payer  string
	Amount int64
}

// OpenPayments returns the account's transactions that a batch of
// report records can speak of: those with one of the keys' payer numbers
// and one of their amounts (a superset of the keys; the caller matches
// exactly) that are sent, or cancelled after being sent, or were changed
// by report section `section` (SetTransactionResults): a record
// naming a payment an earlier batch of the same section settled still
// finds it. In id order, so a tie between equal payments resolves the
// same way every time. One statement per batch keeps the import's memory
// independent of how many transactions the account has open. CROSS JOIN
// makes SQLite start from the batch's mandates: without statistics it
// otherwise walked every transaction of the tenant (100,000 rows per
// batch) and sorted by id through the primary key; PostgreSQL reads it as
// an inner join.
func OpenPayments(ctx context.Context, tx *store.Tx, accountID, section string, keys []AutogiroPaymentKey, fn func(AutogiroPaymentItem) error) error {
	if len(keys) == 0 {
		return nil
	}
	args := []any{tx.TenantID(), accountID, section}
	payers := map[string]bool{}
	amounts := map[int64]bool{}
	var pin, ain strings.Builder
	for _, k := range keys {
		if !payers[k.Payer] {
			payers[k.Payer] = true
			if pin.Len() > 0 {
				pin.WriteString(", ")
			}
			args = append(args, k.Payer)
			fmt.Fprintf(&pin, "$%d", len(args))
		}
		if !amounts[k.Amount] {
			amounts[k.Amount] = true
			if ain.Len() > 0 {
				ain.WriteString(", ")
			}
			args = append(args, k.Amount)
			fmt.Fprintf(&ain, "$%d", len(args))
		}
	}
	rows, err := tx.QueryBuilt(ctx, `SELECT t.id, t.mandate_id, t.kind, t.payment_date, t.reference,
		CASE WHEN t.status = 'Created' THEN 'Sent' ELSE t.status END, t.amount, m.payer_number, t.invoice_id IS NOT NULL
		FROM autogiro_mandates m CROSS JOIN autogiro_transactions t CROSS JOIN autogiro_sent_payments s
		WHERE t.tenant_id = m.tenant_id AND t.mandate_id = m.id AND s.tenant_id = t.tenant_id AND s.transaction_id = t.id
		AND m.tenant_id = $1 AND m.account_id = $2 AND m.payer_number IN (`+pin.String()+`)
		AND t.amount IN (`+ain.String()+`)
		AND (t.status IN ('Created', 'Sent', 'Cancelled') OR t.report_section = $3) ORDER BY t.id`,
		args...)
	if err != nil {
		return fmt.Errorf("autogiro: open payments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p AutogiroPaymentItem
		if err := rows.Scan(&p.ID, &p.MandateID, &p.Kind, &p.PaymentDate, &p.Reference, &p.Status, &p.Amount, &p.PayerNumber, &p.HasInvoice); err != nil {
			return err
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return rows.Err()
}

// SetTransactionResult records what a report said of a
// transaction; settle marks it for a Kadens payment (Settle).
func SetTransactionResult(ctx context.Context, tx *store.Tx, id, status, code string, settle bool, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE autogiro_transactions SET status = $3, status_code = $4, settle_pending = $5, updated_at = $6
		WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id, status, code, settle, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("autogiro: transaction %s: %w", id, err)
	}
	return nil
}

// SetTransactionResults is SetTransactionResult for many
// transactions at once (an import applies a report in batches: one
// statement per few hundred records instead of one per record), marked
// as changed by report section `section` (OpenPayments).
func SetTransactionResults(ctx context.Context, tx *store.Tx, ids []string, section, status, code string, settle bool, now time.Time) error {
	for len(ids) > 0 {
		n := min(len(ids), 500)
		args := make([]any, 0, n+6)
		args = append(args, tx.TenantID(), status, code, settle, store.TimeParam(now), section)
		var in strings.Builder
		for i, id := range ids[:n] {
			if i > 0 {
				in.WriteString(", ")
			}
			fmt.Fprintf(&in, "$%d", len(args)+1)
			args = append(args, id)
		}
		if _, err := tx.ExecBuilt(ctx, `UPDATE autogiro_transactions SET status = $2, status_code = $3, settle_pending = $4,
			updated_at = $5, report_section = $6 WHERE tenant_id = $1 AND id IN (`+in.String()+`)`, args...); err != nil {
			return fmt.Errorf("autogiro: transaction results: %w", err)
		}
		ids = ids[n:]
	}
	return nil
}

// ToSettle returns up to limit transactions whose report result
// has not become a Kadens payment yet.
func ToSettle(ctx context.Context, st *store.Store, limit int) ([]AutogiroTransaction, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	out, err := store.QueryAll(ctx, st.Writer(), scanAGTransaction, `SELECT `+agTransactionColumns+agTransactionFrom+`
		WHERE t.tenant_id = $1 AND t.settle_pending ORDER BY t.id LIMIT $2`, tenant, limit)
	if err != nil {
		return nil, fmt.Errorf("autogiro: transactions to settle: %w", err)
	}
	return out, nil
}

// MarkSettled records the payment a transaction became (nil: none
// is due, e.g. a refund or a debit of no invoice).
func MarkSettled(ctx context.Context, st *store.Store, id string, paymentID *string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	_, err = st.Writer().Exec(ctx, `UPDATE autogiro_transactions SET settle_pending = FALSE, payment_id = $3
		WHERE tenant_id = $1 AND id = $2`, tenant, id, paymentID)
	if err != nil {
		return fmt.Errorf("autogiro: settle transaction %s: %w", id, err)
	}
	return nil
}

// CompletedDebits returns the account's completed debits of a
// payer for amount: what a TK77 (the payer's bank paid a debit back) can
// speak of. Refunded is set on those paid back already.
func CompletedDebits(ctx context.Context, tx *store.Tx, accountID, payer string, amount int64) ([]AutogiroPaymentItem, error) {
	return store.QueryAll(ctx, tx, func(r store.Scanner) (AutogiroPaymentItem, error) {
		var p AutogiroPaymentItem
		err := r.Scan(&p.ID, &p.MandateID, &p.Kind, &p.PaymentDate, &p.Reference, &p.Status, &p.Amount,
			&p.PayerNumber, &p.HasInvoice, &p.Refunded)
		return p, err
	}, `SELECT t.id, t.mandate_id, t.kind, t.payment_date, t.reference, t.status, t.amount,
		m.payer_number, t.invoice_id IS NOT NULL, t.refund_date IS NOT NULL FROM autogiro_mandates m
		JOIN autogiro_transactions t ON t.tenant_id = m.tenant_id AND t.mandate_id = m.id
		WHERE m.tenant_id = $1 AND m.account_id = $2 AND m.payer_number = $3 AND t.kind = 'Debit'
		AND t.status = 'Completed' AND t.amount = $4 ORDER BY t.payment_date, t.id`,
		tx.TenantID(), accountID, payer, amount)
}

// SetPayerRefund records that the payer's bank paid a completed
// debit back on date with Bankgirot's refund code. A debit of an invoice
// is marked for its charge (BookRefunds). It is a claim: false
// when the debit is marked paid back already — on PostgreSQL, by another
// import that held the row and has committed since (the UPDATE waits for
// its lock and then sees its commit), so the caller reads the debits again
// and picks another.
func SetPayerRefund(ctx context.Context, tx *store.Tx, id, date, code string, now time.Time) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE autogiro_transactions SET refund_date = $3, refund_code = $4,
		refund_pending = invoice_id IS NOT NULL, updated_at = $5
		WHERE tenant_id = $1 AND id = $2 AND refund_date IS NULL`, tx.TenantID(), id, date, code, store.TimeParam(now))
	if err != nil {
		return false, fmt.Errorf("autogiro: payer refund %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("autogiro: payer refund %s: %w", id, err)
	}
	return n == 1, nil
}

// RefundsToBook returns up to limit paid-back debits whose charge
// is not booked yet.
func RefundsToBook(ctx context.Context, st *store.Store, limit int) ([]AutogiroTransaction, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	out, err := store.QueryAll(ctx, st.Writer(), scanAGTransaction, `SELECT `+agTransactionColumns+agTransactionFrom+`
		WHERE t.tenant_id = $1 AND t.refund_pending ORDER BY t.id LIMIT $2`, tenant, limit)
	if err != nil {
		return nil, fmt.Errorf("autogiro: refunds to book: %w", err)
	}
	return out, nil
}

// MarkRefundBooked records the charge of a paid-back debit, in the
// transaction that booked it. False: another run booked it first, and
// this one must roll back.
func MarkRefundBooked(ctx context.Context, tx *store.Tx, id, itemID string) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE autogiro_transactions SET refund_pending = FALSE, refund_item_id = $3
		WHERE tenant_id = $1 AND id = $2 AND refund_pending`, tx.TenantID(), id, itemID)
	if err != nil {
		return false, fmt.Errorf("autogiro: refund charge %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SetTransactionDate moves a sent transaction to the payment date
// Bankgirot confirmed (TK26–29 with comment 14 or 18) and keeps the code.
func SetTransactionDate(ctx context.Context, tx *store.Tx, id, date, code string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE autogiro_transactions SET payment_date = $3, status_code = $4, updated_at = $5
		WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id, date, code, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("autogiro: transaction date %s: %w", id, err)
	}
	return nil
}

// LatestExportFile returns the newest submission file of the context's
// tenant's organization, or store.ErrNotFound: what `kadens autogiro fetch
// --latest` writes again when the export's own output was lost (the
// command was killed after the items were marked sent). Ids are UUIDv7,
// so the greatest id is the file stored last.
func LatestExportFile(ctx context.Context, st *store.Store, organizationID string) (AutogiroExportFile, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroExportFile{}, err
	}
	if !store.ValidID(organizationID) {
		return AutogiroExportFile{}, store.ErrNotFound
	}
	var id string
	if err := st.Reader().QueryRow(ctx, `SELECT id FROM autogiro_export_files WHERE tenant_id = $1 AND organization_id = $2
		ORDER BY id DESC LIMIT 1`, tenant, organizationID).Scan(&id); err != nil {
		return AutogiroExportFile{}, fmt.Errorf("autogiro: latest export file of organization %s: %w", organizationID, store.NotFound(err))
	}
	return StoredExportFile(ctx, st, id)
}
