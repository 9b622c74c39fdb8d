package api

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/country"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// OrganizationInput is the body of POST and PUT /organization. Only Name,
// Country and Currency are required; the time zone defaults to
// Europe/Oslo and prices include VAT unless said otherwise, as is usual for
// Nordic consumer prices.
type OrganizationInput struct {
	Name               *string `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Nordavis AS"`
	OrganizationNumber *string `json:"organizationNumber" maxLength:"50" example:"923609016" description:"The seller's registration number (e.g. Norwegian organisasjonsnummer)."`
	Country            *string `json:"country" required:"true" pattern:"^[A-Z]{2}$" example:"NO" description:"ISO 3166-1 alpha-2."`
	Currency           *string `json:"currency" required:"true" pattern:"^[A-Z]{3}$" example:"NOK" description:"ISO 4217; the default currency of the organization's plans."`
	TimeZone           *string `json:"timeZone" example:"Europe/Oslo" description:"IANA time zone; billing periods start at local midnight here. Default Europe/Oslo."`
	PricesIncludeVAT   *bool   `json:"pricesIncludeVat" description:"Whether list prices include VAT. Default true."`
	LogoURL            *string `json:"logoUrl" format:"uri" example:"https://example.com/logo.svg"`
	KIDAlgorithm       *string `json:"kidAlgorithm" enum:"MOD10,MOD11" example:"MOD10" description:"Check digit algorithm of the KID (payment reference) on the organization's invoices, as in its bank's KID agreement; any case. Default MOD10. MOD10 KIDs are the invoice number in ten digits and a Luhn digit; MOD11 KIDs the invoice number in ten digits, a variant digit and a MOD11 digit (see docs/BILLING.md)."`
}

// organization validates in and returns the organization it describes,
// recording every problem at once.
func (in OrganizationInput) organization() (store.Organization, error) {
	var (
		errs validation.Errors
		o    = store.Organization{TimeZone: "Europe/Oslo", PricesIncludeVAT: true}
	)
	str := trimmed
	o.Name = text(&errs, "name", in.Name, 200, true)
	o.OrganizationNumber = text(&errs, "organizationNumber", in.OrganizationNumber, 50, false)
	o.Country = strings.ToUpper(str(in.Country))
	switch {
	case o.Country == "":
		errs.Add("country", "is required")
	case !country.Valid(o.Country):
		errs.Add("country", "%q is not an ISO 3166-1 alpha-2 country code", o.Country)
	}
	o.Currency = strings.ToUpper(str(in.Currency))
	if o.Currency == "" {
		errs.Add("currency", "is required")
	} else if _, ok := money.LookupCurrency(o.Currency); !ok {
		errs.Add("currency", "%q is not an ISO 4217 currency code", o.Currency)
	}
	if tz := str(in.TimeZone); tz != "" {
		if _, err := time.LoadLocation(tz); err != nil || tz == "Local" {
			errs.Add("timeZone", "%q is not an IANA time zone such as Europe/Oslo", tz)
		}
		o.TimeZone = tz
	}
	if in.PricesIncludeVAT != nil {
		o.PricesIncludeVAT = *in.PricesIncludeVAT
	}
	o.LogoURL = str(in.LogoURL)
	if o.LogoURL != "" {
		if u, err := url.Parse(o.LogoURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs.Add("logoUrl", "must be an absolute http(s) URL")
		}
	}
	o.KIDAlgorithm = billing.KIDMod10
	if v := str(in.KIDAlgorithm); v != "" {
		alg, ok := billing.ParseKIDAlgorithm(v)
		if !ok {
			errs.Add("kidAlgorithm", "must be one of %s", strings.Join(billing.KIDAlgorithms, ", "))
		}
		o.KIDAlgorithm = alg
	}
	return o, errs.Err()
}

type organizationUpdate struct {
	idParam
	OrganizationInput
}

type organizationListParams struct {
	ListParams
	Country  string `query:"country" description:"Only organizations in this country (ISO 3166-1 alpha-2)."`
	Currency string `query:"currency" description:"Only organizations with this currency (ISO 4217)."`
}

var (
	respBadRequest = response{status: http.StatusBadRequest, body: new(ValidationResult), desc: "Invalid request; every problem is listed."}
	respNoBody401  = response{status: http.StatusUnauthorized, desc: "Missing, expired or invalid token."}
	respNoBody403  = response{status: http.StatusForbidden, desc: "The token is not valid for this tenant."}
	respNotFound   = response{status: http.StatusNotFound, desc: "No such resource in this tenant."}
	respServer     = response{status: http.StatusInternalServerError, body: new(ServerError), desc: "Unexpected failure; quote the request id."}
	respCreated    = response{status: http.StatusCreated, body: "", desc: "Created; the body is the new id (a JSON string).",
		headers: map[string]string{"Location": "Address of the new resource."}}
	respNoContent = response{status: http.StatusNoContent, desc: "Done."}
)

// common lists the responses every authenticated operation can give.
func common(rs ...response) []response {
	return append(rs, respBadRequest, respNoBody401, respNoBody403, respServer)
}

func (s *Server) organizationRoutes() {
	const tag = "Organization"
	s.add(route{
		method: http.MethodPost, path: "/organization", id: "createOrganization", tag: tag,
		summary: "Create an organization (a selling legal entity of the tenant)",
		request: new(OrganizationInput), responses: common(respCreated), handle: s.createOrganization,
	})
	s.add(route{
		method: http.MethodGet, path: "/organization", id: "listOrganizations", tag: tag,
		summary: "List organizations", request: new(organizationListParams),
		responses: common(respList(new([]store.Organization))),
		handle:    s.listOrganizations,
	})
	s.add(route{
		method: http.MethodGet, path: "/organization/{id}", id: "getOrganization", tag: tag,
		summary: "Get an organization", request: new(idParam),
		responses: common(response{status: http.StatusOK, body: new(store.Organization)}, respNotFound),
		handle:    getOne(s.store.Organization),
	})
	s.add(route{
		method: http.MethodPut, path: "/organization/{id}", id: "updateOrganization", tag: tag,
		summary: "Replace an organization's fields", request: new(organizationUpdate),
		responses: common(respNoContent, respNotFound), handle: s.updateOrganization,
	})
	s.add(route{
		method: http.MethodDelete, path: "/organization/{id}", id: "deleteOrganization", tag: tag,
		summary: "Delete an organization", request: new(idParam),
		responses: common(respNoContent, respNotFound), handle: s.deleteOrganization,
	})
}

func (s *Server) createOrganization(w http.ResponseWriter, r *http.Request) error {
	var in OrganizationInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	o, err := in.organization()
	if err != nil {
		return err
	}
	o, err = s.store.CreateOrganization(r.Context(), o, s.now())
	if err != nil {
		return err
	}
	s.created(w, "/organization/"+o.ID, o.ID)
	return nil
}

func (s *Server) listOrganizations(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := page(r, &errs)
	q := r.URL.Query()
	f := store.OrganizationFilter{Country: strings.ToUpper(q.Get("country")), Currency: strings.ToUpper(q.Get("currency"))}
	if err := errs.Err(); err != nil {
		return err
	}
	orgs, next, err := s.store.ListOrganizations(r.Context(), f, p)
	if err != nil {
		return err
	}
	if orgs == nil {
		orgs = []store.Organization{}
	}
	s.writeList(w, r, orgs, next)
	return nil
}

func (s *Server) updateOrganization(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in OrganizationInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	o, err := in.organization()
	if err != nil {
		return err
	}
	o.ID = id
	if _, err := s.store.UpdateOrganization(r.Context(), o, s.now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteOrganization(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.store.DeleteOrganization(r.Context(), id); errors.Is(err, store.ErrOrganizationHasHistory) {
		return validation.Field("id", "the organization has subscriptions or orders, which are kept as billing history; it cannot be deleted")
	} else if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
