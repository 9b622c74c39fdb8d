package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/swaggest/jsonschema-go"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// OrderInput is the body of POST /order (OrderCreate). Either subscriberId
// (an existing subscriber) or subscriber (a new one, created when the
// order is completed) is required, not both.
type OrderInput struct {
	OrganizationID         *string                 `json:"organizationId" required:"true" format:"uuid" description:"The selling organization. Its time zone decides where the subscription's periods start."`
	TemplatePackageID      *string                 `json:"templatePackageId" required:"true" format:"uuid" description:"The template package ordered; archived packages cannot be ordered. Its currency is the subscription's and need not be the organization's."`
	TemplatePackageChoices *TemplatePackageChoices `json:"templatePackageChoices" description:"What the order chooses; left out, every default of the template applies. Checked now and again on completion."`
	SubscriberID           *string                 `json:"subscriberId" format:"uuid" description:"An existing subscriber. Leave out to give subscriber instead."`
	Subscriber             *OrderSubscriberInput   `json:"subscriber" description:"A new subscriber, created when the order is completed. Leave out to give subscriberId instead."`
	PaymentAgreementID     *string                 `json:"paymentAgreementId" format:"uuid" description:"A live payment agreement of the subscriber. Left out (and no paymentAgreement): the subscriber's default Invoice agreement (created on completion if missing)."`
	PaymentAgreement       *AgreementParamsInput   `json:"paymentAgreement" description:"Instead of paymentAgreementId: the agreement to create for the subscriber on completion (also for a new subscriber), checked now with the rules of POST /paymentagreement (400 naming paymentAgreement.<field>); an External reference must still be free on completion."`
	// PaymentAgreementParameters is INFO-Subscription's name for
	// paymentAgreement (docs/MIGRATION.md), so that clients written for it
	// place the same orders.
	PaymentAgreementParameters *AgreementParametersInput `json:"paymentAgreementParameters" description:"The same as paymentAgreement, under the name INFO-Subscription clients use; give one of them. Card and mobile-wallet checkouts (vippsMobilePayParameters, vippsParameters, payExEcommerceParameters) are not offered by Kadens: a 400 names them."`
	InvoiceContact             *InvoiceContactInput      `json:"invoiceContact" description:"Who receives the invoices. On completion it becomes the subscriber's Invoice contact, replacing the one it had."`
	RequestedStart             *string                   `json:"requestedStart" format:"date-time" example:"2025-02-01T00:00:00+01:00" description:"RFC 3339. The subscription starts at local midnight (organization's time zone) of this date, or of the completion date when that is later. Not before today; before 3000-01-01."`
}

// OrderSubscriberInput is the new subscriber of an order: the fields of
// POST /subscriber, where the external id may also be written
// externalSubscriberId.
type OrderSubscriberInput struct {
	SubscriberInput
	ExternalSubscriberID *string `json:"externalSubscriberId" maxLength:"200" example:"crm-10442" description:"Same as externalId; give one of them."`
}

// InvoiceContactInput is an order's invoice contact: a subscriber contact
// whose role is Invoice. It needs a name or an email.
type InvoiceContactInput struct {
	Name    *string       `json:"name" maxLength:"200" example:"Regnskap AS"`
	Email   *string       `json:"email" format:"email" maxLength:"254" example:"faktura@regnskap.no"`
	Phone   *string       `json:"phone" maxLength:"30"`
	Address *AddressInput `json:"address"`
}

// Order is an order as the API shows it.
type Order struct {
	ID                     string                 `json:"id"`
	Status                 string                 `json:"status" enum:"Created,Completed,Cancelled"`
	OrganizationID         string                 `json:"organizationId"`
	TemplatePackageID      string                 `json:"templatePackageId"`
	TemplatePackageChoices TemplatePackageChoices `json:"templatePackageChoices"`
	// SubscriberID is the subscriber ordered for; on a new-subscriber
	// order it is null until completion has created the subscriber.
	SubscriberID       *string          `json:"subscriberId" description:"The existing subscriber, or the one completion created; null until then on a new-subscriber order."`
	Subscriber         *OrderSubscriber `json:"subscriber" description:"The new-subscriber data the order carries; null when it named an existing subscriber."`
	PaymentAgreementID *string          `json:"paymentAgreementId" description:"The agreement the order named, or the one completion used (or created from paymentAgreement)."`
	InvoiceContact     *store.Contact   `json:"invoiceContact"`
	RequestedStart     *time.Time       `json:"requestedStart"`
	SubscriptionID     *string          `json:"subscriptionId" description:"The first subscription, once completed."`
	CreatedAt          time.Time        `json:"createdAt"`
	CompletedAt        *time.Time       `json:"completedAt"`
	CancelledAt        *time.Time       `json:"cancelledAt"`

	PaymentAgreement *store.AgreementParams `json:"paymentAgreement" description:"The agreement parameters the order carries (created on completion); null when it named none."`
}

// OrderSubscriber is the new subscriber an order carries.
type OrderSubscriber struct {
	Name             string          `json:"name"`
	Email            string          `json:"email"`
	Phone            string          `json:"phone"`
	Address          store.Address   `json:"address"`
	Country          string          `json:"country"`
	ExternalID       string          `json:"externalId"`
	SubscriberNumber *int64          `json:"subscriberNumber" description:"null: assigned on completion."`
	Contacts         []store.Contact `json:"contacts"`
}

type orderListParams struct {
	ListParams
	SubscriberID   string `query:"subscriberId" format:"uuid" description:"Only orders of this subscriber. A new-subscriber order matches once completed."`
	Status         string `query:"status" enum:"Created,Completed,Cancelled" description:"Only orders in this status."`
	OrganizationID string `query:"organizationId" format:"uuid" description:"Only orders of this organization."`
}

func (s *Server) orderRoutes() {
	const tag = "Order"
	orderOK := response{status: http.StatusOK, body: new(Order)}
	s.add(route{
		method: http.MethodPost, path: "/order", id: "createOrder", tag: tag,
		summary: "Create an order",
		desc: "Creates an order in status `Created`; nothing else happens until it is completed. Every problem is reported " +
			"at once: the organization and the template package must exist in the tenant, the template must not be " +
			"archived, and the choices must suit it (the 400 names `templatePackageChoices.<field>`, as the package " +
			"preview does). The template's currency is the subscription's; it need not be the organization's. " +
			"Either `subscriberId` or `subscriber` is required; a new subscriber's `externalId`/`externalSubscriberId` " +
			"and `subscriberNumber` must be free. `requestedStart` may not be before today in the organization's time " +
			"zone (the tenant's clock). `createdAt` is the tenant's time (a test tenant's clock).",
		request: new(OrderInput), responses: common(respCreated), handle: s.createOrder,
	})
	s.add(route{
		method: http.MethodGet, path: "/order", id: "listOrders", tag: tag,
		summary: "List orders", desc: "Oldest first. Filters combine with AND; their names match ignoring case.",
		request:   new(orderListParams),
		responses: common(respList(new([]Order))),
		handle:    s.listOrders,
	})
	s.add(route{
		method: http.MethodGet, path: "/order/{id}", id: "getOrder", tag: tag,
		summary: "Get an order", request: new(idParam),
		responses: common(orderOK, respNotFound), handle: s.getOrder,
	})
	s.add(route{
		method: http.MethodPost, path: "/order/{id}/complete", id: "completeOrder", tag: tag,
		summary: "Complete an order",
		desc: "In one transaction: creates the subscriber (for a new-subscriber order; an `externalId` or " +
			"`subscriberNumber` taken meanwhile is a 400 naming `subscriber.externalId` or `subscriber.subscriberNumber`), " +
			"sets the invoice contact, merges the template with the choices again (a template archived or changed so " +
			"that the choices no longer fit is a 400 naming `templatePackageId` or `templatePackageChoices.<field>`), " +
			"takes the payment agreement (the one named, which must still be live, or the subscriber's default Invoice " +
			"agreement, created if missing) and creates the first subscription, starting at local midnight of the " +
			"requested start or of today (tenant's clock), whichever is later. Records SubscriptionCreated and " +
			"OrderProcessed. Answers 200 with the completed order. Completing a completed order changes nothing and " +
			"answers 200 with it again, also when several completions race; completing a cancelled order is a 400 " +
			"naming `id`.",
		request: new(idParam), responses: common(orderOK, respNotFound), handle: s.completeOrder,
	})
	s.add(route{
		method: http.MethodPost, path: "/order/{id}/cancel", id: "cancelOrder", tag: tag,
		summary: "Cancel an order",
		desc: "Cancels an order in status `Created` and answers 200 with it; cancelling a cancelled order answers the " +
			"same. A completed order cannot be cancelled (400 naming `id`): cancel its subscription instead. No body.",
		request: new(idParam), responses: common(orderOK, respNotFound), handle: s.cancelOrder,
	})
}

// prefixed renames errs as fields inside prefix.
func prefixed(prefix string, errs validation.Errors) validation.Errors {
	out := make(validation.Errors, len(errs))
	for i, fe := range errs {
		out[i] = validation.FieldError{Field: prefix + fe.Field, Message: fe.Message}
	}
	return out
}

// requiredID reads a required uuid body field.
func requiredID(errs *validation.Errors, field string, p *string) string {
	id := normID(p)
	switch {
	case id == "":
		errs.Add(field, "is required")
	case !store.ValidID(id):
		errs.Add(field, "must be a uuid")
		return ""
	}
	return id
}

// checkedOrder validates in against the tenant's data at now and returns
// the order to store, recording every problem at once.
func (s *Server) checkedOrder(ctx context.Context, in OrderInput, now time.Time) (store.Order, error) {
	var (
		errs validation.Errors
		o    store.Order
		org  *store.Organization
	)
	if o.OrganizationID = requiredID(&errs, "organizationId", in.OrganizationID); o.OrganizationID != "" {
		got, err := s.store.Organization(ctx, o.OrganizationID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			errs.Add("organizationId", "no organization %s in this tenant", o.OrganizationID)
		case err != nil:
			return o, err
		default:
			org = &got
		}
	}

	if c := in.TemplatePackageChoices; c != nil {
		var cerrs validation.Errors
		o.Choices, cerrs = c.choices()
		errs = append(errs, prefixed("templatePackageChoices.", cerrs)...)
	}
	if o.TemplatePackageID = requiredID(&errs, "templatePackageId", in.TemplatePackageID); o.TemplatePackageID != "" {
		_, merrs, err := s.engine.MergeOrder(ctx, o.TemplatePackageID, o.Choices)
		if err != nil {
			return o, err
		}
		errs = append(errs, merrs...)
	}

	subID := normID(in.SubscriberID)
	switch {
	case subID != "" && in.Subscriber != nil:
		errs.Add("subscriberId", "give either subscriberId (an existing subscriber) or subscriber (a new one), not both")
	case subID == "" && in.Subscriber == nil:
		errs.Add("subscriberId", "is required unless subscriber (a new subscriber) is given")
	case subID != "" && !store.ValidID(subID):
		errs.Add("subscriberId", "must be a uuid")
	case subID != "":
		switch _, err := s.store.Subscriber(ctx, subID); {
		case errors.Is(err, store.ErrNotFound):
			errs.Add("subscriberId", "no subscriber %s in this tenant", subID)
		case err != nil:
			return o, err
		default:
			o.SubscriberID = &subID
		}
	default:
		sub, serrs, err := s.checkedNewSubscriber(ctx, *in.Subscriber)
		if err != nil {
			return o, err
		}
		errs = append(errs, serrs...)
		o.NewSubscriber = &sub
	}

	if ic := in.InvoiceContact; ic != nil {
		c := contactChecks{&errs}.contact(ContactInput{Name: ic.Name, Email: ic.Email, Phone: ic.Phone, Address: ic.Address}, "invoiceContact")
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
		if err := s.checkOrderAgreement(ctx, &errs, &o, in); err != nil {
			return o, err
		}
	}
	if agreement := normID(in.PaymentAgreementID); agreement != "" && in.PaymentAgreement == nil {
		switch {
		case !store.ValidID(agreement):
			errs.Add("paymentAgreementId", "must be a uuid")
		case in.Subscriber != nil && subID == "":
			errs.Add("paymentAgreementId", "a new subscriber has no payment agreements yet; leave paymentAgreementId out to use the default Invoice agreement")
		case o.SubscriberID != nil:
			switch _, err := s.store.LivePaymentAgreement(ctx, subID, agreement); {
			case errors.Is(err, store.ErrNotFound):
				errs.Add("paymentAgreementId", "%s is not a live payment agreement of subscriber %s", agreement, subID)
			case err != nil:
				return o, err
			default:
				o.PaymentAgreementID = &agreement
			}
		}
	}

	if v := trimmed(in.RequestedStart); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		switch {
		case err != nil:
			errs.Add("requestedStart", "must be an RFC 3339 time such as 2025-02-01T00:00:00+01:00")
		case !t.Before(engine.MaxClock):
			// The same bound as the test clock's: periods and invoices of a
			// series must stay within what the engine can represent.
			errs.Add("requestedStart", "must be before %s", engine.MaxClock.Format(time.RFC3339))
		case org != nil:
			loc, err := period.LoadZone(org.TimeZone)
			if err != nil {
				return o, fmt.Errorf("organization %s: %w", org.ID, err)
			}
			if today := period.StartOfDay(now, loc); period.StartOfDay(t, loc).Before(today) {
				errs.Add("requestedStart", "must not be before today (%s in %s)", today.In(loc).Format(time.DateOnly), loc)
			}
		}
		if err == nil {
			t = t.UTC().Truncate(time.Microsecond)
			o.RequestedStart = &t
		}
	}
	return o, errs.Err()
}

// checkedNewSubscriber validates an order's new subscriber exactly as POST
// /subscriber does, naming fields under subscriber, and checks that its
// external id and number are free now (completion checks again).
func (s *Server) checkedNewSubscriber(ctx context.Context, in OrderSubscriberInput) (store.Subscriber, validation.Errors, error) {
	var errs validation.Errors
	extField := "subscriber.externalId"
	if x := in.ExternalSubscriberID; x != nil {
		if in.ExternalID != nil && trimmed(in.ExternalID) != trimmed(x) {
			errs.Add("subscriber.externalSubscriberId", "differs from subscriber.externalId; give one of them")
		} else {
			in.ExternalID, extField = x, "subscriber.externalSubscriberId"
		}
	}
	sub, err := in.subscriber()
	var verrs validation.Errors
	switch {
	case errors.As(err, &verrs):
		for _, fe := range prefixed("subscriber.", verrs) {
			if fe.Field == "subscriber.externalId" {
				fe.Field = extField
			}
			errs = append(errs, fe)
		}
	case err != nil:
		return sub, nil, err
	}
	taken := func(f store.SubscriberFilter) (string, error) {
		list, _, err := s.store.ListSubscribers(ctx, f, store.Page{Limit: 1})
		if err != nil || len(list) == 0 {
			return "", err
		}
		return list[0].ID, nil
	}
	if sub.ExternalID != "" && !hasField(errs, extField) {
		id, err := taken(store.SubscriberFilter{ExternalID: sub.ExternalID})
		if err != nil {
			return sub, nil, err
		}
		if id != "" {
			errs.Add(extField, "%q is already the external id of subscriber %s; order for that subscriber with subscriberId", sub.ExternalID, id)
		}
	}
	if sub.SubscriberNumber > 0 {
		id, err := taken(store.SubscriberFilter{SubscriberNumber: sub.SubscriberNumber})
		if err != nil {
			return sub, nil, err
		}
		if id != "" {
			errs.Add("subscriber.subscriberNumber", "%d is already the number of subscriber %s", sub.SubscriberNumber, id)
		}
	}
	return sub, errs, nil
}

func hasField(errs validation.Errors, field string) bool {
	for _, fe := range errs {
		if fe.Field == field {
			return true
		}
	}
	return false
}

func (s *Server) createOrder(w http.ResponseWriter, r *http.Request) error {
	var in OrderInput
	if err := decodeJSON(r, &in); err != nil {
		var verrs validation.Errors
		if errors.As(err, &verrs) {
			// encoding/json names a field of the embedded SubscriberInput
			// (and AgreementParamsInput) with the embedded type's name in
			// the path.
			for i := range verrs {
				verrs[i].Field = strings.Replace(verrs[i].Field, ".SubscriberInput.", ".", 1)
				verrs[i].Field = strings.Replace(verrs[i].Field, ".AgreementParamsInput.", ".", 1)
			}
			return verrs
		}
		return err
	}
	aliasErrs := in.resolveAliases()
	ctx := r.Context()
	now, err := s.tenantNow(ctx)
	if err != nil {
		return err
	}
	o, err := s.checkedOrder(ctx, in, now)
	if in.PaymentAgreementParameters != nil {
		// Problems of the agreement are named as the client wrote it.
		err = renamePrefix(err, "paymentAgreement.", "paymentAgreementParameters.")
	}
	if err := mergeErrs(aliasErrs, err); err != nil {
		return err
	}
	o, err = s.store.CreateOrder(ctx, o, now)
	if errors.Is(err, store.ErrConflict) {
		return validation.Field("body", "an organization, template package, subscriber or payment agreement this order refers to was removed at the same time; check it and retry")
	}
	if err != nil {
		return err
	}
	s.created(w, "/order/"+o.ID, o.ID)
	return nil
}

func (s *Server) listOrders(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := page(r, &errs)
	q := r.URL.Query()
	id := func(name string) string {
		v := strings.ToLower(strings.TrimSpace(queryFold(q, name)))
		if v != "" && !store.ValidID(v) {
			errs.Add(name, "must be a uuid")
			return ""
		}
		return v
	}
	f := store.OrderFilter{SubscriberID: id("subscriberId"), OrganizationID: id("organizationId")}
	if v := strings.TrimSpace(queryFold(q, "status")); v != "" {
		var ok bool
		if f.Status, ok = canonical(v, store.OrderCreated, store.OrderCompleted, store.OrderCancelled); !ok {
			errs.Add("status", "%q is not an order status: Created, Completed or Cancelled", v)
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	orders, next, err := s.store.ListOrders(ctx, f, p)
	if err != nil {
		return err
	}
	out := make([]Order, len(orders))
	for i, o := range orders {
		out[i] = orderView(o)
	}
	s.writeList(w, r, out, next)
	return nil
}

func (s *Server) getOrder(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	o, err := s.store.Order(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, orderView(o))
	return nil
}

func (s *Server) cancelOrder(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	o, err := s.store.CancelOrder(r.Context(), id, now)
	if err != nil {
		return err
	}
	if o.Status == store.OrderCompleted {
		return validation.Field("id", "order %s was completed at %s and cannot be cancelled; cancel its subscription %s instead",
			o.ID, o.CompletedAt.Format(time.RFC3339), deref(o.SubscriptionID))
	}
	writeJSON(w, http.StatusOK, orderView(o))
	return nil
}

func (s *Server) completeOrder(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	ctx := r.Context()
	now, err := s.tenantNow(ctx)
	if err != nil {
		return err
	}
	done, err := s.engine.CompleteOrder(ctx, id, now)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, orderView(done))
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// orderView is how the API shows o.
func orderView(o store.Order) Order {
	v := Order{
		ID: o.ID, Status: o.Status, OrganizationID: o.OrganizationID, TemplatePackageID: o.TemplatePackageID,
		TemplatePackageChoices: choicesView(o.Choices), SubscriberID: o.SubscriberID, PaymentAgreementID: o.PaymentAgreementID,
		InvoiceContact: o.InvoiceContact, RequestedStart: o.RequestedStart, SubscriptionID: o.SubscriptionID,
		CreatedAt: o.CreatedAt, CompletedAt: o.CompletedAt, CancelledAt: o.CancelledAt, PaymentAgreement: o.PaymentAgreementParams,
	}
	if n := o.NewSubscriber; n != nil {
		v.Subscriber = &OrderSubscriber{Name: n.Name, Email: n.Email, Phone: n.Phone, Address: n.Address, Country: n.Country,
			ExternalID: n.ExternalID, Contacts: n.Contacts}
		if n.SubscriberNumber != 0 {
			num := n.SubscriberNumber
			v.Subscriber.SubscriberNumber = &num
		}
		if v.Subscriber.Contacts == nil {
			v.Subscriber.Contacts = []store.Contact{}
		}
	}
	return v
}

// choicesView writes choices back in the shape they were sent, so that an
// order's templatePackageChoices can be sent again as they are.
func choicesView(c catalog.Choices) TemplatePackageChoices {
	var v TemplatePackageChoices
	if c.BillingPlanID != "" {
		id := c.BillingPlanID
		v.BillingPlanID = &id
	}
	v.Units = c.Units
	if c.Products != nil {
		v.Products = make([]ProductChoice, len(c.Products))
		for i, id := range c.Products {
			v.Products[i].ProductID = &id
		}
	}
	if c.AdditionalProducts != nil {
		v.AdditionalProducts = make([]AdditionalProductChoice, len(c.AdditionalProducts))
		for i, id := range c.AdditionalProducts {
			v.AdditionalProducts[i].ProductID = &id
		}
	}
	if c.Price != nil {
		n := number(c.Price.String())
		v.Price = &n
	}
	if c.PermanentDiscount != nil {
		n := number(c.PermanentDiscount.String())
		v.PermanentDiscount = &n
	}
	return v
}

// PrepareJSONSchema adds a complete example to the order body schema.
func (OrderInput) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithExamples(json.RawMessage(`{
  "organizationId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d41",
  "templatePackageId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d21",
  "templatePackageChoices": {"units": 1, "additionalProducts": [{"productId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d02"}]},
  "subscriber": {"name": "Kari Nordmann", "email": "kari@example.no", "country": "NO", "externalSubscriberId": "crm-10442"},
  "invoiceContact": {"name": "Regnskap AS", "email": "faktura@regnskap.no"},
  "requestedStart": "2025-02-01T00:00:00+01:00"
}`))
	return nil
}
