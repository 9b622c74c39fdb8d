package avtalegiro

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// AvtaleGiroSettlementBatch answers what settling a batch of imported
// payments asks (the claim each pays, the payment demand it settles) from
// three statements read for the whole batch, instead of two statements
// per payment; it is the transaction's settler for the batch.
type AvtaleGiroSettlementBatch struct {
	tx *store.Tx
	// claims: the sent claims each payment may pay, by account, KID and
	// amount, earliest due first; a claim leaves when it is paid, so the
	// next payment with the same key pays the next claim.
	claims   map[avgClaimKey][]AvtaleGiroClaim
	invoices map[string]avgTarget // by invoice id
	kids     map[string]avgTarget // by KID: the one invoice with it, or n = 0 or 2
	// marks: how the batch's payments were settled, written by Flush in
	// one statement.
	marks []any
}

type avgClaimKey struct {
	account, kid string
	amount       int64
}

type avgTarget struct {
	demand, currency string
	n                int
}

// NewSettlementBatch reads what settling payments needs.
func NewSettlementBatch(ctx context.Context, tx *store.Tx, payments []AvtaleGiroPayment) (*AvtaleGiroSettlementBatch, error) {
	b := &AvtaleGiroSettlementBatch{tx: tx, claims: map[avgClaimKey][]AvtaleGiroClaim{}, invoices: map[string]avgTarget{}, kids: map[string]avgTarget{}}
	if len(payments) == 0 {
		return b, nil
	}
	perKey := map[avgClaimKey]int{}
	kids := map[string]bool{}
	most := 0
	for _, p := range payments {
		k := avgClaimKey{p.AccountID, p.KID, p.Amount}
		perKey[k]++
		most = max(most, perKey[k])
		kids[p.KID] = true
	}
	kidArgs := []any{tx.TenantID()}
	for kid := range kids {
		kidArgs = append(kidArgs, kid)
	}
	in := placeholders(2, len(kidArgs)-1)
	// At most as many claims per key as the batch has payments with it:
	// a mandate's KID may have many sent claims of the same amount.
	rows, err := tx.QueryBuilt(ctx, `SELECT `+avgClaimColumns+` FROM (SELECT `+avgClaimColumns+`, ROW_NUMBER() OVER
		(PARTITION BY account_id, kid, amount ORDER BY due_date, id) AS rn FROM avtalegiro_claim_states WHERE tenant_id = $1
		AND status IN ('Sent', 'CancellationPending') AND kid IN (`+in+`)) c WHERE rn <= `+fmt.Sprint(most)+` ORDER BY due_date, id`, kidArgs...)
	if err != nil {
		return nil, fmt.Errorf("avtalegiro: settlement claims: %w", err)
	}
	var invoiceArgs []any
	for rows.Next() {
		c, err := scanAvgClaim(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		k := avgClaimKey{c.AccountID, c.KID, c.AmountOre}
		if perKey[k] == 0 {
			continue
		}
		b.claims[k] = append(b.claims[k], c)
		if c.InvoiceID != nil {
			invoiceArgs = append(invoiceArgs, *c.InvoiceID)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(invoiceArgs) > 0 {
		rows, err := tx.QueryBuilt(ctx, `SELECT id, payment_demand_id, currency FROM invoices WHERE tenant_id = $1 AND id IN (`+
			placeholders(2, len(invoiceArgs))+`)`, append([]any{tx.TenantID()}, invoiceArgs...)...)
		if err != nil {
			return nil, fmt.Errorf("avtalegiro: settlement invoices: %w", err)
		}
		for rows.Next() {
			var id string
			t := avgTarget{n: 1}
			if err := rows.Scan(&id, &t.demand, &t.currency); err != nil {
				rows.Close()
				return nil, err
			}
			b.invoices[id] = t
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	// Invoices by KID, for payments no claim takes (as PaymentTarget
	// finds them: one invoice with the KID, else a problem).
	rows, err = tx.QueryBuilt(ctx, `SELECT kid, COUNT(*), MIN(CAST(payment_demand_id AS TEXT)), MIN(currency) FROM invoices
		WHERE tenant_id = $1 AND kid IN (`+in+`) GROUP BY kid`, kidArgs...)
	if err != nil {
		return nil, fmt.Errorf("avtalegiro: settlement invoices by KID: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kid string
		var t avgTarget
		if err := rows.Scan(&kid, &t.n, &t.demand, &t.currency); err != nil {
			return nil, err
		}
		b.kids[kid] = t
	}
	return b, rows.Err()
}

// MatchAvtaleGiroClaim is MatchClaim from the batch's claims.
func (b *AvtaleGiroSettlementBatch) MatchAvtaleGiroClaim(_ context.Context, p AvtaleGiroPayment) (AvtaleGiroClaim, bool, error) {
	if cs := b.claims[avgClaimKey{p.AccountID, p.KID, p.Amount}]; len(cs) > 0 {
		return cs[0], true, nil
	}
	return AvtaleGiroClaim{}, false, nil
}

// PaymentTarget is store.Tx.PaymentTarget from the batch's invoices; what the
// batch did not read (another kind of target) is asked the transaction.
func (b *AvtaleGiroSettlementBatch) PaymentTarget(ctx context.Context, invoiceID, demandID, kid, organizationID string) (string, string, error) {
	switch {
	case demandID != "" || organizationID != "":
	case invoiceID != "":
		if t, ok := b.invoices[invoiceID]; ok {
			return t.demand, t.currency, nil
		}
	default:
		t, ok := b.kids[kid]
		switch {
		case !ok:
			return "", "", validation.Field("kid", "no invoice has KID %s", kid)
		case t.n == 1:
			return t.demand, t.currency, nil
		default:
			return "", "", validation.Field("organizationId", "is required: KID %s belongs to invoices of several organizations", kid)
		}
	}
	return b.tx.PaymentTarget(ctx, invoiceID, demandID, kid, organizationID)
}

// SettledAvtaleGiroPayment is SettledPaymentIn, the payment's
// mark kept for Flush; a claim it pays is no longer matched.
func (b *AvtaleGiroSettlementBatch) SettledAvtaleGiroPayment(ctx context.Context, rowID, paymentID, claimID, problem string, now time.Time) error {
	pay, prob := settledMark(paymentID, problem)
	b.marks = append(b.marks, rowID, pay, prob)
	if claimID == "" {
		return nil
	}
	if err := paidClaim(ctx, b.tx, claimID, pay, now); err != nil {
		return err
	}
	for k, cs := range b.claims {
		for i, c := range cs {
			if c.ID == claimID {
				b.claims[k] = append(cs[:i:i], cs[i+1:]...)
				return nil
			}
		}
	}
	return nil
}

// Flush writes the marks of the batch's settled payments.
func (b *AvtaleGiroSettlementBatch) Flush(ctx context.Context) error {
	if len(b.marks) == 0 {
		return nil
	}
	rows, cast := make([]string, 0, len(b.marks)/3), ""
	if b.tx.Engine() == store.Postgres {
		cast = "::uuid"
	}
	for i := 0; i < len(b.marks); i += 3 {
		rows = append(rows, fmt.Sprintf("($%d%s, $%d%s, $%d)", i+2, cast, i+3, cast, i+4))
	}
	_, err := b.tx.ExecBuilt(ctx, `WITH m (id, payment_id, problem) AS (VALUES `+strings.Join(rows, ", ")+`)
		UPDATE avtalegiro_payments SET payment_id = m.payment_id, problem = m.problem FROM m
		WHERE avtalegiro_payments.tenant_id = $1 AND avtalegiro_payments.id = m.id`, append([]any{b.tx.TenantID()}, b.marks...)...)
	if err != nil {
		return fmt.Errorf("avtalegiro: mark settled avtalegiro payments: %w", err)
	}
	b.marks = b.marks[:0]
	return nil
}

// OpenPayments returns up to limit imported payments not yet settled,
// in the settling transaction after LockSettlement: what it reads is what
// no other settlement has settled.
func OpenPayments(ctx context.Context, tx *store.Tx, limit int) ([]AvtaleGiroPayment, error) {
	return store.QueryAll(ctx, tx, func(r store.Scanner) (AvtaleGiroPayment, error) {
		var p AvtaleGiroPayment
		return p, r.Scan(&p.ID, &p.FileID, &p.AccountID, &p.Reference, &p.KID, &p.Amount, &p.PaidOn)
	}, `SELECT p.id, p.file_id, f.account_id, p.reference, p.kid, p.amount, p.paid_on FROM avtalegiro_payments p
		JOIN avtalegiro_files f ON f.tenant_id = p.tenant_id AND f.id = p.file_id
		WHERE p.tenant_id = $1 AND p.payment_id IS NULL AND p.problem IS NULL ORDER BY p.id LIMIT $2`, tx.TenantID(), limit)
}

// LockSettlement makes settlements of the tenant's OCR payments
// take turns (PostgreSQL: an advisory lock to the end of tx; SQLite's one
// writer does it already). A batch matches payments to the sent claims it
// reads; two settlements at once (two imports, or an import and the bank
// sync) would each read the same claim as unpaid, under READ COMMITTED,
// and pay it twice while the next claim of the same KID stays unpaid.
func LockSettlement(ctx context.Context, tx *store.Tx) error {
	if tx.Engine() != store.Postgres {
		return nil
	}
	if _, err := tx.ExecBuilt(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "avtalegiro-settle:"+tx.TenantID()); err != nil {
		return fmt.Errorf("avtalegiro: settlement lock: %w", err)
	}
	return nil
}

// MatchClaim returns the claim an OCR payment pays: the
// account's sent claim with the payment's KID and amount, earliest due
// first (a paid one, when the payment was settled before). ok is false
// when none matches.
func MatchClaim(ctx context.Context, st *store.Store, p AvtaleGiroPayment) (AvtaleGiroClaim, bool, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroClaim{}, false, err
	}
	c, err := scanAvgClaim(st.Reader().QueryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1
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

// SettledPayment records how an imported payment was settled:
// the Kadens payment it became (paymentID, may be empty), the claim it
// paid (claimID, may be empty) or why it could not be (problem).
func SettledPayment(ctx context.Context, st *store.Store, rowID, paymentID, claimID, problem string, now time.Time) error {
	return st.InTx(ctx, func(tx *store.Tx) error {
		return SettledPaymentIn(ctx, tx, rowID, paymentID, claimID, problem, now)
	})
}

// SettledPaymentIn is SettledPayment inside the
// transaction.
func SettledPaymentIn(ctx context.Context, tx *store.Tx, rowID, paymentID, claimID, problem string, now time.Time) error {
	pay, prob := settledMark(paymentID, problem)
	if _, err := tx.Exec(ctx, `UPDATE avtalegiro_payments SET payment_id = $3, problem = $4 WHERE tenant_id = $1 AND id = $2`,
		tx.TenantID(), rowID, pay, prob); err != nil {
		return err
	}
	if claimID == "" {
		return nil
	}
	return paidClaim(ctx, tx, claimID, pay, now)
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

func paidClaim(ctx context.Context, tx *store.Tx, claimID string, pay *string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE avtalegiro_claims SET status = 'Paid', payment_id = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2`,
		tx.TenantID(), claimID, pay, store.TimeParam(now))
	return err
}
