package invoicing

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
)

// Change is what Settle did to a payment demand.
type Change struct {
	DemandID       string
	InvoiceID      string
	AccountID      string
	SubscriberID   string
	SubscriptionID *string
	OrganizationID string
	Currency       string
	// Before and After are the demand's settlement around the change.
	Before, After billing.Settlement
	// PaidApplied and CreditedApplied are the parts of the offered paid
	// and credited amounts that reduced what is outstanding; Applied is
	// their sum. Surplus is what the demand could not absorb: the caller
	// books it on the account (an allowance, see bookAllowance).
	PaidApplied, CreditedApplied int64
	Applied, Surplus             int64
	// OldStatus and NewStatus are the demand's stored statuses;
	// InvoiceStatus is the invoice's stored status after the change.
	OldStatus, NewStatus string
	InvoiceStatus        string
}

// Settled reports whether the demand is settled after the change (Paid or
// Credited): nothing is outstanding and dunning has stopped.
func (c Change) Settled() bool {
	return c.NewStatus == billing.DemandPaid || c.NewStatus == billing.DemandCredited
}

// Settle offers paid (a payment) and credited (a credit note) minor units
// to payment demand demandID at business time at, with the one settlement
// rule (billing.Settlement): it locks the demand row for the rest of tx
// (store.Tx.LockDemand), applies paid first and then credited up to what
// is outstanding, adds the applied parts to the demand's paid and credited
// amounts, writes the statuses of Settlement.Statuses to the demand and
// its invoice, stops dunning once the demand is settled (no more
// reminders; a partial payment does not stop them), and records
// InvoicePaid when the invoice becomes Paid. Both amounts must be ≥ 0.
//
// It writes no ledger entry and books no surplus: the caller (a payment, a
// credit note) writes its own entry with its own id for Applied and books
// Surplus, in the same tx. Concurrent settlements of one demand queue on
// the row lock, so none is lost.
func Settle(ctx context.Context, tx *store.Tx, demandID string, paid, credited int64, at time.Time) (Change, error) {
	if paid < 0 || credited < 0 {
		return Change{}, fmt.Errorf("invoicing: settle demand %s: negative amount (paid %d, credited %d)", demandID, paid, credited)
	}
	d, err := tx.LockDemand(ctx, demandID)
	if err != nil {
		return Change{}, err
	}
	c := Change{DemandID: demandID, InvoiceID: d.InvoiceID, AccountID: d.AccountID, SubscriberID: d.SubscriberID,
		SubscriptionID: d.SubscriptionID, OrganizationID: d.OrganizationID, Currency: d.Currency,
		Before: billing.Settlement{Amount: d.Amount, Paid: d.Paid, Credited: d.Credited}, OldStatus: d.Status}
	var paidSurplus, creditSurplus int64
	c.After = c.Before
	c.PaidApplied, paidSurplus = c.After.Apply(paid)
	c.After.Paid += c.PaidApplied
	c.CreditedApplied, creditSurplus = c.After.Apply(credited)
	c.After.Credited += c.CreditedApplied
	c.Applied, c.Surplus = c.PaidApplied+c.CreditedApplied, paidSurplus+creditSurplus
	c.NewStatus, c.InvoiceStatus = c.After.Statuses()

	if err := tx.WriteSettlement(ctx, store.Settlement{DemandID: demandID, InvoiceID: c.InvoiceID, Paid: c.After.Paid,
		Credited: c.After.Credited, DemandStatus: c.NewStatus, InvoiceStatus: c.InvoiceStatus, StopDunning: c.Settled()}); err != nil {
		return Change{}, err
	}
	if c.InvoiceStatus == billing.InvoicePaid && c.OldStatus != billing.DemandPaid {
		f, err := tx.InvoiceFacts(ctx, c.InvoiceID)
		if err != nil {
			return Change{}, err
		}
		if err := tx.AddEvent(ctx, store.EventInvoicePaid, "/invoice/"+c.InvoiceID, InvoiceEventData{
			Amount: f.Gross, Currency: f.Currency, DueAt: f.DueAt, DueDate: f.DueDate, InvoiceID: c.InvoiceID,
			InvoiceNumber: f.Number, Number: f.Number, OrganizationID: f.OrganizationID, PaymentDemandID: demandID,
			SubscriberID: c.SubscriberID, SubscriptionID: c.SubscriptionID}, at); err != nil {
			return Change{}, err
		}
	}
	return c, nil
}

// BookItem books a charge or an allowance (kind billing.ItemCharge or
// billing.ItemAllowance) of amount minor units (gross, > 0) on account
// accountID at at, with its ledger entry (Charge +amount, Allowance
// −amount), in tx. src is the document that books it (the ledger check
// requires one). The returned item carries no amounts (the caller knows
// the currency).
func BookItem(ctx context.Context, tx *store.Tx, accountID, kind, description string, amount int64, rate catalog.Percent, at time.Time, src store.ItemSource) (store.AccountItem, error) {
	entry, sign := store.EntryCharge, int64(1)
	switch kind {
	case billing.ItemCharge:
	case billing.ItemAllowance:
		entry, sign = store.EntryAllowance, -1
	default:
		return store.AccountItem{}, fmt.Errorf("invoicing: account item kind %q", kind)
	}
	if amount <= 0 {
		return store.AccountItem{}, fmt.Errorf("invoicing: account item amount %d must be positive", amount)
	}
	it := store.AccountItem{ID: store.NewID(), AccountID: accountID, Kind: kind, Description: description, VATRate: rate,
		BookedAt: at.UTC().Truncate(time.Microsecond), CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	if err := tx.InsertItems(ctx, []store.NewItem{{ID: it.ID, AccountID: accountID, Kind: kind, Description: description,
		Amount: amount, VATRate: rate, BookedAt: it.BookedAt, CreatedAt: it.CreatedAt, Source: src}}); err != nil {
		return store.AccountItem{}, err
	}
	return it, tx.AddEntries(ctx, []store.NewEntry{{AccountID: accountID, Kind: entry, Amount: sign * amount, ItemID: it.ID,
		BookedAt: it.BookedAt}})
}

// bookAllowance books an allowance of amount minor units (> 0, VAT rate 0)
// on account accountID at business time at, with its Allowance ledger
// entry, and returns its id: how a payment's or credit note's surplus
// reaches the subscriber's next invoices; src is that document.
func bookAllowance(ctx context.Context, tx *store.Tx, accountID, description string, amount int64, at time.Time, src store.ItemSource) (string, error) {
	it, err := BookItem(ctx, tx, accountID, billing.ItemAllowance, description, amount, catalog.PercentOf(0), at, src)
	if err != nil {
		return "", err
	}
	return it.ID, nil
}

// AddAccountItem books a charge or an allowance (kind billing.ItemCharge or
// billing.ItemAllowance) of amount minor units (gross, > 0) on account
// accountID at now, with its ledger entry, in a transaction of its own,
// and returns it with its amounts.
func AddAccountItem(ctx context.Context, st *store.Store, accountID, kind, description string, amount int64, rate catalog.Percent, now time.Time) (store.AccountItem, error) {
	var it store.AccountItem
	err := st.InTx(ctx, func(tx *store.Tx) error {
		code, err := tx.AccountCurrency(ctx, accountID)
		if err != nil {
			return err
		}
		cur, err := currency(code)
		if err != nil {
			return err
		}
		if it, err = BookItem(ctx, tx, accountID, kind, description, amount, rate, now, store.ItemSource{Kind: store.ItemSourceManual}); err != nil {
			return err
		}
		it.Amount, it.Remaining = catalog.NewAmount(amount, cur), catalog.NewAmount(amount, cur)
		return nil
	})
	if err != nil {
		return store.AccountItem{}, err
	}
	return it, nil
}
