package catalog

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/validation"
)

// TemplatePackage is a plan a merchant offers (the API's "template
// package"). It supplies every default of the subscription package an order
// creates, and declares which of them an order may choose or override:
//
//   - Price is the price of one unit for one billing period; the package's
//     full price is Price × Units plus the chosen additional products.
//     PermanentDiscount is then taken off that full price.
//   - Products are always included. Their optional Share (percent, adding
//     up to 100) says how Price × Units divides over them, which is what
//     invoice lines and their VAT rates are built from; without shares the
//     products share equally.
//   - AdditionalProducts are optional add-ons with their own price per
//     billing period; the ones SelectedByDefault are included unless the
//     order chooses otherwise.
//   - BillingPlans are the plans an order may choose from; the first is the
//     default. They all have the same interval, because the prices are per
//     billing period.
//   - AllowedChoices bounds the units an order may choose and says whether
//     an order may override the price or the permanent discount.
//
// A template that belongs to a package chain names it in PackageChainID;
// ordering it starts the subscription on the chain step that uses it.
type TemplatePackage struct {
	ID                 string              `json:"id"`
	Name               string              `json:"name"`
	Description        string              `json:"description"`
	Currency           string              `json:"currency"`
	Price              Amount              `json:"price"`
	Units              int                 `json:"units"`
	NumberOfEditions   *int                `json:"numberOfEditions"`
	AutomaticStop      bool                `json:"automaticStop"`
	PermanentDiscount  Percent             `json:"permanentDiscount"`
	Products           []PackageProduct    `json:"products"`
	AdditionalProducts []AdditionalProduct `json:"additionalProducts"`
	BillingPlans       []string            `json:"billingPlans"`
	Contract           *Contract           `json:"contract"`
	PackageChainID     *string             `json:"packageChainId"`
	AllowedChoices     AllowedChoices      `json:"allowedChoices"`
	// ArchivedAt is set when the template was deleted while something still
	// needed it (see the store's DeletePackage); archived templates cannot
	// be ordered.
	ArchivedAt *time.Time `json:"archivedAt"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
}

// PackageProduct is a product always included in a package, with its share
// of the package's base price (nil: equal shares).
type PackageProduct struct {
	ProductID string   `json:"productId"`
	Share     *Percent `json:"share"`
	// FullPrice is the product's own price per unit and billing period
	// (INFO-Subscription's per-product price). Given for every product or
	// none; with it the package's Price is their sum and each product's
	// part of the base price is its full price (instead of a share).
	FullPrice *Amount `json:"fullPrice,omitempty"`
}

// AdditionalProduct is an optional add-on an order may include, priced per
// billing period in the package currency.
type AdditionalProduct struct {
	ProductID         string `json:"productId"`
	Price             Amount `json:"price"`
	SelectedByDefault bool   `json:"selectedByDefault"`
}

// Contract is a package's optional restriction: a binding period of
// BindingPeriods billing periods during which the subscriber has committed
// to pay, with Terms shown to the subscriber. EarlyCancellation says what
// a cancellation during the binding period does (docs/ORDERS.md, "Binding
// periods"): EndOfBinding (the default, also what "" means) schedules it
// for the binding end; ChargeRemainder lets it take effect as asked and
// charges the remaining bound periods. It is left out of the JSON when ""
// so that subscription packages copied before it existed keep their text
// (and their hash in subscription_packages).
type Contract struct {
	BindingPeriods    int    `json:"bindingPeriods"`
	Terms             string `json:"terms"`
	EarlyCancellation string `json:"earlyCancellation,omitempty" enum:"EndOfBinding,ChargeRemainder" description:"What a cancellation during the binding period does: EndOfBinding (default) schedules it for the binding end, ChargeRemainder lets it take effect and charges the remaining bound periods."`
}

// The rules of Contract.EarlyCancellation.
const (
	EndOfBinding    = "EndOfBinding"
	ChargeRemainder = "ChargeRemainder"
)

// Rule is the contract's early-cancellation rule, EndOfBinding when unset.
func (c Contract) Rule() string {
	if c.EarlyCancellation == "" {
		return EndOfBinding
	}
	return c.EarlyCancellation
}

// AllowedChoices says what an order may choose beyond the billing plan and
// additional products: a number of units from MinUnits to MaxUnits, and
// whether it may set its own price (PriceOverride) or permanent discount
// (DiscountOverride), e.g. for a negotiated business deal or a campaign.
type AllowedChoices struct {
	MinUnits         int  `json:"minUnits"`
	MaxUnits         int  `json:"maxUnits"`
	PriceOverride    bool `json:"priceOverride"`
	DiscountOverride bool `json:"discountOverride"`
}

// Archived reports whether the template has been archived.
func (t TemplatePackage) Archived() bool { return t.ArchivedAt != nil }

// ProductIDs returns the ids of the included and additional products.
func (t TemplatePackage) ProductIDs() []string {
	ids := make([]string, 0, len(t.Products)+len(t.AdditionalProducts))
	for _, p := range t.Products {
		ids = append(ids, p.ProductID)
	}
	for _, p := range t.AdditionalProducts {
		ids = append(ids, p.ProductID)
	}
	return ids
}

// Refs is what a template package refers to, as found in the template's
// tenant. A missing entry means "no such resource in this tenant", which
// is also what another tenant's id looks like.
type Refs struct {
	Products     map[string]Product
	BillingPlans map[string]BillingPlan
	// ChainFound reports whether PackageChainID names a chain of the tenant.
	ChainFound bool
	// Kept holds the product ids the stored version of the template already
	// contains: an inactive product may stay where it is but not be added.
	Kept map[string]bool
}

// CheckTemplate checks the rules of a template package that go beyond the
// shape of single fields: units and their range, the products and their
// shares, the billing plans, the contract and the references, which must
// all exist in the tenant. Field names are those of the contract's POST
// /package body.
func CheckTemplate(t TemplatePackage, refs Refs) validation.Errors {
	var errs validation.Errors
	if t.Units < 1 || t.Units > MaxUnits {
		errs.Add("Units", "must be from 1 to %d", MaxUnits)
	}
	if n := t.NumberOfEditions; n != nil && (*n < 0 || *n > MaxNumberOfEditions) {
		errs.Add("NumberOfEditions", "must be from 0 to %d, or null", MaxNumberOfEditions)
	}
	checkProducts(t, refs, &errs)
	checkBillingPlans(t, refs, &errs)
	if c := t.Contract; c != nil && (c.BindingPeriods < 1 || c.BindingPeriods > MaxBindingPeriods) {
		errs.Add("contract.bindingPeriods", "must be from 1 to %d billing periods", MaxBindingPeriods)
	}
	if c := t.Contract; c != nil && c.EarlyCancellation != "" && c.EarlyCancellation != EndOfBinding && c.EarlyCancellation != ChargeRemainder {
		errs.Add("contract.earlyCancellation", "must be %s or %s", EndOfBinding, ChargeRemainder)
	}
	if id := t.PackageChainID; id != nil {
		switch {
		case !validID(*id):
			errs.Add("packageChainId", "must be a uuid")
		case !refs.ChainFound:
			errs.Add("packageChainId", "no package chain %s in this tenant", *id)
		}
	}
	ac := t.AllowedChoices
	if t.Units < 1 || t.Units > MaxUnits {
		return errs // the range is judged against Units, reported above
	}
	if ac.MinUnits < 1 || ac.MinUnits > t.Units {
		errs.Add("allowedChoices.minUnits", "must be from 1 to Units (%d)", t.Units)
	}
	if ac.MaxUnits < t.Units || ac.MaxUnits > MaxUnits {
		errs.Add("allowedChoices.maxUnits", "must be from Units (%d) to %d", t.Units, MaxUnits)
	}
	return errs
}

func checkProducts(t TemplatePackage, refs Refs, errs *validation.Errors) {
	switch {
	case len(t.Products) == 0:
		errs.Add("products", "at least one product is required")
	case len(t.Products) > MaxPackageProducts:
		errs.Add("products", "at most %d products", MaxPackageProducts)
	}
	if len(t.AdditionalProducts) > MaxPackageProducts {
		errs.Add("additionalProducts", "at most %d additional products", MaxPackageProducts)
	}
	seen := map[string]string{} // product id → field that first named it
	checkID := func(field, id string) {
		switch {
		case id == "":
			errs.Add(field, "is required")
			return
		case !validID(id):
			errs.Add(field, "must be a uuid")
			return
		}
		if first, dup := seen[id]; dup {
			errs.Add(field, "product %s is already in the package (%s)", id, first)
			return
		}
		seen[id] = field
		p, ok := refs.Products[id]
		switch {
		case !ok:
			errs.Add(field, "no product %s in this tenant", id)
		case !p.Active && !refs.Kept[id]:
			errs.Add(field, "product %s is inactive and cannot be added to a package", id)
		}
	}
	withShare, withFull := 0, 0
	sum := decimal.Zero
	fullSum := int64(0)
	for i, p := range t.Products {
		checkID(indexed("products", i, "productId"), p.ProductID)
		if p.Share != nil {
			withShare++
			sum = sum.Add(p.Share.Decimal())
		}
		if p.FullPrice != nil {
			withFull++
			fullSum += p.FullPrice.Minor
			if p.Share != nil {
				errs.Add(indexed("products", i, "share"), "give a share or a fullPrice, not both")
			}
		}
	}
	if withFull > 0 {
		if withFull < len(t.Products) {
			for i, p := range t.Products {
				if p.FullPrice == nil {
					errs.Add(indexed("products", i, "fullPrice"), "give a fullPrice for every product or for none")
				}
			}
		} else if fullSum != t.Price.Minor {
			errs.Add("Price", "must be the sum of the products' fullPrice (%s), or be left out", Amount{Minor: fullSum, Digits: t.Price.Digits}.Decimal())
		}
	} else if withShare > 0 {
		if withShare < len(t.Products) {
			for i, p := range t.Products {
				if p.Share == nil {
					errs.Add(indexed("products", i, "share"), "give a share for every product or for none")
				}
			}
		} else if !sum.Equal(hundred) {
			errs.Add("products", "the shares must add up to 100, not %s", sum)
		}
	}
	for i, p := range t.AdditionalProducts {
		checkID(indexed("additionalProducts", i, "productId"), p.ProductID)
	}
}

func checkBillingPlans(t TemplatePackage, refs Refs, errs *validation.Errors) {
	switch {
	case len(t.BillingPlans) == 0:
		errs.Add("BillingPlans", "at least one billing plan is required")
	case len(t.BillingPlans) > MaxPackagePlans:
		errs.Add("BillingPlans", "at most %d billing plans", MaxPackagePlans)
	}
	seen := map[string]bool{}
	var first *BillingPlan
	firstField := ""
	for i, id := range t.BillingPlans {
		field := indexed("BillingPlans", i, "")
		switch {
		case id == "":
			errs.Add(field, "is required")
			continue
		case !validID(id):
			errs.Add(field, "must be a uuid")
			continue
		case seen[id]:
			errs.Add(field, "billing plan %s is listed twice", id)
			continue
		}
		seen[id] = true
		bp, ok := refs.BillingPlans[id]
		if !ok {
			errs.Add(field, "no billing plan %s in this tenant", id)
			continue
		}
		if first == nil {
			first, firstField = &bp, field
		} else if bp.Interval() != first.Interval() {
			errs.Add(field, "billing plan interval %s differs from %s of %s: prices are per billing period, so all plans of a package must have the same interval",
				bp.Interval(), first.Interval(), firstField)
		}
	}
}

// validID reports whether s is a uuid in canonical textual form.
func validID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}
