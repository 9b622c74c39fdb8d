package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// EventCreditNoteIssued is recorded when a credit note is issued.
const EventCreditNoteIssued = "CreditNoteIssued"

// CreditNote credits (part of) an invoice. Gross is what it credits;
// Applied is the part that reduced what the invoice's demand still owed,
// Surplus the rest (of an invoice already paid), booked as an allowance
// on the subscriber account (AllowanceItemID) for the next invoices.
type CreditNote struct {
	ID                  string               `json:"id"`
	CreditNoteNumber    int64                `json:"creditNoteNumber"`
	OrganizationID      string               `json:"organizationId"`
	InvoiceID           string               `json:"invoiceId"`
	InvoiceNumber       int64                `json:"invoiceNumber"`
	PaymentDemandID     string               `json:"paymentDemandId"`
	SubscriberAccountID string               `json:"subscriberAccountId"`
	SubscriberID        string               `json:"subscriberId"`
	SubscriptionID      *string              `json:"subscriptionId"`
	Currency            string               `json:"currency"`
	Reason              string               `json:"reason"`
	IssuedAt            time.Time            `json:"issuedAt"`
	IssueDate           string               `json:"issueDate" format:"date" description:"Issue date in the organization's time zone."`
	Lines               []billing.CreditLine `json:"lines"`
	VATTotals           []billing.VATTotal   `json:"vatTotals"`
	Net                 catalog.Amount       `json:"net"`
	VAT                 catalog.Amount       `json:"vat"`
	Gross               catalog.Amount       `json:"gross"`
	Applied             catalog.Amount       `json:"applied" description:"The part that reduced what the invoice still owed."`
	Surplus             catalog.Amount       `json:"surplus" description:"The part beyond what was owed (the invoice was paid): an allowance on the subscriber account."`
	AllowanceItemID     *string              `json:"allowanceAccountItemId"`
	CreatedAt           time.Time            `json:"createdAt"`
}

// Credit reasons the service itself uses.
const (
	CreditReasonCancellation = "Cancellation"
	CreditReasonProration    = "Proration"
)

const creditNoteColumns = `c.id, c.credit_note_number, c.organization_id, c.invoice_id, i.invoice_number, c.payment_demand_id,
	c.account_id, c.subscriber_id, c.subscription_id, c.currency, c.reason, c.issued_at, c.issue_date, c.lines, c.vat_totals,
	c.net, c.vat, c.gross, c.applied, c.surplus, c.allowance_item_id, c.created_at`

const creditNoteFrom = ` FROM credit_notes c JOIN invoices i ON i.tenant_id = c.tenant_id AND i.id = c.invoice_id`

func scanCreditNote(row scanner) (CreditNote, error) {
	var (
		c                                 CreditNote
		sub, item                         sql.NullString
		lines, vats                       string
		net, vat, gross, applied, surplus int64
	)
	if err := row.Scan(&c.ID, &c.CreditNoteNumber, &c.OrganizationID, &c.InvoiceID, &c.InvoiceNumber, &c.PaymentDemandID,
		&c.SubscriberAccountID, &c.SubscriberID, &sub, &c.Currency, &c.Reason, &c.IssuedAt, &c.IssueDate, &lines, &vats,
		&net, &vat, &gross, &applied, &surplus, &item, &c.CreatedAt); err != nil {
		return CreditNote{}, err
	}
	cur, err := currencyOf(c.Currency)
	if err != nil {
		return CreditNote{}, err
	}
	if err := json.Unmarshal([]byte(lines), &c.Lines); err != nil {
		return CreditNote{}, fmt.Errorf("credit note %s: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(vats), &c.VATTotals); err != nil {
		return CreditNote{}, fmt.Errorf("credit note %s: %w", c.ID, err)
	}
	c.SubscriptionID, c.AllowanceItemID = nullString(sub), nullString(item)
	c.Net, c.VAT, c.Gross = catalog.NewAmount(net, cur), catalog.NewAmount(vat, cur), catalog.NewAmount(gross, cur)
	c.Applied, c.Surplus = catalog.NewAmount(applied, cur), catalog.NewAmount(surplus, cur)
	c.IssuedAt, c.CreatedAt = c.IssuedAt.UTC(), c.CreatedAt.UTC()
	return c, nil
}

// CreditNote returns credit note id of the context's tenant.
func (s *Store) CreditNote(ctx context.Context, id string) (CreditNote, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return CreditNote{}, err
	}
	if !ValidID(id) {
		return CreditNote{}, ErrNotFound
	}
	c, err := scanCreditNote(s.r.QueryRowContext(ctx, `SELECT `+creditNoteColumns+creditNoteFrom+` WHERE c.tenant_id = $1 AND c.id = $2`, tenant, id))
	if err != nil {
		return CreditNote{}, fmt.Errorf("store: credit note %s: %w", id, notFound(err))
	}
	return c, nil
}

// CreditNoteFilter narrows ListCreditNotes; zero fields do not filter.
type CreditNoteFilter struct {
	InvoiceID    string
	SubscriberID string
}

// ListCreditNotes returns one page of the tenant's credit notes.
func (s *Store) ListCreditNotes(ctx context.Context, f CreditNoteFilter, p Page) ([]CreditNote, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilterOn("c", tenant)
	if f.InvoiceID != "" {
		q.add("c.invoice_id = ?", f.InvoiceID)
	}
	if f.SubscriberID != "" {
		q.add("c.subscriber_id = ?", f.SubscriberID)
	}
	tail := q.pageOn("c.id", p)
	out, err := queryAll(ctx, s.r, scanCreditNote, `SELECT `+creditNoteColumns+creditNoteFrom+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list credit notes: %w", err)
	}
	out, next := trimPage(out, p, func(c CreditNote) string { return c.ID })
	return out, next, nil
}

// Invoice reads invoice id in tx.
func (tx *Tx) Invoice(ctx context.Context, id string) (Invoice, error) {
	if !ValidID(id) {
		return Invoice{}, ErrNotFound
	}
	inv, err := scanInvoice(tx.queryRow(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
	if err != nil {
		return Invoice{}, fmt.Errorf("store: invoice %s: %w", id, notFound(err))
	}
	return inv, nil
}

// CreditedLines reads the lines of the credit notes of invoice id, in the
// order the notes were issued.
func (tx *Tx) CreditedLines(ctx context.Context, id string) ([]billing.CreditLine, error) {
	var out []billing.CreditLine
	err := tx.queryEach(ctx, `SELECT lines FROM credit_notes WHERE tenant_id = $1 AND invoice_id = $2 ORDER BY id`, []any{tx.tenant, id},
		func(rows *sql.Rows) error {
			var raw string
			if err := rows.Scan(&raw); err != nil {
				return err
			}
			var lines []billing.CreditLine
			if err := json.Unmarshal([]byte(raw), &lines); err != nil {
				return err
			}
			out = append(out, lines...)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: credit notes of invoice %s: %w", id, err)
	}
	return out, nil
}

// ProrationAllowances returns the allowances cancellations booked for the
// unused days of invoice id (source Proration), by VAT rate in booking
// order, at the amounts they were booked for (not what is left of them:
// an applied allowance was given back all the same).
func (tx *Tx) ProrationAllowances(ctx context.Context, id string) ([]billing.RateAmount, error) {
	var out []billing.RateAmount
	err := tx.queryEach(ctx, `SELECT vat_rate, amount FROM account_items WHERE tenant_id = $1 AND source_id = $2
		AND source_kind = 'Proration' AND kind = 'Allowance' ORDER BY id`, []any{tx.tenant, id},
		func(rows *sql.Rows) error {
			var (
				rate   string
				amount int64
			)
			if err := rows.Scan(&rate, &amount); err != nil {
				return err
			}
			p, err := catalog.ParsePercentText(rate)
			if err != nil {
				return fmt.Errorf("vat rate %q: %w", rate, err)
			}
			out = append(out, billing.RateAmount{VATRate: p, Gross: amount})
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: proration allowances of invoice %s: %w", id, err)
	}
	return out, nil
}

// InsertCreditNote inserts credit note c (its amounts in c's currency).
func (tx *Tx) InsertCreditNote(ctx context.Context, c CreditNote) error {
	lines, err := json.Marshal(c.Lines)
	if err != nil {
		return err
	}
	vats, err := json.Marshal(c.VATTotals)
	if err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `INSERT INTO credit_notes (id, tenant_id, organization_id, credit_note_number, invoice_id,
		payment_demand_id, account_id, subscriber_id, subscription_id, currency, reason, issued_at, issue_date, lines,
		vat_totals, net, vat, gross, applied, surplus, allowance_item_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
		c.ID, tx.tenant, c.OrganizationID, c.CreditNoteNumber, c.InvoiceID, c.PaymentDemandID, c.SubscriberAccountID,
		c.SubscriberID, c.SubscriptionID, c.Currency, c.Reason, ts(c.IssuedAt), c.IssueDate, string(lines), string(vats),
		c.Net.Minor, c.VAT.Minor, c.Gross.Minor, c.Applied.Minor, c.Surplus.Minor, c.AllowanceItemID, ts(c.CreatedAt)); err != nil {
		return fmt.Errorf("store: insert credit note: %w", err)
	}
	return nil
}
