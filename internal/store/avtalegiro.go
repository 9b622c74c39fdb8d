package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// AvtaleGiro records (docs/AVTALEGIRO.md). The file format lives in
// internal/avtalegiro/ocrgiro, the files' writing and reading (with their
// SQL) in internal/avtalegiro/files.go, the rules and the bank in
// internal/avtalegiro; this file holds the rest of their SQL, until it
// moves to the wing too (issue 28).

// Claim statuses.
const (
	ClaimScheduled           = "Scheduled"
	ClaimSent                = "Sent"
	ClaimCancellationPending = "CancellationPending"
	ClaimCancelled           = "Cancelled"
	ClaimPaid                = "Paid"
)

// AvtaleGiroAccount is a payee's account at the bank with its AvtaleGiro
// agreement: the KID rules the bank was given, the data sender id, the
// lead time and where the bank-side interface answers.
type AvtaleGiroAccount struct {
	ID                      string    `json:"id"`
	Name                    string    `json:"name"`
	BankAccountNumber       string    `json:"bankAccountNumber" example:"12345678903" description:"The assignment account (kontonummer): 11 digits."`
	CustomerUnitID          string    `json:"customerUnitId" example:"12345678" description:"The data sender id (KUNDEENHET-ID) the bank gave the payee: 8 digits."`
	KIDAlgorithm            string    `json:"kidAlgorithm" enum:"MOD10,MOD11"`
	KIDLength               int       `json:"kidLength" description:"Length of the account's KIDs, check digit included."`
	LeadDays                int       `json:"leadDays" description:"Norwegian banking days a claim file must reach the bank before the earliest due date in it."`
	BaseComboAPIEndpointURL string    `json:"baseComboApiEndpointUrl" description:"Where the bank-side interface answers: claim files are submitted there, mandate and OCR files fetched."`
	OrganizationIDs         []string  `json:"organizationIds" description:"The organizations that collect on the account."`
	CreatedAt               time.Time `json:"createdAt"`
	UpdatedAt               time.Time `json:"updatedAt"`
}

// AvtaleGiroMandate is a payer's standing consent (fast betalingsoppdrag)
// on an account, known by its KID.
type AvtaleGiroMandate struct {
	ID           string          `json:"id"`
	AccountID    string          `json:"accountId"`
	KID          string          `json:"kid"`
	SubscriberID *string         `json:"subscriberId"`
	Notify       bool            `json:"notify" description:"The payer wants notice from the bank before each claim (claims go as transaction type 21 with notice lines); else the payee notifies (type 02)."`
	AmountLimit  *catalog.Amount `json:"amountLimit" description:"The most one claim may be, in NOK; null is no limit."`
	Source       string          `json:"source" enum:"Api,Bank" description:"Registered through the API or read from the bank's mandate file."`
	Status       string          `json:"status" enum:"Active,Deleted"`
	CreatedAt    time.Time       `json:"createdAt"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	DeletedAt    *time.Time      `json:"deletedAt,omitempty"`

	amountLimit *int64
}

// AmountLimitOre returns the mandate's limit in øre, or nil.
func (m AvtaleGiroMandate) AmountLimitOre() *int64 { return m.amountLimit }

// AvtaleGiroClaim is a claim on a mandate.
type AvtaleGiroClaim struct {
	ID                 string         `json:"id"`
	AccountID          string         `json:"accountId"`
	MandateID          string         `json:"mandateId"`
	TransactionID      string         `json:"transactionId" description:"The caller's id of the collection; creating a claim with a transactionId that exists returns that claim."`
	InvoiceID          *string        `json:"invoiceId" description:"The invoice the claim collects, when billing created it."`
	KID                string         `json:"kid"`
	Amount             catalog.Amount `json:"amount" description:"NOK."`
	DueDate            string         `json:"dueDate" format:"date"`
	Notify             bool           `json:"notify" description:"Sent with notice from the bank (type 21)."`
	ExternalReference  string         `json:"externalReference"`
	NoticeLines        []string       `json:"noticeLines"`
	Status             string         `json:"status" enum:"Scheduled,Sent,CancellationPending,Cancelled,Paid"`
	ClaimFileID        *string        `json:"claimFileId"`
	CancellationFileID *string        `json:"cancellationFileId"`
	PaymentID          *string        `json:"paymentId"`
	CreatedAt          time.Time      `json:"createdAt"`
	UpdatedAt          time.Time      `json:"updatedAt"`
	AmountOre          int64          `json:"-"`
	ShortName          string         `json:"-"`
}

// AvtaleGiroFile is a file exchanged with the bank.
type AvtaleGiroFile struct {
	ID                 string     `json:"id"`
	AccountID          *string    `json:"accountId"`
	Direction          string     `json:"direction" enum:"Out,In"`
	Kind               string     `json:"kind" enum:"Claims,Mandates,Payments"`
	TransmissionNumber string     `json:"transmissionNumber"`
	SHA256             string     `json:"sha256"`
	Transactions       int        `json:"transactions"`
	CreatedAt          time.Time  `json:"createdAt"`
	SubmittedAt        *time.Time `json:"submittedAt"`
}

// nokAmount is an amount in øre as the API shows it (NOK).
func nokAmount(n int64) catalog.Amount {
	nok, _ := money.LookupCurrency("NOK")
	return catalog.NewAmount(n, nok)
}

func avgTenant(ctx context.Context) (string, error) { return tenancy.From(ctx) }

// --- accounts ---------------------------------------------------------

const avgAccountColumns = `id, name, bank_account_number, customer_unit_id, kid_algorithm, kid_length, lead_days, endpoint_url, created_at, updated_at`

func scanAvgAccount(r scanner) (AvtaleGiroAccount, error) {
	var a AvtaleGiroAccount
	err := r.Scan(&a.ID, &a.Name, &a.BankAccountNumber, &a.CustomerUnitID, &a.KIDAlgorithm, &a.KIDLength, &a.LeadDays,
		&a.BaseComboAPIEndpointURL, &a.CreatedAt, &a.UpdatedAt)
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	a.OrganizationIDs = []string{}
	return a, err
}

func (s *Store) avgOrganizations(ctx context.Context, q queryer, tenant string, accounts []AvtaleGiroAccount) error {
	for i := range accounts {
		ids, err := queryAll(ctx, q, func(r scanner) (string, error) {
			var id string
			return id, r.Scan(&id)
		}, `SELECT organization_id FROM avtalegiro_account_organizations WHERE tenant_id = $1 AND account_id = $2 ORDER BY organization_id`,
			tenant, accounts[i].ID)
		if err != nil {
			return err
		}
		if ids != nil {
			accounts[i].OrganizationIDs = ids
		}
	}
	return nil
}

func accountNumberTaken(number string) error {
	return validation.Field("bankAccountNumber", "an AvtaleGiro account with number %s exists already", number)
}

// CreateAvtaleGiroAccount stores a new account.
func (s *Store) CreateAvtaleGiroAccount(ctx context.Context, a AvtaleGiroAccount, now time.Time) (AvtaleGiroAccount, error) {
	a.ID, a.CreatedAt, a.UpdatedAt = NewID(), now.UTC().Truncate(time.Microsecond), now.UTC().Truncate(time.Microsecond)
	err := s.InTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, `INSERT INTO avtalegiro_accounts (id, tenant_id, name, bank_account_number, customer_unit_id,
			kid_algorithm, kid_length, lead_days, endpoint_url, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
			a.ID, tx.tenant, a.Name, a.BankAccountNumber, a.CustomerUnitID, a.KIDAlgorithm, a.KIDLength, a.LeadDays,
			a.BaseComboAPIEndpointURL, ts(a.CreatedAt), ts(a.UpdatedAt))
		if isUniqueViolation(err) {
			return accountNumberTaken(a.BankAccountNumber)
		}
		return err
	})
	if err != nil {
		return AvtaleGiroAccount{}, fmt.Errorf("store: create avtalegiro account: %w", err)
	}
	a.OrganizationIDs = []string{}
	return a, nil
}

// AvtaleGiroAccount returns live account id of the context's tenant.
func (s *Store) AvtaleGiroAccount(ctx context.Context, id string) (AvtaleGiroAccount, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroAccount{}, err
	}
	if !ValidID(id) {
		return AvtaleGiroAccount{}, ErrNotFound
	}
	a, err := scanAvgAccount(s.r.QueryRowContext(ctx, `SELECT `+avgAccountColumns+` FROM avtalegiro_accounts
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tenant, id))
	if err != nil {
		return AvtaleGiroAccount{}, fmt.Errorf("store: avtalegiro account %s: %w", id, notFound(err))
	}
	list := []AvtaleGiroAccount{a}
	if err := s.avgOrganizations(ctx, s.r, tenant, list); err != nil {
		return AvtaleGiroAccount{}, fmt.Errorf("store: avtalegiro account %s: %w", id, err)
	}
	return list[0], nil
}

// AvtaleGiroAccountByNumber returns the live account with bank account
// number n.
func (s *Store) AvtaleGiroAccountByNumber(ctx context.Context, n string) (AvtaleGiroAccount, error) {
	list, _, err := s.ListAvtaleGiroAccounts(ctx, AvtaleGiroAccountFilter{BankAccountNumber: n}, Page{Limit: 1})
	if err != nil {
		return AvtaleGiroAccount{}, err
	}
	if len(list) == 0 {
		return AvtaleGiroAccount{}, ErrNotFound
	}
	return list[0], nil
}

// AvtaleGiroAccountFilter narrows ListAvtaleGiroAccounts.
type AvtaleGiroAccountFilter struct {
	BankAccountNumber string
	EndpointURL       string
}

// ListAvtaleGiroAccounts returns a page of the tenant's live accounts.
func (s *Store) ListAvtaleGiroAccounts(ctx context.Context, f AvtaleGiroAccountFilter, p Page) ([]AvtaleGiroAccount, string, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	q.conds = append(q.conds, "deleted_at IS NULL")
	if f.BankAccountNumber != "" {
		q.add("bank_account_number = ?", f.BankAccountNumber)
	}
	if f.EndpointURL != "" {
		q.add("endpoint_url = ?", f.EndpointURL)
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanAvgAccount, `SELECT `+avgAccountColumns+` FROM avtalegiro_accounts`+q.where()+tail, q.args...)
	next := ""
	if err == nil {
		out, next = trimPage(out, p, func(a AvtaleGiroAccount) string { return a.ID })
		err = s.avgOrganizations(ctx, s.r, tenant, out)
	}
	if err != nil {
		return nil, "", fmt.Errorf("store: list avtalegiro accounts: %w", err)
	}
	if out == nil {
		out = []AvtaleGiroAccount{}
	}
	return out, next, nil
}

// UpdateAvtaleGiroAccount replaces the account's settings.
func (s *Store) UpdateAvtaleGiroAccount(ctx context.Context, a AvtaleGiroAccount, now time.Time) error {
	if !ValidID(a.ID) {
		return ErrNotFound
	}
	return s.InTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE avtalegiro_accounts SET name = $3, bank_account_number = $4, customer_unit_id = $5,
			kid_algorithm = $6, kid_length = $7, lead_days = $8, endpoint_url = $9, updated_at = $10
			WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.tenant, a.ID, a.Name, a.BankAccountNumber,
			a.CustomerUnitID, a.KIDAlgorithm, a.KIDLength, a.LeadDays, a.BaseComboAPIEndpointURL, ts(now))
		if isUniqueViolation(err) {
			return accountNumberTaken(a.BankAccountNumber)
		}
		if err != nil {
			return fmt.Errorf("store: update avtalegiro account: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// DeleteAvtaleGiroAccount deletes an account softly. An account with live
// mandates or claims still to be collected is not deleted (400).
func (s *Store) DeleteAvtaleGiroAccount(ctx context.Context, id string, now time.Time) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	return s.InTx(ctx, func(tx *Tx) error {
		var mandates, claims int
		// The claim rows' own status: a sent claim whose sending is
		// recorded apart (migration 00042) still says Scheduled there.
		if err := tx.queryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM avtalegiro_mandates WHERE tenant_id = $1 AND account_id = $2 AND deleted_at IS NULL),
			(SELECT COUNT(*) FROM avtalegiro_claims WHERE tenant_id = $1 AND account_id = $2 AND status IN ('Scheduled', 'Sent', 'CancellationPending'))`,
			tx.tenant, id).Scan(&mandates, &claims); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `UPDATE avtalegiro_accounts SET deleted_at = $3, updated_at = $3
			WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.tenant, id, ts(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if mandates > 0 || claims > 0 {
			return validation.Field("id", "the account has %d active mandates and %d claims still to collect; delete the mandates first", mandates, claims)
		}
		return nil
	})
}

// AddAvtaleGiroAccountOrganizations links organizations to the account;
// linking one twice changes nothing. An organization the tenant does not
// have is a 400 naming its index.
func (s *Store) AddAvtaleGiroAccountOrganizations(ctx context.Context, id string, orgIDs []string, now time.Time) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	return s.InTx(ctx, func(tx *Tx) error {
		var one int
		if err := tx.queryRow(ctx, `SELECT 1 FROM avtalegiro_accounts WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.tenant, id).Scan(&one); err != nil {
			return notFound(err)
		}
		var errs validation.Errors
		for i, org := range orgIDs {
			err := tx.queryRow(ctx, `SELECT 1 FROM organizations WHERE tenant_id = $1 AND id = $2`, tx.tenant, org).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				errs.Add(fmt.Sprintf("[%d].id", i), "there is no organization %s", org)
				continue
			}
			if err != nil {
				return err
			}
		}
		if err := errs.Err(); err != nil {
			return err
		}
		for _, org := range orgIDs {
			if _, err := tx.exec(ctx, `INSERT INTO avtalegiro_account_organizations (tenant_id, account_id, organization_id, created_at)
				VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, tx.tenant, id, org, ts(now)); err != nil {
				return fmt.Errorf("store: link organization: %w", err)
			}
		}
		return nil
	})
}

// RemoveAvtaleGiroAccountOrganization unlinks an organization; ErrNotFound
// when the account does not exist or the organization is not linked.
func (s *Store) RemoveAvtaleGiroAccountOrganization(ctx context.Context, id, orgID string) error {
	if !ValidID(id) || !ValidID(orgID) {
		return ErrNotFound
	}
	return s.InTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `DELETE FROM avtalegiro_account_organizations WHERE tenant_id = $1 AND account_id = $2
			AND organization_id = $3 AND account_id IN (SELECT id FROM avtalegiro_accounts WHERE tenant_id = $1 AND deleted_at IS NULL)`,
			tx.tenant, id, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// --- mandates ---------------------------------------------------------

const avgMandateColumns = `id, account_id, kid, subscriber_id, notify, amount_limit, source, created_at, updated_at, deleted_at`

func scanAvgMandate(r scanner) (AvtaleGiroMandate, error) {
	var (
		m       AvtaleGiroMandate
		sub     sql.NullString
		limit   sql.NullInt64
		deleted sql.NullTime
	)
	err := r.Scan(&m.ID, &m.AccountID, &m.KID, &sub, &m.Notify, &limit, &m.Source, &m.CreatedAt, &m.UpdatedAt, &deleted)
	if sub.Valid {
		m.SubscriberID = &sub.String
	}
	if limit.Valid {
		v := limit.Int64
		m.amountLimit = &v
		a := nokAmount(v)
		m.AmountLimit = &a
	}
	m.CreatedAt, m.UpdatedAt, m.DeletedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC(), fromNullTime(deleted)
	m.Status = "Active"
	if m.DeletedAt != nil {
		m.Status = "Deleted"
	}
	return m, err
}

// NewAvtaleGiroMandate is a mandate to register.
type NewAvtaleGiroMandate struct {
	AccountID    string
	KID          string
	SubscriberID string
	Notify       bool
	AmountLimit  *int64
}

// CreateAvtaleGiroMandate registers a mandate through the API. An account
// or subscriber the tenant does not have is a 400 on its field; a KID
// with a live mandate on the account is a 400 on kid.
func (s *Store) CreateAvtaleGiroMandate(ctx context.Context, in NewAvtaleGiroMandate, now time.Time) (string, error) {
	id := NewID()
	err := s.InTx(ctx, func(tx *Tx) error {
		var one int
		if err := tx.queryRow(ctx, `SELECT 1 FROM avtalegiro_accounts WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.tenant, in.AccountID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return validation.Field("accountId", "there is no AvtaleGiro account %s", in.AccountID)
			}
			return err
		}
		var sub *string
		if in.SubscriberID != "" {
			if err := tx.queryRow(ctx, `SELECT 1 FROM subscribers WHERE tenant_id = $1 AND id = $2`, tx.tenant, in.SubscriberID).Scan(&one); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return validation.Field("subscriberId", "there is no subscriber %s", in.SubscriberID)
				}
				return err
			}
			sub = &in.SubscriberID
		}
		_, err := tx.exec(ctx, `INSERT INTO avtalegiro_mandates (id, tenant_id, account_id, kid, subscriber_id, notify, amount_limit,
			source, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,'Api',$8,$8)`, id, tx.tenant, in.AccountID, in.KID, sub,
			in.Notify, in.AmountLimit, ts(now))
		if isUniqueViolation(err) {
			return validation.Field("kid", "the account has an active mandate with KID %s", in.KID)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: create avtalegiro mandate: %w", err)
	}
	return id, nil
}

// AvtaleGiroMandate returns mandate id (also a deleted one).
func (s *Store) AvtaleGiroMandate(ctx context.Context, id string) (AvtaleGiroMandate, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroMandate{}, err
	}
	if !ValidID(id) {
		return AvtaleGiroMandate{}, ErrNotFound
	}
	m, err := scanAvgMandate(s.r.QueryRowContext(ctx, `SELECT `+avgMandateColumns+` FROM avtalegiro_mandates WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return AvtaleGiroMandate{}, fmt.Errorf("store: avtalegiro mandate %s: %w", id, notFound(err))
	}
	return m, nil
}

// AvtaleGiroMandateFilter narrows ListAvtaleGiroMandates.
type AvtaleGiroMandateFilter struct {
	AccountID, SubscriberID, KID string
	IncludeDeleted               bool
}

// ListAvtaleGiroMandates returns a page of mandates; an account or
// subscriber filter naming nothing is ErrNotFound.
func (s *Store) ListAvtaleGiroMandates(ctx context.Context, f AvtaleGiroMandateFilter, p Page) ([]AvtaleGiroMandate, string, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := s.RequireParents(ctx, Parents{Subscriber: f.SubscriberID}); err != nil {
		return nil, "", err
	}
	if f.AccountID != "" {
		var one int
		if err := s.r.QueryRowContext(ctx, `SELECT 1 FROM avtalegiro_accounts WHERE tenant_id = $1 AND id = $2`, tenant, f.AccountID).Scan(&one); err != nil {
			return nil, "", notFound(err)
		}
	}
	q := tenantFilter(tenant)
	if !f.IncludeDeleted {
		q.conds = append(q.conds, "deleted_at IS NULL")
	}
	for _, c := range []struct{ col, v string }{{"account_id", f.AccountID}, {"subscriber_id", f.SubscriberID}, {"kid", f.KID}} {
		if c.v != "" {
			q.add(c.col+" = ?", c.v)
		}
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanAvgMandate, `SELECT `+avgMandateColumns+` FROM avtalegiro_mandates`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list avtalegiro mandates: %w", err)
	}
	if out == nil {
		out = []AvtaleGiroMandate{}
	}
	out, next := trimPage(out, p, func(m AvtaleGiroMandate) string { return m.ID })
	return out, next, nil
}

// MandateDeletion says what deleting a mandate did.
type MandateDeletion struct {
	Deleted         bool
	Agreements      []AgreementDeletion
	ClaimsCancelled int
}

// DeleteAvtaleGiroMandate deletes a mandate (the payee's or the payer's
// decision): see deleteMandate.
func (s *Store) DeleteAvtaleGiroMandate(ctx context.Context, id string, now time.Time) (MandateDeletion, error) {
	if !ValidID(id) {
		return MandateDeletion{}, ErrNotFound
	}
	var out MandateDeletion
	err := s.InTx(ctx, func(tx *Tx) error {
		var err error
		out, err = tx.deleteMandate(ctx, id, now)
		return err
	})
	return out, err
}

// DeleteAvtaleGiroMandate is Store.DeleteAvtaleGiroMandate in the
// caller's transaction: the file import (internal/avtalegiro) applies a
// mandate the bank deleted with it.
func (tx *Tx) DeleteAvtaleGiroMandate(ctx context.Context, id string, now time.Time) (MandateDeletion, error) {
	return tx.deleteMandate(ctx, id, now)
}

// deleteMandate deletes mandate id softly. Its claims the bank has not
// collected are cancelled (the bank drops them with the mandate, so no
// cancellation record is sent); unpaid invoices stay with dunning. Every
// live AvtaleGiro payment agreement that names the mandate is deleted the
// way DELETE /paymentagreement does it: its subscriptions move back to the
// subscriber's Invoice agreement and PaymentAgreementDeleted is recorded.
func (tx *Tx) deleteMandate(ctx context.Context, id string, now time.Time) (MandateDeletion, error) {
	res, err := tx.exec(ctx, `UPDATE avtalegiro_mandates SET deleted_at = $3, updated_at = $3
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.tenant, id, ts(now))
	if err != nil {
		return MandateDeletion{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var one int
		if err := tx.queryRow(ctx, `SELECT 1 FROM avtalegiro_mandates WHERE tenant_id = $1 AND id = $2`, tx.tenant, id).Scan(&one); err != nil {
			return MandateDeletion{}, notFound(err)
		}
		return MandateDeletion{}, nil
	}
	out := MandateDeletion{Deleted: true}
	// Scheduled here is sent or not (migration 00042): both are cancelled.
	res, err = tx.exec(ctx, `UPDATE avtalegiro_claims SET status = 'Cancelled', updated_at = $3
		WHERE tenant_id = $1 AND mandate_id = $2 AND status IN ('Scheduled', 'Sent', 'CancellationPending')`, tx.tenant, id, ts(now))
	if err != nil {
		return MandateDeletion{}, err
	}
	n, _ := res.RowsAffected()
	out.ClaimsCancelled = int(n)
	rows, err := tx.query(ctx, `SELECT id FROM payment_agreements WHERE tenant_id = $1 AND provider_type = $2
		AND provider_agreement_reference = $3 AND deleted_at IS NULL`, tx.tenant, ProviderAvtaleGiro, id)
	if err != nil {
		return MandateDeletion{}, err
	}
	agreements, err := scanIDs(rows)
	if err != nil {
		return MandateDeletion{}, err
	}
	for _, a := range agreements {
		d, err := tx.deleteAgreement(ctx, a, now)
		if err != nil {
			return MandateDeletion{}, fmt.Errorf("delete payment agreement %s: %w", a, err)
		}
		out.Agreements = append(out.Agreements, d)
	}
	return out, nil
}

// ActiveAvtaleGiroMandate reports whether mandate id is live.
func (s *Store) ActiveAvtaleGiroMandate(ctx context.Context, id string) (bool, error) {
	m, err := s.AvtaleGiroMandate(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return m.DeletedAt == nil, nil
}

// --- claims -------------------------------------------------------------

// avgClaimColumns are read from avtalegiro_claim_states (migration 00042):
// the claims with their status as sent derived from avtalegiro_sent_claims,
// where the export records a sending instead of rewriting the claim row.
// Statements that change claims write avtalegiro_claims itself.
const avgClaimColumns = `id, account_id, mandate_id, transaction_id, invoice_id, kid, amount, due_date, notify, short_name,
	external_reference, notice_lines, status, claim_file_id, cancellation_file_id, payment_id, created_at, updated_at, sent_at`

func scanAvgClaim(r scanner) (AvtaleGiroClaim, error) {
	var (
		c                              AvtaleGiroClaim
		invoice, claimFile, cancelFile sql.NullString
		payment                        sql.NullString
		notice                         string
		sentAt                         sql.NullTime
	)
	err := r.Scan(&c.ID, &c.AccountID, &c.MandateID, &c.TransactionID, &invoice, &c.KID, &c.AmountOre, &c.DueDate, &c.Notify,
		&c.ShortName, &c.ExternalReference, &notice, &c.Status, &claimFile, &cancelFile, &payment, &c.CreatedAt, &c.UpdatedAt, &sentAt)
	if err != nil {
		return c, err
	}
	// Sending a claim recorded in avtalegiro_sent_claims changes it then
	// without touching its row.
	if sentAt.Valid && sentAt.Time.After(c.UpdatedAt) {
		c.UpdatedAt = sentAt.Time
	}
	opt := func(v sql.NullString) *string {
		if v.Valid {
			return &v.String
		}
		return nil
	}
	c.InvoiceID, c.ClaimFileID, c.CancellationFileID, c.PaymentID = opt(invoice), opt(claimFile), opt(cancelFile), opt(payment)
	c.Amount = nokAmount(c.AmountOre)
	c.NoticeLines = []string{}
	if notice != "" {
		c.NoticeLines = strings.Split(notice, "\n")
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

// NewAvtaleGiroClaim is a claim to create. The caller has checked the
// amount, KID and due date against the mandate and account.
type NewAvtaleGiroClaim struct {
	MandateID         string
	TransactionID     string
	InvoiceID         *string
	KID               string
	Amount            int64
	DueDate           string
	ShortName         string
	ExternalReference string
	NoticeLines       []string
}

// CreateAvtaleGiroClaim stores a Scheduled claim on a live mandate. A
// claim whose transactionId (or invoice) has a claim already returns that
// claim and created false.
func (s *Store) CreateAvtaleGiroClaim(ctx context.Context, in NewAvtaleGiroClaim, now time.Time) (AvtaleGiroClaim, bool, error) {
	var (
		out     AvtaleGiroClaim
		created bool
	)
	create := func(tx *Tx) error {
		existing, err := scanAvgClaim(tx.queryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1
			AND (transaction_id = $2 OR invoice_id = $3) ORDER BY id LIMIT 1`, tx.tenant, in.TransactionID, in.InvoiceID))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var account string
		var notify bool
		err = tx.queryRow(ctx, `SELECT account_id, notify FROM avtalegiro_mandates WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.tenant, in.MandateID).Scan(&account, &notify)
		if errors.Is(err, sql.ErrNoRows) {
			return validation.Field("mandateId", "there is no active mandate %s", in.MandateID)
		}
		if err != nil {
			return err
		}
		// The export of the account's next file waits for this claim (and
		// a claim waits for an export): see avtalegiro.ExportClaims.
		var one int
		if err := tx.queryRow(ctx, `SELECT 1 FROM avtalegiro_accounts WHERE tenant_id = $1 AND id = $2`+tx.forShare(), tx.tenant, account).Scan(&one); err != nil {
			return err
		}
		notice := ""
		if notify && len(in.NoticeLines) > 0 {
			// One line per line: the lines are single-line text (the API
			// refuses control characters in them).
			notice = strings.Join(in.NoticeLines, "\n")
		}
		id := NewID()
		if _, err := tx.exec(ctx, `INSERT INTO avtalegiro_claims (id, tenant_id, account_id, mandate_id, transaction_id, invoice_id, kid,
			amount, due_date, notify, short_name, external_reference, notice_lines, status, created_at, updated_at)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,'Scheduled',$14,$14)`, id, tx.tenant, account, in.MandateID,
			in.TransactionID, in.InvoiceID, in.KID, in.Amount, in.DueDate, notify, in.ShortName, in.ExternalReference, notice, ts(now)); err != nil {
			return fmt.Errorf("insert claim: %w", err)
		}
		created = true
		out, err = scanAvgClaim(tx.queryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
		return err
	}
	err := s.InTx(ctx, create)
	if isUniqueViolation(err) {
		// Another caller (a redelivered hook, another process) created the
		// claim between the lookup and the insert: this run finds it.
		created = false
		err = s.InTx(ctx, create)
	}
	if err != nil {
		return AvtaleGiroClaim{}, false, fmt.Errorf("store: create avtalegiro claim: %w", err)
	}
	return out, created, nil
}

// AvtaleGiroClaim returns claim id.
func (s *Store) AvtaleGiroClaim(ctx context.Context, id string) (AvtaleGiroClaim, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroClaim{}, err
	}
	if !ValidID(id) {
		return AvtaleGiroClaim{}, ErrNotFound
	}
	c, err := scanAvgClaim(s.r.QueryRowContext(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return AvtaleGiroClaim{}, fmt.Errorf("store: avtalegiro claim %s: %w", id, notFound(err))
	}
	return c, nil
}

// AvtaleGiroClaimFilter narrows ListAvtaleGiroClaims.
type AvtaleGiroClaimFilter struct {
	MandateID, TransactionID, KID, InvoiceID, Status string
}

// ListAvtaleGiroClaims returns a page of claims; a mandate filter naming
// no mandate of the tenant is ErrNotFound.
func (s *Store) ListAvtaleGiroClaims(ctx context.Context, f AvtaleGiroClaimFilter, p Page) ([]AvtaleGiroClaim, string, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return nil, "", err
	}
	if f.MandateID != "" {
		var one int
		if err := s.r.QueryRowContext(ctx, `SELECT 1 FROM avtalegiro_mandates WHERE tenant_id = $1 AND id = $2`, tenant, f.MandateID).Scan(&one); err != nil {
			return nil, "", notFound(err)
		}
	}
	q := tenantFilter(tenant)
	for _, c := range []struct{ col, v string }{{"mandate_id", f.MandateID}, {"transaction_id", f.TransactionID}, {"kid", f.KID},
		{"invoice_id", f.InvoiceID}, {"status", f.Status}} {
		if c.v != "" {
			q.add(c.col+" = ?", c.v)
		}
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanAvgClaim, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list avtalegiro claims: %w", err)
	}
	if out == nil {
		out = []AvtaleGiroClaim{}
	}
	out, next := trimPage(out, p, func(c AvtaleGiroClaim) string { return c.ID })
	return out, next, nil
}

// CancelAvtaleGiroClaim cancels a claim the bank has not processed: a
// Scheduled one (not yet sent) is Cancelled at once; a Sent one becomes
// CancellationPending and goes to the bank as a cancellation record in
// the account's next file, once. today is the payee's date (YYYY-MM-DD):
// from the due date on the bank has processed the claim. Anything else is
// a 400 saying why. Cancelling a claim whose cancellation is pending or
// done changes nothing.
func (s *Store) CancelAvtaleGiroClaim(ctx context.Context, id, today string, now time.Time) (AvtaleGiroClaim, error) {
	if !ValidID(id) {
		return AvtaleGiroClaim{}, ErrNotFound
	}
	var out AvtaleGiroClaim
	err := s.InTx(ctx, func(tx *Tx) error {
		// The claim's row is locked first (PostgreSQL cannot lock through
		// the view's outer joins), so two cancellations of it wait for each
		// other; an export and a cancellation meet at the claim's queue row
		// (unqueueClaim).
		if tx.s.engine == Postgres {
			var one int
			if err := tx.queryRow(ctx, `SELECT 1 FROM avtalegiro_claims WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, tx.tenant, id).Scan(&one); err != nil {
				return notFound(err)
			}
		}
		c, err := scanAvgClaim(tx.queryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
		if err != nil {
			return notFound(err)
		}
		return tx.cancelClaim(ctx, &c, today, now, &out)
	})
	if err != nil {
		return AvtaleGiroClaim{}, fmt.Errorf("store: cancel avtalegiro claim %s: %w", id, err)
	}
	return out, nil
}

func (tx *Tx) cancelClaim(ctx context.Context, c *AvtaleGiroClaim, today string, now time.Time, out *AvtaleGiroClaim) error {
	next := ""
	switch {
	case c.Status == ClaimCancellationPending || (c.Status == ClaimCancelled && c.CancellationFileID != nil):
		*out = *c
		return nil
	case c.Status == ClaimPaid:
		return validation.Field("id", "the claim is paid; credit the invoice or refund instead")
	case c.Status == ClaimCancelled:
		*out = *c
		return nil
	case c.DueDate <= today:
		return validation.Field("id", "the bank has processed the claim (due %s); it can no longer be cancelled", c.DueDate)
	case c.Status == ClaimScheduled:
		unsent, err := tx.unqueueClaim(ctx, c)
		if err != nil {
			return err
		}
		if !unsent {
			return tx.cancelTakenClaim(ctx, c, today, now, out)
		}
		next = ClaimCancelled
	default:
		next = ClaimCancellationPending
	}
	if _, err := tx.exec(ctx, `UPDATE avtalegiro_claims SET status = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, c.ID, next, ts(now)); err != nil {
		return err
	}
	c.Status, c.UpdatedAt = next, now
	*out = *c
	return nil
}

// unqueueClaim takes scheduled claim c out of the queue of claims to send
// and reports whether it was there. The export takes the claims it sends
// out of the queue in the statement that records them sent (migration
// 00042), so the queue row is where a cancellation and an export meet on
// PostgreSQL: whichever deletes it first has the claim, and the other's
// delete waits for that one's commit and then finds nothing. A claim
// taken out here can no longer be sent (an export that wrote it into its
// file takes fewer claims than it wrote and starts over).
func (tx *Tx) unqueueClaim(ctx context.Context, c *AvtaleGiroClaim) (bool, error) {
	res, err := tx.exec(ctx, `DELETE FROM avtalegiro_claim_queue WHERE tenant_id = $1 AND account_id = $2 AND due_date = $3 AND claim_id = $4`,
		tx.tenant, c.AccountID, c.DueDate, c.ID)
	if err != nil {
		return false, fmt.Errorf("unqueue claim: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// cancelTakenClaim cancels claim c that an export took out of the queue
// after c was read: that export has committed (unqueueClaim waited for
// it), so c, read again, is Sent.
func (tx *Tx) cancelTakenClaim(ctx context.Context, c *AvtaleGiroClaim, today string, now time.Time, out *AvtaleGiroClaim) error {
	fresh, err := scanAvgClaim(tx.queryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, c.ID))
	if err != nil {
		return err
	}
	if fresh.Status == ClaimScheduled {
		return fmt.Errorf("claim %s is scheduled but not queued to be sent", c.ID)
	}
	*c = fresh
	return tx.cancelClaim(ctx, c, today, now, out)
}

// CancelAvtaleGiroClaimsOfInvoice cancels the invoice's claim if the bank
// has not processed it; a processed or paid claim is left alone (nil).
func (s *Store) CancelAvtaleGiroClaimsOfInvoice(ctx context.Context, invoiceID, today string, now time.Time) (int, error) {
	n := 0
	err := s.InTx(ctx, func(tx *Tx) error {
		rows, err := tx.query(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND invoice_id = $2
			AND status IN ('Scheduled', 'Sent') AND due_date > $3`, tx.tenant, invoiceID, today)
		if err != nil {
			return err
		}
		var claims []AvtaleGiroClaim
		for rows.Next() {
			c, err := scanAvgClaim(rows)
			if err != nil {
				rows.Close()
				return err
			}
			claims = append(claims, c)
		}
		rows.Close()
		for i := range claims {
			var out AvtaleGiroClaim
			if err := tx.cancelClaim(ctx, &claims[i], today, now, &out); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// AvtaleGiroSettlementBatch answers what settling a batch of imported
// payments asks (the claim each pays, the payment demand it settles) from
// three statements read for the whole batch, instead of two statements
// per payment; it is the transaction's settler for the batch.
type AvtaleGiroSettlementBatch struct {
	tx *Tx
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

// AvtaleGiroSettlementBatch reads what settling payments needs.
func (tx *Tx) AvtaleGiroSettlementBatch(ctx context.Context, payments []AvtaleGiroPayment) (*AvtaleGiroSettlementBatch, error) {
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
	kidArgs := []any{tx.tenant}
	for kid := range kids {
		kidArgs = append(kidArgs, kid)
	}
	in := placeholders(2, len(kidArgs)-1)
	// At most as many claims per key as the batch has payments with it:
	// a mandate's KID may have many sent claims of the same amount.
	rows, err := tx.query(ctx, `SELECT `+avgClaimColumns+` FROM (SELECT `+avgClaimColumns+`, ROW_NUMBER() OVER
		(PARTITION BY account_id, kid, amount ORDER BY due_date, id) AS rn FROM avtalegiro_claim_states WHERE tenant_id = $1
		AND status IN ('Sent', 'CancellationPending') AND kid IN (`+in+`)) c WHERE rn <= `+fmt.Sprint(most)+` ORDER BY due_date, id`, kidArgs...)
	if err != nil {
		return nil, fmt.Errorf("store: settlement claims: %w", err)
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
		rows, err := tx.query(ctx, `SELECT id, payment_demand_id, currency FROM invoices WHERE tenant_id = $1 AND id IN (`+
			placeholders(2, len(invoiceArgs))+`)`, append([]any{tx.tenant}, invoiceArgs...)...)
		if err != nil {
			return nil, fmt.Errorf("store: settlement invoices: %w", err)
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
	rows, err = tx.query(ctx, `SELECT kid, COUNT(*), MIN(CAST(payment_demand_id AS TEXT)), MIN(currency) FROM invoices
		WHERE tenant_id = $1 AND kid IN (`+in+`) GROUP BY kid`, kidArgs...)
	if err != nil {
		return nil, fmt.Errorf("store: settlement invoices by KID: %w", err)
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

// MatchAvtaleGiroClaim is Tx.MatchAvtaleGiroClaim from the batch's claims.
func (b *AvtaleGiroSettlementBatch) MatchAvtaleGiroClaim(_ context.Context, p AvtaleGiroPayment) (AvtaleGiroClaim, bool, error) {
	if cs := b.claims[avgClaimKey{p.AccountID, p.KID, p.Amount}]; len(cs) > 0 {
		return cs[0], true, nil
	}
	return AvtaleGiroClaim{}, false, nil
}

// PaymentTarget is Tx.PaymentTarget from the batch's invoices; what the
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

// SettledAvtaleGiroPayment is Tx.SettledAvtaleGiroPayment, the payment's
// mark kept for Flush; a claim it pays is no longer matched.
func (b *AvtaleGiroSettlementBatch) SettledAvtaleGiroPayment(ctx context.Context, rowID, paymentID, claimID, problem string, now time.Time) error {
	pay, prob := settledMark(paymentID, problem)
	b.marks = append(b.marks, rowID, pay, prob)
	if claimID == "" {
		return nil
	}
	if err := b.tx.paidAvtaleGiroClaim(ctx, claimID, pay, now); err != nil {
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
	if b.tx.s.engine == Postgres {
		cast = "::uuid"
	}
	for i := 0; i < len(b.marks); i += 3 {
		rows = append(rows, fmt.Sprintf("($%d%s, $%d%s, $%d)", i+2, cast, i+3, cast, i+4))
	}
	_, err := b.tx.exec(ctx, `WITH m (id, payment_id, problem) AS (VALUES `+strings.Join(rows, ", ")+`)
		UPDATE avtalegiro_payments SET payment_id = m.payment_id, problem = m.problem FROM m
		WHERE avtalegiro_payments.tenant_id = $1 AND avtalegiro_payments.id = m.id`, append([]any{b.tx.tenant}, b.marks...)...)
	if err != nil {
		return fmt.Errorf("store: mark settled avtalegiro payments: %w", err)
	}
	b.marks = b.marks[:0]
	return nil
}
