package avtalegiro

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// AvtaleGiro's files (docs/AVTALEGIRO.md): the claim files Kadens writes
// and the mandate and OCR giro files it imports, in the ocrgiro format,
// with the SQL that reads what goes into them and applies what comes out,
// on the store's query kit. The files' rows and their settlement stay in
// internal/store (avtalegiro*.go) for now.

// avgChunkSize is how many bytes of a file one row of
// avtalegiro_file_chunks holds: what reading or writing a file keeps in
// memory, whatever the file's size.
const avgChunkSize = 256 << 10

// avgChunks collects a file's bytes as they are written or read, hashes
// them, and stores them in chunk rows when flushed: between statements,
// never while a query's rows are open (PostgreSQL's connection cannot
// run a statement then).
type avgChunks struct {
	tx     *store.Tx
	fileID string
	seq    int
	buf    []byte
	sum    hash.Hash
	// ready: the file's row exists (the chunks refer to it); until then
	// bytes are only collected.
	ready bool
}

func newAvgChunks(tx *store.Tx, fileID string) *avgChunks {
	return &avgChunks{tx: tx, fileID: fileID, sum: sha256.New(), buf: make([]byte, 0, avgChunkSize+64<<10)}
}

func (c *avgChunks) Write(p []byte) (int, error) {
	c.sum.Write(p)
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// flush stores every full chunk, and with last the rest too.
func (c *avgChunks) flush(ctx context.Context, last bool) error {
	if !c.ready {
		return nil
	}
	for len(c.buf) >= avgChunkSize || (last && len(c.buf) > 0) {
		n := min(len(c.buf), avgChunkSize)
		if _, err := c.tx.Exec(ctx, `INSERT INTO avtalegiro_file_chunks (tenant_id, file_id, seq, data) VALUES ($1,$2,$3,$4)`,
			c.tx.TenantID(), c.fileID, c.seq, c.buf[:n]); err != nil {
			return fmt.Errorf("store file chunk %d: %w", c.seq, err)
		}
		c.seq++
		c.buf = c.buf[:copy(c.buf, c.buf[n:])]
	}
	return nil
}

func (c *avgChunks) hash() string { return hex.EncodeToString(c.sum.Sum(nil)) }

// ExportClaims writes the account's next claim file in one
// transaction: every Scheduled claim due by latest (YYYY-MM-DD) in a claims
// assignment, every CancellationPending claim in a cancellations
// assignment (once: the claim becomes Cancelled with this file). The file
// gets the account's next transmission and assignment numbers. No claims
// to send: ok is false and nothing is written.
func ExportClaims(ctx context.Context, st *store.Store, accountID, latest string, now time.Time) (f AvtaleGiroFile, ok bool, err error) {
	if !store.ValidID(accountID) {
		return AvtaleGiroFile{}, false, store.ErrNotFound
	}
	now = now.UTC().Truncate(time.Microsecond)
	// Retrying: a claim cancelled while its file was written makes the
	// attempt a conflict (below), and the export is run again without it.
	err = st.InTxRetrying(ctx, func(tx *store.Tx) error {
		var number, unit string
		var transmission, assignment int64
		err := tx.QueryRow(ctx, `UPDATE avtalegiro_accounts SET transmission_serial = transmission_serial + 1,
			assignment_serial = assignment_serial + 2 WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
			RETURNING bank_account_number, customer_unit_id, transmission_serial, assignment_serial`, tx.TenantID(), accountID).Scan(
			&number, &unit, &transmission, &assignment)
		if err != nil {
			return store.NotFound(err)
		}
		// Claims are created under a share lock on their account (see
		// CreateClaim), so from here on the set this statement
		// reads is the set the UPDATE below marks, on PostgreSQL too.
		f = AvtaleGiroFile{ID: store.NewID(), AccountID: &accountID, Direction: "Out", Kind: "Claims",
			TransmissionNumber: fmt.Sprintf("%07d", transmission%10_000_000), CreatedAt: now}
		// The row first (its chunks refer to it); the hash and the count
		// are known at the end.
		if _, err := tx.Exec(ctx, `INSERT INTO avtalegiro_files (id, tenant_id, account_id, direction, kind, transmission_number,
			sha256, transactions, created_at) VALUES ($1,$2,$3,'Out','Claims',$4,'',0,$5)`,
			f.ID, tx.TenantID(), accountID, f.TransmissionNumber, store.TimeParam(now)); err != nil {
			return fmt.Errorf("insert file: %w", err)
		}
		chunks := newAvgChunks(tx, f.ID)
		chunks.ready = true
		w := ocrgiro.NewWriter(chunks)
		if err := w.Begin(ocrgiro.Start{Sender: unit, Number: f.TransmissionNumber, Recipient: ocrgiro.NetsID}); err != nil {
			return err
		}
		// The claims to send: through avtalegiro_claim_queue (migrations
		// 00040 and 00042), which holds the claims scheduled and not sent.
		written := 0 // claims in the claim assignment
		send := claimsSource{from: `avtalegiro_claim_queue q JOIN avtalegiro_claims c ON c.tenant_id = q.tenant_id AND c.id = q.claim_id`,
			where: "q.due_date <= $3 AND c.status = 'Scheduled'", order: "q.due_date, q.claim_id", account: "q."}
		for i, q := range []struct {
			src claimsSource
			typ int
		}{{send, ocrgiro.AssignmentClaims},
			// (due_date <= $3 OR due_date > $3) only types $3 on PostgreSQL;
			// cancel_pending is PostgreSQL's index, status SQLite's.
			{claimsSource{from: "avtalegiro_claims c", where: "c.cancel_pending AND c.status = 'CancellationPending' AND (c.due_date <= $3 OR c.due_date > $3)",
				order: "c.due_date, c.id"}, ocrgiro.AssignmentCancellations}} {
			n, err := writeAssignment(ctx, tx, w, chunks, q.src, accountID, latest, q.typ, fmt.Sprintf("%07d", (assignment-1+int64(i))%10_000_000), number)
			if err != nil {
				return err
			}
			if i == 0 {
				written = n
			}
			f.Transactions += n
		}
		if f.Transactions == 0 {
			return errNothingToExport
		}
		if err := w.Close(ocrgiro.Date{}); err != nil {
			return err
		}
		if err := chunks.flush(ctx, true); err != nil {
			return err
		}
		f.SHA256 = chunks.hash()
		if _, err := tx.Exec(ctx, `UPDATE avtalegiro_files SET sha256 = $3, transactions = $4 WHERE tenant_id = $1 AND id = $2`,
			tx.TenantID(), f.ID, f.SHA256, f.Transactions); err != nil {
			return fmt.Errorf("update file: %w", err)
		}
		marked, err := markClaimsSent(ctx, tx, accountID, f.ID, latest)
		if err != nil {
			return err
		}
		// A claim cancelled (on PostgreSQL, by another transaction) after
		// it was read into the file is not marked Sent: the file would
		// collect a claim Kadens holds cancelled. Then nothing of this
		// export stands, and it is to be run again.
		if marked != int64(written) {
			return fmt.Errorf("%d of the %d claims written changed while the file was written: %w", int64(written)-marked, written, store.ErrConflict)
		}
		_, err = tx.Exec(ctx, `UPDATE avtalegiro_claims SET status = 'Cancelled', cancellation_file_id = $3, updated_at = $4
			WHERE tenant_id = $1 AND account_id = $2 AND cancel_pending AND status = 'CancellationPending'`, tx.TenantID(), accountID, f.ID, store.TimeParam(now))
		return err
	})
	if errors.Is(err, errNothingToExport) {
		return AvtaleGiroFile{}, false, nil
	}
	if err != nil {
		return AvtaleGiroFile{}, false, fmt.Errorf("avtalegiro: export claims: %w", err)
	}
	return f, true, nil
}

var errNothingToExport = errors.New("nothing to export")

// markClaimsSent records that the account's queued claims due by latest
// went in file fileID (one narrow avtalegiro_sent_claims row per claim;
// the wide claim rows are not rewritten, and avtalegiro_claim_states
// derives Sent from it: migration 00042), takes them out of the queue and
// returns how many it took.
//
// On PostgreSQL the queue rows are deleted and the sendings written from
// what the delete returns, in one statement: a cancellation deletes its
// claim's queue row before it cancels (unqueueClaim), so a claim cancelled
// after it was read into the file is not taken (the delete waits for the
// cancellation's commit and finds the row gone) and the caller starts
// over; a cancellation after this delete waits for the export's commit
// and finds the claim Sent. On SQLite the transaction holds the only write
// lock from its start, so the queue is the set the file was written from.
//
// Either way the account's row lock (taken by the export) keeps a
// concurrent export out, and claims are created under a share lock on it.
func markClaimsSent(ctx context.Context, tx *store.Tx, accountID, fileID, latest string) (int64, error) {
	if tx.Engine() == store.Postgres {
		res, err := tx.Exec(ctx, `WITH taken AS (DELETE FROM avtalegiro_claim_queue WHERE tenant_id = $1 AND account_id = $2 AND due_date <= $4
			RETURNING tenant_id, claim_id)
			INSERT INTO avtalegiro_sent_claims (tenant_id, claim_id, file_id) SELECT tenant_id, claim_id, $3 FROM taken`,
			tx.TenantID(), accountID, fileID, latest)
		if err != nil {
			return 0, fmt.Errorf("mark claims sent: %w", err)
		}
		return res.RowsAffected()
	}
	res, err := tx.Exec(ctx, `INSERT INTO avtalegiro_sent_claims (tenant_id, claim_id, file_id)
		SELECT tenant_id, claim_id, $3 FROM avtalegiro_claim_queue WHERE tenant_id = $1 AND account_id = $2 AND due_date <= $4`,
		tx.TenantID(), accountID, fileID, latest)
	if err != nil {
		return 0, fmt.Errorf("mark claims sent: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("mark claims sent: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM avtalegiro_claim_queue WHERE tenant_id = $1 AND account_id = $2 AND due_date <= $3`,
		tx.TenantID(), accountID, latest); err != nil {
		return 0, fmt.Errorf("unqueue sent claims: %w", err)
	}
	return n, nil
}

// avgExportPage is how many claims writeAssignment reads per statement;
// the file's full chunks are stored between statements.
const avgExportPage = 1000

// claimsSource says where an assignment's claims are read from: from
// (with the claims as c), where (with $3 = latest) and order, the file's
// order (due date, id) as the columns of an index. account is the alias
// whose tenant_id and account_id select the account ("" for c).
type claimsSource struct{ from, where, order, account string }

// writeAssignment writes the account's claims that src selects as one
// assignment of type typ; none, no assignment. The claims are read a page
// at a time in file order (due date, id) and the file's bytes stored as
// they fill chunks, so memory does not grow with the file.
func writeAssignment(ctx context.Context, tx *store.Tx, w *ocrgiro.Writer, chunks *avgChunks, src claimsSource, accountID, latest string, typ int, number, account string) (int, error) {
	n := 0
	var lastDue, lastID string
	by := src.account
	if by == "" {
		by = "c."
	}
	for {
		q := `SELECT c.id, c.kid, c.amount, c.due_date, c.notify, c.short_name, c.external_reference, c.notice_lines
			FROM ` + src.from + ` WHERE ` + by + `tenant_id = $1 AND ` + by + `account_id = $2 AND ` + src.where
		args := []any{tx.TenantID(), accountID, latest}
		if n > 0 {
			q += ` AND (` + src.order + `) > ($4, $5)`
			args = append(args, lastDue, lastID)
		}
		page, err := writeClaims(ctx, tx, w, q+fmt.Sprintf(` ORDER BY %s LIMIT %d`, src.order, avgExportPage), args, typ, number, account, &n, &lastDue, &lastID)
		if err != nil {
			return 0, err
		}
		if err := chunks.flush(ctx, false); err != nil {
			return 0, err
		}
		if page < avgExportPage {
			break
		}
	}
	if n > 0 {
		if err := w.EndAssignment(ocrgiro.AssignmentEnd{}); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// writeClaims writes the claims query q reads (one page) and returns how
// many it read; n counts the assignment's claims, lastDue and lastID are
// where the page ended.
func writeClaims(ctx context.Context, tx *store.Tx, w *ocrgiro.Writer, q string, args []any, typ int, number, account string, n *int, lastDue, lastID *string) (int, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	page := 0
	for rows.Next() {
		var (
			c              ocrgiro.Claim
			due, noticeRaw string
			notify         bool
		)
		if err := rows.Scan(lastID, &c.KID, &c.Amount, &due, &notify, &c.ShortName, &c.ExternalRef, &noticeRaw); err != nil {
			return 0, err
		}
		if *n == 0 {
			if err := w.BeginAssignment(ocrgiro.AssignmentStart{Service: ocrgiro.ServiceAvtaleGiro, Type: typ, Number: number, Account: account}); err != nil {
				return 0, err
			}
		}
		page++
		*n++
		*lastDue = due
		c.Number = *n
		d, err := time.Parse(time.DateOnly, due)
		if err != nil {
			return 0, fmt.Errorf("claim due date %q: %w", due, err)
		}
		c.Due = ocrgiro.DateOf(d)
		c.ShortName, c.ExternalRef = ocrgiro.Fit(c.ShortName, 10), ocrgiro.Fit(c.ExternalRef, 25)
		switch {
		case typ == ocrgiro.AssignmentCancellations:
			c.Type = ocrgiro.TypeCancellation
		case notify:
			c.Type = ocrgiro.TypeBankNotice
			if noticeRaw != "" {
				for i, l := range strings.Split(noticeRaw, "\n") {
					if strings.TrimSpace(l) != "" && i < ocrgiro.MaxNoticeLines {
						c.Notice = append(c.Notice, ocrgiro.NoticeLine{Line: i + 1, Text: ocrgiro.Fit(l, ocrgiro.NoticeLineLen)})
					}
				}
			}
		default:
			c.Type = ocrgiro.TypeNoNotice
		}
		if err := w.Claim(c); err != nil {
			return 0, err
		}
	}
	return page, rows.Err()
}

// AvtaleGiroImport says what importing a file did.
type AvtaleGiroImport struct {
	FileID   string `json:"fileId"`
	Kind     string `json:"kind" enum:"Mandates,Payments"`
	Repeated bool   `json:"repeated" description:"The file was imported before; nothing changed."`
	// Mandates: new or changed, deleted; Payments: read.
	MandatesChanged int `json:"mandatesChanged"`
	MandatesDeleted int `json:"mandatesDeleted"`
	Payments        int `json:"payments"`
}

// ImportFile reads a mandate notification or OCR giro file from
// the bank in one transaction: all of it or nothing. A file imported
// before (same bytes) changes nothing. Mandates are applied at once (a
// deleted mandate ends its agreements, see deleteMandate); payments are
// stored for SettleAvtaleGiroPayments. A malformed file is a 400 on file
// naming the line.
//
// The file is streamed: it is parsed, hashed and stored in chunks as it
// is read, and payments are written in batches, so memory does not grow
// with its size. Its hash is known only at its end, so a file seen before
// is recognized there (or at the first error, e.g. its payments' unique
// references, after the rest is read to hash it) and the transaction is
// rolled back.
func ImportFile(ctx context.Context, st *store.Store, file io.Reader, now time.Time) (AvtaleGiroImport, error) {
	now = now.UTC().Truncate(time.Microsecond)
	var (
		out    AvtaleGiroImport
		chunks *avgChunks
		hash   string
	)
	err := st.InTx(ctx, func(tx *store.Tx) error {
		out = AvtaleGiroImport{FileID: store.NewID()}
		chunks = newAvgChunks(tx, out.FileID)
		err := importFile(ctx, tx, io.TeeReader(file, chunks), chunks, now, &out)
		if err != nil {
			// The rest of the file, for the hash that says whether it
			// was imported before (then the error is no error).
			if _, derr := io.Copy(chunks.sum, file); derr != nil {
				return errors.Join(err, fmt.Errorf("read file: %w", derr))
			}
			hash = chunks.hash()
			return err
		}
		hash = chunks.hash()
		var seen string
		err = tx.QueryRow(ctx, `SELECT id FROM avtalegiro_files WHERE tenant_id = $1 AND direction = 'In' AND sha256 = $2`,
			tx.TenantID(), hash).Scan(&seen)
		if err == nil {
			return errFileSeen
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE avtalegiro_files SET sha256 = $3 WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), out.FileID, hash)
		return err
	})
	if err != nil && hash != "" && ctx.Err() == nil {
		// Imported before (also by a concurrent import that committed
		// first: the unique index on the hash or the payments' references).
		tenant, terr := tenancy.From(ctx)
		if terr != nil {
			return AvtaleGiroImport{}, terr
		}
		var seen AvtaleGiroImport
		qerr := st.Reader().QueryRow(ctx, `SELECT id, kind FROM avtalegiro_files WHERE tenant_id = $1 AND direction = 'In' AND sha256 = $2`,
			tenant, hash).Scan(&seen.FileID, &seen.Kind)
		if qerr == nil {
			seen.Repeated = true
			return seen, nil
		}
		if !errors.Is(qerr, sql.ErrNoRows) {
			err = errors.Join(err, qerr)
		}
	}
	if err != nil {
		return AvtaleGiroImport{}, fmt.Errorf("avtalegiro: import file: %w", err)
	}
	return out, nil
}

var errFileSeen = errors.New("file imported before")

func fileErr(err error) error {
	var se *ocrgiro.SyntaxError
	if errors.As(err, &se) {
		if se.Line > 0 {
			return validation.Field("file", "line %d: %s", se.Line, se.Reason)
		}
		return validation.Field("file", "%s", se.Reason)
	}
	return err
}

// avgPaymentBatch is how many payment rows are held before they are
// written (insertRows chunks them further): memory stays flat in the
// file's size.
const avgPaymentBatch = 2048

func lineOf(r *ocrgiro.Reader) int { return r.Line() }

func importFile(ctx context.Context, tx *store.Tx, file io.Reader, chunks *avgChunks, now time.Time, out *AvtaleGiroImport) error {
	r := ocrgiro.NewReader(file)
	start, err := r.Start()
	if err != nil {
		return fileErr(err)
	}
	var (
		account, accountID string
		assignment         string
		transactions       int
	)
	var rows [][]any
	flush := func() error {
		err := tx.InsertRows(ctx, "avtalegiro_payments", "id, tenant_id, file_id, reference, kid, amount, paid_on, line", rows, "")
		if store.IsUniqueViolation(err) {
			return validation.Field("file", "holds payments imported before from another file")
		}
		rows = rows[:0]
		return err
	}
	insertFile := func(kind string) error {
		if chunks.ready {
			return nil
		}
		out.Kind = kind
		// The hash is set at the end; until then the row holds its own
		// id there, unique like a hash.
		_, err := tx.Exec(ctx, `INSERT INTO avtalegiro_files (id, tenant_id, account_id, direction, kind, transmission_number,
			sha256, transactions, created_at) VALUES ($1,$2,$3,'In',$4,$5,$6,0,$7)`,
			out.FileID, tx.TenantID(), accountID, kind, start.Number, "pending:"+out.FileID, store.TimeParam(now))
		chunks.ready = err == nil
		return err
	}
	for {
		item, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fileErr(err)
		}
		switch v := item.(type) {
		case ocrgiro.AssignmentStart:
			if v.Service == ocrgiro.ServiceAvtaleGiro && v.Type != ocrgiro.AssignmentMandates {
				return validation.Field("file", "assignment %s holds claims or cancellations: those are files Kadens sends to the bank, not imports", v.Number)
			}
			if err := tx.QueryRow(ctx, `SELECT id FROM avtalegiro_accounts WHERE tenant_id = $1 AND bank_account_number = $2 AND deleted_at IS NULL`,
				tx.TenantID(), v.Account).Scan(&accountID); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return validation.Field("file", "assignment %s is for account %s, which is no AvtaleGiro account of this tenant", v.Number, v.Account)
				}
				return err
			}
			kind := "Payments"
			if v.Type == ocrgiro.AssignmentMandates {
				kind = "Mandates"
			}
			if out.Kind != "" && out.Kind != kind {
				return validation.Field("file", "mixes mandates and payments; import them as separate files")
			}
			if err := insertFile(kind); err != nil {
				return err
			}
			account, assignment = v.Account, v.Number
		case ocrgiro.Mandate:
			transactions++
			if err := applyMandate(ctx, tx, accountID, v, now, out); err != nil {
				return err
			}
		case ocrgiro.Payment:
			transactions++
			out.Payments++
			ref := fmt.Sprintf("ocr:%s:%s:%s:%s:%07d", start.Sender, start.Number, account, assignment, v.Number)
			paid := v.NetsDate
			if !v.BankDate.IsZero() {
				paid = v.BankDate
			}
			rows = append(rows, []any{store.NewID(), tx.TenantID(), out.FileID, ref, v.KID, v.Amount, paid.Time().Format(time.DateOnly), lineOf(r)})
			if len(rows) >= avgPaymentBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := chunks.flush(ctx, false); err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if !chunks.ready {
		return validation.Field("file", "holds no assignment")
	}
	if err := chunks.flush(ctx, true); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE avtalegiro_files SET transactions = $3 WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), out.FileID, transactions)
	return err
}

// applyMandate applies one mandate record: registration 0 or 1 creates
// the mandate or updates its notice choice; 2 deletes it.
func applyMandate(ctx context.Context, tx *store.Tx, accountID string, m ocrgiro.Mandate, now time.Time, out *AvtaleGiroImport) error {
	var id string
	var notify bool
	err := tx.QueryRow(ctx, `SELECT id, notify FROM avtalegiro_mandates WHERE tenant_id = $1 AND account_id = $2 AND kid = $3 AND deleted_at IS NULL`,
		tx.TenantID(), accountID, m.KID).Scan(&id, &notify)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	switch {
	case m.Registration == ocrgiro.MandateDeleted && found:
		if _, err := DeleteMandateIn(ctx, tx, id, now); err != nil {
			return err
		}
		out.MandatesDeleted++
	case m.Registration == ocrgiro.MandateDeleted:
	case found && notify != m.Notice:
		if _, err := tx.Exec(ctx, `UPDATE avtalegiro_mandates SET notify = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2`,
			tx.TenantID(), id, m.Notice, store.TimeParam(now)); err != nil {
			return err
		}
		out.MandatesChanged++
	case found:
	default:
		if _, err := tx.Exec(ctx, `INSERT INTO avtalegiro_mandates (id, tenant_id, account_id, kid, notify, source, created_at, updated_at)
			VALUES ($1,$2,$3,$4,$5,'Bank',$6,$6)`, store.NewID(), tx.TenantID(), accountID, m.KID, m.Notice, store.TimeParam(now)); err != nil {
			return err
		}
		out.MandatesChanged++
	}
	return nil
}
