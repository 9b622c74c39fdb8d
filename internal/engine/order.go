package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// Order completion lives here, beside Start, rather than in the HTTP layer:
// the API's POST /order/{id}/complete and the demo complete orders through
// the same CompleteOrder. Its validation errors name the fields of an order
// (subscriber.externalId, templatePackageChoices.units, …) because an order
// is what the caller completes.

// MergeOrder builds the subscription package of template id with choices.
// Validation errors are named as order fields (the choices' under
// templatePackageChoices, the template's own on templatePackageId); a missing
// template is reported on templatePackageId.
func (e *Engine) MergeOrder(ctx context.Context, id string, choices catalog.Choices) (catalog.SubscriptionPackage, validation.Errors, error) {
	mi, err := catalogdb.PackageForMerge(ctx, e.store, id)
	if errors.Is(err, store.ErrNotFound) {
		return catalog.SubscriptionPackage{}, validation.Field("templatePackageId", "no template package %s in this tenant", id), nil
	}
	if err != nil {
		return catalog.SubscriptionPackage{}, nil, err
	}
	mi.Choices = choices
	pkg, err := catalog.Merge(mi)
	var verrs validation.Errors
	if errors.As(err, &verrs) {
		return catalog.SubscriptionPackage{}, orderMergeErrors(verrs), nil
	}
	return pkg, nil, err
}

// orderMergeErrors names catalog.Merge's errors as fields of an order: the
// choices' fields under templatePackageChoices, and problems of the
// template itself (archived, its chain, its products gone) on
// templatePackageId.
func orderMergeErrors(errs validation.Errors) validation.Errors {
	out := make(validation.Errors, len(errs))
	for i, fe := range errs {
		switch {
		case fe.Field == "id", fe.Field == "packageChainId":
			fe.Field = "templatePackageId"
		default:
			fe.Field = "templatePackageChoices." + fe.Field
		}
		out[i] = fe
	}
	return out
}

// errOrderCancelled is the answer to completing a cancelled order: a
// validation error naming id.
func errOrderCancelled(o store.Order) error {
	return validation.Field("id", "order %s was cancelled at %s and cannot be completed", o.ID, o.CancelledAt.Format(time.RFC3339))
}

// CompleteOrder completes order id at now (the tenant's time) and returns
// it completed. In one transaction (retried on a write conflict): it claims
// the order, creates the subscriber of a new-subscriber order, sets the
// invoice contact, takes the payment agreement (the one named, one created
// from the order's parameters, or the subscriber's Invoice agreement) and
// starts the series with Start, so the first period is billed like every
// other. A completed order is returned as it is, also when a concurrent
// completion won; a cancelled one is a validation error naming id; a
// template or choices that no longer fit are validation errors naming the
// order's fields.
func (e *Engine) CompleteOrder(ctx context.Context, id string, now time.Time) (store.Order, error) {
	o, err := e.store.Order(ctx, id)
	if err != nil {
		return store.Order{}, err
	}
	switch o.Status {
	case store.OrderCompleted:
		return o, nil
	case store.OrderCancelled:
		return store.Order{}, errOrderCancelled(o)
	}
	// The choices are judged again against the template as it is now. The
	// order's template and choices never change, so this can happen before
	// the transaction, which then holds the write lock only for writing.
	pkg, verrs, err := e.MergeOrder(ctx, o.TemplatePackageID, o.Choices)
	if err != nil {
		return store.Order{}, err
	}
	if len(verrs) > 0 {
		return store.Order{}, verrs
	}
	var done store.Order
	err = e.store.InTxRetrying(ctx, func(tx *store.Tx) error {
		claimed, err := tx.ClaimOrder(ctx, id, now)
		if err != nil {
			return err
		}
		if !claimed {
			// Completed or cancelled since it was read, perhaps by a
			// concurrent completion that has committed: answer with that.
			done, err = tx.Order(ctx, id)
			return err
		}
		done, err = e.completeClaimed(ctx, tx, o, pkg, now)
		return err
	})
	if err != nil {
		return store.Order{}, err
	}
	if done.Status == store.OrderCancelled {
		return store.Order{}, errOrderCancelled(done)
	}
	return done, nil
}

// completeClaimed does the work of completing order o, claimed in tx, with
// the subscription package pkg, at now; it returns the completed order.
func (e *Engine) completeClaimed(ctx context.Context, tx *store.Tx, o store.Order, pkg catalog.SubscriptionPackage, now time.Time) (store.Order, error) {
	org, err := tx.OrderOrganization(ctx, o.OrganizationID)
	if err != nil {
		return store.Order{}, err
	}
	var sub store.Subscriber
	if o.SubscriberID != nil {
		sub, err = tx.OrderSubscriber(ctx, *o.SubscriberID)
		if errors.Is(err, store.ErrNotFound) {
			return store.Order{}, validation.Field("subscriberId", "subscriber %s no longer exists", *o.SubscriberID)
		}
		if err == nil && o.InvoiceContact != nil {
			sub, err = tx.SetInvoiceContact(ctx, sub, *o.InvoiceContact, now)
		}
	} else {
		ns := *o.NewSubscriber
		if o.InvoiceContact != nil {
			ns.Contacts = append(append([]store.Contact{}, ns.Contacts...), *o.InvoiceContact)
		}
		sub, err = tx.InsertSubscriber(ctx, ns, now)
		if err != nil {
			err = newSubscriberError(err, ns)
		}
	}
	if err != nil {
		return store.Order{}, err
	}

	var agreement store.PaymentAgreement
	switch {
	case o.PaymentAgreementParams != nil:
		agreement, err = orderAgreement(ctx, tx, sub.ID, *o.PaymentAgreementParams, now)
	case o.PaymentAgreementID != nil:
		agreement, err = tx.LivePaymentAgreement(ctx, sub.ID, *o.PaymentAgreementID)
		if errors.Is(err, store.ErrNotFound) {
			return store.Order{}, validation.Field("paymentAgreementId", "%s is no longer a live payment agreement of subscriber %s",
				*o.PaymentAgreementID, sub.ID)
		}
	default:
		agreement, err = tx.InvoiceAgreement(ctx, sub.ID, now)
	}
	if err != nil {
		return store.Order{}, err
	}

	loc, err := period.LoadZone(org.TimeZone)
	if err != nil {
		return store.Order{}, fmt.Errorf("organization %s: %w", org.ID, err)
	}
	start := now
	if o.RequestedStart != nil && o.RequestedStart.After(now) {
		start = *o.RequestedStart
	}
	if pkg.SubscriptionPackageChainID != nil {
		// A chained template: the series follows a chain instance, frozen
		// now and written with the order (docs/CATALOG.md).
		pkg, err = e.InstancePackage(ctx, tx, o.TemplatePackageID, o.Choices, now)
		var verrs validation.Errors
		if errors.As(err, &verrs) {
			return store.Order{}, orderMergeErrors(verrs)
		}
		if err != nil {
			return store.Order{}, err
		}
	}
	orderID, agreementID := o.ID, agreement.ID
	first, err := e.Start(ctx, tx, NewSeries{
		SubscriberID: sub.ID, OrganizationID: org.ID, TimeZone: org.TimeZone,
		OrderID: &orderID, PaymentAgreementID: &agreementID,
		Package: pkg, Choices: o.Choices, Start: period.StartOfDay(start, loc), TemplatePackageID: o.TemplatePackageID,
	}, now)
	if err != nil {
		return store.Order{}, err
	}
	if err := tx.FinishOrder(ctx, o.ID, sub.ID, agreement.ID, first.ID); err != nil {
		return store.Order{}, err
	}
	if err := tx.AddEvent(ctx, store.EventOrderProcessed, "/order/"+o.ID, OrderProcessedData{
		FirstPeriodCreated: true, OrderID: o.ID, OrganizationID: org.ID, PaymentAgreementID: agreement.ID,
		SubscriberID: sub.ID, SubscriptionID: first.ID, TemplatePackageID: o.TemplatePackageID}, now); err != nil {
		return store.Order{}, err
	}
	return tx.Order(ctx, o.ID)
}

// OrderProcessedData is the data of OrderProcessed. FirstPeriodCreated
// tells receivers written for INFO-Subscription (which may announce an
// order before its first period exists) that the first subscription
// period exists; in Kadens it is always true, because completing an order
// creates the first period in the same transaction.
type OrderProcessedData struct {
	FirstPeriodCreated bool   `json:"firstPeriodCreated"`
	OrderID            string `json:"orderId"`
	OrganizationID     string `json:"organizationId"`
	PaymentAgreementID string `json:"paymentAgreementId"`
	SubscriberID       string `json:"subscriberId"`
	SubscriptionID     string `json:"subscriptionId"`
	TemplatePackageID  string `json:"templatePackageId"`
}

// newSubscriberError names the store's refusals of an order's new
// subscriber (a number or external id taken since the order was created)
// as the order's fields.
func newSubscriberError(err error, sub store.Subscriber) error {
	switch {
	case errors.Is(err, store.ErrSubscriberNumberTaken):
		return validation.Field("subscriber.subscriberNumber", "%d is already the number of another subscriber", sub.SubscriberNumber)
	case errors.Is(err, store.ErrExternalIDTaken):
		return validation.Field("subscriber.externalId", "%q is already the external id of another subscriber", sub.ExternalID)
	case errors.Is(err, store.ErrSubscriberNumberRange):
		return validation.Field("subscriber.subscriberNumber", "%d is not between 1 and %d", sub.SubscriberNumber, int64(store.MaxSubscriberNumber))
	case errors.Is(err, store.ErrCounterExhausted):
		return validation.Field("subscriber.subscriberNumber", "no number is left to assign; give one explicitly")
	}
	return err
}

// orderAgreement creates, in an order's completion transaction, the
// agreement the order describes for subscriber subscriberID (an Invoice
// agreement the subscriber has already is used as it is).
func orderAgreement(ctx context.Context, tx *store.Tx, subscriberID string, p store.AgreementParams, now time.Time) (store.PaymentAgreement, error) {
	a, _, err := tx.CreateAgreement(ctx, store.PaymentAgreement{SubscriberID: subscriberID, ProviderType: p.ProviderType,
		ProviderAgreementReference: p.ProviderAgreementReference, PaymentMethod: p.PaymentMethod}, now)
	if errors.Is(err, store.ErrAgreementReferenceTaken) {
		return store.PaymentAgreement{}, validation.Field("paymentAgreement.providerAgreementReference",
			"%q became the reference of another live External agreement of this tenant since the order was created", p.ProviderAgreementReference)
	}
	return a, err
}

// MaxClock bounds a test clock and an order's requested start. The engine
// and the store represent times up to the end of year 9999 (RFC 3339 in
// JSON, fixed-width text in SQLite); a clock near that bound makes every
// later order fail when its periods, due dates and reminders run past it.
// Nearly a thousand years ahead is more than any test needs and leaves
// room for the longest binding period.
var MaxClock = time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)

// AdvanceClock runs Advance for test tenant tenantID up to to, then moves
// the tenant's clock there. Another advance of the same tenant may be
// running (a second request or another process), or a crashed process's
// lease may not have run out yet: it waits for either, polling every
// 100 ms for up to the lease plus 10 s, and then returns an error wrapping
// ErrBusy. The caller checks that to is after the clock and before MaxClock.
//
// The Stats are what was performed of the actions due since the clock (as
// it was when the call began) up to to, by whichever process performed
// them: each batch of a clock's advance is recorded in its transaction
// (RecordClockWork) and the answer sums the records. A request that
// waited while another process did the work, or whose lease passed to
// another process halfway (a short --engine-lease), counts that work too,
// instead of the nothing that was left for it to do.
func (e *Engine) AdvanceClock(ctx context.Context, tenantID string, to time.Time) (Stats, error) {
	t, err := e.store.TenantByID(ctx, tenantID)
	if err != nil {
		return Stats{}, err
	}
	from := t.CreatedAt
	if t.Clock != nil {
		from = *t.Clock
	}
	deadline := time.Now().Add(e.Lease + 10*time.Second)
	waited := false
	for {
		_, err = e.advance(ctx, tenantID, to, true)
		if !errors.Is(err, ErrBusy) {
			break
		}
		if !waited {
			waited = true
			e.log.Info("engine: test clock advance waits for the worker holding the tenant", "tenant", tenantID, "to", to)
		}
		if time.Now().After(deadline) {
			return Stats{}, fmt.Errorf("engine: advance test clock of tenant %s: %w", tenantID, err)
		}
		select {
		case <-ctx.Done():
			return Stats{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil {
		return Stats{}, err
	}
	// A concurrent advance that moved the clock further is no error.
	if err := e.store.SetTenantClock(ctx, tenantID, to); err != nil && !errors.Is(err, store.ErrConflict) {
		return Stats{}, err
	}
	w, err := SumClockWork(ctx, e.store, tenantID, from, to)
	if err != nil {
		return Stats{}, err
	}
	// The records of advances that ended before this one began are
	// needed by none still running (an hour is far beyond any wait).
	if err := PruneClockWork(ctx, e.store, tenantID, from, time.Now().Add(-time.Hour)); err != nil {
		e.log.Warn("engine: prune test clock records", "tenant", tenantID, "err", err)
	}
	return Stats{Renewals: w.Renewals, Deactivations: w.Deactivations, PlanChanges: w.PlanChanges, Reminders: w.Reminders,
		PaymentStops: w.PaymentStops, PriceChangeNotices: w.PriceChangeNotices}, nil
}
