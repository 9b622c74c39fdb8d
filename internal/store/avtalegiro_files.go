package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"
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

// AvtaleGiroFile returns file id (AvtaleGiroFileContent reads its bytes).
func (s *Store) AvtaleGiroFile(ctx context.Context, id string) (AvtaleGiroFile, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroFile{}, err
	}
	if !ValidID(id) {
		return AvtaleGiroFile{}, ErrNotFound
	}
	f, err := scanAvgFile(s.r.QueryRowContext(ctx, `SELECT `+avgFileColumns+` FROM avtalegiro_files
		WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return AvtaleGiroFile{}, fmt.Errorf("store: avtalegiro file %s: %w", id, notFound(err))
	}
	return f, nil
}

// AvtaleGiroFileContent returns a reader of file id's bytes that reads
// one chunk at a time (a query per chunk: no statement stays open while
// the caller writes to a slow client or a bank). A file that does not
// exist reads as ErrNotFound.
func (s *Store) AvtaleGiroFileContent(ctx context.Context, id string) io.Reader {
	tenant, err := avgTenant(ctx)
	if err == nil && !ValidID(id) {
		err = ErrNotFound
	}
	return &avgFileReader{ctx: ctx, s: s, tenant: tenant, id: id, err: err}
}

type avgFileReader struct {
	ctx        context.Context
	s          *Store
	tenant, id string
	seq        int
	cur        []byte
	err        error
}

func (r *avgFileReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		err := r.s.r.QueryRowContext(r.ctx, `SELECT data FROM avtalegiro_file_chunks WHERE tenant_id = $1 AND file_id = $2 AND seq = $3`,
			r.tenant, r.id, r.seq).Scan(&r.cur)
		switch {
		case errors.Is(err, sql.ErrNoRows) && r.seq == 0:
			r.err = fmt.Errorf("store: avtalegiro file %s: %w", r.id, ErrNotFound)
		case errors.Is(err, sql.ErrNoRows):
			r.err = io.EOF
		case err != nil:
			r.err = fmt.Errorf("store: avtalegiro file %s chunk %d: %w", r.id, r.seq, err)
		}
		r.seq++
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

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
	return openAvgPayments(ctx, s.r, tenant, limit)
}

// OpenAvtaleGiroPayments is Store.OpenAvtaleGiroPayments in the
// settling transaction, after LockAvtaleGiroSettlement: what it reads is
// what no other settlement has settled.
func (tx *Tx) OpenAvtaleGiroPayments(ctx context.Context, limit int) ([]AvtaleGiroPayment, error) {
	return openAvgPayments(ctx, tx.tx, tx.tenant, limit)
}

// LockAvtaleGiroSettlement makes settlements of the tenant's OCR payments
// take turns (PostgreSQL: an advisory lock to the end of tx; SQLite's one
// writer does it already). A batch matches payments to the sent claims it
// reads; two settlements at once (two imports, or an import and the bank
// sync) would each read the same claim as unpaid, under READ COMMITTED,
// and pay it twice while the next claim of the same KID stays unpaid.
func (tx *Tx) LockAvtaleGiroSettlement(ctx context.Context) error {
	if tx.s.engine != Postgres {
		return nil
	}
	if _, err := tx.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "avtalegiro-settle:"+tx.tenant); err != nil {
		return fmt.Errorf("store: avtalegiro settlement lock: %w", err)
	}
	return nil
}

func openAvgPayments(ctx context.Context, q queryer, tenant string, limit int) ([]AvtaleGiroPayment, error) {
	return queryAll(ctx, q, func(r scanner) (AvtaleGiroPayment, error) {
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
	c, err := scanAvgClaim(q.QueryRowContext(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1
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
	pay, prob := settledMark(paymentID, problem)
	if _, err := tx.exec(ctx, `UPDATE avtalegiro_payments SET payment_id = $3, problem = $4 WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, rowID, pay, prob); err != nil {
		return err
	}
	if claimID == "" {
		return nil
	}
	return tx.paidAvtaleGiroClaim(ctx, claimID, pay, now)
}

// settledMark is an imported payment's payment_id and problem: a payment
// without a Kadens payment always says why.
func settledMark(paymentID, problem string) (pay, prob *string) {
	if paymentID != "" {
		pay = &paymentID
	}
	if problem != "" || paymentID == "" {
		if problem == "" {
			problem = "settled without an invoice"
		}
		prob = &problem
	}
	return pay, prob
}

func (tx *Tx) paidAvtaleGiroClaim(ctx context.Context, claimID string, pay *string, now time.Time) error {
	_, err := tx.exec(ctx, `UPDATE avtalegiro_claims SET status = 'Paid', payment_id = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, claimID, pay, ts(now))
	return err
}
