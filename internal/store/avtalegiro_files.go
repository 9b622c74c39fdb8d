package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/validation"
)

const avgFileColumns = `id, account_id, direction, kind, transmission_number, sha256, transactions, created_at, submitted_at`

func scanAvgFile(r scanner) (AvtaleGiroFile, error) {
	var (
		f         AvtaleGiroFile
		account   sql.NullString
		submitted sql.NullTime
	)
	err := r.Scan(&f.ID, &account, &f.Direction, &f.Kind, &f.TransmissionNumber, &f.SHA256, &f.Transactions, &f.CreatedAt, &submitted)
	if account.Valid {
		f.AccountID = &account.String
	}
	f.CreatedAt, f.SubmittedAt = f.CreatedAt.UTC(), fromNullTime(submitted)
	return f, err
}

// AvtaleGiroFile returns file id with its content.
func (s *Store) AvtaleGiroFile(ctx context.Context, id string) (AvtaleGiroFile, []byte, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroFile{}, nil, err
	}
	if !ValidID(id) {
		return AvtaleGiroFile{}, nil, ErrNotFound
	}
	var content []byte
	f, err := scanAvgFile(&appendScanner{s.r.QueryRowContext(ctx, `SELECT `+avgFileColumns+`, content FROM avtalegiro_files
		WHERE tenant_id = $1 AND id = $2`, tenant, id), &content})
	if err != nil {
		return AvtaleGiroFile{}, nil, fmt.Errorf("store: avtalegiro file %s: %w", id, notFound(err))
	}
	return f, content, nil
}

// appendScanner scans one more column after the ones its caller asks for.
type appendScanner struct {
	r     scanner
	extra any
}

func (a *appendScanner) Scan(dest ...any) error { return a.r.Scan(append(dest, a.extra)...) }

// UnsubmittedAvtaleGiroFiles returns the account's claim files not yet
// accepted by the bank, oldest first.
func (s *Store) UnsubmittedAvtaleGiroFiles(ctx context.Context, accountID string) ([]AvtaleGiroFile, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s.r, scanAvgFile, `SELECT `+avgFileColumns+` FROM avtalegiro_files WHERE tenant_id = $1 AND account_id = $2
		AND direction = 'Out' AND submitted_at IS NULL ORDER BY id`, tenant, accountID)
}

// MarkAvtaleGiroFileSubmitted records that the bank accepted file id.
func (s *Store) MarkAvtaleGiroFileSubmitted(ctx context.Context, id string, at time.Time) error {
	return s.InTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, `UPDATE avtalegiro_files SET submitted_at = $3 WHERE tenant_id = $1 AND id = $2 AND submitted_at IS NULL`,
			tx.tenant, id, ts(at))
		return err
	})
}

// ExportAvtaleGiroClaims writes the account's next claim file in one
// transaction: every Scheduled claim due by latest (YYYY-MM-DD) in a claims
// assignment, every CancellationPending claim in a cancellations
// assignment (once: the claim becomes Cancelled with this file). The file
// gets the account's next transmission and assignment numbers. No claims
// to send: ok is false and nothing is written.
func (s *Store) ExportAvtaleGiroClaims(ctx context.Context, accountID, latest string, now time.Time) (f AvtaleGiroFile, ok bool, err error) {
	if !ValidID(accountID) {
		return AvtaleGiroFile{}, false, ErrNotFound
	}
	now = now.UTC().Truncate(time.Microsecond)
	err = s.InTx(ctx, func(tx *Tx) error {
		var number, unit string
		var transmission, assignment int64
		err := tx.queryRow(ctx, `UPDATE avtalegiro_accounts SET transmission_serial = transmission_serial + 1,
			assignment_serial = assignment_serial + 2 WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
			RETURNING bank_account_number, customer_unit_id, transmission_serial, assignment_serial`, tx.tenant, accountID).Scan(
			&number, &unit, &transmission, &assignment)
		if err != nil {
			return notFound(err)
		}
		// Claims are created under a share lock on their account (see
		// CreateAvtaleGiroClaim), so from here on the set this statement
		// reads is the set the UPDATE below marks, on PostgreSQL too.
		f = AvtaleGiroFile{ID: NewID(), AccountID: &accountID, Direction: "Out", Kind: "Claims",
			TransmissionNumber: fmt.Sprintf("%07d", transmission%10_000_000), CreatedAt: now}
		var buf bytes.Buffer
		w := ocrgiro.NewWriter(&buf)
		if err := w.Begin(ocrgiro.Start{Sender: unit, Number: f.TransmissionNumber, Recipient: ocrgiro.NetsID}); err != nil {
			return err
		}
		for i, q := range []struct {
			where string
			typ   int
		}{{"status = 'Scheduled' AND due_date <= $3", ocrgiro.AssignmentClaims},
			// (due_date <= $3 OR due_date > $3) only types $3 on PostgreSQL.
			{"status = 'CancellationPending' AND (due_date <= $3 OR due_date > $3)", ocrgiro.AssignmentCancellations}} {
			n, err := tx.writeAssignment(ctx, w, q.where, accountID, latest, q.typ, fmt.Sprintf("%07d", (assignment-1+int64(i))%10_000_000), number)
			if err != nil {
				return err
			}
			f.Transactions += n
		}
		if f.Transactions == 0 {
			return errNothingToExport
		}
		if err := w.Close(ocrgiro.Date{}); err != nil {
			return err
		}
		sum := sha256.Sum256(buf.Bytes())
		f.SHA256 = hex.EncodeToString(sum[:])
		if _, err := tx.exec(ctx, `INSERT INTO avtalegiro_files (id, tenant_id, account_id, direction, kind, transmission_number,
			sha256, content, transactions, created_at) VALUES ($1,$2,$3,'Out','Claims',$4,$5,$6,$7,$8)`,
			f.ID, tx.tenant, accountID, f.TransmissionNumber, f.SHA256, buf.Bytes(), f.Transactions, ts(now)); err != nil {
			return fmt.Errorf("insert file: %w", err)
		}
		if _, err := tx.exec(ctx, `UPDATE avtalegiro_claims SET status = 'Sent', claim_file_id = $3, updated_at = $5
			WHERE tenant_id = $1 AND account_id = $2 AND status = 'Scheduled' AND due_date <= $4`, tx.tenant, accountID, f.ID, latest, ts(now)); err != nil {
			return err
		}
		_, err = tx.exec(ctx, `UPDATE avtalegiro_claims SET status = 'Cancelled', cancellation_file_id = $3, updated_at = $4
			WHERE tenant_id = $1 AND account_id = $2 AND status = 'CancellationPending'`, tx.tenant, accountID, f.ID, ts(now))
		return err
	})
	if errors.Is(err, errNothingToExport) {
		return AvtaleGiroFile{}, false, nil
	}
	if err != nil {
		return AvtaleGiroFile{}, false, fmt.Errorf("store: export avtalegiro claims: %w", err)
	}
	return f, true, nil
}

var errNothingToExport = errors.New("nothing to export")

// writeAssignment writes the account's claims that match where (with
// $3 = latest) as one assignment of type typ; none, no assignment.
func (tx *Tx) writeAssignment(ctx context.Context, w *ocrgiro.Writer, where, accountID, latest string, typ int, number, account string) (int, error) {
	rows, err := tx.query(ctx, `SELECT kid, amount, due_date, notify, short_name, external_reference, notice_lines
		FROM avtalegiro_claims WHERE tenant_id = $1 AND account_id = $2 AND `+where+` ORDER BY due_date, id`, tx.tenant, accountID, latest)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			c              ocrgiro.Claim
			due, noticeRaw string
			notify         bool
		)
		if err := rows.Scan(&c.KID, &c.Amount, &due, &notify, &c.ShortName, &c.ExternalRef, &noticeRaw); err != nil {
			return 0, err
		}
		if n == 0 {
			if err := w.BeginAssignment(ocrgiro.AssignmentStart{Service: ocrgiro.ServiceAvtaleGiro, Type: typ, Number: number, Account: account}); err != nil {
				return 0, err
			}
		}
		n++
		c.Number = n
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
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if n > 0 {
		if err := w.EndAssignment(ocrgiro.AssignmentEnd{}); err != nil {
			return 0, err
		}
	}
	return n, nil
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

// ImportAvtaleGiroFile reads a mandate notification or OCR giro file from
// the bank in one transaction: all of it or nothing. A file imported
// before (same bytes) changes nothing. Mandates are applied at once (a
// deleted mandate ends its agreements, see deleteMandate); payments are
// stored for SettleAvtaleGiroPayments. A malformed file is a 400 on file
// naming the line.
func (s *Store) ImportAvtaleGiroFile(ctx context.Context, content []byte, now time.Time) (AvtaleGiroImport, error) {
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	now = now.UTC().Truncate(time.Microsecond)
	var out AvtaleGiroImport
	err := s.InTx(ctx, func(tx *Tx) error {
		out = AvtaleGiroImport{}
		var kind string
		err := tx.queryRow(ctx, `SELECT id, kind FROM avtalegiro_files WHERE tenant_id = $1 AND direction = 'In' AND sha256 = $2`,
			tx.tenant, hash).Scan(&out.FileID, &kind)
		if err == nil {
			out.Kind, out.Repeated = kind, true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return tx.importFile(ctx, content, hash, now, &out)
	})
	if err != nil {
		return AvtaleGiroImport{}, fmt.Errorf("store: import avtalegiro file: %w", err)
	}
	return out, nil
}

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

func (tx *Tx) importFile(ctx context.Context, content []byte, hash string, now time.Time, out *AvtaleGiroImport) error {
	r := ocrgiro.NewReader(bytes.NewReader(content))
	start, err := r.Start()
	if err != nil {
		return fileErr(err)
	}
	out.FileID = NewID()
	var (
		account, accountID string
		assignment         string
		transactions       int
		inserted           bool
	)
	var rows [][]any
	flush := func() error {
		err := tx.insertRows(ctx, "avtalegiro_payments", "id, tenant_id, file_id, reference, kid, amount, paid_on, line", rows, "")
		if isUniqueViolation(err) {
			return validation.Field("file", "holds payments imported before from another file")
		}
		rows = rows[:0]
		return err
	}
	insertFile := func(kind string) error {
		if inserted {
			return nil
		}
		inserted, out.Kind = true, kind
		_, err := tx.exec(ctx, `INSERT INTO avtalegiro_files (id, tenant_id, account_id, direction, kind, transmission_number,
			sha256, content, transactions, created_at) VALUES ($1,$2,$3,'In',$4,$5,$6,$7,0,$8)`,
			out.FileID, tx.tenant, accountID, kind, start.Number, hash, content, ts(now))
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
			if err := tx.queryRow(ctx, `SELECT id FROM avtalegiro_accounts WHERE tenant_id = $1 AND bank_account_number = $2 AND deleted_at IS NULL`,
				tx.tenant, v.Account).Scan(&accountID); err != nil {
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
			if err := tx.applyMandate(ctx, accountID, v, now, out); err != nil {
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
			rows = append(rows, []any{NewID(), tx.tenant, out.FileID, ref, v.KID, v.Amount, paid.Time().Format(time.DateOnly), lineOf(r)})
			if len(rows) >= avgPaymentBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if !inserted {
		return validation.Field("file", "holds no assignment")
	}
	_, err = tx.exec(ctx, `UPDATE avtalegiro_files SET transactions = $3 WHERE tenant_id = $1 AND id = $2`, tx.tenant, out.FileID, transactions)
	return err
}

// applyMandate applies one mandate record: registration 0 or 1 creates
// the mandate or updates its notice choice; 2 deletes it.
func (tx *Tx) applyMandate(ctx context.Context, accountID string, m ocrgiro.Mandate, now time.Time, out *AvtaleGiroImport) error {
	var id string
	var notify bool
	err := tx.queryRow(ctx, `SELECT id, notify FROM avtalegiro_mandates WHERE tenant_id = $1 AND account_id = $2 AND kid = $3 AND deleted_at IS NULL`,
		tx.tenant, accountID, m.KID).Scan(&id, &notify)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	switch {
	case m.Registration == ocrgiro.MandateDeleted && found:
		if _, err := tx.deleteMandate(ctx, id, now); err != nil {
			return err
		}
		out.MandatesDeleted++
	case m.Registration == ocrgiro.MandateDeleted:
	case found && notify != m.Notice:
		if _, err := tx.exec(ctx, `UPDATE avtalegiro_mandates SET notify = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2`,
			tx.tenant, id, m.Notice, ts(now)); err != nil {
			return err
		}
		out.MandatesChanged++
	case found:
	default:
		if _, err := tx.exec(ctx, `INSERT INTO avtalegiro_mandates (id, tenant_id, account_id, kid, notify, source, created_at, updated_at)
			VALUES ($1,$2,$3,$4,$5,'Bank',$6,$6)`, NewID(), tx.tenant, accountID, m.KID, m.Notice, ts(now)); err != nil {
			return err
		}
		out.MandatesChanged++
	}
	return nil
}

// AvtaleGiroPayment is an OCR giro payment read from the bank, to settle.
type AvtaleGiroPayment struct {
	ID, FileID, AccountID, Reference, KID, PaidOn string
	Amount                                        int64
}

// OpenAvtaleGiroPayments returns up to limit imported payments not yet
// settled.
func (s *Store) OpenAvtaleGiroPayments(ctx context.Context, limit int) ([]AvtaleGiroPayment, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s.r, func(r scanner) (AvtaleGiroPayment, error) {
		var p AvtaleGiroPayment
		return p, r.Scan(&p.ID, &p.FileID, &p.AccountID, &p.Reference, &p.KID, &p.Amount, &p.PaidOn)
	}, `SELECT p.id, p.file_id, f.account_id, p.reference, p.kid, p.amount, p.paid_on FROM avtalegiro_payments p
		JOIN avtalegiro_files f ON f.tenant_id = p.tenant_id AND f.id = p.file_id
		WHERE p.tenant_id = $1 AND p.payment_id IS NULL AND p.problem IS NULL ORDER BY p.id LIMIT $2`, tenant, limit)
}

// MatchAvtaleGiroClaim returns the claim an OCR payment pays: the
// account's sent claim with the payment's KID and amount, earliest due
// first (a paid one, when the payment was settled before). ok is false
// when none matches.
func (s *Store) MatchAvtaleGiroClaim(ctx context.Context, p AvtaleGiroPayment) (AvtaleGiroClaim, bool, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroClaim{}, false, err
	}
	return matchAvgClaim(ctx, s.r, tenant, p)
}

// MatchAvtaleGiroClaim is Store.MatchAvtaleGiroClaim inside the
// transaction (a batch of payments settled in one transaction).
func (tx *Tx) MatchAvtaleGiroClaim(ctx context.Context, p AvtaleGiroPayment) (AvtaleGiroClaim, bool, error) {
	return matchAvgClaim(ctx, tx.tx, tx.tenant, p)
}

func matchAvgClaim(ctx context.Context, q queryer, tenant string, p AvtaleGiroPayment) (AvtaleGiroClaim, bool, error) {
	c, err := scanAvgClaim(q.QueryRowContext(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claims WHERE tenant_id = $1
		AND account_id = $2 AND kid = $3 AND amount = $4 AND status IN ('Sent', 'CancellationPending')
		ORDER BY due_date, id LIMIT 1`, tenant, p.AccountID, p.KID, p.Amount))
	if errors.Is(err, sql.ErrNoRows) {
		return AvtaleGiroClaim{}, false, nil
	}
	if err != nil {
		return AvtaleGiroClaim{}, false, err
	}
	return c, true, nil
}

// SettledAvtaleGiroPayment records how an imported payment was settled:
// the Kadens payment it became (paymentID, may be empty), the claim it
// paid (claimID, may be empty) or why it could not be (problem).
func (s *Store) SettledAvtaleGiroPayment(ctx context.Context, rowID, paymentID, claimID, problem string, now time.Time) error {
	return s.InTx(ctx, func(tx *Tx) error {
		return tx.SettledAvtaleGiroPayment(ctx, rowID, paymentID, claimID, problem, now)
	})
}

// SettledAvtaleGiroPayment is Store.SettledAvtaleGiroPayment inside the
// transaction.
func (tx *Tx) SettledAvtaleGiroPayment(ctx context.Context, rowID, paymentID, claimID, problem string, now time.Time) error {
	var pay, prob *string
	if paymentID != "" {
		pay = &paymentID
	}
	if problem != "" || paymentID == "" {
		if problem == "" {
			problem = "settled without an invoice"
		}
		prob = &problem
	}
	if _, err := tx.exec(ctx, `UPDATE avtalegiro_payments SET payment_id = $3, problem = $4 WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, rowID, pay, prob); err != nil {
		return err
	}
	if claimID == "" {
		return nil
	}
	_, err := tx.exec(ctx, `UPDATE avtalegiro_claims SET status = 'Paid', payment_id = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, claimID, pay, ts(now))
	return err
}
