package api

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// This file holds the request names Kadens accepts from clients written for
// INFO-Subscription's public API (docs/MIGRATION.md): each alias means what
// the Kadens name means, and what Kadens cannot honour is a 400 naming the
// field, never silently dropped.

// AgreementParametersInput is an order's paymentAgreementParameters: the
// fields of paymentAgreement, plus the provider objects of checkouts Kadens
// does not run, declared only so that a 400 can name them.
type AgreementParametersInput struct {
	AgreementParamsInput
	VippsMobilePayParameters json.RawMessage `json:"vippsMobilePayParameters" description:"Not supported: Kadens runs no mobile-wallet checkout (400)."`
	VippsParameters          json.RawMessage `json:"vippsParameters" description:"Not supported: Kadens runs no mobile-wallet checkout (400)."`
	PayExEcommerceParameters json.RawMessage `json:"payExEcommerceParameters" description:"Not supported: Kadens runs no card checkout (400)."`
}

// checkoutMethods are payment methods of INFO-Subscription that need a
// card or mobile-wallet checkout with the provider, which Kadens does not
// have; an order asking for one is refused rather than billed by invoice.
var checkoutMethods = []string{"Vipps", "MobilePay", "VippsMobilePay", "SwedbankPay", "PayEx", "Card", "CreditCard"}

// foreignProviderTypes are INFO-Subscription provider types Kadens does not
// offer: a list filtered on one finds no agreement (rather than a 400), as
// it would in INFO-Subscription for a subscriber without such an agreement.
var foreignProviderTypes = []string{"SwedbankPay", "PayEx", "MobilePay", "VippsMobilePay", "eFaktura", "BetalingsService"}

// resolveAliases moves INFO-Subscription names of an order onto the Kadens
// ones and returns what cannot be honoured.
func (in *OrderInput) resolveAliases() validation.Errors {
	var errs validation.Errors
	p := in.PaymentAgreementParameters
	if p == nil {
		return errs
	}
	const prefix = "paymentAgreementParameters."
	if in.PaymentAgreement != nil {
		errs.Add("paymentAgreementParameters", "is another name for paymentAgreement; give one of them")
	}
	refused := false
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		what string
	}{
		{"vippsMobilePayParameters", p.VippsMobilePayParameters, "a Vipps/MobilePay agreement checkout"},
		{"vippsParameters", p.VippsParameters, "a Vipps agreement checkout"},
		{"payExEcommerceParameters", p.PayExEcommerceParameters, "a Swedbank Pay card checkout"},
	} {
		if len(f.raw) > 0 {
			refused = true
			errs.Add(prefix+f.name, "Kadens does not run %s; create the agreement with a providerType Kadens collects with (Invoice, EHF, OIO, External, AvtaleGiro, Autogiro, Vipps)", f.what)
		}
	}
	// Method Vipps on a Vipps agreement is Kadens' own Vipps Recurring
	// provider (internal/vipps), not a checkout.
	vippsAgreement := strings.EqualFold(apikit.Trimmed(p.ProviderType), store.ProviderVipps)
	if m, ok := apikit.Canonical(apikit.Trimmed(p.PaymentMethod), checkoutMethods...); ok && !vippsAgreement {
		refused = true
		errs.Add(prefix+"paymentMethod", "%s needs a card or mobile-wallet checkout, which Kadens does not offer; use External to collect it with your own provider", m)
	}
	if !refused && in.PaymentAgreement == nil {
		params := p.AgreementParamsInput
		in.PaymentAgreement = &params
	} else {
		in.PaymentAgreementParameters = nil
	}
	return errs
}

// resolveAliases applies priceOverride (and its documented misspelling
// priceOveride) as price.
func (c *TemplatePackageChoices) resolveAliases() validation.Errors {
	var errs validation.Errors
	for _, a := range []struct {
		name string
		v    *apikit.Number
	}{{"priceOverride", c.PriceOverride}, {"priceOveride", c.PriceOveride}} {
		if a.v == nil {
			continue
		}
		if c.Price != nil && !sameNumber(*c.Price, *a.v) {
			errs.Add(a.name, "is another name for price and differs from it (%s, %s); give one of them", *c.Price, *a.v)
			continue
		}
		v := *a.v
		c.Price = &v
	}
	c.PriceOverride, c.PriceOveride = nil, nil
	return errs
}

// sameNumber compares two number literals by value (2000 = 2000.00).
func sameNumber(a, b apikit.Number) bool {
	da, err1 := a.Decimal()
	db, err2 := b.Decimal()
	if err1 != nil || err2 != nil {
		return a == b
	}
	return da.Equal(db)
}

// renamePrefix renames the fields of validation errors in err that start
// with from (or are from without its dot) to start with to.
func renamePrefix(err error, from, to string) error {
	var verrs validation.Errors
	if !errors.As(err, &verrs) {
		return err
	}
	out := make(validation.Errors, len(verrs))
	for i, fe := range verrs {
		switch {
		case strings.HasPrefix(fe.Field, from):
			fe.Field = to + strings.TrimPrefix(fe.Field, from)
		case fe.Field == strings.TrimSuffix(from, "."):
			fe.Field = strings.TrimSuffix(to, ".")
		}
		out[i] = fe
	}
	return out
}

// matching is how a payment report identifies its demand beyond
// invoiceId, paymentDemandId and kid.
type matching struct {
	kind       string // a match* constant, or "" (by whichever id is given)
	subscriber string // the payer, to be checked against the demand
	external   string // externalInvoiceIdentifier
}

// checkMatching reads matchingType, subscriberId and
// externalInvoiceIdentifier, recording what a matching type requires.
func (s *Server) checkMatching(errs *validation.Errors, in PaymentInput) matching {
	m := matching{
		kind: apikit.OneOf(errs, "matchingType", in.MatchingType, "", matchSubscriberAndInvoice, matchExternalIdentifier,
			matchSubscriberFromExternalIdentifer, matchNoInvoice, matchBillingAccount),
		subscriber: apikit.UUIDField(errs, "subscriberId", in.SubscriberID),
		external:   apikit.Text(errs, "externalInvoiceIdentifier", in.ExternalInvoiceIdentifier, 50, false),
	}
	switch m.kind {
	case matchNoInvoice, matchBillingAccount:
		errs.Add("matchingType", "%s is not supported: a Kadens payment settles a named payment demand; identify it with UseSubscriberAndInvoice, UseExternalIdentifier or UseSubscriberFromExternalIdentifier, or book an allowance on the subscriber account (POST /subscriberaccount/{id}/allowance)", m.kind)
	case matchSubscriberAndInvoice:
		if apikit.Trimmed(in.InvoiceID) == "" {
			errs.Add("invoiceId", "is required with matchingType %s", m.kind)
		}
		if apikit.Trimmed(in.SubscriberID) == "" {
			errs.Add("subscriberId", "is required with matchingType %s", m.kind)
		}
	case matchExternalIdentifier, matchSubscriberFromExternalIdentifer:
		if m.external == "" {
			errs.Add("externalInvoiceIdentifier", "is required with matchingType %s", m.kind)
		}
	}
	if m.external != "" && m.kind == "" {
		m.kind = matchExternalIdentifier
	}
	if m.external != "" && m.kind == matchSubscriberAndInvoice {
		errs.Add("externalInvoiceIdentifier", "is not used by matchingType %s: give invoiceId", m.kind)
	}
	return m
}
