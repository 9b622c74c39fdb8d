package api

import (
	"fmt"
	"net/http"

	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/country"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// SubscriberInput is the body of POST and PUT /subscriber. Only Name is
// required. PUT replaces every field: an optional field left out is
// cleared, except SubscriberNumber, which is kept when left out.
type SubscriberInput struct {
	Name             *string        `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Kari Nordmann"`
	Email            *string        `json:"email" format:"email" maxLength:"254" example:"kari@example.no"`
	Phone            *string        `json:"phone" maxLength:"30" example:"+47 912 34 567" description:"Digits with optional spaces, +, - and parentheses; 5 to 20 digits."`
	Address          *AddressInput  `json:"address"`
	Country          *string        `json:"country" pattern:"^[A-Z]{2}$" example:"NO" description:"ISO 3166-1 alpha-2."`
	ExternalID       *string        `json:"externalId" maxLength:"200" example:"crm-10442" description:"The caller's own key for the subscriber; unique in the tenant."`
	SubscriberNumber *int64         `json:"subscriberNumber" minimum:"1" maximum:"999999999999999" example:"10442" description:"Unique in the tenant, 1 to 999999999999999 (15 digits). Assigned (the next number of the tenant's series) when not given on POST; kept when not given on PUT. A given number does not move the series: the series passes over it when it gets there."`
	Contacts         []ContactInput `json:"contacts" description:"At most one contact per role."`
}

// AddressInput is a postal address in a request.
type AddressInput struct {
	Line1      *string `json:"line1" maxLength:"200" example:"Storgata 1"`
	Line2      *string `json:"line2" maxLength:"200"`
	PostalCode *string `json:"postalCode" maxLength:"20" example:"0155"`
	City       *string `json:"city" maxLength:"100" example:"Oslo"`
	Country    *string `json:"country" pattern:"^[A-Z]{2}$" example:"NO" description:"ISO 3166-1 alpha-2."`
}

// ContactInput is an invoice or delivery contact in a request.
type ContactInput struct {
	Role    *string       `json:"role" required:"true" enum:"Invoice,Delivery"`
	Name    *string       `json:"name" maxLength:"200"`
	Email   *string       `json:"email" format:"email" maxLength:"254"`
	Phone   *string       `json:"phone" maxLength:"30"`
	Address *AddressInput `json:"address"`
}

// isEmailAddress and isPhoneNumber are the application layer's rules
// (app.CheckContactDetails uses them for Min side's contact form too).
var (
	isEmailAddress = app.IsEmailAddress
	isPhoneNumber  = app.IsPhoneNumber
)

// contactChecks records the problems of a subscriber's or a contact's
// fields; empty optional values pass every check.
type contactChecks struct{ errs *validation.Errors }

func (c contactChecks) maxLen(field, v string, n int) {
	if utf8.RuneCountInString(v) > n {
		c.errs.Add(field, "must be at most %d characters", n)
	}
}

func (c contactChecks) email(field, v string) {
	if v != "" && (len(v) > 254 || !isEmailAddress(v)) {
		c.errs.Add(field, "%q is not an email address such as name@example.com", v)
	}
}

func (c contactChecks) phone(field, v string) {
	if v != "" && !isPhoneNumber(v) {
		c.errs.Add(field, "must hold 5 to 20 digits and only digits, spaces, +, - and parentheses")
	}
}

func (c contactChecks) country(field, v string) {
	if v != "" && !country.Valid(v) {
		c.errs.Add(field, "%q is not an ISO 3166-1 alpha-2 country code", v)
	}
}

// address validates in; field prefixes the names of its fields.
func (c contactChecks) address(in *AddressInput, field string) store.Address {
	if in == nil {
		return store.Address{}
	}
	a := store.Address{
		Line1: apikit.Trimmed(in.Line1), Line2: apikit.Trimmed(in.Line2), PostalCode: apikit.Trimmed(in.PostalCode),
		City: apikit.Trimmed(in.City), Country: strings.ToUpper(apikit.Trimmed(in.Country)),
	}
	c.maxLen(field+".line1", a.Line1, 200)
	c.maxLen(field+".line2", a.Line2, 200)
	c.maxLen(field+".postalCode", a.PostalCode, 20)
	c.maxLen(field+".city", a.City, 100)
	c.country(field+".country", a.Country)
	return a
}

// role returns the contact role named by v, ignoring case.
func (c contactChecks) role(field, v string) (store.ContactRole, bool) {
	for _, r := range []store.ContactRole{store.ContactInvoice, store.ContactDelivery} {
		if strings.EqualFold(v, string(r)) {
			return r, true
		}
	}
	if v == "" {
		c.errs.Add(field, "is required: Invoice or Delivery")
	} else {
		c.errs.Add(field, "%q is not a contact role: Invoice or Delivery", v)
	}
	return "", false
}

// contact validates the fields of cin other than its role; field
// prefixes their names.
func (c contactChecks) contact(cin ContactInput, field string) store.Contact {
	contact := store.Contact{Name: apikit.Trimmed(cin.Name), Email: apikit.Trimmed(cin.Email), Phone: apikit.Trimmed(cin.Phone)}
	c.maxLen(field+".name", contact.Name, 200)
	c.email(field+".email", contact.Email)
	c.phone(field+".phone", contact.Phone)
	contact.Address = c.address(cin.Address, field+".address")
	return contact
}

// subscriber validates in and returns the subscriber it describes,
// recording every problem at once.
func (in SubscriberInput) subscriber() (store.Subscriber, error) {
	var (
		errs validation.Errors
		sub  store.Subscriber
		chk  = contactChecks{&errs}
	)
	sub.Name = apikit.Trimmed(in.Name)
	switch n := utf8.RuneCountInString(sub.Name); {
	case n == 0:
		errs.Add("name", "is required")
	case n > 200:
		errs.Add("name", "must be at most 200 characters")
	}
	sub.Email = apikit.Trimmed(in.Email)
	chk.email("email", sub.Email)
	sub.Phone = apikit.Trimmed(in.Phone)
	chk.phone("phone", sub.Phone)
	sub.Address = chk.address(in.Address, "address")
	sub.Country = strings.ToUpper(apikit.Trimmed(in.Country))
	chk.country("country", sub.Country)
	sub.ExternalID = apikit.Trimmed(in.ExternalID)
	chk.maxLen("externalId", sub.ExternalID, 200)
	if in.SubscriberNumber != nil {
		if n := *in.SubscriberNumber; n < 1 || n > store.MaxSubscriberNumber {
			errs.Add("subscriberNumber", "%d is not between 1 and %d", n, int64(store.MaxSubscriberNumber))
		}
		sub.SubscriberNumber = *in.SubscriberNumber
	}
	sub.Contacts = make([]store.Contact, 0, len(in.Contacts))
	seen := map[store.ContactRole]bool{}
	for i, cin := range in.Contacts {
		field := fmt.Sprintf("contacts[%d]", i)
		role, ok := chk.role(field+".role", apikit.Trimmed(cin.Role))
		if ok && seen[role] {
			errs.Add(field+".role", "a subscriber has at most one %s contact", role)
		}
		seen[role] = ok
		c := chk.contact(cin, field)
		c.Role = role
		sub.Contacts = append(sub.Contacts, c)
	}
	return sub, errs.Err()
}

type subscriberUpdate struct {
	apikit.IDParam
	SubscriberInput
}

type subscriberListParams struct {
	apikit.ListParams
	ExternalID       string `query:"externalId" description:"Only the subscriber with this external id."`
	SubscriberNumber int64  `query:"subscriberNumber" minimum:"1" description:"Only the subscriber with this number."`
	Email            string `query:"email" description:"Only subscribers with this email address (whole address, ignoring case)."`
	Name             string `query:"name" description:"Only subscribers whose name contains this text, ignoring case."`
}

func (s *Server) subscriberRoutes() {
	const tag = "Subscriber"
	s.add(route{
		method: http.MethodPost, path: "/subscriber", id: "createSubscriber", tag: tag,
		summary: "Create a subscriber",
		desc: "A subscriber number is assigned when none is given. A subscriberNumber or externalId " +
			"already used by another subscriber of the tenant is a 400 naming that field.",
		request: new(SubscriberInput), responses: common(respCreated), handle: s.createSubscriber,
	})
	s.add(route{
		method: http.MethodGet, path: "/subscriber", id: "listSubscribers", tag: tag,
		summary:   "List subscribers",
		desc:      "Filters combine with AND. Their names match ignoring case (subscriberNumber or SubscriberNumber).",
		request:   new(subscriberListParams),
		responses: common(respList(new([]store.Subscriber))),
		handle:    s.listSubscribers,
	})
	s.add(route{
		method: http.MethodGet, path: "/subscriber/{id}", id: "getSubscriber", tag: tag,
		summary: "Get a subscriber", request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(store.Subscriber)}, respNotFound),
		handle:    apikit.GetOne(s.app.Subscriber),
	})
	s.add(route{
		method: http.MethodPut, path: "/subscriber/{id}", id: "updateSubscriber", tag: tag,
		summary: "Replace a subscriber's fields",
		desc:    "Optional fields left out are cleared, except subscriberNumber, which is kept when left out.",
		request: new(subscriberUpdate), responses: common(respNoContent, respNotFound), handle: s.updateSubscriber,
	})
	s.add(route{
		method: http.MethodDelete, path: "/subscriber/{id}", id: "deleteSubscriber", tag: tag,
		summary: "Delete a subscriber",
		desc: "Refused with a 400 naming `id` while the subscriber has live subscriptions (not deactivated and not yet " +
			"ended) or open orders, and when subscriptions, completed orders or payment agreements of the subscriber are " +
			"on record (they are kept as billing history). The subscriber's cancelled orders are deleted with it.",
		request:   new(apikit.IDParam),
		responses: common(respNoContent, respNotFound), handle: s.deleteSubscriber,
	})
}

func (s *Server) createSubscriber(w http.ResponseWriter, r *http.Request) error {
	var in SubscriberInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	sub, err := in.subscriber()
	if err != nil {
		return err
	}
	created, err := s.app.CreateSubscriber(r.Context(), sub)
	if err != nil {
		return err
	}
	s.created(w, "/subscriber/"+created.ID, created.ID)
	return nil
}

// queryFold returns query parameter name, matching the name ignoring case
// (the contract writes filters both as SubscriberNumber and externalId).
func queryFold(q url.Values, name string) string {
	if v, ok := q[name]; ok && len(v) > 0 {
		return v[0]
	}
	for k, v := range q {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

func (s *Server) listSubscribers(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := store.SubscriberFilter{
		ExternalID: strings.TrimSpace(queryFold(q, "externalId")),
		Email:      strings.TrimSpace(queryFold(q, "email")),
		Name:       strings.TrimSpace(queryFold(q, "name")),
	}
	if v := strings.TrimSpace(queryFold(q, "subscriberNumber")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			errs.Add("subscriberNumber", "must be an integer from 1 to %d", int64(1<<63-1))
		}
		f.SubscriberNumber = n
	}
	if err := errs.Err(); err != nil {
		return err
	}
	subs, next, err := s.app.Subscribers(r.Context(), f, p)
	if err != nil {
		return err
	}
	if subs == nil {
		subs = []store.Subscriber{}
	}
	s.writeList(w, r, subs, next)
	return nil
}

func (s *Server) updateSubscriber(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in SubscriberInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	sub, err := in.subscriber()
	if err != nil {
		return err
	}
	sub.ID = id
	if _, err := s.app.UpdateSubscriber(r.Context(), sub); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteSubscriber(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.app.DeleteSubscriber(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
