package api

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/bankaccount"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/checkdigit"
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

	// What its invoices need to be paid (docs/BILLING.md, "Seller details").
	Address          *AddressInput     `json:"address" description:"Postal address printed on invoices. When given, line1, postalCode and city are required (a Norwegian postal code is 4 digits); country defaults to the organization's."`
	BankAccount      *BankAccountInput `json:"bankAccount" description:"The account invoices ask to be paid to, printed next to the KID."`
	VATRegistered    *bool             `json:"vatRegistered" description:"Registered for VAT (in Norway: in Merverdiavgiftsregisteret); Norwegian invoices then print MVA after the organization number. Default true, as the organization's plans charge VAT. True requires organizationNumber."`
	BusinessRegister *bool             `json:"businessRegister" description:"In the Norwegian Register of Business Enterprises (Foretaksregisteret); invoices then print Foretaksregisteret with the organization number (foretaksregisterloven § 10-2). Norwegian organizations only. Default true for a Norwegian organization named as an AS or ASA (the word AS or ASA first or last, or aksjeselskap), which must be registered, else false."`
}

// BankAccountInput is an organization's bank account in a request; values
// may be typed with spaces (and a kontonummer with dots), in any case.
type BankAccountInput struct {
	AccountNumber *string `json:"accountNumber" example:"8601.11.17947" description:"Norwegian account number (kontonummer): 11 digits with a MOD11 check digit."`
	IBAN          *string `json:"iban" example:"NO93 8601 1117 947" description:"IBAN (ISO 13616): checked with its mod-97 check digits and its country's length. A Norwegian IBAN must hold accountNumber when both are given."`
	BIC           *string `json:"bic" example:"DNBANOKK" description:"BIC (SWIFT code) of the IBAN's bank, 8 or 11 characters; only with iban."`
}

// bankAccount validates in, naming each field under bankAccount.
func (in *BankAccountInput) bankAccount(errs *validation.Errors) store.BankAccount {
	var b store.BankAccount
	if in == nil {
		return b
	}
	parse := func(field string, p *string, parse func(string) (string, error)) string {
		v := apikit.Trimmed(p)
		if v == "" {
			return ""
		}
		c, err := parse(v)
		if err != nil {
			errs.Add("bankAccount."+field, "%q: %s", v, err)
		}
		return c
	}
	b.AccountNumber = parse("accountNumber", in.AccountNumber, bankaccount.ParseKontonummer)
	b.IBAN = parse("iban", in.IBAN, bankaccount.ParseIBAN)
	b.BIC = parse("bic", in.BIC, bankaccount.ParseBIC)
	if b.BIC != "" && apikit.Trimmed(in.IBAN) == "" {
		errs.Add("bankAccount.bic", "is given without an iban: the BIC names the bank of the IBAN")
	}
	if bban := bankaccount.IBANAccount(b.IBAN, "NO"); bban != "" && b.AccountNumber != "" && bban != b.AccountNumber {
		errs.Add("bankAccount.iban", "is the IBAN of account %s, not of accountNumber %s",
			bankaccount.FormatKontonummer(bban), bankaccount.FormatKontonummer(b.AccountNumber))
	}
	return b
}

// isAksjeselskap reports whether name is that of a Norwegian limited
// company: it begins or ends with the word AS or ASA, or says aksjeselskap
// or allmennaksjeselskap, as foretaksnavneloven § 2-2 requires of their
// names.
func isAksjeselskap(name string) bool {
	f := strings.Fields(strings.ToUpper(name))
	if len(f) < 2 {
		return false
	}
	for _, w := range f {
		if w == "AKSJESELSKAP" || w == "ALLMENNAKSJESELSKAP" {
			return true
		}
	}
	for _, w := range []string{f[0], f[len(f)-1]} {
		if w == "AS" || w == "ASA" {
			return true
		}
	}
	return false
}

// organization validates in and returns the organization it describes,
// recording every problem at once.
func (in OrganizationInput) organization() (store.Organization, error) {
	var (
		errs validation.Errors
		o    = store.Organization{TimeZone: "Europe/Oslo", PricesIncludeVAT: true}
	)
	str := apikit.Trimmed
	o.Name = apikit.Text(&errs, "name", in.Name, 200, true)
	o.OrganizationNumber = apikit.Text(&errs, "organizationNumber", in.OrganizationNumber, 50, false)
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
	o.Address = organizationAddress(&errs, in.Address, o.Country)
	o.BankAccount = in.BankAccount.bankAccount(&errs)
	norwegian := o.Country == "NO"
	if norwegian && o.OrganizationNumber != "" {
		// Printed with MVA and Foretaksregisteret, and read by people
		// paying: a Norwegian number must be one.
		if n, err := checkdigit.NorwegianOrgNumber(o.OrganizationNumber); err != nil {
			errs.Add("organizationNumber", "%q is not a Norwegian organization number: %s", o.OrganizationNumber, err)
		} else {
			o.OrganizationNumber = n
		}
	}
	o.VATRegistered = true
	if in.VATRegistered != nil {
		o.VATRegistered = *in.VATRegistered
		if o.VATRegistered && o.OrganizationNumber == "" {
			errs.Add("organizationNumber", "is required when vatRegistered is true: invoices print it as the VAT number")
		}
	}
	o.BusinessRegister = norwegian && isAksjeselskap(o.Name)
	if in.BusinessRegister != nil {
		switch reg := *in.BusinessRegister; {
		case reg && !norwegian:
			errs.Add("businessRegister", "Foretaksregisteret is Norwegian: only an organization whose country is NO can be in it")
		case !reg && o.BusinessRegister:
			errs.Add("businessRegister", "a Norwegian AS or ASA is registered in Foretaksregisteret (foretaksregisterloven § 2-1); it cannot be false for %q", o.Name)
		default:
			o.BusinessRegister = reg
		}
	}
	return o, errs.Err()
}

// organizationAddress validates in as the postal address of an
// organization in country orgCountry: either absent (all fields empty) or
// complete enough for a letter to arrive.
func organizationAddress(errs *validation.Errors, in *AddressInput, orgCountry string) store.Address {
	a := contactChecks{errs}.address(in, "address")
	if a == (store.Address{}) {
		return a
	}
	for _, f := range []struct{ name, v string }{{"line1", a.Line1}, {"postalCode", a.PostalCode}, {"city", a.City}} {
		if f.v == "" {
			errs.Add("address."+f.name, "is required in a postal address")
		}
	}
	if a.Country == "" {
		a.Country = orgCountry
	}
	if a.Country == "NO" && a.PostalCode != "" && (len(a.PostalCode) != 4 || strings.Trim(a.PostalCode, "0123456789") != "") {
		errs.Add("address.postalCode", "%q is not a Norwegian postal code: 4 digits", a.PostalCode)
	}
	return a
}

type organizationUpdate struct {
	apikit.IDParam
	OrganizationInput
}

type organizationListParams struct {
	apikit.ListParams
	Country  string `query:"country" description:"Only organizations in this country (ISO 3166-1 alpha-2)."`
	Currency string `query:"currency" description:"Only organizations with this currency (ISO 4217)."`
}

var (
	respBadRequest = response{status: http.StatusBadRequest, body: new(ValidationResult), desc: "Invalid request; every problem is listed."}
	respNoBody401  = response{status: http.StatusUnauthorized, desc: "Missing, expired or invalid token."}
	respNoBody403  = response{status: http.StatusForbidden, desc: "The token is not valid for this tenant."}
	respNotFound   = fromKit(apikit.NotFound)
	respServer     = response{status: http.StatusInternalServerError, body: new(ServerError), desc: "Unexpected failure; quote the request id."}
	respCreated    = fromKit(apikit.Created)
	respNoContent  = fromKit(apikit.NoContent)
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
		summary: "Get an organization", request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(store.Organization)}, respNotFound),
		handle:    apikit.GetOne(s.app.Organization),
	})
	s.add(route{
		method: http.MethodPut, path: "/organization/{id}", id: "updateOrganization", tag: tag,
		summary: "Replace an organization's fields", request: new(organizationUpdate),
		responses: common(respNoContent, respNotFound), handle: s.updateOrganization,
	})
	s.add(route{
		method: http.MethodDelete, path: "/organization/{id}", id: "deleteOrganization", tag: tag,
		summary: "Delete an organization", request: new(apikit.IDParam),
		responses: common(respNoContent, respNotFound), handle: s.deleteOrganization,
	})
}

func (s *Server) createOrganization(w http.ResponseWriter, r *http.Request) error {
	var in OrganizationInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	o, err := in.organization()
	if err != nil {
		return err
	}
	o, err = s.app.CreateOrganization(r.Context(), o)
	if err != nil {
		return err
	}
	s.created(w, "/organization/"+o.ID, o.ID)
	return nil
}

func (s *Server) listOrganizations(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := store.OrganizationFilter{Country: strings.ToUpper(q.Get("country")), Currency: strings.ToUpper(q.Get("currency"))}
	if err := errs.Err(); err != nil {
		return err
	}
	orgs, next, err := s.app.Organizations(r.Context(), f, p)
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
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in OrganizationInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	o, err := in.organization()
	if err != nil {
		return err
	}
	o.ID = id
	if _, err := s.app.UpdateOrganization(r.Context(), o); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteOrganization(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.app.DeleteOrganization(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
