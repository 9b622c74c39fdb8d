package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

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

// EnsureAccount returns the subscriber's account in currency, creating it
// at at when missing (EnsureAccounts of one).
func (tx *Tx) EnsureAccount(ctx context.Context, subscriberID, currency string, at time.Time) (string, error) {
	if _, err := currencyOf(currency); err != nil {
		return "", err
	}
	k := AccountKey{SubscriberID: subscriberID, Currency: currency}
	ids, err := tx.EnsureAccounts(ctx, []NewAccount{{AccountKey: k, At: at}})
	if err != nil {
		return "", err
	}
	return ids[k], nil
}

// NewEntry is a ledger entry to append (AddEntries). Amount is signed:
// positive entries increase what the subscriber owes. The references name
// the invoice, account item, credit note or payment behind it (empty:
// none).
type NewEntry struct {
	AccountID    string
	Kind         string
	Amount       int64
	InvoiceID    string
	ItemID       string
	CreditNoteID string
	PaymentID    string
	BookedAt     time.Time
}

// AddEntries appends ledger entries, in order, with multi-row inserts.
func (tx *Tx) AddEntries(ctx context.Context, entries []NewEntry) error {
	if len(entries) == 0 {
		return nil
	}
	created := ts(time.Now())
	// The issue of a batch of invoices names no credit notes or payments:
	// its rows leave those columns out, as fewer values to send.
	documents := false
	for i := range entries {
		if entries[i].CreditNoteID != "" || entries[i].PaymentID != "" {
			documents = true
			break
		}
	}
	width := 9
	if documents {
		width = 11
	}
	rows := rowsOf(len(entries), width)
	for i := range entries {
		e := &entries[i]
		if documents {
			rows[i] = append(rows[i], NewID(), tx.tenant, e.AccountID, e.Kind, e.Amount, orNull(e.InvoiceID), orNull(e.ItemID),
				orNull(e.CreditNoteID), orNull(e.PaymentID), ts(e.BookedAt), created)
		} else {
			rows[i] = append(rows[i], NewID(), tx.tenant, e.AccountID, e.Kind, e.Amount, orNull(e.InvoiceID), orNull(e.ItemID),
				ts(e.BookedAt), created)
		}
	}
	columns := `id, tenant_id, account_id, kind, amount, invoice_id, item_id, booked_at, created_at`
	if documents {
		columns = `id, tenant_id, account_id, kind, amount, invoice_id, item_id, credit_note_id, payment_id, booked_at, created_at`
	}
	if err := tx.insertRows(ctx, "account_entries", columns, rows, ``); err != nil {
		return fmt.Errorf("store: add ledger entries: %w", err)
	}
	return nil
}

// Sources of account items: the kind of document that booked a charge or
// an allowance (account_items.source_kind; its id is source_id). The
// ledger check requires every item to have one whose document names the
// item back (docs/BILLING.md, "Ledger check"). A wing's kinds are its own
// (autogiro.ItemSourceRefund), registered with ledger.RegisterItemSource.
const (
	ItemSourceManual     = "Manual"     // POST /subscriberaccount/{id}/charge or /allowance; no document id
	ItemSourceCreditNote = "CreditNote" // a credit note's surplus (credit_notes.allowance_item_id)
	ItemSourcePayment    = "Payment"    // an overpayment (payments.allowance_item_id)
	ItemSourceReminder   = "Reminder"   // a reminder's fee (reminders.fee_item_id)
	ItemSourceProration  = "Proration"  // the unused days of a paid period: the invoice's id
	ItemSourceBinding    = "Binding"    // the remaining periods of a binding cancelled early: the cancelled period's id
)

// ItemSource is the document that booked an account item: one of the
// ItemSource* kinds and the document's id (none for Manual).
type ItemSource struct {
	Kind string
	ID   string
}

// NewItem is a charge or an allowance to book on an account (InsertItems):
// Amount (gross minor units) is also what it starts with remaining.
type NewItem struct {
	ID          string
	AccountID   string
	Kind        string
	Description string
	Amount      int64
	VATRate     catalog.Percent
	BookedAt    time.Time
	CreatedAt   time.Time
	Source      ItemSource
}

// InsertItems inserts account items with multi-row inserts.
func (tx *Tx) InsertItems(ctx context.Context, items []NewItem) error {
	rows := make([][]any, len(items))
	for i := range items {
		it := &items[i]
		if it.Source.Kind == "" {
			return fmt.Errorf("store: account item %s has no source", it.ID)
		}
		var source any
		if it.Source.ID != "" {
			source = it.Source.ID
		}
		rows[i] = []any{it.ID, tx.tenant, it.AccountID, it.Kind, it.Description, it.Amount, it.Amount, it.VATRate.String(),
			ts(it.BookedAt), ts(it.CreatedAt), it.Source.Kind, source}
	}
	if err := tx.insertRows(ctx, "account_items", `id, tenant_id, account_id, kind, description, amount, remaining,
		vat_rate, booked_at, created_at, source_kind, source_id`, rows, ``); err != nil {
		return fmt.Errorf("store: add account items: %w", err)
	}
	return nil
}

// ItemUse is what an invoice billed of a charge or applied of an
// allowance.
type ItemUse struct {
	ItemID string
	Amount int64
}

// UseItems lowers what each item still has to bill or apply by its use's
// amount; an item without that much left is ErrConflict (it changed
// concurrently).
func (tx *Tx) UseItems(ctx context.Context, uses []ItemUse) error {
	for _, u := range uses {
		res, err := tx.exec(ctx, `UPDATE account_items SET remaining = remaining - $3
			WHERE tenant_id = $1 AND id = $2 AND remaining >= $3`, tx.tenant, u.ItemID, u.Amount)
		if err != nil {
			return fmt.Errorf("store: use account item %s: %w", u.ItemID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("store: use account item %s: %w", u.ItemID, err)
		} else if n == 0 {
			return fmt.Errorf("store: account item %s changed concurrently: %w", u.ItemID, ErrConflict)
		}
	}
	return nil
}

// AccountCurrency reads the currency of account id in tx (ErrNotFound).
func (tx *Tx) AccountCurrency(ctx context.Context, id string) (string, error) {
	if !ValidID(id) {
		return "", ErrNotFound
	}
	var code string
	if err := tx.queryRow(ctx, `SELECT currency FROM subscriber_accounts WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, id).Scan(&code); err != nil {
		return "", fmt.Errorf("store: subscriber account %s: %w", id, notFound(err))
	}
	return code, nil
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
