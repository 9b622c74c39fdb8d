package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/tenancy"
)

// SubscriberAccount is a subscriber's billing account in one currency. It
// is created the first time something is billed to the subscriber in that
// currency (an order's first invoice) and carries the ledger: every
// invoice, charge and allowance (later credit notes and payments) is an
// entry, and the balance, what the subscriber owes (negative: what the
// merchant owes), is the sum of the entries. See docs/BILLING.md.
type SubscriberAccount struct {
	ID           string         `json:"id"`
	SubscriberID string         `json:"subscriberId"`
	Currency     string         `json:"currency"`
	Balance      catalog.Amount `json:"balance" description:"Sum of the entries: invoiced and not yet paid or credited, plus charges not yet invoiced, minus allowances not yet applied."`
	// OutstandingCharges and AvailableAllowance are what the next invoices
	// will bill and apply.
	OutstandingCharges catalog.Amount `json:"outstandingCharges"`
	AvailableAllowance catalog.Amount `json:"availableAllowance"`
	// Entries are the newest entries (at most AccountEntriesShown), newest
	// first; GET /subscriberaccount/{id}/entries pages through all. Lists
	// leave them out (nil, so the property is absent).
	Entries   []AccountEntry `json:"entries,omitzero"`
	CreatedAt time.Time      `json:"createdAt"`
}

// AccountEntriesShown caps the entries an account read carries.
const AccountEntriesShown = 100

// Ledger entry kinds.
const (
	EntryInvoice          = "Invoice"
	EntryCharge           = "Charge"
	EntryAllowance        = "Allowance"
	EntryChargeInvoiced   = "ChargeInvoiced"
	EntryAllowanceApplied = "AllowanceApplied"
	EntryCreditNote       = "CreditNote"
	EntryPayment          = "Payment"
)

// AccountEntry is one ledger entry. Amount is signed: positive entries
// increase what the subscriber owes.
type AccountEntry struct {
	ID        string         `json:"id"`
	Kind      string         `json:"kind" enum:"Invoice,Charge,Allowance,ChargeInvoiced,AllowanceApplied,CreditNote,Payment"`
	Amount    catalog.Amount `json:"amount"`
	InvoiceID *string        `json:"invoiceId"`
	ItemID    *string        `json:"accountItemId"`
	// CreditNoteID and PaymentID name the document of CreditNote and
	// Payment entries.
	CreditNoteID *string `json:"creditNoteId"`
	PaymentID    *string `json:"paymentId"`
	// BookedAt is business time (the tenant's clock).
	BookedAt  time.Time `json:"bookedAt"`
	CreatedAt time.Time `json:"createdAt"`
}

// AccountItem is a charge or an allowance on an account. Remaining is what
// later invoices still bill (charge) or apply (allowance).
type AccountItem struct {
	ID          string          `json:"id"`
	AccountID   string          `json:"subscriberAccountId"`
	Kind        string          `json:"kind" enum:"Charge,Allowance"`
	Description string          `json:"description"`
	Amount      catalog.Amount  `json:"amount"`
	Remaining   catalog.Amount  `json:"remaining"`
	VATRate     catalog.Percent `json:"vatRate"`
	BookedAt    time.Time       `json:"bookedAt"`
	CreatedAt   time.Time       `json:"createdAt"`
}

func currencyOf(code string) (money.Currency, error) {
	c, ok := money.LookupCurrency(code)
	if !ok {
		return money.Currency{}, fmt.Errorf("store: unknown currency %q", code)
	}
	return c, nil
}

// ensureAccount returns the id of the subscriber's account in currency,
// creating it at at if there is none. Concurrent creators meet in the
// unique (tenant, subscriber, currency) key: the loser's insert does
// nothing and it reads the winner's row.
func (tx *Tx) ensureAccount(ctx context.Context, subscriberID, currency string, at time.Time) (string, error) {
	const sel = `SELECT id FROM subscriber_accounts WHERE tenant_id = $1 AND subscriber_id = $2 AND currency = $3`
	var id string
	err := tx.queryRow(ctx, sel, tx.tenant, subscriberID, currency).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: subscriber account: %w", err)
	}
	if _, err := tx.exec(ctx, `INSERT INTO subscriber_accounts (id, tenant_id, subscriber_id, currency, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant_id, subscriber_id, currency) DO NOTHING`,
		NewID(), tx.tenant, subscriberID, currency, ts(at)); err != nil {
		return "", fmt.Errorf("store: create subscriber account: %w", err)
	}
	if err := tx.queryRow(ctx, sel, tx.tenant, subscriberID, currency).Scan(&id); err != nil {
		return "", fmt.Errorf("store: subscriber account: %w", err)
	}
	return id, nil
}

// EnsureAccount returns the subscriber's account in currency, creating it
// at at when missing.
func (tx *Tx) EnsureAccount(ctx context.Context, subscriberID, currency string, at time.Time) (string, error) {
	if _, err := currencyOf(currency); err != nil {
		return "", err
	}
	return tx.ensureAccount(ctx, subscriberID, currency, at)
}

// entryRefs are what a ledger entry refers to: the invoice, the account
// item, the credit note or the payment behind it.
type entryRefs struct {
	Invoice, Item, CreditNote, Payment *string
}

// addEntry appends a ledger entry to account.
func (tx *Tx) addEntry(ctx context.Context, account, kind string, amount int64, refs entryRefs, at time.Time) error {
	_, err := tx.exec(ctx, `INSERT INTO account_entries (id, tenant_id, account_id, kind, amount, invoice_id, item_id,
		credit_note_id, payment_id, booked_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		NewID(), tx.tenant, account, kind, amount, refs.Invoice, refs.Item, refs.CreditNote, refs.Payment, ts(at), ts(time.Now()))
	if err != nil {
		return fmt.Errorf("store: add %s entry: %w", kind, err)
	}
	return nil
}

// useItem lowers what item still has to bill or apply by amount.
func (tx *Tx) useItem(ctx context.Context, item string, amount int64) error {
	res, err := tx.exec(ctx, `UPDATE account_items SET remaining = remaining - $3
		WHERE tenant_id = $1 AND id = $2 AND remaining >= $3`, tx.tenant, item, amount)
	if err != nil {
		return fmt.Errorf("store: use account item %s: %w", item, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: use account item %s: %w", item, err)
	} else if n == 0 {
		return fmt.Errorf("store: account item %s changed concurrently: %w", item, ErrConflict)
	}
	return nil
}

// AddAccountItem books a charge or an allowance (kind billing.ItemCharge or
// billing.ItemAllowance) of amount minor units (gross, > 0) on account
// accountID at now, with its ledger entry, and returns it.
func (s *Store) AddAccountItem(ctx context.Context, accountID, kind, description string, amount int64, rate catalog.Percent, now time.Time) (AccountItem, error) {
	if !ValidID(accountID) {
		return AccountItem{}, ErrNotFound
	}
	var it AccountItem
	err := s.InTx(ctx, func(tx *Tx) error {
		var code string
		if err := tx.queryRow(ctx, `SELECT currency FROM subscriber_accounts WHERE tenant_id = $1 AND id = $2`,
			tx.tenant, accountID).Scan(&code); err != nil {
			return notFound(err)
		}
		cur, err := currencyOf(code)
		if err != nil {
			return err
		}
		if it, err = tx.BookItem(ctx, accountID, kind, description, amount, rate, now); err != nil {
			return err
		}
		it.Amount, it.Remaining = catalog.NewAmount(amount, cur), catalog.NewAmount(amount, cur)
		return nil
	})
	if err != nil {
		return AccountItem{}, err
	}
	return it, nil
}

// BookItem books a charge or an allowance (kind billing.ItemCharge or
// billing.ItemAllowance) of amount minor units (gross, > 0) on account
// accountID at at, with its ledger entry (Charge +amount, Allowance
// −amount), in tx. The returned item carries no amounts (the caller knows
// the currency).
func (tx *Tx) BookItem(ctx context.Context, accountID, kind, description string, amount int64, rate catalog.Percent, at time.Time) (AccountItem, error) {
	entry, sign := EntryCharge, int64(1)
	switch kind {
	case billing.ItemCharge:
	case billing.ItemAllowance:
		entry, sign = EntryAllowance, -1
	default:
		return AccountItem{}, fmt.Errorf("store: account item kind %q", kind)
	}
	if amount <= 0 {
		return AccountItem{}, fmt.Errorf("store: account item amount %d must be positive", amount)
	}
	it := AccountItem{ID: NewID(), AccountID: accountID, Kind: kind, Description: description, VATRate: rate,
		BookedAt: at.UTC().Truncate(time.Microsecond), CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	if _, err := tx.exec(ctx, `INSERT INTO account_items
		(id, tenant_id, account_id, kind, description, amount, remaining, vat_rate, booked_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9)`,
		it.ID, tx.tenant, accountID, kind, description, amount, rate.String(), ts(it.BookedAt), ts(it.CreatedAt)); err != nil {
		return AccountItem{}, fmt.Errorf("store: add account item: %w", err)
	}
	return it, tx.addEntry(ctx, accountID, entry, sign*amount, entryRefs{Item: &it.ID}, it.BookedAt)
}

// SubscriberAccount returns account id of the context's tenant with its
// balance and newest entries.
func (s *Store) SubscriberAccount(ctx context.Context, id string) (SubscriberAccount, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return SubscriberAccount{}, err
	}
	if !ValidID(id) {
		return SubscriberAccount{}, ErrNotFound
	}
	var a SubscriberAccount
	// One snapshot: the balance, the items and the entries agree.
	err = s.readTx(ctx, func(tx queryer) error {
		if err := tx.QueryRowContext(ctx, `SELECT id, subscriber_id, currency, created_at FROM subscriber_accounts
			WHERE tenant_id = $1 AND id = $2`, tenant, id).Scan(&a.ID, &a.SubscriberID, &a.Currency, &a.CreatedAt); err != nil {
			return notFound(err)
		}
		a.CreatedAt = a.CreatedAt.UTC()
		cur, err := currencyOf(a.Currency)
		if err != nil {
			return err
		}
		var balance, charges, allowance int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0) FROM account_entries WHERE tenant_id = $1 AND account_id = $2`,
			tenant, id).Scan(&balance); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT
			COALESCE(SUM(CASE WHEN kind = 'Charge' THEN remaining ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN kind = 'Allowance' THEN remaining ELSE 0 END), 0)
			FROM account_items WHERE tenant_id = $1 AND account_id = $2 AND remaining > 0`, tenant, id).Scan(&charges, &allowance); err != nil {
			return err
		}
		a.Balance, a.OutstandingCharges, a.AvailableAllowance = catalog.NewAmount(balance, cur), catalog.NewAmount(charges, cur), catalog.NewAmount(allowance, cur)
		a.Entries, err = readEntries(ctx, tx, tenant, id, cur, `ORDER BY id DESC LIMIT $3`, AccountEntriesShown)
		return err
	})
	if err != nil {
		return SubscriberAccount{}, fmt.Errorf("store: subscriber account %s: %w", id, err)
	}
	return a, nil
}

func readEntries(ctx context.Context, q queryer, tenant, account string, cur money.Currency, tail string, args ...any) ([]AccountEntry, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, kind, amount, invoice_id, item_id, credit_note_id, payment_id, booked_at, created_at FROM account_entries
		WHERE tenant_id = $1 AND account_id = $2 `+tail, append([]any{tenant, account}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []AccountEntry{}
	for rows.Next() {
		var (
			e                              AccountEntry
			amount                         int64
			invoice, itemID, note, payment sql.NullString
		)
		if err := rows.Scan(&e.ID, &e.Kind, &amount, &invoice, &itemID, &note, &payment, &e.BookedAt, &e.CreatedAt); err != nil {
			return nil, err
		}
		e.Amount, e.InvoiceID, e.ItemID = catalog.NewAmount(amount, cur), nullString(invoice), nullString(itemID)
		e.CreditNoteID, e.PaymentID = nullString(note), nullString(payment)
		e.BookedAt, e.CreatedAt = e.BookedAt.UTC(), e.CreatedAt.UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}

// AccountEntries returns one page of account id's entries, oldest first.
func (s *Store) AccountEntries(ctx context.Context, id string, p Page) ([]AccountEntry, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if !ValidID(id) {
		return nil, "", ErrNotFound
	}
	var code string
	if err := s.readRow(ctx, `SELECT currency FROM subscriber_accounts WHERE tenant_id = $1 AND id = $2`, tenant, id).Scan(&code); err != nil {
		return nil, "", fmt.Errorf("store: subscriber account %s: %w", id, notFound(err))
	}
	cur, err := currencyOf(code)
	if err != nil {
		return nil, "", err
	}
	after := p.After
	if after == "" {
		after = "00000000-0000-0000-0000-000000000000"
	}
	out, err := readEntries(ctx, s.r, tenant, id, cur, `AND id > $3 ORDER BY id LIMIT $4`, after, p.Limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("store: account entries: %w", err)
	}
	out, next := trimPage(out, p, func(e AccountEntry) string { return e.ID })
	return out, next, nil
}

// AccountFilter narrows ListSubscriberAccounts; zero fields do not filter.
type AccountFilter struct {
	SubscriberID string
	Currency     string
}

// ListSubscriberAccounts returns one page of the tenant's accounts, with
// their balances (entries are left out of lists).
func (s *Store) ListSubscriberAccounts(ctx context.Context, f AccountFilter, p Page) ([]SubscriberAccount, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	if f.SubscriberID != "" {
		q.add("a.subscriber_id = ?", f.SubscriberID)
	}
	if f.Currency != "" {
		q.add("a.currency = ?", f.Currency)
	}
	if p.After != "" {
		q.add("a.id > ?", p.After)
	}
	q.args = append(q.args, p.Limit+1)
	where := " WHERE a." + q.where()[len(" WHERE "):]
	rows, err := s.r.QueryContext(ctx, `SELECT a.id, a.subscriber_id, a.currency, a.created_at,
		COALESCE((SELECT SUM(e.amount) FROM account_entries e WHERE e.tenant_id = a.tenant_id AND e.account_id = a.id), 0),
		COALESCE((SELECT SUM(i.remaining) FROM account_items i WHERE i.tenant_id = a.tenant_id AND i.account_id = a.id AND i.kind = 'Charge' AND i.remaining > 0), 0),
		COALESCE((SELECT SUM(i.remaining) FROM account_items i WHERE i.tenant_id = a.tenant_id AND i.account_id = a.id AND i.kind = 'Allowance' AND i.remaining > 0), 0)
		FROM subscriber_accounts a`+where+fmt.Sprintf(" ORDER BY a.id LIMIT $%d", len(q.args)), q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list subscriber accounts: %w", err)
	}
	defer rows.Close()
	var out []SubscriberAccount
	for rows.Next() {
		var (
			a                           SubscriberAccount
			balance, charges, allowance int64
		)
		if err := rows.Scan(&a.ID, &a.SubscriberID, &a.Currency, &a.CreatedAt, &balance, &charges, &allowance); err != nil {
			return nil, "", fmt.Errorf("store: list subscriber accounts: %w", err)
		}
		cur, err := currencyOf(a.Currency)
		if err != nil {
			return nil, "", err
		}
		a.CreatedAt = a.CreatedAt.UTC()
		a.Balance, a.OutstandingCharges, a.AvailableAllowance = catalog.NewAmount(balance, cur), catalog.NewAmount(charges, cur), catalog.NewAmount(allowance, cur)
		a.Entries = nil
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: list subscriber accounts: %w", err)
	}
	out, next := trimPage(out, p, func(a SubscriberAccount) string { return a.ID })
	return out, next, nil
}

// AccountCurrency returns the currency of account id of the context's
// tenant, or ErrNotFound.
func (s *Store) AccountCurrency(ctx context.Context, id string) (string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return "", err
	}
	if !ValidID(id) {
		return "", ErrNotFound
	}
	var code string
	if err := s.readRow(ctx, `SELECT currency FROM subscriber_accounts WHERE tenant_id = $1 AND id = $2`, tenant, id).Scan(&code); err != nil {
		return "", fmt.Errorf("store: subscriber account %s: %w", id, notFound(err))
	}
	return code, nil
}
