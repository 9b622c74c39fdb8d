package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// OrderPart is a part of an order whose decoding a surface checked. The
// problems it found are listed where PlaceOrder checks that part, so that
// an answer names every problem at once in the same order, whichever
// layer found each.
type OrderPart int

// The parts of an order, in the order PlaceOrder checks them.
const (
	// OrderPartBody: problems of the order as a whole (names the
	// surface cannot honour), listed first.
	OrderPartBody OrderPart = iota
	// OrderPartChoices: templatePackageChoices.<field>, after
	// organizationId.
	OrderPartChoices
	// OrderPartSubscriber: subscriber.<field> of a new subscriber, before
	// the checks that its external id and number are free.
	OrderPartSubscriber
	// OrderPartInvoiceContact: invoiceContact.<field>.
	OrderPartInvoiceContact
	// OrderPartAgreement: paymentAgreement.<field>, before the
	// provider's checks.
	OrderPartAgreement
	// OrderPartRequestedStart: requestedStart.
	OrderPartRequestedStart
)

// NewOrder is an order to place, decoded by a surface. Ids are normalized
// (trimmed, lower case) and "" when left out; PlaceOrder reports a missing
// or malformed required one. Problems are what the surface's decoding
// found, by part.
type NewOrder struct {
	OrganizationID    string
	TemplatePackageID string
	Choices           catalog.Choices
	// SubscriberID names an existing subscriber; NewSubscriber is one to
	// create on completion. Exactly one of them is required.
	SubscriberID  string
	NewSubscriber *OrderSubscriber
	// InvoiceContact becomes the subscriber's Invoice contact (its role is
	// set here).
	InvoiceContact *store.Contact
	// PaymentAgreementID names a live agreement of the subscriber;
	// PaymentAgreement describes one to create on completion instead.
	PaymentAgreementID string
	PaymentAgreement   *OrderAgreement
	RequestedStart     *time.Time
	Problems           map[OrderPart]validation.Errors
}

// OrderSubscriber is an order's new subscriber, its fields checked by the
// surface.
type OrderSubscriber struct {
	store.Subscriber
	// ExternalIDField is the field the external id came from
	// (subscriber.externalId or an alias), which a taken one is named by.
	ExternalIDField string
}

// OrderAgreement is the payment agreement an order asks completion to
// create, trimmed: the provider type as given (any case), the reference
// and payment method, and the provider-side agreement (an AvtaleGiro or
// Autogiro mandate id, normalized) or "".
type OrderAgreement = AgreementParams

// PlaceOrder checks an order against the tenant's data at the tenant's
// time and stores it in status Created. Every problem is reported at once
// as validation.Errors naming the order's fields (organizationId,
// templatePackageId, templatePackageChoices.<field>, subscriberId,
// subscriber.<field>, invoiceContact, paymentAgreement.<field>,
// paymentAgreementId, requestedStart; body when something it refers to
// was removed meanwhile).
func (a *App) PlaceOrder(ctx context.Context, in NewOrder) (store.Order, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return store.Order{}, err
	}
	o, err := a.checkedOrder(ctx, in, now)
	if err != nil {
		return o, err
	}
	o, err = a.store.CreateOrder(ctx, o, now)
	if errors.Is(err, store.ErrConflict) {
		return o, validation.Field("body", "an organization, template package, subscriber or payment agreement this order refers to was removed at the same time; check it and retry")
	}
	return o, err
}

// checkedOrder validates in against the tenant's data at now and returns
// the order to store, recording every problem at once.
func (a *App) checkedOrder(ctx context.Context, in NewOrder, now time.Time) (store.Order, error) {
	var (
		o    store.Order
		org  *store.Organization
		errs = append(validation.Errors(nil), in.Problems[OrderPartBody]...)
	)
	if o.OrganizationID = requiredID(&errs, "organizationId", in.OrganizationID); o.OrganizationID != "" {
		got, err := a.store.Organization(ctx, o.OrganizationID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			errs.Add("organizationId", "no organization %s in this tenant", o.OrganizationID)
		case err != nil:
			return o, err
		default:
			org = &got
		}
	}

	o.Choices = in.Choices
	errs = append(errs, in.Problems[OrderPartChoices]...)
	if o.TemplatePackageID = requiredID(&errs, "templatePackageId", in.TemplatePackageID); o.TemplatePackageID != "" {
		_, merrs, err := a.engine.MergeOrder(ctx, o.TemplatePackageID, o.Choices)
		if err != nil {
			return o, err
		}
		errs = append(errs, merrs...)
	}

	subID := in.SubscriberID
	switch {
	case subID != "" && in.NewSubscriber != nil:
		errs.Add("subscriberId", "give either subscriberId (an existing subscriber) or subscriber (a new one), not both")
	case subID == "" && in.NewSubscriber == nil:
		errs.Add("subscriberId", "is required unless subscriber (a new subscriber) is given")
	case subID != "" && !store.ValidID(subID):
		errs.Add("subscriberId", "must be a uuid")
	case subID != "":
		switch _, err := a.store.Subscriber(ctx, subID); {
		case errors.Is(err, store.ErrNotFound):
			errs.Add("subscriberId", "no subscriber %s in this tenant", subID)
		case err != nil:
			return o, err
		default:
			o.SubscriberID = &subID
		}
	default:
		serrs, err := a.newSubscriberTaken(ctx, *in.NewSubscriber, in.Problems[OrderPartSubscriber])
		if err != nil {
			return o, err
		}
		errs = append(errs, serrs...)
		sub := in.NewSubscriber.Subscriber
		o.NewSubscriber = &sub
	}

	if in.InvoiceContact != nil {
		errs = append(errs, in.Problems[OrderPartInvoiceContact]...)
		c := *in.InvoiceContact
		c.Role = store.ContactInvoice
		if c.Name == "" && c.Email == "" {
			errs.Add("invoiceContact", "needs a name or an email")
		}
		if o.NewSubscriber != nil {
			for _, other := range o.NewSubscriber.Contacts {
				if other.Role == store.ContactInvoice {
					errs.Add("invoiceContact", "subscriber.contacts has an Invoice contact already; give it in one place")
				}
			}
		}
		o.InvoiceContact = &c
	}

	if in.PaymentAgreement != nil {
		if in.PaymentAgreementID != "" {
			errs.Add("paymentAgreement", "give either paymentAgreementId (an existing agreement) or paymentAgreement (one to create), not both")
		} else {
			errs = append(errs, in.Problems[OrderPartAgreement]...)
			p, err := a.checkOrderAgreement(ctx, &errs, *in.PaymentAgreement)
			if err != nil {
				return o, err
			}
			o.PaymentAgreementParams = &p
		}
	}
	if agreement := in.PaymentAgreementID; agreement != "" && in.PaymentAgreement == nil {
		switch {
		case !store.ValidID(agreement):
			errs.Add("paymentAgreementId", "must be a uuid")
		case in.NewSubscriber != nil && subID == "":
			errs.Add("paymentAgreementId", "a new subscriber has no payment agreements yet; leave paymentAgreementId out to use the default Invoice agreement")
		case o.SubscriberID != nil:
			switch _, err := a.store.LivePaymentAgreement(ctx, subID, agreement); {
			case errors.Is(err, store.ErrNotFound):
				errs.Add("paymentAgreementId", "%s is not a live payment agreement of subscriber %s", agreement, subID)
			case err != nil:
				return o, err
			default:
				o.PaymentAgreementID = &agreement
			}
		}
	}

	errs = append(errs, in.Problems[OrderPartRequestedStart]...)
	if t := in.RequestedStart; t != nil {
		switch {
		case !t.Before(engine.MaxClock):
			// The same bound as the test clock's: periods and invoices of a
			// series must stay within what the engine can represent.
			errs.Add("requestedStart", "must be before %s", engine.MaxClock.Format(time.RFC3339))
		case org != nil:
			loc, err := period.LoadZone(org.TimeZone)
			if err != nil {
				return o, fmt.Errorf("app: organization %s: %w", org.ID, err)
			}
			if today := period.StartOfDay(now, loc); period.StartOfDay(*t, loc).Before(today) {
				errs.Add("requestedStart", "must not be before today (%s in %s)", today.In(loc).Format(time.DateOnly), loc)
			}
		}
		start := t.UTC().Truncate(time.Microsecond)
		o.RequestedStart = &start
	}
	return o, errs.Err()
}

// newSubscriberTaken returns the problems of an order's new subscriber:
// those its decoding found, then an external id or number another
// subscriber has now (completion checks again).
func (a *App) newSubscriberTaken(ctx context.Context, sub OrderSubscriber, problems validation.Errors) (validation.Errors, error) {
	errs := append(validation.Errors(nil), problems...)
	extField := sub.ExternalIDField
	if extField == "" {
		extField = "subscriber.externalId"
	}
	taken := func(f store.SubscriberFilter) (string, error) {
		list, _, err := a.store.ListSubscribers(ctx, f, store.Page{Limit: 1})
		if err != nil || len(list) == 0 {
			return "", err
		}
		return list[0].ID, nil
	}
	if sub.ExternalID != "" && !hasField(errs, extField) {
		id, err := taken(store.SubscriberFilter{ExternalID: sub.ExternalID})
		if err != nil {
			return nil, err
		}
		if id != "" {
			errs.Add(extField, "%q is already the external id of subscriber %s; order for that subscriber with subscriberId", sub.ExternalID, id)
		}
	}
	if sub.SubscriberNumber > 0 {
		id, err := taken(store.SubscriberFilter{SubscriberNumber: sub.SubscriberNumber})
		if err != nil {
			return nil, err
		}
		if id != "" {
			errs.Add("subscriber.subscriberNumber", "%d is already the number of subscriber %s", sub.SubscriberNumber, id)
		}
	}
	return errs, nil
}

// orderAgreementPrefix is where an order names the fields of the agreement
// it asks for.
const orderAgreementPrefix = "paymentAgreement."

// checkOrderAgreement checks the agreement an order asks completion to
// create with the checker of its provider type, as POST /paymentagreement
// does, and returns it in canonical form; problems go to errs under
// paymentAgreement. A reference that must be unique must also be free now
// (completion checks again).
func (a *App) checkOrderAgreement(ctx context.Context, errs *validation.Errors, in OrderAgreement) (store.AgreementParams, error) {
	p, prov, err := a.CheckAgreementParams(ctx, errs, orderAgreementPrefix, in)
	if err != nil || prov.Type == "" {
		return p, err
	}
	refField := orderAgreementPrefix + provider.FieldReference
	if prov.UniqueReference && p.ProviderAgreementReference != "" && !hasField(*errs, refField) {
		id, err := a.ReferenceTaken(ctx, prov.Type, p.ProviderAgreementReference)
		if err != nil {
			return p, err
		}
		if id != "" {
			*errs = append(*errs, ErrReferenceTaken(refField, prov.Type, p.ProviderAgreementReference, id)...)
		}
	}
	return p, nil
}

// Order is the tenant's order id; store.ErrNotFound when there is none.
func (a *App) Order(ctx context.Context, id string) (store.Order, error) {
	return a.store.Order(ctx, id)
}

// Orders lists the tenant's orders matching f, oldest first, a page at a
// time; the string is the cursor of the next page ("" at the end).
func (a *App) Orders(ctx context.Context, f store.OrderFilter, p store.Page) ([]store.Order, string, error) {
	return a.store.ListOrders(ctx, f, p)
}

// CompleteOrder completes order id at the tenant's time, creating its
// subscriber (when new), payment agreement (when asked for or missing)
// and first subscription, and returns the completed order; completing it
// again returns it unchanged. store.ErrNotFound when there is no such
// order; validation.Errors when it was cancelled or no longer fits the
// tenant's data.
func (a *App) CompleteOrder(ctx context.Context, id string) (store.Order, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return store.Order{}, err
	}
	return a.engine.CompleteOrder(ctx, id, now)
}

// CancelOrder cancels order id, in status Created, at the tenant's time;
// cancelling it again returns it unchanged. store.ErrNotFound when there
// is no such order; validation.Errors naming id when it was completed: its
// subscription is what is cancelled then.
func (a *App) CancelOrder(ctx context.Context, id string) (store.Order, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return store.Order{}, err
	}
	o, err := a.store.CancelOrder(ctx, id, now)
	if err != nil {
		return o, err
	}
	if o.Status == store.OrderCompleted {
		sub := ""
		if o.SubscriptionID != nil {
			sub = *o.SubscriptionID
		}
		return o, validation.Field("id", "order %s was completed at %s and cannot be cancelled; cancel its subscription %s instead",
			o.ID, o.CompletedAt.Format(time.RFC3339), sub)
	}
	return o, nil
}

// requiredID checks a required id: "" when it is missing or not a uuid,
// which is recorded in errs under field.
func requiredID(errs *validation.Errors, field, id string) string {
	switch {
	case id == "":
		errs.Add(field, "is required")
	case !store.ValidID(id):
		errs.Add(field, "must be a uuid")
		return ""
	}
	return id
}
