package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// Payment statuses: the result a provider reported.
const (
	PaymentSucceeded = "Succeeded"
	PaymentFailed    = "Failed"
)

// PaymentStatuses lists the payment statuses.
var PaymentStatuses = []string{PaymentSucceeded, PaymentFailed}

// Payment events, recorded in the transaction that records the payment.
const (
	EventPaymentCompleted = "PaymentCompleted"
	EventPaymentFailed    = "PaymentFailed"
)

// Payment is a reported payment result. A success is matched to its
// payment demand: Applied reduced what the demand still claimed, Surplus
// (an overpayment) became an allowance on the subscriber account
// (AllowanceItemID). A failure is only recorded (Applied and Surplus 0).
type Payment struct {
	ID                  string         `json:"id"`
	PaymentDemandID     string         `json:"paymentDemandId"`
	InvoiceID           string         `json:"invoiceId"`
	SubscriberID        string         `json:"subscriberId"`
	SubscriberAccountID string         `json:"subscriberAccountId"`
	PaymentAgreementID  *string        `json:"paymentAgreementId"`
	Status              string         `json:"status" enum:"Succeeded,Failed"`
	Amount              catalog.Amount `json:"amount"`
	Applied             catalog.Amount `json:"applied" description:"The part of the amount that reduced what the payment demand claims."`
	Surplus             catalog.Amount `json:"surplus" description:"The part above what the demand still claimed, given to the subscriber account as an allowance."`
	AllowanceItemID     *string        `json:"allowanceItemId" description:"The allowance the surplus became."`
	Currency            string         `json:"currency"`
	PaidAt              time.Time      `json:"paidAt" description:"Value date and time reported by the provider."`
	Provider            string         `json:"provider"`
	ProviderReference   string         `json:"providerReference"`
	FailureReason       *string        `json:"failureReason"`
	CreatedAt           time.Time      `json:"createdAt"`
}

// PaymentTarget resolves what a payment report names (exactly one of
// invoiceID, demandID and kid; organizationID narrows a KID) to a payment
// demand of the context's tenant and returns its id and currency. A name
// that matches nothing, or a KID that matches invoices of several
// organizations without organizationID, is a 400 on the field.
func (s *Store) PaymentTarget(ctx context.Context, invoiceID, demandID, kid, organizationID string) (string, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return "", "", err
	}
	return paymentTarget(ctx, s.readRow, s.r, tenant, invoiceID, demandID, kid, organizationID)
}

// PaymentTarget is Store.PaymentTarget inside the transaction (a batch
// of payments settled in one transaction).
func (tx *Tx) PaymentTarget(ctx context.Context, invoiceID, demandID, kid, organizationID string) (string, string, error) {
	return paymentTarget(ctx, tx.queryRow, tx.tx, tx.tenant, invoiceID, demandID, kid, organizationID)
}

func paymentTarget(ctx context.Context, row func(context.Context, string, ...any) *sql.Row, q queryer,
	tenant, invoiceID, demandID, kid, organizationID string) (string, string, error) {
	var (
		id, currency string
		err          error
	)
	switch {
	case demandID != "":
		err = row(ctx, `SELECT id, currency FROM payment_demands WHERE tenant_id = $1 AND id = $2`, tenant, demandID).Scan(&id, &currency)
		if errors.Is(err, sql.ErrNoRows) {
			return "", "", validation.Field("paymentDemandId", "there is no payment demand %s", demandID)
		}
	case invoiceID != "":
		err = row(ctx, `SELECT payment_demand_id, currency FROM invoices WHERE tenant_id = $1 AND id = $2`, tenant, invoiceID).Scan(&id, &currency)
		if errors.Is(err, sql.ErrNoRows) {
			return "", "", validation.Field("invoiceId", "there is no invoice %s", invoiceID)
		}
	default:
		f := tenantFilter(tenant)
		f.add("kid = ?", kid)
		if organizationID != "" {
			f.add("organization_id = ?", organizationID)
		}
		type hit struct{ demand, currency string }
		var hits []hit
		hits, err = queryAll(ctx, q, func(r scanner) (hit, error) {
			var h hit
			err := r.Scan(&h.demand, &h.currency)
			return h, err
		}, `SELECT payment_demand_id, currency FROM invoices`+f.where()+` LIMIT 2`, f.args...)
		switch {
		case err != nil:
		case len(hits) == 0 && organizationID != "":
			return "", "", validation.Field("kid", "no invoice of organization %s has KID %s", organizationID, kid)
		case len(hits) == 0:
			return "", "", validation.Field("kid", "no invoice has KID %s", kid)
		case len(hits) > 1:
			return "", "", validation.Field("organizationId", "is required: KID %s belongs to invoices of several organizations", kid)
		default:
			id, currency = hits[0].demand, hits[0].currency
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("store: payment target: %w", err)
	}
	return id, currency, nil
}

// PaymentRecorded reports whether a payment with (provider, reference)
// is recorded already.
func (tx *Tx) PaymentRecorded(ctx context.Context, provider, reference string) (bool, error) {
	var one int
	err := tx.queryRow(ctx, `SELECT 1 FROM payments WHERE tenant_id = $1 AND provider = $2 AND provider_reference = $3`,
		tx.tenant, provider, reference).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: find payment: %w", err)
	}
	return true, nil
}

// AgreementOwner reads the subscriber of payment agreement id in tx
// (ErrNotFound).
func (tx *Tx) AgreementOwner(ctx context.Context, id string) (string, error) {
	var owner string
	if err := tx.queryRow(ctx, `SELECT subscriber_id FROM payment_agreements WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, id).Scan(&owner); err != nil {
		return "", fmt.Errorf("store: payment agreement %s: %w", id, notFound(err))
	}
	return owner, nil
}

// InvoiceNumber reads the number of invoice id in tx.
func (tx *Tx) InvoiceNumber(ctx context.Context, id string) (int64, error) {
	var number int64
	if err := tx.queryRow(ctx, `SELECT invoice_number FROM invoices WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, id).Scan(&number); err != nil {
		return 0, fmt.Errorf("store: invoice %s: %w", id, notFound(err))
	}
	return number, nil
}

// InsertPayment inserts payment p (its amounts in p's currency). It
// reports false, writing nothing, when (provider, providerReference) is
// recorded already (a concurrent first report won).
func (tx *Tx) InsertPayment(ctx context.Context, p Payment) (bool, error) {
	var id string
	err := tx.queryRow(ctx, `INSERT INTO payments (id, tenant_id, payment_demand_id, invoice_id, account_id, subscriber_id,
		payment_agreement_id, status, amount, applied, surplus, allowance_item_id, currency, paid_at, provider,
		provider_reference, failure_reason, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
		ON CONFLICT (tenant_id, provider, provider_reference) DO NOTHING RETURNING id`,
		p.ID, tx.tenant, p.PaymentDemandID, p.InvoiceID, p.SubscriberAccountID, p.SubscriberID, p.PaymentAgreementID,
		p.Status, p.Amount.Minor, p.Applied.Minor, p.Surplus.Minor, p.AllowanceItemID, p.Currency, ts(p.PaidAt), p.Provider,
		p.ProviderReference, p.FailureReason, ts(p.CreatedAt)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: insert payment: %w", err)
	}
	return true, nil
}

// PaymentByReference returns the payment of the context's tenant recorded
// with (provider, reference).
func (s *Store) PaymentByReference(ctx context.Context, provider, reference string) (Payment, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Payment{}, err
	}
	p, err := scanPayment(s.readRow(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE tenant_id = $1 AND provider = $2 AND provider_reference = $3`, tenant, provider, reference))
	if err != nil {
		return Payment{}, fmt.Errorf("store: payment %s/%s: %w", provider, reference, notFound(err))
	}
	return p, nil
}

const paymentColumns = `id, payment_demand_id, invoice_id, account_id, subscriber_id, payment_agreement_id, status, amount,
	applied, surplus, allowance_item_id, currency, paid_at, provider, provider_reference, failure_reason, created_at`

func scanPayment(row scanner) (Payment, error) {
	var (
		p                        Payment
		agreement, item, reason  sql.NullString
		amount, applied, surplus int64
	)
	if err := row.Scan(&p.ID, &p.PaymentDemandID, &p.InvoiceID, &p.SubscriberAccountID, &p.SubscriberID, &agreement, &p.Status,
		&amount, &applied, &surplus, &item, &p.Currency, &p.PaidAt, &p.Provider, &p.ProviderReference, &reason, &p.CreatedAt); err != nil {
		return Payment{}, err
	}
	cur, err := currencyOf(p.Currency)
	if err != nil {
		return Payment{}, err
	}
	p.PaymentAgreementID, p.AllowanceItemID, p.FailureReason = nullString(agreement), nullString(item), nullString(reason)
	p.Amount, p.Applied, p.Surplus = catalog.NewAmount(amount, cur), catalog.NewAmount(applied, cur), catalog.NewAmount(surplus, cur)
	p.PaidAt, p.CreatedAt = p.PaidAt.UTC(), p.CreatedAt.UTC()
	return p, nil
}

// Payment returns payment id of the context's tenant.
func (s *Store) Payment(ctx context.Context, id string) (Payment, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Payment{}, err
	}
	if !ValidID(id) {
		return Payment{}, ErrNotFound
	}
	p, err := scanPayment(s.readRow(ctx, `SELECT `+paymentColumns+` FROM payments WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return Payment{}, fmt.Errorf("store: payment %s: %w", id, notFound(err))
	}
	return p, nil
}

// PaymentFilter narrows ListPayments; zero fields do not filter.
type PaymentFilter struct {
	SubscriberID      string
	InvoiceID         string
	PaymentDemandID   string
	Status            string
	Provider          string
	ProviderReference string
}

// ListPayments returns one page of the tenant's payments. A filter naming
// a subscriber, invoice or payment demand the tenant does not have matches
// nothing.
func (s *Store) ListPayments(ctx context.Context, f PaymentFilter, p Page) ([]Payment, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	for _, c := range []struct{ col, v string }{{"subscriber_id", f.SubscriberID}, {"invoice_id", f.InvoiceID},
		{"payment_demand_id", f.PaymentDemandID}, {"status", f.Status}, {"provider", f.Provider},
		{"provider_reference", f.ProviderReference}} {
		if c.v != "" {
			q.add(c.col+" = ?", c.v)
		}
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanPayment, `SELECT `+paymentColumns+` FROM payments`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list payments: %w", err)
	}
	if out == nil {
		out = []Payment{}
	}
	out, next := trimPage(out, p, func(p Payment) string { return p.ID })
	return out, next, nil
}

// InvoiceRef is what identifying a payment needs of an invoice.
type InvoiceRef struct {
	InvoiceID       string
	PaymentDemandID string
	SubscriberID    string
	OrganizationID  string
	Currency        string
}

// InvoicesByExternalIdentifier returns the invoices (at most 2: more than
// one is ambiguous) that identifier names as a payer writes it: the KID, or
// the invoice number (numbers are per organization; organizationID, when
// not "", narrows to one).
func (s *Store) InvoicesByExternalIdentifier(ctx context.Context, identifier, organizationID string) ([]InvoiceRef, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	q := tenantFilter(tenant)
	if n, err := strconv.ParseInt(identifier, 10, 64); err == nil && n > 0 {
		q.args = append(q.args, identifier, n)
		q.conds = append(q.conds, fmt.Sprintf("(kid = $%d OR invoice_number = $%d)", len(q.args)-1, len(q.args)))
	} else {
		q.add("kid = ?", identifier)
	}
	if organizationID != "" {
		q.add("organization_id = ?", organizationID)
	}
	refs, err := queryAll(ctx, s.r, func(r scanner) (InvoiceRef, error) {
		var x InvoiceRef
		err := r.Scan(&x.InvoiceID, &x.PaymentDemandID, &x.SubscriberID, &x.OrganizationID, &x.Currency)
		return x, err
	}, `SELECT id, payment_demand_id, subscriber_id, organization_id, currency FROM invoices`+q.where()+` ORDER BY id LIMIT 2`, q.args...)
	if err != nil {
		return nil, fmt.Errorf("store: invoices by external identifier: %w", err)
	}
	return refs, nil
}

// InvoiceRefOf returns the InvoiceRef of invoice id (ErrNotFound if none).
func (s *Store) InvoiceRefOf(ctx context.Context, id string) (InvoiceRef, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return InvoiceRef{}, err
	}
	var x InvoiceRef
	err = s.readRow(ctx, `SELECT id, payment_demand_id, subscriber_id, organization_id, currency FROM invoices WHERE tenant_id = $1 AND id = $2`,
		tenant, id).Scan(&x.InvoiceID, &x.PaymentDemandID, &x.SubscriberID, &x.OrganizationID, &x.Currency)
	if errors.Is(err, sql.ErrNoRows) {
		return x, ErrNotFound
	}
	if err != nil {
		return x, fmt.Errorf("store: invoice %s: %w", id, err)
	}
	return x, nil
}
