package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// The rows that issuing writes and the reads it needs, set-based: one
// statement per kind of row for a whole engine batch. What the rows hold
// is decided by internal/invoicing (amounts, statuses, dates, KIDs); the
// store maps them to SQL.

// NewPeriod is a subscription period created at business time At: what
// the engine hands billing (engine.Hooks.PeriodsCreated).
type NewPeriod struct {
	Sub Subscription
	At  time.Time
}

// NewInvoice is an invoice row to insert (InsertInvoices). Seller and
// Buyer are pointers so that the invoices of one organization or one
// subscriber share their snapshot, encoded once per call.
type NewInvoice struct {
	ID                 string
	OrganizationID     string
	Number             int64
	PaymentDemandID    string
	AccountID          string
	SubscriberID       string
	SubscriptionID     string
	PaymentAgreementID *string
	Currency           string
	PricesIncludeVAT   bool
	Status             string
	IssuedAt, DueAt    time.Time
	// IssueDate and DueDate are local dates (YYYY-MM-DD).
	IssueDate, DueDate     string
	PeriodStart, PeriodEnd time.Time
	Seller                 *Seller
	Buyer                  *Buyer
	Lines                  []billing.Line
	VATTotals              []billing.VATTotal
	Net, VAT, Gross        int64
	KID                    string
}

// NewDemand is a payment demand row to insert (InsertDemands).
type NewDemand struct {
	ID             string
	Kind           string
	InvoiceID      string
	AccountID      string
	SubscriberID   string
	SubscriptionID string
	OrganizationID string
	Currency       string
	Amount         int64
	Status         string
	IssuedAt       time.Time
	DueAt          time.Time
	// DunningProcessID and NextDunningAt are the demand's dunning process
	// and its first action (nil: none).
	DunningProcessID *string
	NextDunningAt    *time.Time
}

// rowsOf returns n empty rows with room for width values each, carved out
// of one allocation (a batch writes thousands of rows).
func rowsOf(n, width int) [][]any {
	flat := make([]any, n*width)
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = flat[i*width : i*width : (i+1)*width]
	}
	return rows
}

// InsertInvoices inserts invoices with multi-row statements (COPY on
// PostgreSQL for large sets).
func (tx *Tx) InsertInvoices(ctx context.Context, invoices []NewInvoice) error {
	created := ts(time.Now())
	sellers, buyers := map[*Seller]string{}, map[*Buyer]string{}
	rows := rowsOf(len(invoices), 27)
	for i := range invoices {
		inv := &invoices[i]
		seller, ok := sellers[inv.Seller]
		if !ok {
			b, err := json.Marshal(inv.Seller)
			if err != nil {
				return err
			}
			seller = string(b)
			sellers[inv.Seller] = seller
		}
		buyer, ok := buyers[inv.Buyer]
		if !ok {
			b, err := json.Marshal(inv.Buyer)
			if err != nil {
				return err
			}
			buyer = string(b)
			buyers[inv.Buyer] = buyer
		}
		lines, err := json.Marshal(inv.Lines)
		if err != nil {
			return err
		}
		vats, err := json.Marshal(inv.VATTotals)
		if err != nil {
			return err
		}
		rows[i] = append(rows[i], inv.ID, tx.tenant, inv.OrganizationID, inv.Number, inv.PaymentDemandID, inv.AccountID,
			inv.SubscriberID, inv.SubscriptionID, inv.PaymentAgreementID, inv.Currency, inv.PricesIncludeVAT, inv.Status,
			ts(inv.IssuedAt), ts(inv.DueAt), inv.IssueDate, inv.DueDate, ts(inv.PeriodStart), ts(inv.PeriodEnd), seller, buyer,
			string(lines), string(vats), inv.Net, inv.VAT, inv.Gross, inv.KID, created)
	}
	if err := tx.insertRows(ctx, "invoices", `id, tenant_id, organization_id, invoice_number, payment_demand_id,
		account_id, subscriber_id, subscription_id, payment_agreement_id, currency, prices_include_vat, status,
		issued_at, due_at, issue_date, due_date, period_start, period_end, seller, buyer, lines, vat_totals,
		net, vat, gross, kid, created_at`, rows, ``); err != nil {
		return fmt.Errorf("store: insert invoices: %w", err)
	}
	return nil
}

// InsertDemands inserts payment demands. A second demand of one period is
// ErrConflict.
func (tx *Tx) InsertDemands(ctx context.Context, demands []NewDemand) error {
	created := ts(time.Now())
	rows := rowsOf(len(demands), 16)
	for i := range demands {
		d := &demands[i]
		var process, next any
		if d.DunningProcessID != nil {
			process = *d.DunningProcessID
		}
		if d.NextDunningAt != nil {
			next = ts(*d.NextDunningAt)
		}
		rows[i] = append(rows[i], d.ID, tx.tenant, d.Kind, d.InvoiceID, d.AccountID, d.SubscriberID, d.SubscriptionID,
			d.OrganizationID, d.Currency, d.Amount, d.Status, ts(d.IssuedAt), ts(d.DueAt), process, next, created)
	}
	if err := tx.insertRows(ctx, "payment_demands", `id, tenant_id, kind, invoice_id, account_id, subscriber_id,
		subscription_id, organization_id, currency, amount, status, issued_at, due_at, dunning_process_id, next_dunning_at,
		created_at`, rows, ``); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("store: period already has a payment demand: %w", ErrConflict)
		}
		return fmt.Errorf("store: insert payment demands: %w", err)
	}
	return nil
}

// Organization reads organization id in tx.
func (tx *Tx) Organization(ctx context.Context, id string) (Organization, error) {
	org, err := scanOrganization(tx.queryRow(ctx,
		`SELECT `+organizationColumns+` FROM organizations WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
	if err != nil {
		return Organization{}, fmt.Errorf("store: organization %s: %w", id, notFound(err))
	}
	return org, nil
}

// Subscribers reads the subscribers of ids in tx, by id; a missing one is
// ErrNotFound.
func (tx *Tx) Subscribers(ctx context.Context, ids []string) (map[string]*Subscriber, error) {
	out := make(map[string]*Subscriber, len(ids))
	err := tx.queryIn(ctx, `SELECT `+subscriberColumns+` FROM subscribers WHERE tenant_id = $1 AND id IN `, ``, nil, ids,
		func(rows *sql.Rows) error {
			sub, err := scanSubscriber(rows)
			if err != nil {
				return err
			}
			out[sub.ID] = &sub
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: subscribers: %w", err)
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			return nil, fmt.Errorf("store: subscriber %s: %w", id, ErrNotFound)
		}
	}
	return out, nil
}

// AccountKey names a subscriber's account in a currency.
type AccountKey struct {
	SubscriberID string
	Currency     string
}

// NewAccount is an account to create if missing (EnsureAccounts), at
// business time At.
type NewAccount struct {
	AccountKey
	At time.Time
}

// EnsureAccounts returns the account id of every key of want, creating the
// missing ones (at their At) with one multi-row insert. Concurrent
// creators meet in the unique (tenant, subscriber, currency) key: the
// loser's insert does nothing and it reads the winner's row.
func (tx *Tx) EnsureAccounts(ctx context.Context, want []NewAccount) (map[AccountKey]string, error) {
	out := map[AccountKey]string{}
	load := func(ids []string) error {
		return tx.queryIn(ctx, `SELECT id, subscriber_id, currency FROM subscriber_accounts WHERE tenant_id = $1 AND subscriber_id IN `,
			``, nil, ids, func(rows *sql.Rows) error {
				var id string
				var k AccountKey
				if err := rows.Scan(&id, &k.SubscriberID, &k.Currency); err != nil {
					return err
				}
				out[k] = id
				return nil
			})
	}
	var subscribers []string
	seen := map[string]bool{}
	for _, a := range want {
		if !seen[a.SubscriberID] {
			seen[a.SubscriberID] = true
			subscribers = append(subscribers, a.SubscriberID)
		}
	}
	if err := load(subscribers); err != nil {
		return nil, fmt.Errorf("store: subscriber accounts: %w", err)
	}
	var (
		missing [][]any
		again   []string
		noted   = map[AccountKey]bool{}
	)
	for _, a := range want {
		if _, ok := out[a.AccountKey]; ok || noted[a.AccountKey] {
			continue
		}
		noted[a.AccountKey] = true
		missing = append(missing, []any{NewID(), tx.tenant, a.SubscriberID, a.Currency, ts(a.At)})
		again = append(again, a.SubscriberID)
	}
	if len(missing) == 0 {
		return out, nil
	}
	if err := tx.insertRows(ctx, "subscriber_accounts", `id, tenant_id, subscriber_id, currency, created_at`,
		missing, `ON CONFLICT (tenant_id, subscriber_id, currency) DO NOTHING`); err != nil {
		return nil, fmt.Errorf("store: create subscriber accounts: %w", err)
	}
	// Read them back: a concurrent first order may have created one.
	if err := load(again); err != nil {
		return nil, fmt.Errorf("store: subscriber accounts: %w", err)
	}
	for k := range noted {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("store: subscriber account %s/%s: %w", k.SubscriberID, k.Currency, ErrNotFound)
		}
	}
	return out, nil
}

// OpenItem is an account item that still has something to bill or apply.
type OpenItem struct {
	AccountID   string
	ID          string
	Kind        string
	Description string
	Remaining   int64
	VATRate     catalog.Percent
	BookedAt    time.Time
}

// OpenItems returns, by account, the charges and allowances of accounts
// booked at or before until that still have something to bill or apply,
// oldest first.
func (tx *Tx) OpenItems(ctx context.Context, accounts []string, until time.Time) (map[string][]OpenItem, error) {
	out := map[string][]OpenItem{}
	err := tx.queryIn(ctx, `SELECT `+openItemColumns+` FROM account_items
		WHERE tenant_id = $1 AND remaining > 0 AND booked_at <= $2 AND account_id IN `, ` ORDER BY booked_at, id`,
		[]any{ts(until)}, accounts, func(rows *sql.Rows) error {
			it, err := scanOpenItem(rows)
			if err != nil {
				return err
			}
			out[it.AccountID] = append(out[it.AccountID], it)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: open account items: %w", err)
	}
	return out, nil
}

// OpenItemsOf is OpenItems of the account key names, read on the read pool
// in one snapshot (the upcoming invoice's preview): the account's id ("" and
// no items when the subscriber has no account in that currency yet) and its
// open items booked at or before until, oldest first.
func (s *Store) OpenItemsOf(ctx context.Context, key AccountKey, until time.Time) (string, []OpenItem, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return "", nil, err
	}
	if !ValidID(key.SubscriberID) {
		return "", nil, nil
	}
	var (
		account string
		items   []OpenItem
	)
	err = s.readTx(ctx, func(q queryer) error {
		err := q.QueryRowContext(ctx, `SELECT id FROM subscriber_accounts WHERE tenant_id = $1 AND subscriber_id = $2 AND currency = $3`,
			tenant, key.SubscriberID, key.Currency).Scan(&account)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		items, err = queryAll(ctx, q, scanOpenItem, `SELECT `+openItemColumns+` FROM account_items
			WHERE tenant_id = $1 AND account_id = $2 AND remaining > 0 AND booked_at <= $3 ORDER BY booked_at, id`,
			tenant, account, ts(until))
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("store: open account items: %w", err)
	}
	return account, items, nil
}

const openItemColumns = `account_id, id, kind, description, remaining, vat_rate, booked_at`

func scanOpenItem(row scanner) (OpenItem, error) {
	var (
		rate string
		it   OpenItem
	)
	if err := row.Scan(&it.AccountID, &it.ID, &it.Kind, &it.Description, &it.Remaining, &rate, &it.BookedAt); err != nil {
		return OpenItem{}, err
	}
	var err error
	if it.VATRate, err = catalog.ParsePercentText(rate); err != nil {
		return OpenItem{}, fmt.Errorf("account item %s vat rate: %w", it.ID, err)
	}
	it.BookedAt = it.BookedAt.UTC()
	return it, nil
}

// InvoiceSeries is the counter series of an organization's invoice numbers.
func InvoiceSeries(orgID string) string { return "invoice:" + orgID }

// CreditNoteSeries is the counter series of an organization's credit note
// numbers.
func CreditNoteSeries(orgID string) string { return "creditnote:" + orgID }

// ReserveNumbers takes the next n numbers of series scope in one upsert
// and returns the last of them (the first is last-n+1). They are consumed
// only if the transaction commits, so the series stays gap-free.
func (tx *Tx) ReserveNumbers(ctx context.Context, scope string, n int64) (int64, error) {
	var last int64
	err := tx.queryRow(ctx, `INSERT INTO counters (tenant_id, scope, value) VALUES ($1, $2, $3)
		ON CONFLICT (tenant_id, scope) DO UPDATE SET value = counters.value + excluded.value
		WHERE counters.value <= $4
		RETURNING value`, tx.tenant, scope, n, int64(maxCounter)-n).Scan(&last)
	if err != nil {
		if err == sql.ErrNoRows {
			return 0, fmt.Errorf("store: counter %s: %w", scope, ErrCounterExhausted)
		}
		return 0, fmt.Errorf("store: counter %s: %w", scope, err)
	}
	return last, nil
}
