package seed

import (
	"encoding/json"
	"testing"
)

// API writes through the HTTP API; each method returns the new record's id.
type API struct {
	t    testing.TB
	post func(path string, body any) string
}

// NewAPI returns a writer that creates records with post, which sends body
// as JSON in a POST to path and returns the id of the 201 answer, failing
// the test on any other (apitest's Tenant.Seed is the usual way in).
func NewAPI(t testing.TB, post func(path string, body any) string) *API {
	return &API{t: t, post: post}
}

// Organization creates a seller.
func (a *API) Organization(o Organization) string {
	a.t.Helper()
	body := map[string]any{"name": o.Name, "country": o.Country, "currency": o.Currency}
	if o.OrganizationNumber != "" {
		body["organizationNumber"] = o.OrganizationNumber
	}
	if o.TimeZone != "" {
		body["timeZone"] = o.TimeZone
	}
	if o.PricesIncludeVAT != nil {
		body["pricesIncludeVat"] = *o.PricesIncludeVAT
	}
	return a.post("/organization", body)
}

// Product creates a product.
func (a *API) Product(p Product) string {
	a.t.Helper()
	body := map[string]any{"name": p.Name, "vatRate": json.Number(orDefault(p.VATRate, "0"))}
	if p.Category != "" {
		body["category"] = p.Category
	}
	return a.post("/product", body)
}

// Plan creates a billing plan.
func (a *API) Plan(p Plan) string {
	a.t.Helper()
	body := map[string]any{"name": p.Name, "intervalUnit": p.Unit}
	if p.Count != 0 {
		body["intervalCount"] = p.Count
	}
	if p.MinimumDueDays != nil {
		body["minimumDueDays"] = *p.MinimumDueDays
	}
	if p.PaymentTermsDays != nil {
		body["paymentTermsDays"] = *p.PaymentTermsDays
	}
	return a.post("/billingplan", body)
}

// Package creates a template package.
func (a *API) Package(p Package) string {
	a.t.Helper()
	return a.post("/package", PackageBody(p))
}

// PackageBody is the POST /package body of p, for tests that send it
// themselves (e.g. to PUT it back changed).
func PackageBody(p Package) map[string]any {
	products := make([]map[string]any, len(p.Products))
	for i, id := range p.Products {
		products[i] = map[string]any{"productId": id}
	}
	body := map[string]any{"Name": p.Name, "Currency": orDefault(p.Currency, "NOK"), "Price": json.Number(p.Price),
		"products": products, "BillingPlans": p.Plans}
	if p.Units != 0 {
		body["Units"] = p.Units
	}
	if p.PermanentDiscount != "" {
		body["permanentDiscount"] = json.Number(p.PermanentDiscount)
	}
	if p.AutomaticStop {
		body["AutomaticStop"] = true
	}
	if len(p.Additional) > 0 {
		extra := make([]map[string]any, len(p.Additional))
		for i, x := range p.Additional {
			extra[i] = map[string]any{"productId": x.ProductID, "price": json.Number(x.Price), "selectedByDefault": x.SelectedByDefault}
		}
		body["additionalProducts"] = extra
	}
	if p.MinUnits != 0 || p.MaxUnits != 0 {
		choices := map[string]any{}
		if p.MinUnits != 0 {
			choices["minUnits"] = p.MinUnits
		}
		if p.MaxUnits != 0 {
			choices["maxUnits"] = p.MaxUnits
		}
		body["allowedChoices"] = choices
	}
	return body
}

// Subscriber creates a subscriber.
func (a *API) Subscriber(s Subscriber) string {
	a.t.Helper()
	body := map[string]any{"name": s.Name}
	for k, v := range map[string]string{"email": s.Email, "country": s.Country, "externalId": s.ExternalID} {
		if v != "" {
			body[k] = v
		}
	}
	return a.post("/subscriber", body)
}
