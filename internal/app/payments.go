package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// Matching types of a payment report: how it names the demand it pays,
// with INFO-Subscription's names (docs/MIGRATION.md "Payment matching").
const (
	MatchSubscriberAndInvoice             = "UseSubscriberAndInvoice"
	MatchExternalIdentifier               = "UseExternalIdentifier"
	MatchSubscriberFromExternalIdentifier = "UseSubscriberFromExternalIdentifier"
	MatchNoInvoice                        = "NoInvoiceMatch"
	MatchBillingAccount                   = "UseBillingAccount"
)

// NewPayment is a payment result to record (RecordPayment), as a surface
// read it: ids lower-cased and checked to be uuids, texts trimmed and of
// their lengths, the amount in minor units of Currency. It names its
// demand by exactly one of InvoiceID, PaymentDemandID, KID and
// ExternalInvoiceIdentifier.
type NewPayment struct {
	InvoiceID       string
	PaymentDemandID string
	KID             string
	// OrganizationID narrows a KID or an external identifier to the
	// invoices of one organization.
	OrganizationID string
	// Matching is a Match* constant: MatchExternalIdentifier or
	// MatchSubscriberFromExternalIdentifier with ExternalInvoiceIdentifier,
	// "" (or MatchSubscriberAndInvoice) with an id or KID.
	Matching                  string
	ExternalInvoiceIdentifier string
	// SubscriberID, when given, must be the payer of the demand matched.
	SubscriberID       string
	Status             string // store.PaymentSucceeded or store.PaymentFailed
	Amount             int64
	Currency           string
	PaidAt             *time.Time // nil: now on the tenant's clock
	Provider           string
	ProviderReference  string
	FailureReason      *string
	PaymentAgreementID string
}

// matchAttempts bounds how often a payment matched by its subscriber is
// matched again after concurrent payments changed the demand it matched.
const matchAttempts = 4

// RecordPayment records a payment result against the demand it names and
// says whether it was new: a report of a provider reference recorded
// already answers the first payment and false. A target that is not in
// the tenant, a currency other than the demand's, a payer who is not the
// demand's subscriber or a payment that matches no demand is a
// validation.Errors naming the field; a repeated reference with other data
// (or a demand that kept changing under a payment matched by its amount)
// wraps store.ErrConflict.
func (a *App) RecordPayment(ctx context.Context, in NewPayment) (store.Payment, bool, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return store.Payment{}, false, err
	}
	np := invoicing.NewPayment{Status: in.Status, Amount: in.Amount, Currency: in.Currency, PaidAt: now,
		Provider: in.Provider, ProviderReference: in.ProviderReference, FailureReason: in.FailureReason, Now: now}
	if in.PaidAt != nil {
		np.PaidAt, np.PaidAtGiven = *in.PaidAt, true
	}
	if in.PaymentAgreementID != "" {
		id := in.PaymentAgreementID
		np.PaymentAgreementID = &id
	}
	// A payment matched by what a demand still claims (matchingType
	// UseSubscriberFromExternalIdentifier) is matched on reads made before
	// the demand's lock; RecordPayment checks the match again under it and,
	// when a concurrent payment changed the demand, the payment is matched
	// again — to the first payment of its reference, to no demand (400), or
	// after matchAttempts to a 409.
	for attempt := 1; ; attempt++ {
		// The target is resolved before the currency can be compared with
		// the demand's; an unknown target (also another tenant's) is a 400
		// on its field, like any other reference in a body.
		var demandCurrency string
		if in.ExternalInvoiceIdentifier != "" {
			np.PaymentDemandID, demandCurrency, np.Outstanding, err = a.externalTarget(ctx, in)
		} else {
			np.PaymentDemandID, demandCurrency, err = a.store.PaymentTarget(ctx, in.InvoiceID, in.PaymentDemandID, in.KID, in.OrganizationID)
		}
		if err != nil {
			return store.Payment{}, false, err
		}
		if err := a.checkPayer(ctx, in.SubscriberID, np.PaymentDemandID); err != nil {
			return store.Payment{}, false, err
		}
		if demandCurrency != in.Currency {
			return store.Payment{}, false, validation.Field("currency", "must be %s, the payment demand's currency", demandCurrency)
		}
		p, created, err := invoicing.RecordPayment(ctx, a.store, np)
		if errors.Is(err, invoicing.ErrMatchChanged) && attempt < matchAttempts {
			continue
		}
		if errors.Is(err, invoicing.ErrMatchChanged) {
			return store.Payment{}, false, fmt.Errorf("app: payment %s/%s: %w: %w", in.Provider, in.ProviderReference, err, store.ErrConflict)
		}
		if err != nil {
			return store.Payment{}, false, err
		}
		return p, created, nil
	}
}

// externalTarget resolves a payment identified by externalInvoiceIdentifier
// to a payment demand and its currency. A payment matched by what its
// subscriber's one outstanding demand claims (UseSubscriberFromExternalIdentifier)
// also returns that claim, which RecordPayment checks again under the
// demand's lock (NewPayment.Outstanding).
func (a *App) externalTarget(ctx context.Context, in NewPayment) (string, string, *int64, error) {
	const field = "externalInvoiceIdentifier"
	refs, err := a.store.InvoicesByExternalIdentifier(ctx, in.ExternalInvoiceIdentifier, in.OrganizationID)
	if err != nil {
		return "", "", nil, err
	}
	switch {
	case len(refs) == 0:
		return "", "", nil, validation.Field(field, "no invoice has KID or invoice number %s", in.ExternalInvoiceIdentifier)
	case len(refs) > 1 && in.Matching == MatchExternalIdentifier:
		return "", "", nil, validation.Field("organizationId", "is required: %s names invoices of several organizations (or a KID and an invoice number)", in.ExternalInvoiceIdentifier)
	case len(refs) > 1 && refs[0].SubscriberID != refs[1].SubscriberID:
		return "", "", nil, validation.Field(field, "%s names invoices of several subscribers; give organizationId", in.ExternalInvoiceIdentifier)
	}
	ref := refs[0]
	if in.Matching == MatchExternalIdentifier {
		return ref.PaymentDemandID, ref.Currency, nil, nil
	}
	// UseSubscriberFromExternalIdentifier: the identifier names the payer
	// only; a report repeated after the demand was settled finds its
	// first payment.
	if in.SubscriberID != "" && in.SubscriberID != ref.SubscriberID {
		return "", "", nil, validation.Field("subscriberId", "%s names an invoice of subscriber %s, not of %s", in.ExternalInvoiceIdentifier, ref.SubscriberID, in.SubscriberID)
	}
	first := func() (string, string, bool, error) {
		prev, _, err := a.store.ListPayments(ctx, store.PaymentFilter{Provider: in.Provider, ProviderReference: in.ProviderReference}, store.Page{Limit: 1})
		if err != nil || len(prev) != 1 || prev[0].SubscriberID != ref.SubscriberID {
			return "", "", false, err
		}
		return prev[0].PaymentDemandID, prev[0].Currency, true, nil
	}
	if demand, cur, ok, err := first(); err != nil || ok {
		return demand, cur, nil, err
	}
	amount := in.Amount
	demand, outstanding, ok, err := invoicing.MatchBySubscriber(ctx, a.store, ref.SubscriberID, in.Currency, amount)
	if err != nil {
		return "", "", nil, err
	}
	if !ok {
		// The first report of this reference may have settled the demand
		// between the two reads.
		if demand, cur, ok, err := first(); err != nil || ok {
			return demand, cur, nil, err
		}
		return "", "", nil, validation.Field(field, "the payment cannot be matched: subscriber %s has %d outstanding %s payment demands and it must be exactly one, claiming exactly this amount; identify the invoice with matchingType %s",
			ref.SubscriberID, outstanding, in.Currency, MatchExternalIdentifier)
	}
	return demand, in.Currency, &amount, nil
}

// checkPayer checks that the subscriber a report names (when it names
// one) is the one of the demand the payment was matched to.
func (a *App) checkPayer(ctx context.Context, subscriberID, demandID string) error {
	if subscriberID == "" {
		return nil
	}
	d, err := a.store.PaymentDemand(ctx, demandID)
	if err != nil {
		return err
	}
	if d.SubscriberID != subscriberID {
		return validation.Field("subscriberId", "the payment was matched to invoice %s of subscriber %s, not of %s", d.InvoiceID, d.SubscriberID, subscriberID)
	}
	return nil
}

// Payment returns a payment of the tenant, or store.ErrNotFound.
func (a *App) Payment(ctx context.Context, id string) (store.Payment, error) {
	return a.store.Payment(ctx, id)
}

// Payments lists the tenant's payments that f selects, a page at a time.
func (a *App) Payments(ctx context.Context, f store.PaymentFilter, p store.Page) ([]store.Payment, string, error) {
	return a.store.ListPayments(ctx, f, p)
}
