package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/swaggest/jsonschema-go"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// PackageInput is the body of POST and PUT /package: a template package
// with the contract's field names (Name, Currency, Price, BillingPlans,
// permanentDiscount, products...; matched case-insensitively). The id is
// assigned by the service. Only Name, Currency, Price, products and
// BillingPlans are required.
type PackageInput struct {
	Name               *string                  `json:"Name" required:"true" minLength:"1" maxLength:"200" example:"Digital – intro 99"`
	Description        *string                  `json:"Description" maxLength:"2000" example:"First month of digital news for 99 kr"`
	Currency           *string                  `json:"Currency" required:"true" pattern:"^[A-Za-z]{3}$" example:"NOK" description:"ISO 4217; every price of the package is in it."`
	Price              *apikit.Number           `json:"Price" description:"Price of one unit for one billing period, with up to the currency's decimals (199.00). The full price is Price × Units plus the chosen additional products. Required unless every product has a fullPrice; then it is their sum (and may be left out)." example:"99.00"`
	Units              *int                     `json:"Units" minimum:"1" maximum:"100000" default:"1" description:"Default number of units (copies, seats)."`
	NumberOfEditions   *int                     `json:"NumberOfEditions" minimum:"0" description:"Editions delivered per billing period, or null for no limit." example:"26"`
	AutomaticStop      *bool                    `json:"AutomaticStop" description:"When true the subscription ends after the current period and is not renewed."`
	PermanentDiscount  *apikit.Number           `json:"permanentDiscount" description:"Percent (0..100, up to 4 decimals) always taken off the full price. Default 0." example:"0"`
	Products           []PackageProductInput    `json:"products" required:"true" minItems:"1" description:"Products always included, with their optional share (percent) of Price × Units; shares add up to 100, or are all left out for equal shares."`
	AdditionalProducts []AdditionalProductInput `json:"additionalProducts" description:"Optional add-ons an order may choose, each with its own price per billing period."`
	BillingPlans       []string                 `json:"BillingPlans" required:"true" minItems:"1" items.format:"uuid" description:"Billing plans an order may choose from, all with the same interval; the first is the default."`
	Contract           *ContractInput           `json:"contract" description:"Optional restriction: a binding period."`
	PackageChainID     *string                  `json:"packageChainId" format:"uuid" description:"The package chain this template starts or continues; the template must be one of the chain's steps to be ordered."`
	AllowedChoices     *AllowedChoicesInput     `json:"allowedChoices" description:"What an order may choose or override beyond the billing plan and additional products."`
}

// PackageProductInput is an included product of a template package.
type PackageProductInput struct {
	ProductID *string        `json:"productId" required:"true" format:"uuid"`
	Share     *apikit.Number `json:"share" description:"Percent of Price × Units that is this product's (for invoice lines and their VAT)." example:"70"`
	// FullPrice and TaxPercent are INFO-Subscription's per-product prices
	// (docs/MIGRATION.md).
	FullPrice  *apikit.Number `json:"fullPrice" description:"Instead of share: this product's price per unit and billing period. Given for every product or none; Price is then their sum. An order choosing some products pays the sum of theirs." example:"1000"`
	TaxPercent *apikit.Number `json:"taxPercent" description:"The product's VAT rate in percent, as a check: VAT comes from the product, so a taxPercent other than the product's vatRate is a 400." example:"25"`
}

// AdditionalProductInput is an optional add-on of a template package.
type AdditionalProductInput struct {
	ProductID         *string        `json:"productId" required:"true" format:"uuid"`
	Price             *apikit.Number `json:"price" required:"true" description:"Price per billing period." example:"49.00"`
	SelectedByDefault *bool          `json:"selectedByDefault" description:"Included unless the order chooses its additional products itself."`
}

// ContractInput is a template package's binding period.
type ContractInput struct {
	BindingPeriods *int    `json:"bindingPeriods" required:"true" minimum:"1" maximum:"1200" description:"Billing periods the subscriber is bound for." example:"12"`
	Terms          *string `json:"terms" maxLength:"2000" example:"Binding for 12 months."`
	// EarlyCancellation is checked by catalog.CheckTemplate (400 naming
	// contract.earlyCancellation).
	EarlyCancellation *string `json:"earlyCancellation" enum:"EndOfBinding,ChargeRemainder" description:"What a cancellation during the binding period does: EndOfBinding (default) lets the subscription renew until the binding ends and ends it then; ChargeRemainder ends it as asked and charges the remaining bound periods (docs/ORDERS.md, \"Binding periods\")."`
}

// AllowedChoicesInput says what an order may choose or override.
type AllowedChoicesInput struct {
	MinUnits         *int  `json:"minUnits" minimum:"1" description:"Fewest units an order may choose; default Units."`
	MaxUnits         *int  `json:"maxUnits" minimum:"1" description:"Most units an order may choose; default Units."`
	PriceOverride    *bool `json:"priceOverride" description:"An order may set its own Price. Default false."`
	DiscountOverride *bool `json:"discountOverride" description:"An order may set its own permanentDiscount. Default false."`
}

// template validates the shape of in and returns the template package it
// describes; catalog.CheckTemplate then checks the rules that need its
// references.
func (in PackageInput) template() (catalog.TemplatePackage, validation.Errors) {
	var (
		errs validation.Errors
		t    = catalog.TemplatePackage{Units: 1}
	)
	t.Name = apikit.Text(&errs, "Name", in.Name, 200, true)
	t.Description = apikit.Text(&errs, "Description", in.Description, 2000, false)
	t.Currency = strings.ToUpper(apikit.Trimmed(in.Currency))
	cur, curOK := money.LookupCurrency(t.Currency)
	switch {
	case t.Currency == "":
		errs.Add("Currency", "is required")
	case !curOK:
		errs.Add("Currency", "%q is not an ISO 4217 currency code", t.Currency)
	}
	price := func(field string, n *apikit.Number) catalog.Amount {
		if n == nil {
			errs.Add(field, "is required")
			return catalog.Amount{}
		}
		d, err := n.Decimal()
		if err != nil {
			errs.Add(field, "%s", err)
			return catalog.Amount{}
		}
		if !curOK {
			return catalog.Amount{} // reported on Currency
		}
		a, err := catalog.ParseAmount(d, cur)
		if err != nil {
			errs.Add(field, "%s", err)
		}
		return a
	}
	fullPrices := len(in.Products) > 0
	for _, p := range in.Products {
		fullPrices = fullPrices && p.FullPrice != nil
	}
	if in.Price != nil || !fullPrices {
		t.Price = price("Price", in.Price)
	}
	if in.Units != nil {
		t.Units = *in.Units
	}
	if in.NumberOfEditions != nil {
		n := *in.NumberOfEditions
		t.NumberOfEditions = &n
	}
	t.AutomaticStop = in.AutomaticStop != nil && *in.AutomaticStop
	t.PermanentDiscount = catalog.PercentOf(0)
	if in.PermanentDiscount != nil {
		if p, ok := percent(&errs, "permanentDiscount", *in.PermanentDiscount); ok {
			t.PermanentDiscount = p
		}
	}
	t.Products = make([]catalog.PackageProduct, len(in.Products))
	for i, p := range in.Products {
		t.Products[i].ProductID = normID(p.ProductID)
		if p.Share != nil {
			if s, ok := percent(&errs, fmt.Sprintf("products[%d].share", i), *p.Share); ok {
				t.Products[i].Share = &s
			}
		}
		if p.FullPrice != nil {
			a := price(fmt.Sprintf("products[%d].fullPrice", i), p.FullPrice)
			t.Products[i].FullPrice = &a
		}
		if p.TaxPercent != nil {
			percent(&errs, fmt.Sprintf("products[%d].taxPercent", i), *p.TaxPercent) // compared with the product's rate later
		}
	}
	if fullPrices && in.Price == nil {
		for _, p := range t.Products {
			t.Price.Minor += p.FullPrice.Minor
		}
		t.Price.Digits = cur.Digits
	}
	t.AdditionalProducts = make([]catalog.AdditionalProduct, len(in.AdditionalProducts))
	for i, p := range in.AdditionalProducts {
		t.AdditionalProducts[i] = catalog.AdditionalProduct{
			ProductID:         normID(p.ProductID),
			Price:             price(fmt.Sprintf("additionalProducts[%d].price", i), p.Price),
			SelectedByDefault: p.SelectedByDefault != nil && *p.SelectedByDefault,
		}
	}
	t.BillingPlans = make([]string, len(in.BillingPlans))
	for i, id := range in.BillingPlans {
		t.BillingPlans[i] = normID(&id)
	}
	if c := in.Contract; c != nil {
		t.Contract = &catalog.Contract{Terms: apikit.Text(&errs, "contract.terms", c.Terms, 2000, false)}
		if c.BindingPeriods == nil {
			errs.Add("contract.bindingPeriods", "is required")
		} else {
			t.Contract.BindingPeriods = *c.BindingPeriods
		}
		t.Contract.EarlyCancellation = catalog.EndOfBinding
		if c.EarlyCancellation != nil {
			t.Contract.EarlyCancellation = *c.EarlyCancellation
		}
	}
	if id := normID(in.PackageChainID); id != "" {
		t.PackageChainID = &id
	}
	t.AllowedChoices = catalog.AllowedChoices{MinUnits: t.Units, MaxUnits: t.Units}
	if ac := in.AllowedChoices; ac != nil {
		if ac.MinUnits != nil {
			t.AllowedChoices.MinUnits = *ac.MinUnits
		}
		if ac.MaxUnits != nil {
			t.AllowedChoices.MaxUnits = *ac.MaxUnits
		}
		t.AllowedChoices.PriceOverride = ac.PriceOverride != nil && *ac.PriceOverride
		t.AllowedChoices.DiscountOverride = ac.DiscountOverride != nil && *ac.DiscountOverride
	}
	return t, errs
}

// TemplatePackageChoices is what an order may choose when it names a
// template package (and the body of POST /package/{id}/preview). Every
// field is optional; what is left out takes the template's default.
type TemplatePackageChoices struct {
	BillingPlanID      *string                   `json:"billingPlanId" format:"uuid" description:"One of the template's BillingPlans; default the first."`
	Units              *int                      `json:"units" minimum:"1" description:"Within the template's allowedChoices.minUnits..maxUnits."`
	Products           []ProductChoice           `json:"products" description:"Which of the template's included products the subscription gets (each {\"productId\": ...} or, as INFO-Subscription clients write it, the id alone). Left out: all of them; given: at least one, each a product of the template's products. The base price (price × units) then counts only the chosen products' shares (equal shares when the template gives none), rounded once to the minor unit; docs/CATALOG.md has a worked example."`
	AdditionalProducts []AdditionalProductChoice `json:"additionalProducts" description:"The template's additional products to include. Left out: those selectedByDefault; given (even []): exactly these."`
	Price              *apikit.Number            `json:"price" description:"Own price of one unit per billing period; only if the template allows priceOverride." example:"149.00"`
	PermanentDiscount  *apikit.Number            `json:"permanentDiscount" description:"Own permanent discount in percent; only if the template allows discountOverride." example:"10"`
	// PriceOverride and PriceOveride (sic) are INFO-Subscription's names
	// for Price; never written back (an order shows them as price).
	PriceOverride *apikit.Number `json:"priceOverride,omitempty" description:"The same as price, under the name INFO-Subscription clients use."`
	PriceOveride  *apikit.Number `json:"priceOveride,omitempty" description:"The same as price: INFO-Subscription's documented misspelling of priceOverride."`
}

// ProductChoice picks one of a template's included products. On input the
// product id alone (a string) is accepted too, as INFO-Subscription
// clients write it.
type ProductChoice struct {
	ProductID *string `json:"productId" required:"true" format:"uuid"`
}

// AcceptsShorthand marks ProductChoice as taking a bare product id too
// (apikit.Shorthand): its object form is still checked property by property.
func (ProductChoice) AcceptsShorthand() {}

// UnmarshalJSON reads {"productId": ...} or the id as a bare string.
func (p *ProductChoice) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var id string
		if err := json.Unmarshal(b, &id); err != nil {
			return err
		}
		p.ProductID = &id
		return nil
	}
	type plain ProductChoice
	return json.Unmarshal(b, (*plain)(p))
}

// AdditionalProductChoice picks one of a template's additional products.
type AdditionalProductChoice struct {
	ProductID *string `json:"productId" required:"true" format:"uuid"`
}

// choices converts c for catalog.Merge, which judges them against the
// template; only malformed numbers are reported here.
func (c TemplatePackageChoices) choices() (catalog.Choices, validation.Errors) {
	errs := c.resolveAliases()
	var out catalog.Choices
	out.BillingPlanID = normID(c.BillingPlanID)
	out.Units = c.Units
	if c.Products != nil {
		out.Products = make([]string, len(c.Products))
		for i, p := range c.Products {
			out.Products[i] = normID(p.ProductID)
		}
	}
	if c.AdditionalProducts != nil {
		out.AdditionalProducts = make([]string, len(c.AdditionalProducts))
		for i, a := range c.AdditionalProducts {
			out.AdditionalProducts[i] = normID(a.ProductID)
		}
	}
	if c.Price != nil {
		if d, err := c.Price.Decimal(); err != nil {
			errs.Add("price", "%s", err)
		} else {
			out.Price = &d
		}
	}
	if c.PermanentDiscount != nil {
		if d, err := c.PermanentDiscount.Decimal(); err != nil {
			errs.Add("permanentDiscount", "%s", err)
		} else {
			out.PermanentDiscount = &d
		}
	}
	return out, errs
}

type packageUpdate struct {
	apikit.IDParam
	PackageInput
}

type packagePreview struct {
	apikit.IDParam
	TemplatePackageChoices
}

type packageListParams struct {
	apikit.ListParams
	Currency       string `query:"currency" description:"Only packages in this currency (ISO 4217)."`
	PackageChainID string `query:"packageChainId" format:"uuid" description:"Only packages linked to this package chain."`
	ProductID      string `query:"productId" format:"uuid" description:"Only packages that contain this product, included or additional."`
	BillingPlanID  string `query:"billingPlanId" format:"uuid" description:"Only packages offering this billing plan."`
	Archived       bool   `query:"archived" description:"true lists the archived packages instead of the active ones."`
}

// catalogRoutes registers the catalog: products, billing plans, template
// packages and package chains.
func (s *Server) catalogRoutes() {
	s.productRoutes()
	s.billingPlanRoutes()
	s.packageRoutes()
	s.packageChainRoutes()
}

func (s *Server) packageRoutes() {
	const tag = "Package"
	s.add(route{
		method: http.MethodPost, path: "/package", id: "createPackage", tag: tag,
		summary: "Create a template package",
		desc: "Creates a template package (a plan the merchant sells). The body uses the contract's field names " +
			"(`Name`, `Currency`, `Price`, `Units`, `NumberOfEditions`, `AutomaticStop`, `permanentDiscount`, " +
			"`products`, `additionalProducts`, `BillingPlans`, `contract`, `packageChainId`), matched case-insensitively; " +
			"`allowedChoices` says what an order may choose. Every referenced product, billing plan and chain must exist " +
			"in the tenant. The id is assigned by the service.",
		request: new(PackageInput), responses: common(respCreated), handle: s.createPackage,
	})
	s.add(route{
		method: http.MethodGet, path: "/package", id: "listPackages", tag: tag,
		summary: "List template packages", desc: "Archived packages are left out unless `archived=true`.",
		request:   new(packageListParams),
		responses: common(respList(new([]catalog.TemplatePackage))),
		handle:    s.listPackages,
	})
	s.add(route{
		method: http.MethodGet, path: "/package/{id}", id: "getPackage", tag: tag,
		summary: "Get a template package", desc: "Archived packages can still be read; their `archivedAt` is set.",
		request:   new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(catalog.TemplatePackage)}, respNotFound),
		handle:    apikit.GetOne(s.app.Package),
	})
	s.add(route{
		method: http.MethodPut, path: "/package/{id}", id: "updatePackage", tag: tag,
		summary: "Replace a template package",
		desc: "Replaces every field, as POST does. Subscription packages made from the template earlier are copies and do " +
			"not change. The currency cannot change while a package chain uses the template.",
		request: new(packageUpdate), responses: common(respNoContent, respNotFound), handle: s.updatePackage,
	})
	s.add(route{
		method: http.MethodDelete, path: "/package/{id}", id: "deletePackage", tag: tag,
		summary: "Delete or archive a template package",
		desc: "Deletes the template, or archives it while something still needs it (a package chain step uses it, or " +
			"orders were placed for it). " +
			"Archived templates are hidden from lists, cannot be ordered or previewed, and keep serving their chains; " +
			"subscription packages made from them are never affected.",
		request: new(apikit.IDParam), responses: common(respNoContent, respNotFound), handle: s.deletePackage,
	})
	s.add(route{
		method: http.MethodPost, path: "/package/{id}/preview", id: "previewPackage", tag: tag,
		summary: "Preview the subscription package an order would get",
		desc: "Merges the template with the choices exactly as an order does and returns the resulting subscription " +
			"package with its price (`totalPrice` per billing period) and per-product amounts. The body is optional; " +
			"without one, every default applies. Every invalid choice is reported at once.",
		request:   new(packagePreview),
		responses: common(response{status: http.StatusOK, body: new(catalog.SubscriptionPackage)}, respNotFound),
		handle:    s.previewPackage,
	})
}

// templateInput decodes a template package body; the application layer
// checks it against the tenant's catalog.
func templateInput(r *http.Request) (app.TemplateInput, error) {
	var in PackageInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return app.TemplateInput{}, err
	}
	t, errs := in.template()
	out := app.TemplateInput{Package: t, Invalid: errs, TaxPercents: make([]*decimal.Decimal, len(in.Products))}
	for i, p := range in.Products {
		if p.TaxPercent == nil {
			continue
		}
		if d, err := p.TaxPercent.Decimal(); err == nil {
			out.TaxPercents[i] = &d
		} // else reported on taxPercent
	}
	return out, nil
}

func (s *Server) createPackage(w http.ResponseWriter, r *http.Request) error {
	in, err := templateInput(r)
	if err != nil {
		return err
	}
	t, err := s.app.CreatePackage(r.Context(), in)
	if err != nil {
		return catalogError(err)
	}
	s.created(w, "/package/"+t.ID, t.ID)
	return nil
}

func (s *Server) listPackages(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := catalogdb.PackageFilter{
		Currency:       strings.ToUpper(q.Get("currency")),
		PackageChainID: apikit.QueryID(q, "packageChainId", &errs),
		ProductID:      apikit.QueryID(q, "productId", &errs),
		BillingPlanID:  apikit.QueryID(q, "billingPlanId", &errs),
	}
	if b := apikit.QueryBool(q, "archived", &errs); b != nil {
		f.Archived = *b
	}
	if err := errs.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	pkgs, next, err := s.app.Packages(ctx, f, p)
	if err != nil {
		return err
	}
	if pkgs == nil {
		pkgs = []catalog.TemplatePackage{}
	}
	s.writeList(w, r, pkgs, next)
	return nil
}

func (s *Server) updatePackage(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := s.app.Package(r.Context(), id); err != nil {
		return err
	}
	in, err := templateInput(r)
	if err != nil {
		return err
	}
	if _, err := s.app.UpdatePackage(r.Context(), id, in); err != nil {
		return catalogError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deletePackage(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := s.app.DeletePackage(r.Context(), id); err != nil {
		return catalogError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) previewPackage(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in TemplatePackageChoices
	if err := apikit.DecodeOptionalJSON(r, &in); err != nil {
		return err
	}
	choices, errs := in.choices()
	if err := errs.Err(); err != nil {
		return err
	}
	sp, err := s.app.PreviewPackage(r.Context(), id, choices)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, sp)
	return nil
}

// percent parses a percentage field, recording a problem in errs.
func percent(errs *validation.Errors, field string, n apikit.Number) (catalog.Percent, bool) {
	d, err := n.Decimal()
	if err == nil {
		var p catalog.Percent
		if p, err = catalog.ParsePercent(d); err == nil {
			return p, true
		}
	}
	errs.Add(field, "%s", err)
	return catalog.Percent{}, false
}

// normID trims an id and lower-cases it, the canonical uuid form the store
// compares against.
func normID(p *string) string { return strings.ToLower(apikit.Trimmed(p)) }

// catalogError turns the store's conflicts into answers a client can act
// on: a resource still in use is a 400 naming id and its users; a
// reference that vanished during the request is a 400 asking to retry.
func catalogError(err error) error {
	var inUse *store.InUseError
	switch {
	case errors.As(err, &inUse):
		return validation.Field("id", "%s %s is used by %s %s; %s", inUse.What, inUse.ID, inUse.By,
			strings.Join(inUse.IDs, ", "), inUseAdvice[inUse.What])
	case errors.Is(err, store.ErrConflict):
		return validation.Field("body", "a product, billing plan, package or chain this request refers to was changed or removed at the same time; check it and retry")
	}
	return err
}

var inUseAdvice = map[string]string{
	"product":          "set active to false to stop offering it, or remove it from those packages first",
	"billing plan":     "remove it from those packages first",
	"package chain":    "remove packageChainId from those packages first",
	"proration policy": "point those dunning processes at another policy first",
	"dunning process":  "point those billing plans at another dunning process first",
}

// Whole-body examples for the OpenAPI document (ids are placeholders).
// json.RawMessage keeps prices as written (99.00).

// PrepareJSONSchema adds a complete example to the PackageInput schema.
func (PackageInput) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithExamples(json.RawMessage(`{
  "Name": "Digital – intro 99",
  "Description": "First month of digital news for 99 kr",
  "Currency": "NOK",
  "Price": 99.00,
  "Units": 1,
  "NumberOfEditions": null,
  "AutomaticStop": false,
  "permanentDiscount": 0,
  "products": [{"productId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d01"}],
  "additionalProducts": [{"productId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d02", "price": 49.00, "selectedByDefault": false}],
  "BillingPlans": ["0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d11"],
  "contract": {"bindingPeriods": 1, "terms": "No binding after the first month."},
  "packageChainId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d31",
  "allowedChoices": {"minUnits": 1, "maxUnits": 1, "priceOverride": false, "discountOverride": false}
}`))
	return nil
}

// PrepareJSONSchema adds a complete example to the choices schema.
func (TemplatePackageChoices) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithExamples(json.RawMessage(`{
  "billingPlanId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d12",
  "units": 2,
  "products": [{"productId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d01"}],
  "additionalProducts": [{"productId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d02"}]
}`))
	return nil
}
