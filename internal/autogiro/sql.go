package autogiro

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// Autogiro's SQL (docs/AUTOGIRO.md): accounts, mandates and transactions.
// It runs through the store's query kit (internal/store/kit.go), the
// tenant's condition first in every WHERE; sql_files.go holds the SQL of
// the export and the import.

// Validation errors of the Autogiro operations: the contract answers 400.
func agField(field, format string, args ...any) error {
	return validation.Field(field, format, args...)
}

const agAccountColumns = `id, organization_id, customer_number, bankgiro_number, name, created_at, updated_at`

func scanAGAccount(row store.Scanner) (AutogiroAccount, error) {
	var a AutogiroAccount
	err := row.Scan(&a.ID, &a.OrganizationID, &a.BankgiroCustomerNumber, &a.BankgiroNumber, &a.Name, &a.CreatedAt, &a.UpdatedAt)
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, err
}

// CreateAccount stores a new account of an organization of the
// context's tenant. A bankgiro number another live account has is a 400:
// payer numbers are unique per bankgiro, so two accounts could not tell
// their payers apart.
func CreateAccount(ctx context.Context, st *store.Store, a AutogiroAccount, now time.Time) (AutogiroAccount, error) {
	a.ID = store.NewID()
	a.CreatedAt = now.UTC().Truncate(time.Microsecond)
	a.UpdatedAt = a.CreatedAt
	err := st.InTx(ctx, func(tx *store.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM organizations WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), a.OrganizationID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return agField("organizationId", "there is no organization %s", a.OrganizationID)
			}
			return err
		}
		if err := bankgiroFree(ctx, tx, a.BankgiroNumber, a.ID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO autogiro_accounts (tenant_id, `+agAccountColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, tx.TenantID(), a.ID, a.OrganizationID, a.BankgiroCustomerNumber,
			a.BankgiroNumber, a.Name, store.TimeParam(a.CreatedAt), store.TimeParam(a.UpdatedAt))
		if store.IsUniqueViolation(err) {
			return agField("bankgiroNumber", "another Autogiro account of this tenant has bankgiro number %s", a.BankgiroNumber)
		}
		return err
	})
	if err != nil {
		return AutogiroAccount{}, fmt.Errorf("autogiro: create account: %w", err)
	}
	return a, nil
}

func bankgiroFree(ctx context.Context, tx *store.Tx, bankgiro, self string) error {
	var other string
	err := tx.QueryRow(ctx, `SELECT id FROM autogiro_accounts WHERE tenant_id = $1 AND bankgiro_number = $2
		AND deleted_at IS NULL AND id <> $3`, tx.TenantID(), bankgiro, self).Scan(&other)
	if err == nil {
		return agField("bankgiroNumber", "Autogiro account %s of this tenant has bankgiro number %s already", other, bankgiro)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// Account returns a live account of the context's tenant.
func Account(ctx context.Context, st *store.Store, id string) (AutogiroAccount, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroAccount{}, err
	}
	if !store.ValidID(id) {
		return AutogiroAccount{}, store.ErrNotFound
	}
	a, err := scanAGAccount(st.Reader().QueryRow(ctx, `SELECT `+agAccountColumns+` FROM autogiro_accounts
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tenant, id))
	if err != nil {
		return AutogiroAccount{}, fmt.Errorf("autogiro: account %s: %w", id, store.NotFound(err))
	}
	return a, nil
}

// AutogiroAccountFilter narrows ListAccounts.
type AutogiroAccountFilter struct {
	OrganizationID, CustomerNumber, BankgiroNumber string
}

// ListAccounts lists live accounts; an OrganizationID of no
// organization is store.ErrNotFound.
func ListAccounts(ctx context.Context, st *store.Store, f AutogiroAccountFilter, p store.Page) ([]AutogiroAccount, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := st.RequireParents(ctx, store.Parents{Organization: f.OrganizationID}); err != nil {
		return nil, "", fmt.Errorf("autogiro: list accounts: %w", err)
	}
	q := store.TenantFilter("", tenant)
	q.Add("deleted_at IS NULL")
	for _, c := range []struct{ col, v string }{{"organization_id", f.OrganizationID},
		{"customer_number", f.CustomerNumber}, {"bankgiro_number", f.BankgiroNumber}} {
		if c.v != "" {
			q.Add(c.col+" = ?", c.v)
		}
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanAGAccount, `SELECT `+agAccountColumns+` FROM autogiro_accounts`, q, "id", p,
		func(a AutogiroAccount) string { return a.ID })
	if err != nil {
		return nil, "", fmt.Errorf("autogiro: list accounts: %w", err)
	}
	return out, next, nil
}

// UpdateAccount changes an account's name, customer number and
// bankgiro number. The bankgiro number cannot change once mandates were
// sent for it: Bankgirot registered them under it.
func UpdateAccount(ctx context.Context, st *store.Store, a AutogiroAccount, now time.Time) error {
	if !store.ValidID(a.ID) {
		return store.ErrNotFound
	}
	err := st.InTx(ctx, func(tx *store.Tx) error {
		old, err := scanAGAccount(tx.QueryRow(ctx, `SELECT `+agAccountColumns+` FROM autogiro_accounts
			WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.TenantID(), a.ID))
		if err != nil {
			return store.NotFound(err)
		}
		if old.BankgiroNumber != a.BankgiroNumber {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM autogiro_mandates WHERE tenant_id = $1 AND account_id = $2
				AND status <> 'Created'`, tx.TenantID(), a.ID).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return agField("bankgiroNumber", "cannot change: %d mandates were sent to Bankgirot under bankgiro %s; a new bankgiro needs a new account and new mandates", n, old.BankgiroNumber)
			}
			if err := bankgiroFree(ctx, tx, a.BankgiroNumber, a.ID); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `UPDATE autogiro_accounts SET customer_number = $3, bankgiro_number = $4, name = $5,
			updated_at = $6 WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), a.ID, a.BankgiroCustomerNumber, a.BankgiroNumber,
			a.Name, store.TimeParam(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("autogiro: update account %s: %w", a.ID, err)
	}
	return nil
}

// DeleteAccount removes an account that has no live mandate
// (every mandate cancelled or rejected, nothing waiting for an export).
func DeleteAccount(ctx context.Context, st *store.Store, id string, now time.Time) error {
	if !store.ValidID(id) {
		return store.ErrNotFound
	}
	err := st.InTx(ctx, func(tx *store.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM autogiro_accounts WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.TenantID(), id).Scan(&one); err != nil {
			return store.NotFound(err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM autogiro_mandates WHERE tenant_id = $1 AND account_id = $2
			AND (status IN ('Created', 'Sent', 'Active') OR cancel_pending)`, tx.TenantID(), id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return agField("id", "the account has %d live mandates (or cancellations not yet sent): cancel them and export first", n)
		}
		_, err := tx.Exec(ctx, `UPDATE autogiro_accounts SET deleted_at = $3 WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id, store.TimeParam(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("autogiro: delete account %s: %w", id, err)
	}
	return nil
}

const agMandateColumns = `m.id, m.account_id, m.subscriber_id, s.subscriber_number, m.payer_number, m.clearing_number,
	m.bank_account_number, m.payer_id, m.internet_bank, m.status, m.status_code, m.cancelled_by, m.cancel_pending,
	m.released, m.sent_file_id, m.created_at, m.updated_at`

const agMandateFrom = ` FROM autogiro_mandates m JOIN subscribers s ON s.tenant_id = m.tenant_id AND s.id = m.subscriber_id`

func scanAGMandate(row store.Scanner) (AutogiroMandate, error) {
	var (
		m    AutogiroMandate
		sent sql.NullString
	)
	err := row.Scan(&m.ID, &m.AccountID, &m.SubscriberID, &m.SubscriberNumber, &m.PayerNumber, &m.ClearingNumber,
		&m.BankAccountNumber, &m.PayerID, &m.InternetBank, &m.Status, &m.StatusCode, &m.CancelledBy, &m.CancelPending,
		&m.released, &sent, &m.CreatedAt, &m.UpdatedAt)
	if sent.Valid {
		m.SentFileID = &sent.String
	}
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	return m, err
}

// CreateMandate stores a new mandate (status Created) for the
// next export. The payer number defaults to the subscriber's number and is
// unique among the account's live mandates.
func CreateMandate(ctx context.Context, st *store.Store, m AutogiroMandate, now time.Time) (AutogiroMandate, error) {
	var out AutogiroMandate
	err := st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = CreateMandateIn(ctx, tx, m, now)
		return err
	})
	return out, err
}

// CreateMandateIn is CreateMandate in the caller's transaction.
func CreateMandateIn(ctx context.Context, tx *store.Tx, m AutogiroMandate, now time.Time) (AutogiroMandate, error) {
	m.ID = store.NewID()
	m.Status = AutogiroCreated
	m.CreatedAt = now.UTC().Truncate(time.Microsecond)
	m.UpdatedAt = m.CreatedAt
	err := func() error {
		var errs validation.Errors
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM autogiro_accounts WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.TenantID(), m.AccountID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			errs.Add("accountId", "there is no Autogiro account %s", m.AccountID)
		} else if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `SELECT subscriber_number FROM subscribers WHERE tenant_id = $1 AND id = $2`,
			tx.TenantID(), m.SubscriberID).Scan(&m.SubscriberNumber)
		if errors.Is(err, sql.ErrNoRows) {
			errs.Add("subscriberId", "there is no subscriber %s", m.SubscriberID)
		} else if err != nil {
			return err
		}
		if len(errs) > 0 {
			return errs
		}
		if m.PayerNumber == "" {
			m.PayerNumber = fmt.Sprint(m.SubscriberNumber)
			if len(m.PayerNumber) > 16 {
				return agField("payerNumber", "is required: subscriber number %d is longer than a payer number's 16 digits", m.SubscriberNumber)
			}
		}
		var other string
		err = tx.QueryRow(ctx, `SELECT id FROM autogiro_mandates WHERE tenant_id = $1 AND account_id = $2
			AND payer_number = $3 AND status IN ('Created', 'Sent', 'Active')`, tx.TenantID(), m.AccountID, m.PayerNumber).Scan(&other)
		if err == nil {
			return agField("payerNumber", "mandate %s of this account has payer number %s already; cancel it first", other, m.PayerNumber)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO autogiro_mandates (tenant_id, id, account_id, subscriber_id, payer_number,
			clearing_number, bank_account_number, payer_id, internet_bank, status, status_code, cancelled_by, cancel_pending,
			released, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'Created', '', '', FALSE, TRUE, $10, $10)`,
			tx.TenantID(), m.ID, m.AccountID, m.SubscriberID, m.PayerNumber, m.ClearingNumber, m.BankAccountNumber, m.PayerID,
			m.InternetBank, store.TimeParam(m.CreatedAt))
		return err
	}()
	if err != nil {
		return AutogiroMandate{}, fmt.Errorf("autogiro: create mandate: %w", err)
	}
	return m, nil
}

// Mandate returns a mandate of the context's tenant.
func Mandate(ctx context.Context, st *store.Store, id string) (AutogiroMandate, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroMandate{}, err
	}
	if !store.ValidID(id) {
		return AutogiroMandate{}, store.ErrNotFound
	}
	m, err := scanAGMandate(st.Reader().QueryRow(ctx, `SELECT `+agMandateColumns+agMandateFrom+` WHERE m.tenant_id = $1 AND m.id = $2`, tenant, id))
	if err != nil {
		return AutogiroMandate{}, fmt.Errorf("autogiro: mandate %s: %w", id, store.NotFound(err))
	}
	return m, nil
}

// AutogiroMandateFilter narrows ListMandates. Cancelled and
// rejected mandates are listed only when asked for.
type AutogiroMandateFilter struct {
	AccountID, SubscriberID, BankAccountNumber string
	SubscriberNumber                           *int64
	IncludeCancelled, IncludeRejected          bool
}

// ListMandates lists mandates; an AccountID, SubscriberID or
// SubscriberNumber that names nothing is store.ErrNotFound.
func ListMandates(ctx context.Context, st *store.Store, f AutogiroMandateFilter, p store.Page) ([]AutogiroMandate, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := st.RequireParents(ctx, store.Parents{Subscriber: f.SubscriberID}); err != nil {
		return nil, "", fmt.Errorf("autogiro: list mandates: %w", err)
	}
	if f.AccountID != "" {
		if _, err := Account(ctx, st, f.AccountID); err != nil {
			return nil, "", fmt.Errorf("autogiro: list mandates: %w", err)
		}
	}
	if f.SubscriberNumber != nil {
		var one int
		if err := st.Reader().QueryRow(ctx, `SELECT 1 FROM subscribers WHERE tenant_id = $1 AND subscriber_number = $2`, tenant, *f.SubscriberNumber).Scan(&one); err != nil {
			return nil, "", fmt.Errorf("autogiro: list mandates: subscriber number %d: %w", *f.SubscriberNumber, store.NotFound(err))
		}
	}
	q := store.TenantFilter("m", tenant)
	if f.BankAccountNumber != "" {
		// Accounts of fixed length keep their leading zeros; the filter
		// matches with or without them.
		q.Add("ltrim(m.bank_account_number, '0') = ?", strings.TrimLeft(f.BankAccountNumber, "0"))
	}
	for _, c := range []struct{ col, v string }{{"m.account_id", f.AccountID}, {"m.subscriber_id", f.SubscriberID}} {
		if c.v != "" {
			q.Add(c.col+" = ?", c.v)
		}
	}
	if f.SubscriberNumber != nil {
		q.Add("s.subscriber_number = ?", *f.SubscriberNumber)
	}
	if !f.IncludeCancelled {
		q.Add("m.status <> 'Cancelled'")
	}
	if !f.IncludeRejected {
		q.Add("m.status <> 'Rejected'")
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanAGMandate, `SELECT `+agMandateColumns+agMandateFrom, q, "m.id", p,
		func(m AutogiroMandate) string { return m.ID })
	if err != nil {
		return nil, "", fmt.Errorf("autogiro: list mandates: %w", err)
	}
	return out, next, nil
}

// CancelMandate is the merchant's DELETE: see EndMandate.
func CancelMandate(ctx context.Context, st *store.Store, id string, now time.Time) error {
	if !store.ValidID(id) {
		return store.ErrNotFound
	}
	err := st.InTx(ctx, func(tx *store.Tx) error {
		m, err := scanAGMandate(tx.QueryRow(ctx, `SELECT `+agMandateColumns+agMandateFrom+`
			WHERE m.tenant_id = $1 AND m.id = $2`, tx.TenantID(), id))
		if err != nil {
			return store.NotFound(err)
		}
		if m.Status == AutogiroCancelled || m.Status == AutogiroRejected {
			return nil // ended already: nothing to do
		}
		return EndMandate(ctx, tx, m, AutogiroCancelled, "", "Merchant", m.Status != AutogiroCreated, now)
	})
	if err != nil {
		return fmt.Errorf("autogiro: cancel mandate %s: %w", id, err)
	}
	return nil
}

// EndMandate moves m to status (Cancelled or Rejected) with
// Bankgirot's code and who ended it; sendCancel queues a TK03 for the next
// export (the merchant cancelled a mandate Bankgirot knows). Its open
// transactions are cancelled: unsent ones never go out, and Bankgirot
// cancels sent ones with the mandate. The Autogiro payment agreements
// that name it are to be released (Released: MandatesToRelease).
func EndMandate(ctx context.Context, tx *store.Tx, m AutogiroMandate, status, code, by string, sendCancel bool, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE autogiro_mandates SET status = $3, status_code = CASE WHEN $4 = '' THEN status_code ELSE $4 END,
		cancelled_by = $5, cancel_pending = $6, released = FALSE, updated_at = $7 WHERE tenant_id = $1 AND id = $2`,
		tx.TenantID(), m.ID, status, code, by, sendCancel, store.TimeParam(now)); err != nil {
		return fmt.Errorf("end mandate %s: %w", m.ID, err)
	}
	_, err := tx.Exec(ctx, `UPDATE autogiro_transactions SET status = 'Cancelled', cancel_pending = FALSE, updated_at = $3
		WHERE tenant_id = $1 AND mandate_id = $2 AND status IN ('Created', 'Sent')`, tx.TenantID(), m.ID, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("cancel transactions of mandate %s: %w", m.ID, err)
	}
	return nil
}

// SetMandate records a mandate advice that does not end the
// mandate (activation, or a code about a cancellation already made).
func SetMandate(ctx context.Context, tx *store.Tx, id, status, code string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE autogiro_mandates SET status = $3, status_code = $4, updated_at = $5
		WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id, status, code, store.TimeParam(now))
	return err
}

// MandatesByPayer returns the mandates of an account with a payer
// number, newest first.
func MandatesByPayer(ctx context.Context, tx *store.Tx, accountID, payer string) ([]AutogiroMandate, error) {
	return store.QueryAll(ctx, tx, scanAGMandate, `SELECT `+agMandateColumns+agMandateFrom+`
		WHERE m.tenant_id = $1 AND m.account_id = $2 AND m.payer_number = $3 ORDER BY m.id DESC`, tx.TenantID(), accountID, payer)
}

// AccountByBankgiro finds the live account of a bankgiro number.
func AccountByBankgiro(ctx context.Context, tx *store.Tx, bankgiro string) (AutogiroAccount, error) {
	a, err := scanAGAccount(tx.QueryRow(ctx, `SELECT `+agAccountColumns+` FROM autogiro_accounts
		WHERE tenant_id = $1 AND bankgiro_number = $2 AND deleted_at IS NULL`, tx.TenantID(), bankgiro))
	return a, store.NotFound(err)
}

// MandatesToRelease returns ended mandates whose payment
// agreements have not been released yet.
func MandatesToRelease(ctx context.Context, st *store.Store) ([]string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := store.QueryAll(ctx, st.Writer(), func(r store.Scanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT id FROM autogiro_mandates WHERE tenant_id = $1 AND NOT released ORDER BY id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("autogiro: mandates to release: %w", err)
	}
	return ids, nil
}

// markMandateReleased records, in tx, that a mandate's agreements were
// released.
func markMandateReleased(ctx context.Context, tx *store.Tx, id string) error {
	_, err := tx.Exec(ctx, `UPDATE autogiro_mandates SET released = TRUE WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id)
	return err
}

// A transaction's status as the API shows it. The export does not rewrite
// the transactions it sends (migration 00043): it records each in
// autogiro_sent_payments, and a transaction stored as Created with such a
// row is Sent. Every other status is stored (the import and cancellations
// write them).
const agTransactionStatus = `CASE WHEN t.status = 'Created' AND s.file_id IS NOT NULL THEN 'Sent' ELSE t.status END`

// agTransactionColumns are read FROM agTransactionFrom by scanAGTransaction.
const agTransactionColumns = `t.id, t.mandate_id, t.account_id, t.kind, t.amount, t.payment_date, t.reference, t.invoice_id,
	` + agTransactionStatus + `, t.status_code, t.cancel_pending, t.payment_id, s.file_id, t.refund_date, t.refund_code,
	t.refund_item_id, t.created_at, t.updated_at, f.created_at`

// agTransactionFrom joins a transaction (alias t) to its sending, if any,
// and that file, whose time is the transaction's last update if later.
const agTransactionFrom = ` FROM autogiro_transactions t
	LEFT JOIN autogiro_sent_payments s ON s.tenant_id = t.tenant_id AND s.transaction_id = t.id
	LEFT JOIN autogiro_export_files f ON f.tenant_id = s.tenant_id AND f.id = s.file_id`

func scanAGTransaction(row store.Scanner) (AutogiroTransaction, error) {
	var (
		t                      AutogiroTransaction
		invoice, payment, sent sql.NullString
		refundDate, refundItem sql.NullString
		sentAt                 store.AnyTime
	)
	err := row.Scan(&t.ID, &t.MandateID, &t.AccountID, &t.Kind, &t.AmountMinor, &t.PaymentDate, &t.Reference, &invoice,
		&t.Status, &t.StatusCode, &t.CancelPending, &payment, &sent, &refundDate, &t.PayerRefundCode, &refundItem, &t.CreatedAt, &t.UpdatedAt,
		&sentAt)
	for _, p := range []struct {
		n  sql.NullString
		to **string
	}{{invoice, &t.InvoiceID}, {payment, &t.PaymentID}, {sent, &t.SentFileID}, {refundDate, &t.PayerRefundDate}, {refundItem, &t.RefundChargeID}} {
		if p.n.Valid {
			v := p.n.String
			*p.to = &v
		}
	}
	if sentAt.T != nil && sentAt.T.After(t.UpdatedAt) {
		t.UpdatedAt = *sentAt.T
	}
	t.IsCancelled = t.Status == AutogiroCancelled
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return t, err
}

// ErrAutogiroInvoiceDebited: the invoice has a live debit already.
var ErrAutogiroInvoiceDebited = errors.New("autogiro: the invoice has an Autogiro debit already")

// CreateTransaction stores a debit or refund (status Created) of
// a mandate that is not cancelled or rejected. A second live debit of one
// invoice is ErrAutogiroInvoiceDebited, with the first one returned.
func CreateTransaction(ctx context.Context, st *store.Store, t AutogiroTransaction, now time.Time) (AutogiroTransaction, error) {
	t.ID = store.NewID()
	t.Status = AutogiroCreated
	t.CreatedAt = now.UTC().Truncate(time.Microsecond)
	t.UpdatedAt = t.CreatedAt
	var existing AutogiroTransaction
	err := st.InTx(ctx, func(tx *store.Tx) error {
		var status string
		err := tx.QueryRow(ctx, `SELECT account_id, status FROM autogiro_mandates WHERE tenant_id = $1 AND id = $2`,
			tx.TenantID(), t.MandateID).Scan(&t.AccountID, &status)
		if errors.Is(err, sql.ErrNoRows) {
			return agField("mandateId", "there is no Autogiro mandate %s", t.MandateID)
		}
		if err != nil {
			return err
		}
		if status == AutogiroCancelled || status == AutogiroRejected {
			return agField("mandateId", "mandate %s is %s: it cannot carry payments", t.MandateID, strings.ToLower(status))
		}
		if t.InvoiceID != nil {
			var one int
			if err := tx.QueryRow(ctx, `SELECT 1 FROM invoices WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), *t.InvoiceID).Scan(&one); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return agField("invoiceId", "there is no invoice %s", *t.InvoiceID)
				}
				return err
			}
			if t.Kind == AutogiroDebit {
				existing, err = scanAGTransaction(tx.QueryRow(ctx, `SELECT `+agTransactionColumns+agTransactionFrom+`
					WHERE t.tenant_id = $1 AND t.open_invoice_id = $2`, tx.TenantID(), *t.InvoiceID))
				if err == nil {
					return ErrAutogiroInvoiceDebited
				}
				if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO autogiro_transactions (tenant_id, id, mandate_id, account_id, kind, amount,
			payment_date, reference, invoice_id, status, status_code, cancel_pending, settle_pending, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'Created', '', FALSE, FALSE, $10, $10)`,
			tx.TenantID(), t.ID, t.MandateID, t.AccountID, t.Kind, t.AmountMinor, t.PaymentDate, t.Reference, t.InvoiceID, store.TimeParam(t.CreatedAt))
		if store.IsUniqueViolation(err) {
			return ErrAutogiroInvoiceDebited
		}
		return err
	})
	if errors.Is(err, ErrAutogiroInvoiceDebited) {
		return existing, err
	}
	if err != nil {
		return AutogiroTransaction{}, fmt.Errorf("autogiro: create transaction: %w", err)
	}
	return t, nil
}

// Transaction returns a transaction of the context's tenant.
func Transaction(ctx context.Context, st *store.Store, id string) (AutogiroTransaction, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroTransaction{}, err
	}
	if !store.ValidID(id) {
		return AutogiroTransaction{}, store.ErrNotFound
	}
	t, err := scanAGTransaction(st.Reader().QueryRow(ctx, `SELECT `+agTransactionColumns+agTransactionFrom+`
		WHERE t.tenant_id = $1 AND t.id = $2`, tenant, id))
	if err != nil {
		return AutogiroTransaction{}, fmt.Errorf("autogiro: transaction %s: %w", id, store.NotFound(err))
	}
	return t, nil
}

// InvoiceDebit returns the live debit of an invoice, or store.ErrNotFound.
func InvoiceDebit(ctx context.Context, st *store.Store, invoiceID string) (AutogiroTransaction, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroTransaction{}, err
	}
	t, err := scanAGTransaction(st.Writer().QueryRow(ctx, `SELECT `+agTransactionColumns+agTransactionFrom+`
		WHERE t.tenant_id = $1 AND t.open_invoice_id = $2`, tenant, invoiceID))
	if err != nil {
		return AutogiroTransaction{}, fmt.Errorf("autogiro: debit of invoice %s: %w", invoiceID, store.NotFound(err))
	}
	return t, nil
}

// AutogiroTransactionFilter narrows ListTransactions.
type AutogiroTransactionFilter struct {
	MandateID   string
	IsCancelled *bool
}

// ListTransactions lists transactions; a MandateID of no mandate
// is store.ErrNotFound.
func ListTransactions(ctx context.Context, st *store.Store, f AutogiroTransactionFilter, p store.Page) ([]AutogiroTransaction, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if f.MandateID != "" {
		if _, err := Mandate(ctx, st, f.MandateID); err != nil {
			return nil, "", fmt.Errorf("autogiro: list transactions: %w", err)
		}
	}
	q := store.TenantFilter("t", tenant)
	if f.MandateID != "" {
		q.Add("t.mandate_id = ?", f.MandateID)
	}
	if f.IsCancelled != nil {
		if *f.IsCancelled {
			q.Add("t.status = 'Cancelled'")
		} else {
			q.Add("t.status <> 'Cancelled'")
		}
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanAGTransaction, `SELECT `+agTransactionColumns+agTransactionFrom, q, "t.id", p,
		func(t AutogiroTransaction) string { return t.ID })
	if err != nil {
		return nil, "", fmt.Errorf("autogiro: list transactions: %w", err)
	}
	return out, next, nil
}

// waitForClaim makes a cancellation and PostgreSQL's export claim
// (which deletes the queue row and records the payment sent without
// touching the transaction, ClaimPayments) take turns: it locks the
// transaction's queue row, so it waits for an export that deleted the row
// to commit and the status read after it sees the payment Sent (a TK25 is
// due); a cancellation that locks first makes the export wait and then
// find the row gone. Without it a cancellation reading during an export
// took a sent payment for an unsent one and no TK25 went out. SQLite has
// one writer: nothing to wait for.
func waitForClaim(ctx context.Context, tx *store.Tx, id string) error {
	if tx.Engine() != store.Postgres {
		return nil
	}
	_, err := tx.Exec(ctx, `SELECT 1 FROM autogiro_transactions t JOIN autogiro_payment_queue q
		ON q.tenant_id = t.tenant_id AND q.account_id = t.account_id AND q.transaction_id = t.id
		WHERE t.tenant_id = $1 AND t.id = $2 FOR UPDATE OF q`, tx.TenantID(), id)
	if err != nil {
		return fmt.Errorf("autogiro: transaction %s: %w", id, err)
	}
	return nil
}

// CancelTransaction cancels a transaction: an unsent one never
// goes out; a sent one is cancelled at Bankgirot by a TK25 in the next
// export. A completed or failed one is settled: a 400 says so. Cancelling
// a cancelled transaction does nothing.
func CancelTransaction(ctx context.Context, st *store.Store, id string, now time.Time) error {
	if !store.ValidID(id) {
		return store.ErrNotFound
	}
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if err := waitForClaim(ctx, tx, id); err != nil {
			return err
		}
		var status string
		if err := tx.QueryRow(ctx, `SELECT `+agTransactionStatus+` FROM autogiro_transactions t
			LEFT JOIN autogiro_sent_payments s ON s.tenant_id = t.tenant_id AND s.transaction_id = t.id
			WHERE t.tenant_id = $1 AND t.id = $2`, tx.TenantID(), id).Scan(&status); err != nil {
			return store.NotFound(err)
		}
		switch status {
		case AutogiroCancelled:
			return nil
		case AutogiroCompleted:
			return agField("id", "the transaction is completed: Bankgirot has moved the money; refund it with a Refund transaction")
		case AutogiroFailed:
			return agField("id", "the transaction failed at Bankgirot: there is nothing left to cancel")
		}
		_, err := tx.Exec(ctx, `UPDATE autogiro_transactions SET status = 'Cancelled', cancel_pending = $3,
			updated_at = $4 WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id, status == AutogiroSent, store.TimeParam(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("autogiro: cancel transaction %s: %w", id, err)
	}
	return nil
}
