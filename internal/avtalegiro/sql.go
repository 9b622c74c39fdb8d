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

// AvtaleGiro's SQL (docs/AVTALEGIRO.md): accounts, mandates and claims,
// on the store's query kit (internal/store/kit.go), the tenant's
// condition first in every WHERE. sql_settle.go settles imported
// payments, sql_files.go reads the stored files, files.go writes and
// imports them.

// --- accounts ---------------------------------------------------------

const avgAccountColumns = `id, name, bank_account_number, customer_unit_id, kid_algorithm, kid_length, lead_days, endpoint_url, created_at, updated_at`

func scanAvgAccount(r store.Scanner) (AvtaleGiroAccount, error) {
	var a AvtaleGiroAccount
	err := r.Scan(&a.ID, &a.Name, &a.BankAccountNumber, &a.CustomerUnitID, &a.KIDAlgorithm, &a.KIDLength, &a.LeadDays,
		&a.BaseComboAPIEndpointURL, &a.CreatedAt, &a.UpdatedAt)
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	a.OrganizationIDs = []string{}
	return a, err
}

func avgOrganizations(ctx context.Context, q store.Querier, tenant string, accounts []AvtaleGiroAccount) error {
	for i := range accounts {
		ids, err := store.QueryAll(ctx, q, scanID, `SELECT organization_id FROM avtalegiro_account_organizations WHERE tenant_id = $1 AND account_id = $2 ORDER BY organization_id`,
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

// CreateAccount stores a new account.
func CreateAccount(ctx context.Context, st *store.Store, a AvtaleGiroAccount, now time.Time) (AvtaleGiroAccount, error) {
	a.ID, a.CreatedAt, a.UpdatedAt = store.NewID(), now.UTC().Truncate(time.Microsecond), now.UTC().Truncate(time.Microsecond)
	err := st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO avtalegiro_accounts (id, tenant_id, name, bank_account_number, customer_unit_id,
			kid_algorithm, kid_length, lead_days, endpoint_url, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
			a.ID, tx.TenantID(), a.Name, a.BankAccountNumber, a.CustomerUnitID, a.KIDAlgorithm, a.KIDLength, a.LeadDays,
			a.BaseComboAPIEndpointURL, store.TimeParam(a.CreatedAt), store.TimeParam(a.UpdatedAt))
		if store.IsUniqueViolation(err) {
			return accountNumberTaken(a.BankAccountNumber)
		}
		return err
	})
	if err != nil {
		return AvtaleGiroAccount{}, fmt.Errorf("avtalegiro: create avtalegiro account: %w", err)
	}
	a.OrganizationIDs = []string{}
	return a, nil
}

// Account returns live account id of the context's tenant.
func Account(ctx context.Context, st *store.Store, id string) (AvtaleGiroAccount, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroAccount{}, err
	}
	if !store.ValidID(id) {
		return AvtaleGiroAccount{}, store.ErrNotFound
	}
	a, err := scanAvgAccount(st.Reader().QueryRow(ctx, `SELECT `+avgAccountColumns+` FROM avtalegiro_accounts
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tenant, id))
	if err != nil {
		return AvtaleGiroAccount{}, fmt.Errorf("avtalegiro: account %s: %w", id, store.NotFound(err))
	}
	list := []AvtaleGiroAccount{a}
	if err := avgOrganizations(ctx, st.Reader(), tenant, list); err != nil {
		return AvtaleGiroAccount{}, fmt.Errorf("avtalegiro: account %s: %w", id, err)
	}
	return list[0], nil
}

// AvtaleGiroAccountFilter narrows ListAccounts.
type AvtaleGiroAccountFilter struct {
	BankAccountNumber string
	EndpointURL       string
}

// ListAccounts returns a page of the tenant's live accounts.
func ListAccounts(ctx context.Context, st *store.Store, f AvtaleGiroAccountFilter, p store.Page) ([]AvtaleGiroAccount, string, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("", tenant)
	q.Add("deleted_at IS NULL")
	if f.BankAccountNumber != "" {
		q.Add("bank_account_number = ?", f.BankAccountNumber)
	}
	if f.EndpointURL != "" {
		q.Add("endpoint_url = ?", f.EndpointURL)
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanAvgAccount, `SELECT `+avgAccountColumns+` FROM avtalegiro_accounts`, q, "id", p,
		func(a AvtaleGiroAccount) string { return a.ID })
	if err == nil {
		err = avgOrganizations(ctx, st.Reader(), tenant, out)
	}
	if err != nil {
		return nil, "", fmt.Errorf("avtalegiro: list avtalegiro accounts: %w", err)
	}
	return out, next, nil
}

// UpdateAccount replaces the account's settings.
func UpdateAccount(ctx context.Context, st *store.Store, a AvtaleGiroAccount, now time.Time) error {
	if !store.ValidID(a.ID) {
		return store.ErrNotFound
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE avtalegiro_accounts SET name = $3, bank_account_number = $4, customer_unit_id = $5,
			kid_algorithm = $6, kid_length = $7, lead_days = $8, endpoint_url = $9, updated_at = $10
			WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.TenantID(), a.ID, a.Name, a.BankAccountNumber,
			a.CustomerUnitID, a.KIDAlgorithm, a.KIDLength, a.LeadDays, a.BaseComboAPIEndpointURL, store.TimeParam(now))
		if store.IsUniqueViolation(err) {
			return accountNumberTaken(a.BankAccountNumber)
		}
		if err != nil {
			return fmt.Errorf("avtalegiro: update avtalegiro account: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// DeleteAccount deletes an account softly. An account with live
// mandates or claims still to be collected is not deleted (400).
func DeleteAccount(ctx context.Context, st *store.Store, id string, now time.Time) error {
	if !store.ValidID(id) {
		return store.ErrNotFound
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		var mandates, claims int
		// The claim rows' own status: a sent claim whose sending is
		// recorded apart (migration 00042) still says Scheduled there.
		if err := tx.QueryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM avtalegiro_mandates WHERE tenant_id = $1 AND account_id = $2 AND deleted_at IS NULL),
			(SELECT COUNT(*) FROM avtalegiro_claims WHERE tenant_id = $1 AND account_id = $2 AND status IN ('Scheduled', 'Sent', 'CancellationPending'))`,
			tx.TenantID(), id).Scan(&mandates, &claims); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, `UPDATE avtalegiro_accounts SET deleted_at = $3, updated_at = $3
			WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.TenantID(), id, store.TimeParam(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		if mandates > 0 || claims > 0 {
			return validation.Field("id", "the account has %d active mandates and %d claims still to collect; delete the mandates first", mandates, claims)
		}
		return nil
	})
}

// AddAccountOrganizations links organizations to the account;
// linking one twice changes nothing. An organization the tenant does not
// have is a 400 naming its index.
func AddAccountOrganizations(ctx context.Context, st *store.Store, id string, orgIDs []string, now time.Time) error {
	if !store.ValidID(id) {
		return store.ErrNotFound
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM avtalegiro_accounts WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.TenantID(), id).Scan(&one); err != nil {
			return store.NotFound(err)
		}
		var errs validation.Errors
		for i, org := range orgIDs {
			err := tx.QueryRow(ctx, `SELECT 1 FROM organizations WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), org).Scan(&one)
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
			if _, err := tx.Exec(ctx, `INSERT INTO avtalegiro_account_organizations (tenant_id, account_id, organization_id, created_at)
				VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, tx.TenantID(), id, org, store.TimeParam(now)); err != nil {
				return fmt.Errorf("avtalegiro: link organization: %w", err)
			}
		}
		return nil
	})
}

// RemoveAccountOrganization unlinks an organization; store.ErrNotFound
// when the account does not exist or the organization is not linked.
func RemoveAccountOrganization(ctx context.Context, st *store.Store, id, orgID string) error {
	if !store.ValidID(id) || !store.ValidID(orgID) {
		return store.ErrNotFound
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `DELETE FROM avtalegiro_account_organizations WHERE tenant_id = $1 AND account_id = $2
			AND organization_id = $3 AND account_id IN (SELECT id FROM avtalegiro_accounts WHERE tenant_id = $1 AND deleted_at IS NULL)`,
			tx.TenantID(), id, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// --- mandates ---------------------------------------------------------

const avgMandateColumns = `id, account_id, kid, subscriber_id, notify, amount_limit, source, created_at, updated_at, deleted_at`

func scanAvgMandate(r store.Scanner) (AvtaleGiroMandate, error) {
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

// CreateMandate registers a mandate through the API. An account
// or subscriber the tenant does not have is a 400 on its field; a KID
// with a live mandate on the account is a 400 on kid.
func CreateMandate(ctx context.Context, st *store.Store, in NewAvtaleGiroMandate, now time.Time) (string, error) {
	id := store.NewID()
	err := st.InTx(ctx, func(tx *store.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM avtalegiro_accounts WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.TenantID(), in.AccountID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return validation.Field("accountId", "there is no AvtaleGiro account %s", in.AccountID)
			}
			return err
		}
		var sub *string
		if in.SubscriberID != "" {
			if err := tx.QueryRow(ctx, `SELECT 1 FROM subscribers WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), in.SubscriberID).Scan(&one); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return validation.Field("subscriberId", "there is no subscriber %s", in.SubscriberID)
				}
				return err
			}
			sub = &in.SubscriberID
		}
		_, err := tx.Exec(ctx, `INSERT INTO avtalegiro_mandates (id, tenant_id, account_id, kid, subscriber_id, notify, amount_limit,
			source, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,'Api',$8,$8)`, id, tx.TenantID(), in.AccountID, in.KID, sub,
			in.Notify, in.AmountLimit, store.TimeParam(now))
		if store.IsUniqueViolation(err) {
			return validation.Field("kid", "the account has an active mandate with KID %s", in.KID)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("avtalegiro: create avtalegiro mandate: %w", err)
	}
	return id, nil
}

// Mandate returns mandate id (also a deleted one).
func Mandate(ctx context.Context, st *store.Store, id string) (AvtaleGiroMandate, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroMandate{}, err
	}
	if !store.ValidID(id) {
		return AvtaleGiroMandate{}, store.ErrNotFound
	}
	m, err := scanAvgMandate(st.Reader().QueryRow(ctx, `SELECT `+avgMandateColumns+` FROM avtalegiro_mandates WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return AvtaleGiroMandate{}, fmt.Errorf("avtalegiro: mandate %s: %w", id, store.NotFound(err))
	}
	return m, nil
}

// AvtaleGiroMandateFilter narrows ListMandates.
type AvtaleGiroMandateFilter struct {
	AccountID, SubscriberID, KID string
	IncludeDeleted               bool
}

// ListMandates returns a page of mandates; an account or
// subscriber filter naming nothing is store.ErrNotFound.
func ListMandates(ctx context.Context, st *store.Store, f AvtaleGiroMandateFilter, p store.Page) ([]AvtaleGiroMandate, string, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := st.RequireParents(ctx, store.Parents{Subscriber: f.SubscriberID}); err != nil {
		return nil, "", err
	}
	if f.AccountID != "" {
		var one int
		if err := st.Reader().QueryRow(ctx, `SELECT 1 FROM avtalegiro_accounts WHERE tenant_id = $1 AND id = $2`, tenant, f.AccountID).Scan(&one); err != nil {
			return nil, "", store.NotFound(err)
		}
	}
	q := store.TenantFilter("", tenant)
	if !f.IncludeDeleted {
		q.Add("deleted_at IS NULL")
	}
	for _, c := range []struct{ col, v string }{{"account_id", f.AccountID}, {"subscriber_id", f.SubscriberID}, {"kid", f.KID}} {
		if c.v != "" {
			q.Add(c.col+" = ?", c.v)
		}
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanAvgMandate, `SELECT `+avgMandateColumns+` FROM avtalegiro_mandates`, q, "id", p,
		func(m AvtaleGiroMandate) string { return m.ID })
	if err != nil {
		return nil, "", fmt.Errorf("avtalegiro: list avtalegiro mandates: %w", err)
	}
	return out, next, nil
}

// MandateDeletion says what deleting a mandate did.
type MandateDeletion struct {
	Deleted         bool
	Agreements      []store.AgreementDeletion
	ClaimsCancelled int
}

// DeleteMandate deletes a mandate (the payee's or the payer's
// decision): see deleteMandate.
func DeleteMandate(ctx context.Context, st *store.Store, id string, now time.Time) (MandateDeletion, error) {
	if !store.ValidID(id) {
		return MandateDeletion{}, store.ErrNotFound
	}
	var out MandateDeletion
	err := st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = deleteMandate(ctx, tx, id, now)
		return err
	})
	return out, err
}

// DeleteMandateIn is DeleteMandate in the
// caller's transaction: the file import (internal/avtalegiro) applies a
// mandate the bank deleted with it.
func DeleteMandateIn(ctx context.Context, tx *store.Tx, id string, now time.Time) (MandateDeletion, error) {
	return deleteMandate(ctx, tx, id, now)
}

// deleteMandate deletes mandate id softly. Its claims the bank has not
// collected are cancelled (the bank drops them with the mandate, so no
// cancellation record is sent); unpaid invoices stay with dunning. Every
// live AvtaleGiro payment agreement that names the mandate is deleted the
// way DELETE /paymentagreement does it: its subscriptions move back to the
// subscriber's Invoice agreement and PaymentAgreementDeleted is recorded.
func deleteMandate(ctx context.Context, tx *store.Tx, id string, now time.Time) (MandateDeletion, error) {
	res, err := tx.Exec(ctx, `UPDATE avtalegiro_mandates SET deleted_at = $3, updated_at = $3
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.TenantID(), id, store.TimeParam(now))
	if err != nil {
		return MandateDeletion{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM avtalegiro_mandates WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id).Scan(&one); err != nil {
			return MandateDeletion{}, store.NotFound(err)
		}
		return MandateDeletion{}, nil
	}
	out := MandateDeletion{Deleted: true}
	// Scheduled here is sent or not (migration 00042): both are cancelled.
	res, err = tx.Exec(ctx, `UPDATE avtalegiro_claims SET status = 'Cancelled', updated_at = $3
		WHERE tenant_id = $1 AND mandate_id = $2 AND status IN ('Scheduled', 'Sent', 'CancellationPending')`, tx.TenantID(), id, store.TimeParam(now))
	if err != nil {
		return MandateDeletion{}, err
	}
	n, _ := res.RowsAffected()
	out.ClaimsCancelled = int(n)
	if out.Agreements, err = tx.DeleteAgreementsOf(ctx, store.ProviderAvtaleGiro, id, now); err != nil {
		return MandateDeletion{}, err
	}
	return out, nil
}

// ActiveMandate reports whether mandate id is live.
func ActiveMandate(ctx context.Context, st *store.Store, id string) (bool, error) {
	m, err := Mandate(ctx, st, id)
	if errors.Is(err, store.ErrNotFound) {
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

func scanAvgClaim(r store.Scanner) (AvtaleGiroClaim, error) {
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

// CreateClaim stores a Scheduled claim on a live mandate. A
// claim whose transactionId (or invoice) has a claim already returns that
// claim and created false.
func CreateClaim(ctx context.Context, st *store.Store, in NewAvtaleGiroClaim, now time.Time) (AvtaleGiroClaim, bool, error) {
	var (
		out     AvtaleGiroClaim
		created bool
	)
	create := func(tx *store.Tx) error {
		existing, err := scanAvgClaim(tx.QueryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1
			AND (transaction_id = $2 OR invoice_id = $3) ORDER BY id LIMIT 1`, tx.TenantID(), in.TransactionID, in.InvoiceID))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var account string
		var notify bool
		err = tx.QueryRow(ctx, `SELECT account_id, notify FROM avtalegiro_mandates WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.TenantID(), in.MandateID).Scan(&account, &notify)
		if errors.Is(err, sql.ErrNoRows) {
			return validation.Field("mandateId", "there is no active mandate %s", in.MandateID)
		}
		if err != nil {
			return err
		}
		// The export of the account's next file waits for this claim (and
		// a claim waits for an export): see ExportClaims.
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM avtalegiro_accounts WHERE tenant_id = $1 AND id = $2`+forShare(tx), tx.TenantID(), account).Scan(&one); err != nil {
			return err
		}
		notice := ""
		if notify && len(in.NoticeLines) > 0 {
			// One line per line: the lines are single-line text (the API
			// refuses control characters in them).
			notice = strings.Join(in.NoticeLines, "\n")
		}
		id := store.NewID()
		if _, err := tx.Exec(ctx, `INSERT INTO avtalegiro_claims (id, tenant_id, account_id, mandate_id, transaction_id, invoice_id, kid,
			amount, due_date, notify, short_name, external_reference, notice_lines, status, created_at, updated_at)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,'Scheduled',$14,$14)`, id, tx.TenantID(), account, in.MandateID,
			in.TransactionID, in.InvoiceID, in.KID, in.Amount, in.DueDate, notify, in.ShortName, in.ExternalReference, notice, store.TimeParam(now)); err != nil {
			return fmt.Errorf("insert claim: %w", err)
		}
		created = true
		out, err = scanAvgClaim(tx.QueryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id))
		return err
	}
	err := st.InTx(ctx, create)
	if store.IsUniqueViolation(err) {
		// Another caller (a redelivered hook, another process) created the
		// claim between the lookup and the insert: this run finds it.
		created = false
		err = st.InTx(ctx, create)
	}
	if err != nil {
		return AvtaleGiroClaim{}, false, fmt.Errorf("avtalegiro: create avtalegiro claim: %w", err)
	}
	return out, created, nil
}

// Claim returns claim id.
func Claim(ctx context.Context, st *store.Store, id string) (AvtaleGiroClaim, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroClaim{}, err
	}
	if !store.ValidID(id) {
		return AvtaleGiroClaim{}, store.ErrNotFound
	}
	c, err := scanAvgClaim(st.Reader().QueryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return AvtaleGiroClaim{}, fmt.Errorf("avtalegiro: claim %s: %w", id, store.NotFound(err))
	}
	return c, nil
}

// AvtaleGiroClaimFilter narrows ListClaims.
type AvtaleGiroClaimFilter struct {
	MandateID, TransactionID, KID, InvoiceID, Status string
}

// ListClaims returns a page of claims; a mandate filter naming
// no mandate of the tenant is store.ErrNotFound.
func ListClaims(ctx context.Context, st *store.Store, f AvtaleGiroClaimFilter, p store.Page) ([]AvtaleGiroClaim, string, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return nil, "", err
	}
	if f.MandateID != "" {
		var one int
		if err := st.Reader().QueryRow(ctx, `SELECT 1 FROM avtalegiro_mandates WHERE tenant_id = $1 AND id = $2`, tenant, f.MandateID).Scan(&one); err != nil {
			return nil, "", store.NotFound(err)
		}
	}
	q := store.TenantFilter("", tenant)
	for _, c := range []struct{ col, v string }{{"mandate_id", f.MandateID}, {"transaction_id", f.TransactionID}, {"kid", f.KID},
		{"invoice_id", f.InvoiceID}, {"status", f.Status}} {
		if c.v != "" {
			q.Add(c.col+" = ?", c.v)
		}
	}
	out, next, err := store.ListPage(ctx, st.Reader(), scanAvgClaim, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states`, q, "id", p,
		func(c AvtaleGiroClaim) string { return c.ID })
	if err != nil {
		return nil, "", fmt.Errorf("avtalegiro: list avtalegiro claims: %w", err)
	}
	return out, next, nil
}

// CancelClaim cancels a claim the bank has not processed: a
// Scheduled one (not yet sent) is Cancelled at once; a Sent one becomes
// CancellationPending and goes to the bank as a cancellation record in
// the account's next file, once. today is the payee's date (YYYY-MM-DD):
// from the due date on the bank has processed the claim. Anything else is
// a 400 saying why. Cancelling a claim whose cancellation is pending or
// done changes nothing.
func CancelClaim(ctx context.Context, st *store.Store, id, today string, now time.Time) (AvtaleGiroClaim, error) {
	if !store.ValidID(id) {
		return AvtaleGiroClaim{}, store.ErrNotFound
	}
	var out AvtaleGiroClaim
	err := st.InTx(ctx, func(tx *store.Tx) error {
		// The claim's row is locked first (PostgreSQL cannot lock through
		// the view's outer joins), so two cancellations of it wait for each
		// other; an export and a cancellation meet at the claim's queue row
		// (unqueueClaim).
		if tx.Engine() == store.Postgres {
			var one int
			if err := tx.QueryRow(ctx, `SELECT 1 FROM avtalegiro_claims WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, tx.TenantID(), id).Scan(&one); err != nil {
				return store.NotFound(err)
			}
		}
		c, err := scanAvgClaim(tx.QueryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id))
		if err != nil {
			return store.NotFound(err)
		}
		return cancelClaim(ctx, tx, &c, today, now, &out)
	})
	if err != nil {
		return AvtaleGiroClaim{}, fmt.Errorf("avtalegiro: cancel avtalegiro claim %s: %w", id, err)
	}
	return out, nil
}

func cancelClaim(ctx context.Context, tx *store.Tx, c *AvtaleGiroClaim, today string, now time.Time, out *AvtaleGiroClaim) error {
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
		unsent, err := unqueueClaim(ctx, tx, c)
		if err != nil {
			return err
		}
		if !unsent {
			return cancelTakenClaim(ctx, tx, c, today, now, out)
		}
		next = ClaimCancelled
	default:
		next = ClaimCancellationPending
	}
	if _, err := tx.Exec(ctx, `UPDATE avtalegiro_claims SET status = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2`,
		tx.TenantID(), c.ID, next, store.TimeParam(now)); err != nil {
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
func unqueueClaim(ctx context.Context, tx *store.Tx, c *AvtaleGiroClaim) (bool, error) {
	res, err := tx.Exec(ctx, `DELETE FROM avtalegiro_claim_queue WHERE tenant_id = $1 AND account_id = $2 AND due_date = $3 AND claim_id = $4`,
		tx.TenantID(), c.AccountID, c.DueDate, c.ID)
	if err != nil {
		return false, fmt.Errorf("unqueue claim: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// cancelTakenClaim cancels claim c that an export took out of the queue
// after c was read: that export has committed (unqueueClaim waited for
// it), so c, read again, is Sent.
func cancelTakenClaim(ctx context.Context, tx *store.Tx, c *AvtaleGiroClaim, today string, now time.Time, out *AvtaleGiroClaim) error {
	fresh, err := scanAvgClaim(tx.QueryRow(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND id = $2`,
		tx.TenantID(), c.ID))
	if err != nil {
		return err
	}
	if fresh.Status == ClaimScheduled {
		return fmt.Errorf("claim %s is scheduled but not queued to be sent", c.ID)
	}
	*c = fresh
	return cancelClaim(ctx, tx, c, today, now, out)
}

// CancelClaimsOfInvoice cancels the invoice's claim if the bank
// has not processed it; a processed or paid claim is left alone (nil).
func CancelClaimsOfInvoice(ctx context.Context, st *store.Store, invoiceID, today string, now time.Time) (int, error) {
	n := 0
	err := st.InTx(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+avgClaimColumns+` FROM avtalegiro_claim_states WHERE tenant_id = $1 AND invoice_id = $2
			AND status IN ('Scheduled', 'Sent') AND due_date > $3`, tx.TenantID(), invoiceID, today)
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
			if err := cancelClaim(ctx, tx, &claims[i], today, now, &out); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
