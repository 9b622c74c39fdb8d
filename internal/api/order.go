package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/swaggest/jsonschema-go"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/provider"
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
	apikit.ListParams
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
		summary: "Get an order", request: new(apikit.IDParam),
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
		request: new(apikit.IDParam), responses: common(orderOK, respNotFound), handle: s.completeOrder,
	})
	s.add(route{
		method: http.MethodPost, path: "/order/{id}/cancel", id: "cancelOrder", tag: tag,
		summary: "Cancel an order",
		desc: "Cancels an order in status `Created` and answers 200 with it; cancelling a cancelled order answers the " +
			"same. A completed order cannot be cancelled (400 naming `id`): cancel its subscription instead. No body.",
		request: new(apikit.IDParam), responses: common(orderOK, respNotFound), handle: s.cancelOrder,
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

// newOrder decodes in into the order command, leaving every check that
// consults the tenant's data or clock to the application layer: the
// problems of the fields' syntax go with it, by the part they belong to.
func (in OrderInput) newOrder() app.NewOrder {
	o := app.NewOrder{
		OrganizationID: normID(in.OrganizationID), TemplatePackageID: normID(in.TemplatePackageID),
		SubscriberID: normID(in.SubscriberID), PaymentAgreementID: normID(in.PaymentAgreementID),
		Problems: map[app.OrderPart]validation.Errors{},
	}
	if c := in.TemplatePackageChoices; c != nil {
		var cerrs validation.Errors
		o.Choices, cerrs = c.choices()
		o.Problems[app.OrderPartChoices] = prefixed("templatePackageChoices.", cerrs)
	}
	if in.Subscriber != nil {
		sub, serrs := in.Subscriber.decoded()
		o.NewSubscriber, o.Problems[app.OrderPartSubscriber] = &sub, serrs
	}
	if ic := in.InvoiceContact; ic != nil {
		var cerrs validation.Errors
		c := contactChecks{&cerrs}.contact(ContactInput{Name: ic.Name, Email: ic.Email, Phone: ic.Phone, Address: ic.Address}, "invoiceContact")
		o.InvoiceContact, o.Problems[app.OrderPartInvoiceContact] = &c, cerrs
	}
	if p := in.PaymentAgreement; p != nil {
		var perrs validation.Errors
		const prefix = "paymentAgreement."
		o.PaymentAgreement = &app.OrderAgreement{
			ProviderType:        apikit.Trimmed(p.ProviderType),
			Reference:           apikit.Text(&perrs, prefix+provider.FieldReference, p.ProviderAgreementReference, 200, false),
			PaymentMethod:       apikit.Text(&perrs, prefix+provider.FieldPaymentMethod, p.PaymentMethod, 100, false),
			ProviderAgreementID: normID(p.ProviderAgreementID),
		}
		o.Problems[app.OrderPartAgreement] = perrs
	}
	if v := apikit.Trimmed(in.RequestedStart); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err != nil {
			o.Problems[app.OrderPartRequestedStart] = validation.Field("requestedStart", "must be an RFC 3339 time such as 2025-02-01T00:00:00+01:00")
		} else {
			o.RequestedStart = &t
		}
	}
	return o
}

// decoded validates an order's new subscriber exactly as POST /subscriber
// does, naming fields under subscriber; that its external id and number
// are free is the application's to check.
func (in OrderSubscriberInput) decoded() (app.OrderSubscriber, validation.Errors) {
	var errs validation.Errors
	extField := "subscriber.externalId"
	if x := in.ExternalSubscriberID; x != nil {
		if in.ExternalID != nil && apikit.Trimmed(in.ExternalID) != apikit.Trimmed(x) {
			errs.Add("subscriber.externalSubscriberId", "differs from subscriber.externalId; give one of them")
		} else {
			in.ExternalID, extField = x, "subscriber.externalSubscriberId"
		}
	}
	sub, err := in.subscriber()
	var verrs validation.Errors
	if errors.As(err, &verrs) {
		for _, fe := range prefixed("subscriber.", verrs) {
			if fe.Field == "subscriber.externalId" {
				fe.Field = extField
			}
			errs = append(errs, fe)
		}
	}
	return app.OrderSubscriber{Subscriber: sub, ExternalIDField: extField}, errs
}

func (s *Server) createOrder(w http.ResponseWriter, r *http.Request) error {
	var in OrderInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
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
	// Names the client wrote that Kadens cannot honour come first; the
	// aliases it can are moved onto the Kadens names before decoding.
	aliasErrs := in.resolveAliases()
	o := in.newOrder()
	o.Problems[app.OrderPartBody] = aliasErrs
	placed, err := s.app.PlaceOrder(r.Context(), o)
	if in.PaymentAgreementParameters != nil {
		// Problems of the agreement are named as the client wrote it.
		err = renamePrefix(err, "paymentAgreement.", "paymentAgreementParameters.")
	}
	if err != nil {
		return err
	}
	s.created(w, "/order/"+placed.ID, placed.ID)
	return nil
}

func (s *Server) listOrders(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
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
		if f.Status, ok = apikit.Canonical(v, store.OrderCreated, store.OrderCompleted, store.OrderCancelled); !ok {
			errs.Add("status", "%q is not an order status: Created, Completed or Cancelled", v)
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	orders, next, err := s.app.Orders(r.Context(), f, p)
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
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	o, err := s.app.Order(r.Context(), id)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, orderView(o))
	return nil
}

func (s *Server) cancelOrder(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	o, err := s.app.CancelOrder(r.Context(), id)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, orderView(o))
	return nil
}

func (s *Server) completeOrder(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	done, err := s.app.CompleteOrder(r.Context(), id)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, orderView(done))
	return nil
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
		n := apikit.Number(c.Price.String())
		v.Price = &n
	}
	if c.PermanentDiscount != nil {
		n := apikit.Number(c.PermanentDiscount.String())
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
