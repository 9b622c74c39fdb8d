package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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

// NewPayment is a payment result to record (RecordPayment).
type NewPayment struct {
	PaymentDemandID    string
	PaymentAgreementID *string
	Status             string
	Amount             int64
	Currency           string
	PaidAt             time.Time
	// PaidAtGiven says PaidAt came from the report (not defaulted): only
	// then does a repeated report have to carry the same value.
	PaidAtGiven       bool
	Provider          string
	ProviderReference string
	FailureReason     *string
	// Now is the tenant's time: entries, the allowance and events are
	// booked at it.
	Now time.Time
}

// errDuplicatePayment rolls back a report whose provider reference is
// recorded already.
var errDuplicatePayment = errors.New("store: payment reported already")

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
	var id, currency string
	switch {
	case demandID != "":
		err = s.readRow(ctx, `SELECT id, currency FROM payment_demands WHERE tenant_id = $1 AND id = $2`, tenant, demandID).Scan(&id, &currency)
		if errors.Is(err, sql.ErrNoRows) {
			return "", "", validation.Field("paymentDemandId", "there is no payment demand %s", demandID)
		}
	case invoiceID != "":
		err = s.readRow(ctx, `SELECT payment_demand_id, currency FROM invoices WHERE tenant_id = $1 AND id = $2`, tenant, invoiceID).Scan(&id, &currency)
		if errors.Is(err, sql.ErrNoRows) {
			return "", "", validation.Field("invoiceId", "there is no invoice %s", invoiceID)
		}
	default:
		q := tenantFilter(tenant)
		q.add("kid = ?", kid)
		if organizationID != "" {
			q.add("organization_id = ?", organizationID)
		}
		type hit struct{ demand, currency string }
		var hits []hit
		hits, err = queryAll(ctx, s.r, func(r scanner) (hit, error) {
			var h hit
			err := r.Scan(&h.demand, &h.currency)
			return h, err
		}, `SELECT payment_demand_id, currency FROM invoices`+q.where()+` LIMIT 2`, q.args...)
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

// RecordPayment records a payment result in one transaction. A success is
// matched to its demand with SettleDemand (the demand row is locked, so
// concurrent payments queue): the applied part is a Payment ledger entry,
// a surplus becomes an allowance, and PaymentCompleted (plus InvoicePaid
// when the invoice becomes Paid) is recorded. A failure is recorded with
// PaymentFailed and changes no balance.
//
// A (provider, providerReference) is recorded once. Reporting it again
// returns the first payment and created false, changing nothing, when the
// report agrees with it (status, amount, currency, demand, and paidAt when
// given); otherwise ErrConflict.
func (s *Store) RecordPayment(ctx context.Context, in NewPayment) (Payment, bool, error) {
	if !ValidID(in.PaymentDemandID) {
		return Payment{}, false, ErrNotFound
	}
	if in.Status != PaymentSucceeded && in.Status != PaymentFailed {
		return Payment{}, false, fmt.Errorf("store: payment status %q", in.Status)
	}
	if in.Amount <= 0 {
		return Payment{}, false, fmt.Errorf("store: payment amount %d: must be more than 0", in.Amount)
	}
	now := in.Now.UTC().Truncate(time.Microsecond)
	p := Payment{ID: NewID(), PaymentDemandID: in.PaymentDemandID, PaymentAgreementID: in.PaymentAgreementID, Status: in.Status,
		Currency: in.Currency, PaidAt: in.PaidAt.UTC().Truncate(time.Microsecond), Provider: in.Provider,
		ProviderReference: in.ProviderReference, FailureReason: in.FailureReason,
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	var applied, surplus int64
	err := s.InTx(ctx, func(tx *Tx) error {
		// A repeated report is found before anything is locked or written.
		// Two first reports racing meet in the unique key below instead.
		var one int
		err := tx.queryRow(ctx, `SELECT 1 FROM payments WHERE tenant_id = $1 AND provider = $2 AND provider_reference = $3`,
			tx.tenant, in.Provider, in.ProviderReference).Scan(&one)
		if err == nil {
			return errDuplicatePayment
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: find payment: %w", err)
		}
		var number int64
		if in.Status == PaymentSucceeded {
			c, err := tx.SettleDemand(ctx, in.PaymentDemandID, in.Amount, 0, now)
			if err != nil {
				return err
			}
			if c.Currency != in.Currency {
				return validation.Field("currency", "must be %s, the payment demand's currency", c.Currency)
			}
			p.InvoiceID, p.SubscriberID, p.SubscriberAccountID = c.InvoiceID, c.SubscriberID, c.AccountID
			applied, surplus = c.PaidApplied, c.Surplus
		} else {
			var currency string
			if err := tx.queryRow(ctx, `SELECT invoice_id, subscriber_id, account_id, currency FROM payment_demands
				WHERE tenant_id = $1 AND id = $2`, tx.tenant, in.PaymentDemandID).Scan(
				&p.InvoiceID, &p.SubscriberID, &p.SubscriberAccountID, &currency); err != nil {
				return fmt.Errorf("store: payment demand %s: %w", in.PaymentDemandID, notFound(err))
			}
			if currency != in.Currency {
				return validation.Field("currency", "must be %s, the payment demand's currency", currency)
			}
		}
		if in.PaymentAgreementID != nil {
			var owner string
			err := tx.queryRow(ctx, `SELECT subscriber_id FROM payment_agreements WHERE tenant_id = $1 AND id = $2`,
				tx.tenant, *in.PaymentAgreementID).Scan(&owner)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && owner != p.SubscriberID) {
				return validation.Field("paymentAgreementId", "there is no payment agreement %s of the invoice's subscriber", *in.PaymentAgreementID)
			}
			if err != nil {
				return fmt.Errorf("store: payment agreement: %w", err)
			}
		}
		if surplus > 0 {
			if err := tx.queryRow(ctx, `SELECT invoice_number FROM invoices WHERE tenant_id = $1 AND id = $2`,
				tx.tenant, p.InvoiceID).Scan(&number); err != nil {
				return fmt.Errorf("store: invoice %s: %w", p.InvoiceID, err)
			}
			item, err := tx.BookAllowance(ctx, p.SubscriberAccountID, fmt.Sprintf("Overpayment of invoice %d", number), surplus, now)
			if err != nil {
				return err
			}
			p.AllowanceItemID = &item
		}
		var id string
		err = tx.queryRow(ctx, `INSERT INTO payments (id, tenant_id, payment_demand_id, invoice_id, account_id, subscriber_id,
			payment_agreement_id, status, amount, applied, surplus, allowance_item_id, currency, paid_at, provider,
			provider_reference, failure_reason, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
			ON CONFLICT (tenant_id, provider, provider_reference) DO NOTHING RETURNING id`,
			p.ID, tx.tenant, p.PaymentDemandID, p.InvoiceID, p.SubscriberAccountID, p.SubscriberID, p.PaymentAgreementID,
			p.Status, in.Amount, applied, surplus, p.AllowanceItemID, p.Currency, ts(p.PaidAt), p.Provider,
			p.ProviderReference, p.FailureReason, ts(p.CreatedAt)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return errDuplicatePayment // a concurrent first report won
		}
		if err != nil {
			return fmt.Errorf("store: insert payment: %w", err)
		}
		if applied > 0 {
			if err := tx.addEntry(ctx, p.SubscriberAccountID, EntryPayment, -applied,
				entryRefs{Invoice: &p.InvoiceID, Payment: &p.ID}, now); err != nil {
				return err
			}
		}
		event := EventPaymentCompleted
		if p.Status == PaymentFailed {
			event = EventPaymentFailed
		}
		return tx.AddEvent(ctx, event, "/payment/"+p.ID, map[string]string{"paymentId": p.ID,
			"paymentDemandId": p.PaymentDemandID, "invoiceId": p.InvoiceID, "subscriberId": p.SubscriberID}, now)
	})
	if errors.Is(err, errDuplicatePayment) {
		return s.repeatedPayment(ctx, in)
	}
	if err != nil {
		return Payment{}, false, err
	}
	cur, err := currencyOf(p.Currency)
	if err != nil {
		return Payment{}, false, err
	}
	p.Amount, p.Applied, p.Surplus = catalog.NewAmount(in.Amount, cur), catalog.NewAmount(applied, cur), catalog.NewAmount(surplus, cur)
	return p, true, nil
}

// repeatedPayment answers a report of a provider reference recorded
// already: the first payment when the report agrees with it, else
// ErrConflict.
func (s *Store) repeatedPayment(ctx context.Context, in NewPayment) (Payment, bool, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Payment{}, false, err
	}
	p, err := scanPayment(s.readRow(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE tenant_id = $1 AND provider = $2 AND provider_reference = $3`, tenant, in.Provider, in.ProviderReference))
	if err != nil {
		return Payment{}, false, fmt.Errorf("store: payment %s/%s: %w", in.Provider, in.ProviderReference, err)
	}
	same := p.Status == in.Status && p.Amount.Minor == in.Amount && p.Currency == in.Currency &&
		p.PaymentDemandID == in.PaymentDemandID && (!in.PaidAtGiven || p.PaidAt.Equal(in.PaidAt.UTC().Truncate(time.Microsecond)))
	if !same {
		return Payment{}, false, fmt.Errorf("store: provider reference %s/%s names another payment (%s): %w",
			in.Provider, in.ProviderReference, p.ID, ErrConflict)
	}
	return p, false, nil
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
// a subscriber, invoice or payment demand the tenant does not have is
// ErrNotFound.
func (s *Store) ListPayments(ctx context.Context, f PaymentFilter, p Page) ([]Payment, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := s.RequireParents(ctx, Parents{Subscriber: f.SubscriberID, Invoice: f.InvoiceID, PaymentDemand: f.PaymentDemandID}); err != nil {
		return nil, "", fmt.Errorf("store: list payments: %w", err)
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
