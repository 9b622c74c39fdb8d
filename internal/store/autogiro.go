package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// Autogiro storage (docs/AUTOGIRO.md). The file formats, banking days and
// the rules that compose these operations live in internal/autogiro; the
// SQL lives here.

// Mandate and transaction statuses.
const (
	AutogiroCreated   = "Created"
	AutogiroSent      = "Sent"
	AutogiroActive    = "Active"
	AutogiroRejected  = "Rejected"
	AutogiroCancelled = "Cancelled"
	AutogiroCompleted = "Completed"
	AutogiroFailed    = "Failed"

	AutogiroDebit  = "Debit"
	AutogiroRefund = "Refund"
)

// AutogiroAccount is a payee's Autogiro agreement with Bankgirot: the
// organization's customer number and the bankgiro number payments go to.
type AutogiroAccount struct {
	ID                     string    `json:"id"`
	OrganizationID         string    `json:"organizationId"`
	BankgiroCustomerNumber string    `json:"bankgiroCustomerNumber" description:"The payee's customer number at Bankgirot (kundnummer), up to 6 digits."`
	BankgiroNumber         string    `json:"bankgiroNumber" description:"The payee's bankgiro number, digits only."`
	Name                   string    `json:"name"`
	CreatedAt              time.Time `json:"createdAt"`
	UpdatedAt              time.Time `json:"updatedAt"`
}

// AutogiroMandate is a payer's consent to be debited through Autogiro.
type AutogiroMandate struct {
	ID                string    `json:"id"`
	AccountID         string    `json:"accountId"`
	SubscriberID      string    `json:"subscriberId"`
	SubscriberNumber  int64     `json:"subscriberNumber"`
	PayerNumber       string    `json:"payerNumber" description:"The payer's number at Bankgirot (betalarnummer): by default the subscriber number."`
	ClearingNumber    string    `json:"clearingNumber"`
	BankAccountNumber string    `json:"bankAccountNumber"`
	PayerID           string    `json:"payerId" description:"Personnummer (YYYYMMDDNNNN) or 00 and the organisationsnummer."`
	InternetBank      bool      `json:"internetBank" description:"The payer asked for the mandate in their internet bank (TK52); the export approves it."`
	Status            string    `json:"status" enum:"Created,Sent,Active,Rejected,Cancelled"`
	StatusCode        string    `json:"statusCode" description:"Bankgirot's information and comment codes of the last mandate advice (e.g. 04/32 active, 04/23 wrong account number, 46/02 cancelled by the payer), empty before any."`
	CancelledBy       string    `json:"cancelledBy" enum:",Merchant,Payer,Bankgirot"`
	CancelPending     bool      `json:"cancelPending" description:"A cancellation (TK03) waits for the next export."`
	SentFileID        *string   `json:"sentFileId"`
	CreatedAt         time.Time `json:"createdAt"`
	UpdatedAt         time.Time `json:"updatedAt"`
	released          bool
}

// AutogiroTransaction is a debit (TK82) or refund (TK32) of a mandate.
type AutogiroTransaction struct {
	ID            string  `json:"id"`
	MandateID     string  `json:"mandateId"`
	AccountID     string  `json:"accountId"`
	Kind          string  `json:"kind" enum:"Debit,Refund"`
	AmountMinor   int64   `json:"-"`
	PaymentDate   string  `json:"paymentDate" format:"date"`
	Reference     string  `json:"reference"`
	InvoiceID     *string `json:"invoiceId"`
	Status        string  `json:"status" enum:"Created,Sent,Completed,Failed,Cancelled"`
	StatusCode    string  `json:"statusCode" description:"Bankgirot's code for the last change: payment status (1 insufficient funds, 2 no Autogiro link), rejection comment code, or cancellation comment code."`
	IsCancelled   bool    `json:"isCancelled"`
	CancelPending bool    `json:"cancelPending" description:"A cancellation (TK25) waits for the next export."`
	PaymentID     *string `json:"paymentId" description:"The Kadens payment a completed or failed debit of an invoice became."`
	SentFileID    *string `json:"sentFileId"`
	// A completed debit the payer's bank paid back (TK77).
	PayerRefundDate *string   `json:"payerRefundDate" format:"date" description:"The day the payer's bank paid this completed debit back (TK77 in a payment specification); null if it did not."`
	PayerRefundCode string    `json:"payerRefundCode" description:"Bankgirot's refund code of that payback: 01 no mandate was given, 02 the mandate was revoked, 03 the amount was more than the payer could expect; empty if none."`
	RefundChargeID  *string   `json:"refundChargeId" description:"The charge that put the paid-back amount on the subscriber's account again (a debit of an invoice only); null until booked."`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// AutogiroExportFile is a submission file written for Bankgirot.
type AutogiroExportFile struct {
	ID             string
	OrganizationID string
	FileName       string
	Size           int64  // bytes; the content is read with CopyAutogiroExportFile
	Counts         string // JSON object: record kind → count
	DebitTotal     int64
	RefundTotal    int64
	CreatedAt      time.Time
}

// Validation errors of the Autogiro operations: the contract answers 400.
func agField(field, format string, args ...any) error {
	return validation.Field(field, format, args...)
}

const agAccountColumns = `id, organization_id, customer_number, bankgiro_number, name, created_at, updated_at`

func scanAGAccount(row scanner) (AutogiroAccount, error) {
	var a AutogiroAccount
	err := row.Scan(&a.ID, &a.OrganizationID, &a.BankgiroCustomerNumber, &a.BankgiroNumber, &a.Name, &a.CreatedAt, &a.UpdatedAt)
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, err
}

// CreateAutogiroAccount stores a new account of an organization of the
// context's tenant. A bankgiro number another live account has is a 400:
// payer numbers are unique per bankgiro, so two accounts could not tell
// their payers apart.
func (s *Store) CreateAutogiroAccount(ctx context.Context, a AutogiroAccount, now time.Time) (AutogiroAccount, error) {
	a.ID = NewID()
	a.CreatedAt = now.UTC().Truncate(time.Microsecond)
	a.UpdatedAt = a.CreatedAt
	err := s.InTx(ctx, func(tx *Tx) error {
		var one int
		if err := tx.tx.QueryRowContext(ctx, `SELECT 1 FROM organizations WHERE tenant_id = $1 AND id = $2`, tx.tenant, a.OrganizationID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return agField("organizationId", "there is no organization %s", a.OrganizationID)
			}
			return err
		}
		if err := tx.bankgiroFree(ctx, a.BankgiroNumber, a.ID); err != nil {
			return err
		}
		_, err := tx.tx.ExecContext(ctx, `INSERT INTO autogiro_accounts (tenant_id, `+agAccountColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, tx.tenant, a.ID, a.OrganizationID, a.BankgiroCustomerNumber,
			a.BankgiroNumber, a.Name, ts(a.CreatedAt), ts(a.UpdatedAt))
		if isUniqueViolation(err) {
			return agField("bankgiroNumber", "another Autogiro account of this tenant has bankgiro number %s", a.BankgiroNumber)
		}
		return err
	})
	if err != nil {
		return AutogiroAccount{}, fmt.Errorf("store: create autogiro account: %w", err)
	}
	return a, nil
}

func (tx *Tx) bankgiroFree(ctx context.Context, bankgiro, self string) error {
	var other string
	err := tx.tx.QueryRowContext(ctx, `SELECT id FROM autogiro_accounts WHERE tenant_id = $1 AND bankgiro_number = $2
		AND deleted_at IS NULL AND id <> $3`, tx.tenant, bankgiro, self).Scan(&other)
	if err == nil {
		return agField("bankgiroNumber", "Autogiro account %s of this tenant has bankgiro number %s already", other, bankgiro)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// AutogiroAccount returns a live account of the context's tenant.
func (s *Store) AutogiroAccount(ctx context.Context, id string) (AutogiroAccount, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroAccount{}, err
	}
	if !ValidID(id) {
		return AutogiroAccount{}, ErrNotFound
	}
	a, err := scanAGAccount(s.readRow(ctx, `SELECT `+agAccountColumns+` FROM autogiro_accounts
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tenant, id))
	if err != nil {
		return AutogiroAccount{}, fmt.Errorf("store: autogiro account %s: %w", id, notFound(err))
	}
	return a, nil
}

// AutogiroAccountFilter narrows ListAutogiroAccounts.
type AutogiroAccountFilter struct {
	OrganizationID, CustomerNumber, BankgiroNumber string
}

// ListAutogiroAccounts lists live accounts; an OrganizationID of no
// organization is ErrNotFound.
func (s *Store) ListAutogiroAccounts(ctx context.Context, f AutogiroAccountFilter, p Page) ([]AutogiroAccount, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := s.RequireParents(ctx, Parents{Organization: f.OrganizationID}); err != nil {
		return nil, "", fmt.Errorf("store: list autogiro accounts: %w", err)
	}
	q := tenantFilter(tenant)
	q.conds = append(q.conds, "deleted_at IS NULL")
	for _, c := range []struct{ col, v string }{{"organization_id", f.OrganizationID},
		{"customer_number", f.CustomerNumber}, {"bankgiro_number", f.BankgiroNumber}} {
		if c.v != "" {
			q.add(c.col+" = ?", c.v)
		}
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanAGAccount, `SELECT `+agAccountColumns+` FROM autogiro_accounts`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list autogiro accounts: %w", err)
	}
	if out == nil {
		out = []AutogiroAccount{}
	}
	out, next := trimPage(out, p, func(a AutogiroAccount) string { return a.ID })
	return out, next, nil
}

// UpdateAutogiroAccount changes an account's name, customer number and
// bankgiro number. The bankgiro number cannot change once mandates were
// sent for it: Bankgirot registered them under it.
func (s *Store) UpdateAutogiroAccount(ctx context.Context, a AutogiroAccount, now time.Time) error {
	if !ValidID(a.ID) {
		return ErrNotFound
	}
	err := s.InTx(ctx, func(tx *Tx) error {
		old, err := scanAGAccount(tx.tx.QueryRowContext(ctx, `SELECT `+agAccountColumns+` FROM autogiro_accounts
			WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.tenant, a.ID))
		if err != nil {
			return notFound(err)
		}
		if old.BankgiroNumber != a.BankgiroNumber {
			var n int
			if err := tx.tx.QueryRowContext(ctx, `SELECT count(*) FROM autogiro_mandates WHERE tenant_id = $1 AND account_id = $2
				AND status <> 'Created'`, tx.tenant, a.ID).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return agField("bankgiroNumber", "cannot change: %d mandates were sent to Bankgirot under bankgiro %s; a new bankgiro needs a new account and new mandates", n, old.BankgiroNumber)
			}
			if err := tx.bankgiroFree(ctx, a.BankgiroNumber, a.ID); err != nil {
				return err
			}
		}
		_, err = tx.tx.ExecContext(ctx, `UPDATE autogiro_accounts SET customer_number = $3, bankgiro_number = $4, name = $5,
			updated_at = $6 WHERE tenant_id = $1 AND id = $2`, tx.tenant, a.ID, a.BankgiroCustomerNumber, a.BankgiroNumber,
			a.Name, ts(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: update autogiro account %s: %w", a.ID, err)
	}
	return nil
}

// DeleteAutogiroAccount removes an account that has no live mandate
// (every mandate cancelled or rejected, nothing waiting for an export).
func (s *Store) DeleteAutogiroAccount(ctx context.Context, id string, now time.Time) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	err := s.InTx(ctx, func(tx *Tx) error {
		var one int
		if err := tx.tx.QueryRowContext(ctx, `SELECT 1 FROM autogiro_accounts WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.tenant, id).Scan(&one); err != nil {
			return notFound(err)
		}
		var n int
		if err := tx.tx.QueryRowContext(ctx, `SELECT count(*) FROM autogiro_mandates WHERE tenant_id = $1 AND account_id = $2
			AND (status IN ('Created', 'Sent', 'Active') OR cancel_pending)`, tx.tenant, id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return agField("id", "the account has %d live mandates (or cancellations not yet sent): cancel them and export first", n)
		}
		_, err := tx.tx.ExecContext(ctx, `UPDATE autogiro_accounts SET deleted_at = $3 WHERE tenant_id = $1 AND id = $2`, tx.tenant, id, ts(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete autogiro account %s: %w", id, err)
	}
	return nil
}

const agMandateColumns = `m.id, m.account_id, m.subscriber_id, s.subscriber_number, m.payer_number, m.clearing_number,
	m.bank_account_number, m.payer_id, m.internet_bank, m.status, m.status_code, m.cancelled_by, m.cancel_pending,
	m.released, m.sent_file_id, m.created_at, m.updated_at`

const agMandateFrom = ` FROM autogiro_mandates m JOIN subscribers s ON s.tenant_id = m.tenant_id AND s.id = m.subscriber_id`

func scanAGMandate(row scanner) (AutogiroMandate, error) {
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

// CreateAutogiroMandate stores a new mandate (status Created) for the
// next export. The payer number defaults to the subscriber's number and is
// unique among the account's live mandates.
func (s *Store) CreateAutogiroMandate(ctx context.Context, m AutogiroMandate, now time.Time) (AutogiroMandate, error) {
	var out AutogiroMandate
	err := s.InTx(ctx, func(tx *Tx) error {
		var err error
		out, err = tx.CreateAutogiroMandate(ctx, m, now)
		return err
	})
	return out, err
}

// CreateAutogiroMandate is Store.CreateAutogiroMandate in a transaction.
func (tx *Tx) CreateAutogiroMandate(ctx context.Context, m AutogiroMandate, now time.Time) (AutogiroMandate, error) {
	m.ID = NewID()
	m.Status = AutogiroCreated
	m.CreatedAt = now.UTC().Truncate(time.Microsecond)
	m.UpdatedAt = m.CreatedAt
	err := func() error {
		var errs validation.Errors
		var one int
		err := tx.tx.QueryRowContext(ctx, `SELECT 1 FROM autogiro_accounts WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.tenant, m.AccountID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			errs.Add("accountId", "there is no Autogiro account %s", m.AccountID)
		} else if err != nil {
			return err
		}
		err = tx.tx.QueryRowContext(ctx, `SELECT subscriber_number FROM subscribers WHERE tenant_id = $1 AND id = $2`,
			tx.tenant, m.SubscriberID).Scan(&m.SubscriberNumber)
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
		err = tx.tx.QueryRowContext(ctx, `SELECT id FROM autogiro_mandates WHERE tenant_id = $1 AND account_id = $2
			AND payer_number = $3 AND status IN ('Created', 'Sent', 'Active')`, tx.tenant, m.AccountID, m.PayerNumber).Scan(&other)
		if err == nil {
			return agField("payerNumber", "mandate %s of this account has payer number %s already; cancel it first", other, m.PayerNumber)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = tx.tx.ExecContext(ctx, `INSERT INTO autogiro_mandates (tenant_id, id, account_id, subscriber_id, payer_number,
			clearing_number, bank_account_number, payer_id, internet_bank, status, status_code, cancelled_by, cancel_pending,
			released, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'Created', '', '', FALSE, TRUE, $10, $10)`,
			tx.tenant, m.ID, m.AccountID, m.SubscriberID, m.PayerNumber, m.ClearingNumber, m.BankAccountNumber, m.PayerID,
			m.InternetBank, ts(m.CreatedAt))
		return err
	}()
	if err != nil {
		return AutogiroMandate{}, fmt.Errorf("store: create autogiro mandate: %w", err)
	}
	return m, nil
}

// SubscriberByNumber returns the id of the subscriber with a number.
func (tx *Tx) SubscriberByNumber(ctx context.Context, number int64) (string, error) {
	var id string
	err := tx.tx.QueryRowContext(ctx, `SELECT id FROM subscribers WHERE tenant_id = $1 AND subscriber_number = $2`, tx.tenant, number).Scan(&id)
	return id, notFound(err)
}

// AutogiroMandate returns a mandate of the context's tenant.
func (s *Store) AutogiroMandate(ctx context.Context, id string) (AutogiroMandate, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroMandate{}, err
	}
	if !ValidID(id) {
		return AutogiroMandate{}, ErrNotFound
	}
	m, err := scanAGMandate(s.readRow(ctx, `SELECT `+agMandateColumns+agMandateFrom+` WHERE m.tenant_id = $1 AND m.id = $2`, tenant, id))
	if err != nil {
		return AutogiroMandate{}, fmt.Errorf("store: autogiro mandate %s: %w", id, notFound(err))
	}
	return m, nil
}

// AutogiroMandateFilter narrows ListAutogiroMandates. Cancelled and
// rejected mandates are listed only when asked for.
type AutogiroMandateFilter struct {
	AccountID, SubscriberID, BankAccountNumber string
	SubscriberNumber                           *int64
	IncludeCancelled, IncludeRejected          bool
}

// ListAutogiroMandates lists mandates; an AccountID, SubscriberID or
// SubscriberNumber that names nothing is ErrNotFound.
func (s *Store) ListAutogiroMandates(ctx context.Context, f AutogiroMandateFilter, p Page) ([]AutogiroMandate, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := s.RequireParents(ctx, Parents{Subscriber: f.SubscriberID}); err != nil {
		return nil, "", fmt.Errorf("store: list autogiro mandates: %w", err)
	}
	if f.AccountID != "" {
		if _, err := s.AutogiroAccount(ctx, f.AccountID); err != nil {
			return nil, "", fmt.Errorf("store: list autogiro mandates: %w", err)
		}
	}
	if f.SubscriberNumber != nil {
		var one int
		if err := s.readRow(ctx, `SELECT 1 FROM subscribers WHERE tenant_id = $1 AND subscriber_number = $2`, tenant, *f.SubscriberNumber).Scan(&one); err != nil {
			return nil, "", fmt.Errorf("store: list autogiro mandates: subscriber number %d: %w", *f.SubscriberNumber, notFound(err))
		}
	}
	q := tenantFilterOn("m", tenant)
	if f.BankAccountNumber != "" {
		// Accounts of fixed length keep their leading zeros; the filter
		// matches with or without them.
		q.add("ltrim(m.bank_account_number, '0') = ?", strings.TrimLeft(f.BankAccountNumber, "0"))
	}
	for _, c := range []struct{ col, v string }{{"m.account_id", f.AccountID}, {"m.subscriber_id", f.SubscriberID}} {
		if c.v != "" {
			q.add(c.col+" = ?", c.v)
		}
	}
	if f.SubscriberNumber != nil {
		q.add("s.subscriber_number = ?", *f.SubscriberNumber)
	}
	if !f.IncludeCancelled {
		q.conds = append(q.conds, "m.status <> 'Cancelled'")
	}
	if !f.IncludeRejected {
		q.conds = append(q.conds, "m.status <> 'Rejected'")
	}
	tail := q.pageOn("m.id", p)
	out, err := queryAll(ctx, s.r, scanAGMandate, `SELECT `+agMandateColumns+agMandateFrom+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list autogiro mandates: %w", err)
	}
	if out == nil {
		out = []AutogiroMandate{}
	}
	out, next := trimPage(out, p, func(m AutogiroMandate) string { return m.ID })
	return out, next, nil
}

// CancelAutogiroMandate is the merchant's DELETE: see tx.EndAutogiroMandate.
func (s *Store) CancelAutogiroMandate(ctx context.Context, id string, now time.Time) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	err := s.InTx(ctx, func(tx *Tx) error {
		m, err := scanAGMandate(tx.tx.QueryRowContext(ctx, `SELECT `+agMandateColumns+agMandateFrom+`
			WHERE m.tenant_id = $1 AND m.id = $2`, tx.tenant, id))
		if err != nil {
			return notFound(err)
		}
		if m.Status == AutogiroCancelled || m.Status == AutogiroRejected {
			return nil // ended already: nothing to do
		}
		return tx.EndAutogiroMandate(ctx, m, AutogiroCancelled, "", "Merchant", m.Status != AutogiroCreated, now)
	})
	if err != nil {
		return fmt.Errorf("store: cancel autogiro mandate %s: %w", id, err)
	}
	return nil
}

// EndAutogiroMandate moves m to status (Cancelled or Rejected) with
// Bankgirot's code and who ended it; sendCancel queues a TK03 for the next
// export (the merchant cancelled a mandate Bankgirot knows). Its open
// transactions are cancelled: unsent ones never go out, and Bankgirot
// cancels sent ones with the mandate. The Autogiro payment agreements
// that name it are to be released (Released: AutogiroMandatesToRelease).
func (tx *Tx) EndAutogiroMandate(ctx context.Context, m AutogiroMandate, status, code, by string, sendCancel bool, now time.Time) error {
	if _, err := tx.tx.ExecContext(ctx, `UPDATE autogiro_mandates SET status = $3, status_code = CASE WHEN $4 = '' THEN status_code ELSE $4 END,
		cancelled_by = $5, cancel_pending = $6, released = FALSE, updated_at = $7 WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, m.ID, status, code, by, sendCancel, ts(now)); err != nil {
		return fmt.Errorf("end mandate %s: %w", m.ID, err)
	}
	_, err := tx.tx.ExecContext(ctx, `UPDATE autogiro_transactions SET status = 'Cancelled', cancel_pending = FALSE, updated_at = $3
		WHERE tenant_id = $1 AND mandate_id = $2 AND status IN ('Created', 'Sent')`, tx.tenant, m.ID, ts(now))
	if err != nil {
		return fmt.Errorf("cancel transactions of mandate %s: %w", m.ID, err)
	}
	return nil
}

// SetAutogiroMandate records a mandate advice that does not end the
// mandate (activation, or a code about a cancellation already made).
func (tx *Tx) SetAutogiroMandate(ctx context.Context, id, status, code string, now time.Time) error {
	_, err := tx.tx.ExecContext(ctx, `UPDATE autogiro_mandates SET status = $3, status_code = $4, updated_at = $5
		WHERE tenant_id = $1 AND id = $2`, tx.tenant, id, status, code, ts(now))
	return err
}

// AutogiroMandatesByPayer returns the mandates of an account with a payer
// number, newest first.
func (tx *Tx) AutogiroMandatesByPayer(ctx context.Context, accountID, payer string) ([]AutogiroMandate, error) {
	return queryAll(ctx, tx.tx, scanAGMandate, `SELECT `+agMandateColumns+agMandateFrom+`
		WHERE m.tenant_id = $1 AND m.account_id = $2 AND m.payer_number = $3 ORDER BY m.id DESC`, tx.tenant, accountID, payer)
}

// AutogiroAccountByBankgiro finds the live account of a bankgiro number.
func (tx *Tx) AutogiroAccountByBankgiro(ctx context.Context, bankgiro string) (AutogiroAccount, error) {
	a, err := scanAGAccount(tx.tx.QueryRowContext(ctx, `SELECT `+agAccountColumns+` FROM autogiro_accounts
		WHERE tenant_id = $1 AND bankgiro_number = $2 AND deleted_at IS NULL`, tx.tenant, bankgiro))
	return a, notFound(err)
}

// AutogiroMandatesToRelease returns ended mandates whose payment
// agreements have not been released yet.
func (s *Store) AutogiroMandatesToRelease(ctx context.Context) ([]string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := queryAll(ctx, s.w, func(r scanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT id FROM autogiro_mandates WHERE tenant_id = $1 AND NOT released ORDER BY id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("store: autogiro mandates to release: %w", err)
	}
	return ids, nil
}

// MarkAutogiroMandateReleased records that a mandate's agreements were
// released.
func (s *Store) MarkAutogiroMandateReleased(ctx context.Context, id string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `UPDATE autogiro_mandates SET released = TRUE WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if err != nil {
		return fmt.Errorf("store: release autogiro mandate %s: %w", id, err)
	}
	return nil
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

func scanAGTransaction(row scanner) (AutogiroTransaction, error) {
	var (
		t                      AutogiroTransaction
		invoice, payment, sent sql.NullString
		refundDate, refundItem sql.NullString
		sentAt                 anyTime
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
	if sentAt.t != nil && sentAt.t.After(t.UpdatedAt) {
		t.UpdatedAt = *sentAt.t
	}
	t.IsCancelled = t.Status == AutogiroCancelled
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return t, err
}

// ErrAutogiroInvoiceDebited: the invoice has a live debit already.
var ErrAutogiroInvoiceDebited = errors.New("store: the invoice has an Autogiro debit already")

// CreateAutogiroTransaction stores a debit or refund (status Created) of
// a mandate that is not cancelled or rejected. A second live debit of one
// invoice is ErrAutogiroInvoiceDebited, with the first one returned.
func (s *Store) CreateAutogiroTransaction(ctx context.Context, t AutogiroTransaction, now time.Time) (AutogiroTransaction, error) {
	t.ID = NewID()
	t.Status = AutogiroCreated
	t.CreatedAt = now.UTC().Truncate(time.Microsecond)
	t.UpdatedAt = t.CreatedAt
	var existing AutogiroTransaction
	err := s.InTx(ctx, func(tx *Tx) error {
		var status string
		err := tx.tx.QueryRowContext(ctx, `SELECT account_id, status FROM autogiro_mandates WHERE tenant_id = $1 AND id = $2`,
			tx.tenant, t.MandateID).Scan(&t.AccountID, &status)
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
			if err := tx.tx.QueryRowContext(ctx, `SELECT 1 FROM invoices WHERE tenant_id = $1 AND id = $2`, tx.tenant, *t.InvoiceID).Scan(&one); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return agField("invoiceId", "there is no invoice %s", *t.InvoiceID)
				}
				return err
			}
			if t.Kind == AutogiroDebit {
				existing, err = scanAGTransaction(tx.tx.QueryRowContext(ctx, `SELECT `+agTransactionColumns+agTransactionFrom+`
					WHERE t.tenant_id = $1 AND t.open_invoice_id = $2`, tx.tenant, *t.InvoiceID))
				if err == nil {
					return ErrAutogiroInvoiceDebited
				}
				if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
		}
		_, err = tx.tx.ExecContext(ctx, `INSERT INTO autogiro_transactions (tenant_id, id, mandate_id, account_id, kind, amount,
			payment_date, reference, invoice_id, status, status_code, cancel_pending, settle_pending, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'Created', '', FALSE, FALSE, $10, $10)`,
			tx.tenant, t.ID, t.MandateID, t.AccountID, t.Kind, t.AmountMinor, t.PaymentDate, t.Reference, t.InvoiceID, ts(t.CreatedAt))
		if isUniqueViolation(err) {
			return ErrAutogiroInvoiceDebited
		}
		return err
	})
	if errors.Is(err, ErrAutogiroInvoiceDebited) {
		return existing, err
	}
	if err != nil {
		return AutogiroTransaction{}, fmt.Errorf("store: create autogiro transaction: %w", err)
	}
	return t, nil
}

// AutogiroTransaction returns a transaction of the context's tenant.
func (s *Store) AutogiroTransaction(ctx context.Context, id string) (AutogiroTransaction, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroTransaction{}, err
	}
	if !ValidID(id) {
		return AutogiroTransaction{}, ErrNotFound
	}
	t, err := scanAGTransaction(s.readRow(ctx, `SELECT `+agTransactionColumns+agTransactionFrom+`
		WHERE t.tenant_id = $1 AND t.id = $2`, tenant, id))
	if err != nil {
		return AutogiroTransaction{}, fmt.Errorf("store: autogiro transaction %s: %w", id, notFound(err))
	}
	return t, nil
}

// AutogiroInvoiceDebit returns the live debit of an invoice, or ErrNotFound.
func (s *Store) AutogiroInvoiceDebit(ctx context.Context, invoiceID string) (AutogiroTransaction, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroTransaction{}, err
	}
	t, err := scanAGTransaction(s.w.QueryRowContext(ctx, `SELECT `+agTransactionColumns+agTransactionFrom+`
		WHERE t.tenant_id = $1 AND t.open_invoice_id = $2`, tenant, invoiceID))
	if err != nil {
		return AutogiroTransaction{}, fmt.Errorf("store: autogiro debit of invoice %s: %w", invoiceID, notFound(err))
	}
	return t, nil
}

// AutogiroTransactionFilter narrows ListAutogiroTransactions.
type AutogiroTransactionFilter struct {
	MandateID   string
	IsCancelled *bool
}

// ListAutogiroTransactions lists transactions; a MandateID of no mandate
// is ErrNotFound.
func (s *Store) ListAutogiroTransactions(ctx context.Context, f AutogiroTransactionFilter, p Page) ([]AutogiroTransaction, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if f.MandateID != "" {
		if _, err := s.AutogiroMandate(ctx, f.MandateID); err != nil {
			return nil, "", fmt.Errorf("store: list autogiro transactions: %w", err)
		}
	}
	q := tenantFilterOn("t", tenant)
	if f.MandateID != "" {
		q.add("t.mandate_id = ?", f.MandateID)
	}
	if f.IsCancelled != nil {
		if *f.IsCancelled {
			q.conds = append(q.conds, "t.status = 'Cancelled'")
		} else {
			q.conds = append(q.conds, "t.status <> 'Cancelled'")
		}
	}
	tail := q.pageOn("t.id", p)
	out, err := queryAll(ctx, s.r, scanAGTransaction, `SELECT `+agTransactionColumns+agTransactionFrom+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list autogiro transactions: %w", err)
	}
	if out == nil {
		out = []AutogiroTransaction{}
	}
	out, next := trimPage(out, p, func(t AutogiroTransaction) string { return t.ID })
	return out, next, nil
}

// waitForAutogiroClaim makes a cancellation and PostgreSQL's export claim
// (which deletes the queue row and records the payment sent without
// touching the transaction, ClaimAutogiroPayments) take turns: it locks the
// transaction's queue row, so it waits for an export that deleted the row
// to commit and the status read after it sees the payment Sent (a TK25 is
// due); a cancellation that locks first makes the export wait and then
// find the row gone. Without it a cancellation reading during an export
// took a sent payment for an unsent one and no TK25 went out. SQLite has
// one writer: nothing to wait for.
func (tx *Tx) waitForAutogiroClaim(ctx context.Context, id string) error {
	if tx.s.engine != Postgres {
		return nil
	}
	_, err := tx.tx.ExecContext(ctx, `SELECT 1 FROM autogiro_transactions t JOIN autogiro_payment_queue q
		ON q.tenant_id = t.tenant_id AND q.account_id = t.account_id AND q.transaction_id = t.id
		WHERE t.tenant_id = $1 AND t.id = $2 FOR UPDATE OF q`, tx.tenant, id)
	if err != nil {
		return fmt.Errorf("store: autogiro transaction %s: %w", id, err)
	}
	return nil
}

// CancelAutogiroTransaction cancels a transaction: an unsent one never
// goes out; a sent one is cancelled at Bankgirot by a TK25 in the next
// export. A completed or failed one is settled: a 400 says so. Cancelling
// a cancelled transaction does nothing.
func (s *Store) CancelAutogiroTransaction(ctx context.Context, id string, now time.Time) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	err := s.InTx(ctx, func(tx *Tx) error {
		if err := tx.waitForAutogiroClaim(ctx, id); err != nil {
			return err
		}
		var status string
		if err := tx.tx.QueryRowContext(ctx, `SELECT `+agTransactionStatus+` FROM autogiro_transactions t
			LEFT JOIN autogiro_sent_payments s ON s.tenant_id = t.tenant_id AND s.transaction_id = t.id
			WHERE t.tenant_id = $1 AND t.id = $2`, tx.tenant, id).Scan(&status); err != nil {
			return notFound(err)
		}
		switch status {
		case AutogiroCancelled:
			return nil
		case AutogiroCompleted:
			return agField("id", "the transaction is completed: Bankgirot has moved the money; refund it with a Refund transaction")
		case AutogiroFailed:
			return agField("id", "the transaction failed at Bankgirot: there is nothing left to cancel")
		}
		_, err := tx.tx.ExecContext(ctx, `UPDATE autogiro_transactions SET status = 'Cancelled', cancel_pending = $3,
			updated_at = $4 WHERE tenant_id = $1 AND id = $2`, tx.tenant, id, status == AutogiroSent, ts(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: cancel autogiro transaction %s: %w", id, err)
	}
	return nil
}
