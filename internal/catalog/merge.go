package catalog

import (
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/validation"
)

// Choices are what an order (TemplatePackageChoices) may choose or
// override. The zero value takes every default of the template.
type Choices struct {
	// BillingPlanID picks one of the template's billing plans; "" takes
	// the first.
	BillingPlanID string
	// Units picks a number of units within the template's allowed range.
	Units *int
	// Products selects which of the template's included products the
	// subscription gets, by product id. nil takes them all; a non-nil slice
	// must name at least one, and the base price follows the selection
	// (see Merge).
	Products []string
	// AdditionalProducts picks the template's add-ons by product id. nil
	// keeps the add-ons the template selects by default; a non-nil slice,
	// even an empty one, replaces that selection.
	AdditionalProducts []string
	// Price overrides the price of one unit, in major units, when the
	// template allows it.
	Price *decimal.Decimal
	// PermanentDiscount overrides the template's discount when it allows
	// it.
	PermanentDiscount *decimal.Decimal
}

// SubscriptionPackage is the plan instance a subscription follows: a
// self-contained copy of everything it needs from the template, its
// products and its billing plan, with the order's choices applied and the
// price computed. It keeps no reference to the template, so later edits of
// the template, its products or its billing plans never change it.
//
// TotalPrice is what one billing period costs. The product lines divide it
// exactly: the Amounts of Products and AdditionalProducts add up to
// TotalPrice and their FullAmounts to FullPrice, so invoice lines can carry
// each product's VAT rate without losing or inventing a minor unit.
type SubscriptionPackage struct {
	Name               string    `json:"name"`
	Description        string    `json:"description"`
	Currency           string    `json:"currency"`
	Price              Amount    `json:"price"`
	Units              int       `json:"units"`
	NumberOfEditions   *int      `json:"numberOfEditions"`
	AutomaticStop      bool      `json:"automaticStop"`
	PermanentDiscount  Percent   `json:"permanentDiscount"`
	FullPrice          Amount    `json:"fullPrice"`
	Discount           Amount    `json:"discount"`
	TotalPrice         Amount    `json:"totalPrice"`
	Products           []Line    `json:"products"`
	AdditionalProducts []Line    `json:"additionalProducts"`
	BillingPlan        PlanCopy  `json:"billingPlan"`
	Contract           *Contract `json:"contract"`
	// SubscriptionPackageChainID, ChainStepOrder and ChainStepPeriods are
	// set when the template belongs to a package chain: the chain, the step
	// the subscription is on, and how many billing periods that step lasts
	// (null on the last step, which lasts until changed).
	SubscriptionPackageChainID *string `json:"subscriptionPackageChainId"`
	ChainStepOrder             *int    `json:"chainStepOrder"`
	ChainStepPeriods           *int    `json:"chainStepPeriods"`
}

// Line is one product of a subscription package with its part of the
// price. Share is the product's share of the base price (included products
// only); FullAmount is its part before the permanent discount and Amount
// after it.
type Line struct {
	ProductID  string   `json:"productId"`
	Name       string   `json:"name"`
	Category   string   `json:"category"`
	VATRate    Percent  `json:"vatRate"`
	Share      *Percent `json:"share,omitempty"`
	FullAmount Amount   `json:"fullAmount"`
	Amount     Amount   `json:"amount"`
}

// PlanCopy is the billing plan a subscription package follows, copied.
type PlanCopy struct {
	BillingPlanID    string      `json:"billingPlanId"`
	Name             string      `json:"name"`
	IntervalUnit     period.Unit `json:"intervalUnit"`
	IntervalCount    int         `json:"intervalCount"`
	MinimumDueDays   int         `json:"minimumDueDays"`
	PaymentTermsDays int         `json:"paymentTermsDays"`
}

// Interval returns the plan's billing interval.
func (p PlanCopy) Interval() period.Interval {
	return period.Interval{Unit: p.IntervalUnit, Count: p.IntervalCount}
}

// MergeInput is everything Merge needs. Products, BillingPlans and Chain are
// the template's references as found in its tenant.
type MergeInput struct {
	Template     TemplatePackage
	Products     map[string]Product
	BillingPlans map[string]BillingPlan
	// Chain is the chain the template's PackageChainID names (nil if none).
	Chain   *Chain
	Choices Choices
	// AllowArchived lets an archived template be merged. Orders and plan
	// changes leave it false (archived templates cannot be ordered); the
	// renewal onto a chain step sets it, because a chain keeps using its
	// steps' templates after they are archived.
	AllowArchived bool
}

// Merge builds the subscription package an order of in.Template with
// in.Choices gets. Invalid choices are all reported at once, as
// validation.Errors named by the choice field (billingPlanId, units,
// products[0].productId, additionalProducts[0].productId, price,
// permanentDiscount); problems of the template itself (archived, a product
// gone) are reported on "id".
//
// The price: the unit price (the template's Price, or the order's price
// override) × units is the base price of all the included products; when
// the choices select some of them (Choices.Products), the base is that
// price × the sum of the chosen products' shares (the template's shares,
// or equal shares when it gives none), rounded half away from zero to the
// minor unit. The base plus each chosen additional product's price is the
// full price; the permanent discount (the template's, or the override) is
// taken off the full price and the result rounded half away from zero to
// the currency's minor unit, once. That total is then divided over the
// product lines in proportion to their full amounts (the base price split
// by share, each add-on at its price) by the largest-remainder method:
// every line is its exact part rounded down, and the minor units left over
// go to the lines with the largest fractions (the earlier line on a tie),
// so the lines add up to the total exactly.
func Merge(in MergeInput) (SubscriptionPackage, error) {
	t := in.Template
	ch := in.Choices
	var errs validation.Errors

	cur, ok := money.LookupCurrency(t.Currency)
	if !ok {
		return SubscriptionPackage{}, fmt.Errorf("catalog: template %s has unknown currency %q", t.ID, t.Currency)
	}
	if t.Archived() && !in.AllowArchived {
		errs.Add("id", "template package %s is archived and cannot be ordered", t.ID)
	}

	// Billing plan: one of the template's, the first by default.
	planID := ch.BillingPlanID
	if planID == "" && len(t.BillingPlans) > 0 {
		planID = t.BillingPlans[0]
	}
	plan, planOK := in.BillingPlans[planID]
	switch {
	case ch.BillingPlanID != "" && !slices.Contains(t.BillingPlans, ch.BillingPlanID):
		errs.Add("billingPlanId", "billing plan %s is not one of this package's billing plans (%v)", ch.BillingPlanID, t.BillingPlans)
	case !planOK:
		errs.Add("billingPlanId", "billing plan %q of this package no longer exists", planID)
	}

	// Units, within the allowed range.
	units := t.Units
	if ch.Units != nil {
		units = *ch.Units
		lo, hi := t.AllowedChoices.MinUnits, t.AllowedChoices.MaxUnits
		switch {
		case lo == hi && units != lo:
			errs.Add("units", "this package has a fixed number of units (%d)", lo)
		case units < lo || units > hi:
			errs.Add("units", "must be from %d to %d", lo, hi)
		}
	}

	// Price and discount overrides, only where allowed.
	price := t.Price
	if ch.Price != nil {
		if !t.AllowedChoices.PriceOverride {
			errs.Add("price", "this package does not allow the price to be overridden")
		} else if a, err := ParseAmount(*ch.Price, cur); err != nil {
			errs.Add("price", "%s", err.Error())
		} else {
			price = a
		}
	}
	discount := t.PermanentDiscount
	if ch.PermanentDiscount != nil {
		if !t.AllowedChoices.DiscountOverride {
			errs.Add("permanentDiscount", "this package does not allow the permanent discount to be overridden")
		} else if p, err := ParsePercent(*ch.PermanentDiscount); err != nil {
			errs.Add("permanentDiscount", "%s", err.Error())
		} else {
			discount = p
		}
	}

	// Included products: all of them, or exactly the chosen ones (in the
	// template's order).
	var picked map[string]bool // nil: every included product
	if ch.Products != nil {
		picked = map[string]bool{}
		if len(ch.Products) == 0 {
			errs.Add("products", "choose at least one of this package's products, or leave products out to get them all")
		}
		included := map[string]bool{}
		for _, pp := range t.Products {
			included[pp.ProductID] = true
		}
		for i, id := range ch.Products {
			field := indexed("products", i, "productId")
			switch {
			case id == "":
				errs.Add(field, "is required")
			case !included[id]:
				errs.Add(field, "product %s is not one of this package's products", id)
			case picked[id]:
				errs.Add(field, "product %s is chosen twice", id)
			default:
				picked[id] = true
			}
		}
	}

	// Additional products: the template's default selection, or exactly
	// the chosen ones (in the template's order).
	chosen := map[string]bool{}
	if ch.AdditionalProducts == nil {
		for _, a := range t.AdditionalProducts {
			if a.SelectedByDefault {
				chosen[a.ProductID] = true
			}
		}
	} else {
		offered := map[string]bool{}
		for _, a := range t.AdditionalProducts {
			offered[a.ProductID] = true
		}
		for i, id := range ch.AdditionalProducts {
			field := indexed("additionalProducts", i, "productId")
			switch {
			case id == "":
				errs.Add(field, "is required")
			case !offered[id]:
				errs.Add(field, "product %s is not an additional product of this package", id)
			case chosen[id]:
				errs.Add(field, "product %s is chosen twice", id)
			default:
				chosen[id] = true
			}
		}
	}

	// The references must still be there; the store's foreign keys make a
	// miss here a sign of a concurrent change.
	// They are problems of the template, not of the choices: "id".
	product := func(id string) Product {
		p, ok := in.Products[id]
		if !ok {
			errs.Add("id", "product %s of this package no longer exists", id)
		}
		return p
	}
	var (
		lines []Line
		addOn []Line
		// fractions holds each line's fraction of the base price of all
		// included products: its share, or 1/n without shares.
		fractions []*big.Rat
	)
	// With per-product full prices, a product's fraction of the base is
	// its full price over their sum (the template's Price).
	var fullSum int64
	for _, pp := range t.Products {
		if pp.FullPrice != nil {
			fullSum += pp.FullPrice.Minor
		}
	}
	for _, pp := range t.Products {
		if picked != nil && !picked[pp.ProductID] {
			continue
		}
		p := product(pp.ProductID)
		l := Line{ProductID: pp.ProductID, Name: p.Name, Category: p.Category, VATRate: p.VATRate}
		f := big.NewRat(1, int64(max(len(t.Products), 1)))
		switch {
		case pp.Share != nil:
			s := *pp.Share
			l.Share = &s
			f = new(big.Rat).Quo(s.Decimal().Rat(), big.NewRat(100, 1))
		case pp.FullPrice != nil && fullSum > 0:
			f = big.NewRat(pp.FullPrice.Minor, fullSum)
		}
		lines = append(lines, l)
		fractions = append(fractions, f)
	}
	var addOnPrices []int64
	for _, ap := range t.AdditionalProducts {
		if !chosen[ap.ProductID] {
			continue
		}
		p := product(ap.ProductID)
		addOn = append(addOn, Line{ProductID: ap.ProductID, Name: p.Name, Category: p.Category, VATRate: p.VATRate})
		addOnPrices = append(addOnPrices, ap.Price.Minor)
	}

	var chainID *string
	var stepOrder, stepPeriods *int
	if t.PackageChainID != nil {
		switch step, found := stepIn(in.Chain, t); {
		case in.Chain == nil || in.Chain.ID != *t.PackageChainID:
			errs.Add("packageChainId", "package chain %s of this package no longer exists", *t.PackageChainID)
		case !found:
			errs.Add("packageChainId", "template package %s is not a step of its package chain %s; add it to the chain's steps", t.ID, in.Chain.ID)
		default:
			id := in.Chain.ID
			chainID = &id
			order := step.Step
			stepOrder = &order
			if !in.Chain.Last(step.Step) {
				n := step.Periods
				stepPeriods = &n
			}
		}
	}

	if len(errs) > 0 {
		return SubscriptionPackage{}, errs
	}
	if len(lines) == 0 {
		return SubscriptionPackage{}, errors.New("catalog: template has no products")
	}

	// Base = unit price × units × the chosen products' fractions (exactly
	// unit price × units when all are included: the shares add up to 100),
	// rounded once; full price = base + add-ons.
	all := new(big.Int).Mul(big.NewInt(price.Minor), big.NewInt(int64(units)))
	chosenFraction := new(big.Rat)
	for _, f := range fractions {
		chosenFraction.Add(chosenFraction, f)
	}
	base := roundHalfUp(new(big.Rat).Mul(new(big.Rat).SetInt(all), chosenFraction))
	full := new(big.Int).Set(base)
	for _, p := range addOnPrices {
		full.Add(full, big.NewInt(p))
	}
	if !full.IsInt64() {
		return SubscriptionPackage{}, validation.Field("units", "the price of this many units is too large")
	}
	fullMinor := full.Int64()
	total, err := money.ApplyDiscount(fullMinor, discount.Decimal())
	if err != nil {
		return SubscriptionPackage{}, fmt.Errorf("catalog: discount: %w", err)
	}

	// Each line's exact part of the full price: the base split by share
	// (equal parts without shares), add-ons at their price.
	weights := make([]*big.Rat, 0, len(lines)+len(addOn))
	for _, f := range fractions {
		weights = append(weights, new(big.Rat).Mul(new(big.Rat).SetInt(all), f))
	}
	for _, p := range addOnPrices {
		weights = append(weights, new(big.Rat).SetInt64(p))
	}
	fullParts := allocate(fullMinor, weights)
	parts := allocate(total, weights)
	withAddOns := append(lines, addOn...)
	for i := range withAddOns {
		withAddOns[i].FullAmount = NewAmount(fullParts[i], cur)
		withAddOns[i].Amount = NewAmount(parts[i], cur)
	}

	out := SubscriptionPackage{
		Name:                       t.Name,
		Description:                t.Description,
		Currency:                   t.Currency,
		Price:                      price,
		Units:                      units,
		NumberOfEditions:           copyInt(t.NumberOfEditions),
		AutomaticStop:              t.AutomaticStop,
		PermanentDiscount:          discount,
		FullPrice:                  NewAmount(fullMinor, cur),
		Discount:                   NewAmount(fullMinor-total, cur),
		TotalPrice:                 NewAmount(total, cur),
		Products:                   withAddOns[:len(lines):len(lines)],
		AdditionalProducts:         withAddOns[len(lines):],
		BillingPlan:                PlanCopy{BillingPlanID: plan.ID, Name: plan.Name, IntervalUnit: plan.IntervalUnit, IntervalCount: plan.IntervalCount, MinimumDueDays: plan.MinimumDueDays, PaymentTermsDays: plan.PaymentTermsDays},
		SubscriptionPackageChainID: chainID,
		ChainStepOrder:             stepOrder,
		ChainStepPeriods:           stepPeriods,
	}
	if t.Contract != nil {
		c := *t.Contract
		out.Contract = &c
	}
	return out, nil
}

// roundHalfUp rounds r (≥ 0) to an integer, halves away from zero.
func roundHalfUp(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Lsh(m, 1).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func stepIn(c *Chain, t TemplatePackage) (ChainStep, bool) {
	if c == nil {
		return ChainStep{}, false
	}
	return c.StepOf(t.ID)
}

func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// allocate divides total (≥ 0) over lines in proportion to weights (≥ 0)
// by the largest-remainder method: each line gets its exact part rounded
// down, and the minor units still missing go one each to the lines with
// the largest fractional parts, earlier lines first on a tie. The parts
// add up to total exactly; a line of weight 0 gets 0.
func allocate(total int64, weights []*big.Rat) []int64 {
	parts := make([]int64, len(weights))
	sum := new(big.Rat)
	for _, w := range weights {
		sum.Add(sum, w)
	}
	if sum.Sign() == 0 || total == 0 {
		return parts
	}
	type frac struct {
		i   int
		rem *big.Rat
	}
	fracs := make([]frac, len(weights))
	given := int64(0)
	for i, w := range weights {
		exact := new(big.Rat).Mul(big.NewRat(total, 1), w)
		exact.Quo(exact, sum)
		q := new(big.Int).Quo(exact.Num(), exact.Denom()) // floor: exact ≥ 0
		parts[i] = q.Int64()
		given += parts[i]
		fracs[i] = frac{i, new(big.Rat).Sub(exact, new(big.Rat).SetInt(q))}
	}
	slices.SortStableFunc(fracs, func(a, b frac) int { return b.rem.Cmp(a.rem) })
	for k := 0; given < total; k++ {
		parts[fracs[k].i]++
		given++
	}
	return parts
}
