package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/tenancy"
)

// Autogiro exports and imports: the SQL of internal/autogiro's export
// (claiming what is pending, so nothing goes out twice) and import
// (matching report records, recording files by their hash).

// AutogiroAccountsOf returns an organization's live accounts, ErrNotFound
// when the tenant has no such organization.
func (tx *Tx) AutogiroAccountsOf(ctx context.Context, organizationID string) ([]AutogiroAccount, error) {
	var one int
	if !ValidID(organizationID) {
		return nil, ErrNotFound
	}
	if err := tx.tx.QueryRowContext(ctx, `SELECT 1 FROM organizations WHERE tenant_id = $1 AND id = $2`, tx.tenant, organizationID).Scan(&one); err != nil {
		return nil, notFound(err)
	}
	return queryAll(ctx, tx.tx, scanAGAccount, `SELECT `+agAccountColumns+` FROM autogiro_accounts
		WHERE tenant_id = $1 AND organization_id = $2 AND deleted_at IS NULL ORDER BY bankgiro_number`, tx.tenant, organizationID)
}

// AutogiroMandateItem is a mandate as an export or import needs it.
type AutogiroMandateItem struct {
	ID, PayerNumber, Clearing, Account, PayerID string
	InternetBank                                bool
}

func scanAGItem(r scanner) (AutogiroMandateItem, error) {
	var m AutogiroMandateItem
	return m, r.Scan(&m.ID, &m.PayerNumber, &m.Clearing, &m.Account, &m.PayerID, &m.InternetBank)
}

// ClaimAutogiroMandates marks the account's new mandates Sent in file
// fileID and returns them. The UPDATE is the claim: a concurrent export
// waits for this one's row locks (PostgreSQL) or for the write lock
// (SQLite) and then finds them Sent, so no mandate goes out twice.
func (tx *Tx) ClaimAutogiroMandates(ctx context.Context, accountID, fileID, today string, now time.Time) ([]AutogiroMandateItem, error) {
	return queryAll(ctx, tx.tx, scanAGItem, `UPDATE autogiro_mandates SET status = 'Sent', sent_file_id = $3, sent_on = $4,
		updated_at = $5 WHERE tenant_id = $1 AND account_id = $2 AND status = 'Created'
		RETURNING id, payer_number, clearing_number, bank_account_number, payer_id, internet_bank`,
		tx.tenant, accountID, fileID, today, ts(now))
}

// ClaimAutogiroMandateCancellations takes the account's pending mandate
// cancellations (TK03) into file fileID, except those of mandates sent
// today: Bankgirot asks that a mandate and its cancellation not arrive on
// the same day.
func (tx *Tx) ClaimAutogiroMandateCancellations(ctx context.Context, accountID, fileID, today string, now time.Time) ([]AutogiroMandateItem, error) {
	return queryAll(ctx, tx.tx, scanAGItem, `UPDATE autogiro_mandates SET cancel_pending = FALSE, cancel_file_id = $3,
		updated_at = $5 WHERE tenant_id = $1 AND account_id = $2 AND cancel_pending AND (sent_on IS NULL OR sent_on < $4)
		RETURNING id, payer_number, clearing_number, bank_account_number, payer_id, internet_bank`,
		tx.tenant, accountID, fileID, today, ts(now))
}

// AutogiroPayerNumbers maps the account's mandates to their payer numbers.
func (tx *Tx) AutogiroPayerNumbers(ctx context.Context, accountID string) (map[string]string, error) {
	rows, err := tx.tx.QueryContext(ctx, `SELECT id, payer_number FROM autogiro_mandates WHERE tenant_id = $1 AND account_id = $2`,
		tx.tenant, accountID)
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
	// Refunded: the payer's bank paid it back (AutogiroCompletedDebits).
	Refunded bool
}

// ClaimAutogiroPayments sends the account's new transactions of active
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
func (tx *Tx) ClaimAutogiroPayments(ctx context.Context, accountID, fileID, today, earliest string, now time.Time,
	fn func(AutogiroPaymentItem) error) error {
	if tx.s.engine == Postgres {
		// The server materializes the claimed rows and sorts them (≈100
		// bytes a payment): with the default 4 MB both went to temporary
		// files for 100,000 payments. The file's order (date, payer number
		// by length and digits, id) is sorted on one bigint, the day and
		// the payer's rank among the account's mandates (ranked once per
		// mandate), then the id: comparing text keys was a third of the
		// server's time (200 → 45 ms per 100,000 in EXPLAIN ANALYZE).
		if _, err := tx.tx.ExecContext(ctx, `SET LOCAL work_mem = '64MB'`); err != nil {
			return fmt.Errorf("store: claim autogiro payments: %w", err)
		}
		return tx.eachAGPayment(ctx, fn, `WITH c AS (DELETE FROM autogiro_payment_queue p
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
			tx.tenant, accountID, fileID, today, earliest, ts(now))
	}
	// What waits: stored Created, not sent, of an active mandate.
	const waiting = `t.tenant_id = $1 AND t.account_id = $2 AND t.status = 'Created'
		AND NOT EXISTS (SELECT 1 FROM autogiro_sent_payments s WHERE s.tenant_id = t.tenant_id AND s.transaction_id = t.id)
		AND EXISTS (SELECT 1 FROM autogiro_mandates m WHERE m.id = t.mandate_id AND m.tenant_id = $1 AND m.status = 'Active')`
	err := tx.eachAGPayment(ctx, fn, `SELECT t.id, t.mandate_id, t.kind,
			CASE WHEN t.payment_date < $3 THEN $3 ELSE t.payment_date END AS due, t.reference, t.amount, m.payer_number
		FROM autogiro_transactions t JOIN autogiro_mandates m ON m.tenant_id = t.tenant_id AND m.id = t.mandate_id
		WHERE t.tenant_id = $1 AND t.account_id = $2 AND t.status = 'Created' AND m.status = 'Active'
			AND NOT EXISTS (SELECT 1 FROM autogiro_sent_payments s WHERE s.tenant_id = t.tenant_id AND s.transaction_id = t.id)
		ORDER BY due, length(m.payer_number), m.payer_number, t.id`, tx.tenant, accountID, earliest)
	if err != nil {
		return err
	}
	if _, err := tx.tx.ExecContext(ctx, `UPDATE autogiro_transactions AS t SET payment_date = $3, updated_at = $4
		WHERE `+waiting+` AND t.payment_date < $3`, tx.tenant, accountID, earliest, ts(now)); err != nil {
		return fmt.Errorf("store: claim autogiro payments: %w", err)
	}
	// OR IGNORE instead of the NOT EXISTS: SQLite would otherwise copy the
	// whole SELECT to a temporary table first, since it reads the table
	// it inserts into; a row already there is exactly one already sent.
	if _, err := tx.tx.ExecContext(ctx, `INSERT OR IGNORE INTO autogiro_sent_payments (tenant_id, transaction_id, file_id, sent_on)
		SELECT t.tenant_id, t.id, $3, $4 FROM autogiro_transactions t
		WHERE t.tenant_id = $1 AND t.account_id = $2 AND t.status = 'Created'
			AND EXISTS (SELECT 1 FROM autogiro_mandates m WHERE m.id = t.mandate_id AND m.tenant_id = $1 AND m.status = 'Active')`,
		tx.tenant, accountID, fileID, today); err != nil {
		return fmt.Errorf("store: claim autogiro payments: %w", err)
	}
	return nil
}

// eachAGPayment hands the rows of query (id, mandate, kind, date,
// reference, amount, payer number) to fn one at a time.
func (tx *Tx) eachAGPayment(ctx context.Context, fn func(AutogiroPaymentItem) error, query string, args ...any) error {
	rows, err := tx.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("store: claim autogiro payments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p AutogiroPaymentItem
		if err := rows.Scan(&p.ID, &p.MandateID, &p.Kind, &p.PaymentDate, &p.Reference, &p.Amount, &p.PayerNumber); err != nil {
			return fmt.Errorf("store: claim autogiro payments: %w", err)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: claim autogiro payments: %w", err)
	}
	return nil
}

// ClaimAutogiroPaymentCancellations takes the account's pending payment
// cancellations (TK25) into file fileID, except those of payments sent
// today.
func (tx *Tx) ClaimAutogiroPaymentCancellations(ctx context.Context, accountID, fileID, today string, now time.Time) ([]AutogiroPaymentItem, error) {
	return queryAll(ctx, tx.tx, func(r scanner) (AutogiroPaymentItem, error) {
		var p AutogiroPaymentItem
		return p, r.Scan(&p.ID, &p.MandateID, &p.Kind, &p.PaymentDate, &p.Reference, &p.Amount)
	}, `UPDATE autogiro_transactions SET cancel_pending = FALSE, cancel_file_id = $3, updated_at = $5
		WHERE tenant_id = $1 AND account_id = $2 AND cancel_pending AND EXISTS (SELECT 1 FROM autogiro_sent_payments s
			WHERE s.tenant_id = autogiro_transactions.tenant_id AND s.transaction_id = autogiro_transactions.id AND s.sent_on < $4)
		RETURNING id, mandate_id, kind, payment_date, reference, amount`,
		tx.tenant, accountID, fileID, today, ts(now))
}

// InsertAutogiroExportFile stores a written file's row; its content
// follows through AutogiroExportFileWriter (the chunks reference the row).
func (tx *Tx) InsertAutogiroExportFile(ctx context.Context, f AutogiroExportFile) error {
	_, err := tx.tx.ExecContext(ctx, `INSERT INTO autogiro_export_files (tenant_id, id, organization_id, file_name, content,
		counts, debit_total, refund_total, size, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		tx.tenant, f.ID, f.OrganizationID, f.FileName, []byte{}, f.Counts, f.DebitTotal, f.RefundTotal, f.Size, ts(f.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: insert autogiro export file: %w", err)
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
	tx     *Tx
	fileID string
	buf    []byte
	seq    int
	size   int64
}

// AutogiroExportFileWriter returns the writer of file fileID's content
// (inserted by InsertAutogiroExportFile); Close stores the last chunk.
func (tx *Tx) AutogiroExportFileWriter(ctx context.Context, fileID string) *AutogiroFileWriter {
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
	if _, err := w.tx.tx.ExecContext(w.ctx, `INSERT INTO autogiro_export_file_chunks (tenant_id, file_id, seq, content)
		VALUES ($1, $2, $3, $4)`, w.tx.tenant, w.fileID, w.seq, w.buf); err != nil {
		return fmt.Errorf("store: autogiro export file %s chunk %d: %w", w.fileID, w.seq, err)
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

// AutogiroExportFile describes a stored file of the context's tenant.
func (s *Store) AutogiroExportFile(ctx context.Context, id string) (AutogiroExportFile, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroExportFile{}, err
	}
	if !ValidID(id) {
		return AutogiroExportFile{}, ErrNotFound
	}
	var f AutogiroExportFile
	err = s.readRow(ctx, `SELECT id, organization_id, file_name, size, counts, debit_total, refund_total, created_at
		FROM autogiro_export_files WHERE tenant_id = $1 AND id = $2`, tenant, id).Scan(&f.ID, &f.OrganizationID,
		&f.FileName, &f.Size, &f.Counts, &f.DebitTotal, &f.RefundTotal, &f.CreatedAt)
	if err != nil {
		return AutogiroExportFile{}, fmt.Errorf("store: autogiro export file %s: %w", id, notFound(err))
	}
	f.CreatedAt = f.CreatedAt.UTC()
	return f, nil
}

// CopyAutogiroExportFile writes the content of a stored file of the
// context's tenant to w one chunk at a time. A file stored before
// migration 00035 has its content in one piece.
func (s *Store) CopyAutogiroExportFile(ctx context.Context, id string, w io.Writer) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !ValidID(id) {
		return ErrNotFound
	}
	var whole []byte
	if err := s.readRow(ctx, `SELECT content FROM autogiro_export_files WHERE tenant_id = $1 AND id = $2`,
		tenant, id).Scan(&whole); err != nil {
		return fmt.Errorf("store: autogiro export file %s: %w", id, notFound(err))
	}
	if len(whole) > 0 {
		_, err := w.Write(whole)
		return err
	}
	var chunk []byte
	for seq := 0; ; seq++ {
		err := s.readRow(ctx, `SELECT content FROM autogiro_export_file_chunks WHERE tenant_id = $1 AND file_id = $2 AND seq = $3`,
			tenant, id, seq).Scan(&chunk)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store: autogiro export file %s chunk %d: %w", id, seq, err)
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
}

// RecordAutogiroImport records a report file by its SHA-256. A file
// imported before returns its first summary and true: importing it again
// changes nothing.
func (tx *Tx) RecordAutogiroImport(ctx context.Context, id, sha, kind string, now time.Time) (string, bool, error) {
	var got string
	err := tx.tx.QueryRowContext(ctx, `INSERT INTO autogiro_imports (tenant_id, id, sha256, kind, summary, created_at)
		VALUES ($1, $2, $3, $4, '', $5) ON CONFLICT (tenant_id, sha256) DO NOTHING RETURNING id`,
		tx.tenant, id, sha, kind, ts(now)).Scan(&got)
	if err == nil {
		return "", false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", false, fmt.Errorf("store: record autogiro import: %w", err)
	}
	var summary string
	if err := tx.tx.QueryRowContext(ctx, `SELECT summary FROM autogiro_imports WHERE tenant_id = $1 AND sha256 = $2`,
		tx.tenant, sha).Scan(&summary); err != nil {
		return "", false, fmt.Errorf("store: autogiro import %s: %w", sha, err)
	}
	return summary, true, nil
}

// SetAutogiroImportSummary stores what an import changed.
func (tx *Tx) SetAutogiroImportSummary(ctx context.Context, id, summary string) error {
	_, err := tx.tx.ExecContext(ctx, `UPDATE autogiro_imports SET summary = $3 WHERE tenant_id = $1 AND id = $2`, tx.tenant, id, summary)
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

// AutogiroOpenPayments returns the account's transactions that a batch of
// report records can speak of: those with one of the keys' payer numbers
// and one of their amounts (a superset of the keys; the caller matches
// exactly) that are sent, or cancelled after being sent, or were changed
// by report section `section` (SetAutogiroTransactionResults): a record
// naming a payment an earlier batch of the same section settled still
// finds it. In id order, so a tie between equal payments resolves the
// same way every time. One statement per batch keeps the import's memory
// independent of how many transactions the account has open. CROSS JOIN
// makes SQLite start from the batch's mandates: without statistics it
// otherwise walked every transaction of the tenant (100,000 rows per
// batch) and sorted by id through the primary key; PostgreSQL reads it as
// an inner join.
func (tx *Tx) AutogiroOpenPayments(ctx context.Context, accountID, section string, keys []AutogiroPaymentKey, fn func(AutogiroPaymentItem) error) error {
	if len(keys) == 0 {
		return nil
	}
	args := []any{tx.tenant, accountID, section}
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
	rows, err := tx.tx.QueryContext(ctx, `SELECT t.id, t.mandate_id, t.kind, t.payment_date, t.reference,
		CASE WHEN t.status = 'Created' THEN 'Sent' ELSE t.status END, t.amount, m.payer_number, t.invoice_id IS NOT NULL
		FROM autogiro_mandates m CROSS JOIN autogiro_transactions t CROSS JOIN autogiro_sent_payments s
		WHERE t.tenant_id = m.tenant_id AND t.mandate_id = m.id AND s.tenant_id = t.tenant_id AND s.transaction_id = t.id
		AND m.tenant_id = $1 AND m.account_id = $2 AND m.payer_number IN (`+pin.String()+`)
		AND t.amount IN (`+ain.String()+`)
		AND (t.status IN ('Created', 'Sent', 'Cancelled') OR t.report_section = $3) ORDER BY t.id`,
		args...)
	if err != nil {
		return fmt.Errorf("store: open autogiro payments: %w", err)
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

// SetAutogiroTransactionResult records what a report said of a
// transaction; settle marks it for a Kadens payment (SettleAutogiro).
func (tx *Tx) SetAutogiroTransactionResult(ctx context.Context, id, status, code string, settle bool, now time.Time) error {
	_, err := tx.exec(ctx, `UPDATE autogiro_transactions SET status = $3, status_code = $4, settle_pending = $5, updated_at = $6
		WHERE tenant_id = $1 AND id = $2`, tx.tenant, id, status, code, settle, ts(now))
	if err != nil {
		return fmt.Errorf("store: autogiro transaction %s: %w", id, err)
	}
	return nil
}

// SetAutogiroTransactionResults is SetAutogiroTransactionResult for many
// transactions at once (an import applies a report in batches: one
// statement per few hundred records instead of one per record), marked
// as changed by report section `section` (AutogiroOpenPayments).
func (tx *Tx) SetAutogiroTransactionResults(ctx context.Context, ids []string, section, status, code string, settle bool, now time.Time) error {
	for len(ids) > 0 {
		n := min(len(ids), 500)
		args := make([]any, 0, n+6)
		args = append(args, tx.tenant, status, code, settle, ts(now), section)
		var in strings.Builder
		for i, id := range ids[:n] {
			if i > 0 {
				in.WriteString(", ")
			}
			fmt.Fprintf(&in, "$%d", len(args)+1)
			args = append(args, id)
		}
		if _, err := tx.tx.ExecContext(ctx, `UPDATE autogiro_transactions SET status = $2, status_code = $3, settle_pending = $4,
			updated_at = $5, report_section = $6 WHERE tenant_id = $1 AND id IN (`+in.String()+`)`, args...); err != nil {
			return fmt.Errorf("store: autogiro transaction results: %w", err)
		}
		ids = ids[n:]
	}
	return nil
}

// AutogiroToSettle returns up to limit transactions whose report result
// has not become a Kadens payment yet.
func (s *Store) AutogiroToSettle(ctx context.Context, limit int) ([]AutogiroTransaction, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.w, scanAGTransaction, `SELECT `+agTransactionColumns+agTransactionFrom+`
		WHERE t.tenant_id = $1 AND t.settle_pending ORDER BY t.id LIMIT $2`, tenant, limit)
	if err != nil {
		return nil, fmt.Errorf("store: autogiro transactions to settle: %w", err)
	}
	return out, nil
}

// MarkAutogiroSettled records the payment a transaction became (nil: none
// is due, e.g. a refund or a debit of no invoice).
func (s *Store) MarkAutogiroSettled(ctx context.Context, id string, paymentID *string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `UPDATE autogiro_transactions SET settle_pending = FALSE, payment_id = $3
		WHERE tenant_id = $1 AND id = $2`, tenant, id, paymentID)
	if err != nil {
		return fmt.Errorf("store: settle autogiro transaction %s: %w", id, err)
	}
	return nil
}

// AutogiroCompletedDebits returns the account's completed debits of a
// payer for amount: what a TK77 (the payer's bank paid a debit back) can
// speak of. Refunded is set on those paid back already.
func (tx *Tx) AutogiroCompletedDebits(ctx context.Context, accountID, payer string, amount int64) ([]AutogiroPaymentItem, error) {
	return queryAll(ctx, tx.tx, func(r scanner) (AutogiroPaymentItem, error) {
		var p AutogiroPaymentItem
		err := r.Scan(&p.ID, &p.MandateID, &p.Kind, &p.PaymentDate, &p.Reference, &p.Status, &p.Amount,
			&p.PayerNumber, &p.HasInvoice, &p.Refunded)
		return p, err
	}, `SELECT t.id, t.mandate_id, t.kind, t.payment_date, t.reference, t.status, t.amount,
		m.payer_number, t.invoice_id IS NOT NULL, t.refund_date IS NOT NULL FROM autogiro_mandates m
		JOIN autogiro_transactions t ON t.tenant_id = m.tenant_id AND t.mandate_id = m.id
		WHERE m.tenant_id = $1 AND m.account_id = $2 AND m.payer_number = $3 AND t.kind = 'Debit'
		AND t.status = 'Completed' AND t.amount = $4 ORDER BY t.payment_date, t.id`,
		tx.tenant, accountID, payer, amount)
}

// SetAutogiroPayerRefund records that the payer's bank paid a completed
// debit back on date with Bankgirot's refund code. A debit of an invoice
// is marked for its charge (BookAutogiroRefund). It is a claim: false
// when the debit is marked paid back already — on PostgreSQL, by another
// import that held the row and has committed since (the UPDATE waits for
// its lock and then sees its commit), so the caller reads the debits again
// and picks another.
func (tx *Tx) SetAutogiroPayerRefund(ctx context.Context, id, date, code string, now time.Time) (bool, error) {
	res, err := tx.exec(ctx, `UPDATE autogiro_transactions SET refund_date = $3, refund_code = $4,
		refund_pending = invoice_id IS NOT NULL, updated_at = $5
		WHERE tenant_id = $1 AND id = $2 AND refund_date IS NULL`, tx.tenant, id, date, code, ts(now))
	if err != nil {
		return false, fmt.Errorf("store: autogiro payer refund %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: autogiro payer refund %s: %w", id, err)
	}
	return n == 1, nil
}

// AutogiroRefundsToBook returns up to limit paid-back debits whose charge
// is not booked yet.
func (s *Store) AutogiroRefundsToBook(ctx context.Context, limit int) ([]AutogiroTransaction, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.w, scanAGTransaction, `SELECT `+agTransactionColumns+agTransactionFrom+`
		WHERE t.tenant_id = $1 AND t.refund_pending ORDER BY t.id LIMIT $2`, tenant, limit)
	if err != nil {
		return nil, fmt.Errorf("store: autogiro refunds to book: %w", err)
	}
	return out, nil
}

// MarkAutogiroRefundBooked records the charge of a paid-back debit, in the
// transaction that booked it. False: another run booked it first, and
// this one must roll back.
func (tx *Tx) MarkAutogiroRefundBooked(ctx context.Context, id, itemID string) (bool, error) {
	res, err := tx.exec(ctx, `UPDATE autogiro_transactions SET refund_pending = FALSE, refund_item_id = $3
		WHERE tenant_id = $1 AND id = $2 AND refund_pending`, tx.tenant, id, itemID)
	if err != nil {
		return false, fmt.Errorf("store: autogiro refund charge %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SetAutogiroTransactionDate moves a sent transaction to the payment date
// Bankgirot confirmed (TK26–29 with comment 14 or 18) and keeps the code.
func (tx *Tx) SetAutogiroTransactionDate(ctx context.Context, id, date, code string, now time.Time) error {
	_, err := tx.exec(ctx, `UPDATE autogiro_transactions SET payment_date = $3, status_code = $4, updated_at = $5
		WHERE tenant_id = $1 AND id = $2`, tx.tenant, id, date, code, ts(now))
	if err != nil {
		return fmt.Errorf("store: autogiro transaction date %s: %w", id, err)
	}
	return nil
}
