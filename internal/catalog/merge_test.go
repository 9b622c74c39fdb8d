package catalog

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/validation"
)

// Fixed ids keep the expectations readable.
const (
	idPrint    = "01900000-0000-7000-8000-000000000001"
	idDigital  = "01900000-0000-7000-8000-000000000002"
	idMagazine = "01900000-0000-7000-8000-000000000003"
	idSunday   = "01900000-0000-7000-8000-000000000004"
	idInvoice  = "01900000-0000-7000-8000-000000000011" // monthly, paid by invoice
	idAvtale   = "01900000-0000-7000-8000-000000000012" // monthly, paid by AvtaleGiro
	idYearly   = "01900000-0000-7000-8000-000000000013"
	idBundle   = "01900000-0000-7000-8000-000000000021"
	idIntro99  = "01900000-0000-7000-8000-000000000022"
	idIntro149 = "01900000-0000-7000-8000-000000000023"
	idRegular  = "01900000-0000-7000-8000-000000000024"
	idChain    = "01900000-0000-7000-8000-000000000031"
	idUnknown  = "01900000-0000-7000-8000-0000000000ff"
)

func nok(t testing.TB) money.Currency { return currency(t, "NOK") }

func currency(t testing.TB, code string) money.Currency {
	t.Helper()
	c, ok := money.LookupCurrency(code)
	if !ok {
		t.Fatalf("no currency %s", code)
	}
	return c
}

func dec(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

func pct(s string) *Percent {
	p := NewPercent(decimal.RequireFromString(s))
	return &p
}

func amount(t testing.TB, s string, c money.Currency) Amount {
	t.Helper()
	a, err := ParseAmount(decimal.RequireFromString(s), c)
	if err != nil {
		t.Fatalf("amount %s: %v", s, err)
	}
	return a
}

func intp(n int) *int { return &n }

func products() map[string]Product {
	return map[string]Product{
		idPrint:    {ID: idPrint, Name: "Printed paper", Category: "print", VATRate: PercentOf(0), Active: true},
		idDigital:  {ID: idDigital, Name: "Digital news", Category: "digital", VATRate: PercentOf(0), Active: true},
		idMagazine: {ID: idMagazine, Name: "Weekend magazine", Category: "magazine", VATRate: PercentOf(25), Active: true},
		idSunday:   {ID: idSunday, Name: "Sunday edition", Category: "print", VATRate: PercentOf(0), Active: true},
	}
}

func plans() map[string]BillingPlan {
	return map[string]BillingPlan{
		idInvoice: {ID: idInvoice, Name: "Monthly invoice", IntervalUnit: period.Month, IntervalCount: 1, MinimumDueDays: 14, PaymentTermsDays: 14},
		idAvtale:  {ID: idAvtale, Name: "Monthly AvtaleGiro", IntervalUnit: period.Month, IntervalCount: 1, MinimumDueDays: 10, PaymentTermsDays: 0},
		idYearly:  {ID: idYearly, Name: "Yearly", IntervalUnit: period.Year, IntervalCount: 1, MinimumDueDays: 30, PaymentTermsDays: 14},
	}
}

// bundle is a print + digital package at 449.00 NOK a month: 70 % of the
// price is the printed paper and 30 % the digital product; a Sunday
// edition add-on (29.00) is on by default and a magazine (49.00) can be
// added; 1 to 5 units; the price may be overridden, the discount not.
func bundle(t testing.TB) TemplatePackage {
	c := nok(t)
	return TemplatePackage{
		ID: idBundle, Name: "Print + digital", Description: "Every day on paper and online",
		Currency: "NOK", Price: amount(t, "449", c), Units: 1, NumberOfEditions: intp(26),
		PermanentDiscount: PercentOf(0),
		Products:          []PackageProduct{{ProductID: idPrint, Share: pct("70")}, {ProductID: idDigital, Share: pct("30")}},
		AdditionalProducts: []AdditionalProduct{
			{ProductID: idMagazine, Price: amount(t, "49", c)},
			{ProductID: idSunday, Price: amount(t, "29", c), SelectedByDefault: true},
		},
		BillingPlans:   []string{idInvoice, idAvtale},
		Contract:       &Contract{BindingPeriods: 12, Terms: "12 months"},
		AllowedChoices: AllowedChoices{MinUnits: 1, MaxUnits: 5, PriceOverride: true},
	}
}

func bundleInput(t testing.TB) MergeInput {
	return MergeInput{Template: bundle(t), Products: products(), BillingPlans: plans()}
}

// lines renders product lines as "id-suffix:fullAmount/amount".
func lines(ls []Line) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.ProductID[len(l.ProductID)-2:]+":"+l.FullAmount.String()+"/"+l.Amount.String())
	}
	return strings.Join(parts, " ")
}

func TestMergeChoices(t *testing.T) {
	tests := []struct {
		name    string
		choices Choices
		edit    func(*TemplatePackage)
		plan    string
		units   int
		price   string // unit price
		full    string
		total   string
		lines   string // included products
		addOns  string
	}{
		{name: "defaults only", plan: idInvoice, units: 1, price: "449.00", full: "478.00", total: "478.00",
			lines: "01:314.30/314.30 02:134.70/134.70", addOns: "04:29.00/29.00"},
		{name: "billing plan", choices: Choices{BillingPlanID: idAvtale}, plan: idAvtale, units: 1, price: "449.00",
			full: "478.00", total: "478.00", lines: "01:314.30/314.30 02:134.70/134.70", addOns: "04:29.00/29.00"},
		{name: "units", choices: Choices{Units: intp(3)}, plan: idInvoice, units: 3, price: "449.00",
			full: "1376.00", total: "1376.00", lines: "01:942.90/942.90 02:404.10/404.10", addOns: "04:29.00/29.00"},
		{name: "additional products replace the default selection", choices: Choices{AdditionalProducts: []string{idMagazine}},
			plan: idInvoice, units: 1, price: "449.00", full: "498.00", total: "498.00",
			lines: "01:314.30/314.30 02:134.70/134.70", addOns: "03:49.00/49.00"},
		{name: "both additional products, in the template's order", choices: Choices{AdditionalProducts: []string{idSunday, idMagazine}},
			plan: idInvoice, units: 1, price: "449.00", full: "527.00", total: "527.00",
			lines: "01:314.30/314.30 02:134.70/134.70", addOns: "03:49.00/49.00 04:29.00/29.00"},
		{name: "no additional products", choices: Choices{AdditionalProducts: []string{}},
			plan: idInvoice, units: 1, price: "449.00", full: "449.00", total: "449.00",
			lines: "01:314.30/314.30 02:134.70/134.70", addOns: ""},
		{name: "price override", choices: Choices{Price: dec("399.50")}, plan: idInvoice, units: 1, price: "399.50",
			full: "428.50", total: "428.50", lines: "01:279.65/279.65 02:119.85/119.85", addOns: "04:29.00/29.00"},
		{name: "discount override", choices: Choices{PermanentDiscount: dec("50")},
			edit: func(tp *TemplatePackage) { tp.AllowedChoices.DiscountOverride = true },
			plan: idInvoice, units: 1, price: "449.00", full: "478.00", total: "239.00",
			lines: "01:314.30/157.15 02:134.70/67.35", addOns: "04:29.00/14.50"},
		{name: "permanent discount on the full price of units and add-ons", choices: Choices{Units: intp(2)},
			edit: func(tp *TemplatePackage) { tp.PermanentDiscount = PercentOf(15) },
			// (449.00 × 2 + 29.00) × 0.85 = 787.95, split 628.60 : 269.40 : 29.00
			plan: idInvoice, units: 2, price: "449.00", full: "927.00", total: "787.95",
			lines: "01:628.60/534.31 02:269.40/228.99", addOns: "04:29.00/24.65"},
		{name: "equal shares without shares; remainder to the earliest line", choices: Choices{AdditionalProducts: []string{}},
			edit: func(tp *TemplatePackage) {
				tp.Price = amount(t, "1", nok(t))
				tp.Products = []PackageProduct{{ProductID: idPrint}, {ProductID: idDigital}, {ProductID: idSunday}}
			},
			plan: idInvoice, units: 1, price: "1.00", full: "1.00", total: "1.00",
			lines: "01:0.34/0.34 02:0.33/0.33 04:0.33/0.33", addOns: ""},
		// Choosing included products: the base is Price × Units × the
		// chosen shares, rounded once; add-ons keep their prices.
		{name: "products: one of two, by its share", choices: Choices{Products: []string{idPrint}},
			// 449.00 × 70 % = 314.30, + 29.00
			plan: idInvoice, units: 1, price: "449.00", full: "343.30", total: "343.30",
			lines: "01:314.30/314.30", addOns: "04:29.00/29.00"},
		{name: "products: the other, with units", choices: Choices{Products: []string{idDigital}, Units: intp(3)},
			// 449.00 × 3 × 30 % = 404.10, + 29.00
			plan: idInvoice, units: 3, price: "449.00", full: "433.10", total: "433.10",
			lines: "02:404.10/404.10", addOns: "04:29.00/29.00"},
		{name: "products: both, in any order, is the whole package", choices: Choices{Products: []string{idDigital, idPrint}},
			plan: idInvoice, units: 1, price: "449.00", full: "478.00", total: "478.00",
			lines: "01:314.30/314.30 02:134.70/134.70", addOns: "04:29.00/29.00"},
		{name: "products: discount after the selection", choices: Choices{Products: []string{idPrint}, Units: intp(2)},
			edit: func(tp *TemplatePackage) { tp.PermanentDiscount = PercentOf(15) },
			// (449.00 × 2 × 70 % + 29.00) × 0.85 = 657.60 × 0.85 = 558.96
			plan: idInvoice, units: 2, price: "449.00", full: "657.60", total: "558.96",
			lines: "01:628.60/534.31", addOns: "04:29.00/24.65"},
		{name: "products: equal shares, rounded once half away from zero", choices: Choices{Products: []string{idPrint, idSunday}, AdditionalProducts: []string{}},
			edit: func(tp *TemplatePackage) {
				tp.Price = amount(t, "100", nok(t))
				tp.Products = []PackageProduct{{ProductID: idPrint}, {ProductID: idDigital}, {ProductID: idSunday}}
			},
			// 100.00 × 2/3 = 66.666… → 66.67, split equally with the extra øre first
			plan: idInvoice, units: 1, price: "100.00", full: "66.67", total: "66.67",
			lines: "01:33.34/33.34 04:33.33/33.33", addOns: ""},
		{name: "products: a half øre rounds up", choices: Choices{Products: []string{idDigital}, AdditionalProducts: []string{}},
			edit: func(tp *TemplatePackage) {
				tp.Price = amount(t, "0.05", nok(t))
				tp.Products = []PackageProduct{{ProductID: idPrint, Share: pct("50")}, {ProductID: idDigital, Share: pct("50")}}
			},
			plan: idInvoice, units: 1, price: "0.05", full: "0.03", total: "0.03",
			lines: "02:0.03/0.03", addOns: ""},
		{name: "a zero share gets nothing", choices: Choices{AdditionalProducts: []string{}},
			edit: func(tp *TemplatePackage) {
				tp.Price = amount(t, "0.03", nok(t))
				tp.PermanentDiscount = PercentOf(50) // 0.015 → 0.02
				tp.Products = []PackageProduct{{ProductID: idPrint, Share: pct("0")}, {ProductID: idDigital, Share: pct("50")}, {ProductID: idSunday, Share: pct("50")}}
			},
			plan: idInvoice, units: 1, price: "0.03", full: "0.03", total: "0.02",
			lines: "01:0.00/0.00 02:0.02/0.01 04:0.01/0.01", addOns: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := bundleInput(t)
			if tt.edit != nil {
				tt.edit(&in.Template)
			}
			in.Choices = tt.choices
			got, err := Merge(in)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if got.BillingPlan.BillingPlanID != tt.plan || got.Units != tt.units || got.Price.String() != tt.price {
				t.Errorf("plan %s units %d price %s; want %s, %d, %s", got.BillingPlan.BillingPlanID, got.Units, got.Price, tt.plan, tt.units, tt.price)
			}
			if got.FullPrice.String() != tt.full || got.TotalPrice.String() != tt.total {
				t.Errorf("full %s total %s; want %s, %s", got.FullPrice, got.TotalPrice, tt.full, tt.total)
			}
			if s := lines(got.Products); s != tt.lines {
				t.Errorf("products\n got %s\nwant %s", s, tt.lines)
			}
			if s := lines(got.AdditionalProducts); s != tt.addOns {
				t.Errorf("additional products\n got %s\nwant %s", s, tt.addOns)
			}
			checkSums(t, got)
		})
	}
}

// checkSums asserts the invariants invoices rely on: lines add up to the
// prices exactly, and discount = full − total.
func checkSums(t *testing.T, p SubscriptionPackage) {
	t.Helper()
	var full, total int64
	for _, l := range slices.Concat(p.Products, p.AdditionalProducts) {
		full += l.FullAmount.Minor
		total += l.Amount.Minor
		if l.Amount.Minor < 0 || l.Amount.Minor > l.FullAmount.Minor {
			t.Errorf("line %s: amount %s outside 0..%s", l.ProductID, l.Amount, l.FullAmount)
		}
	}
	if full != p.FullPrice.Minor || total != p.TotalPrice.Minor {
		t.Errorf("lines add up to %d/%d, want %d/%d", full, total, p.FullPrice.Minor, p.TotalPrice.Minor)
	}
	if p.Discount.Minor != p.FullPrice.Minor-p.TotalPrice.Minor {
		t.Errorf("discount %s ≠ %s − %s", p.Discount, p.FullPrice, p.TotalPrice)
	}
}

func TestMergeCopiesEverythingElse(t *testing.T) {
	got, err := Merge(bundleInput(t))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Print + digital" || got.Description != "Every day on paper and online" || got.Currency != "NOK" ||
		got.NumberOfEditions == nil || *got.NumberOfEditions != 26 || got.AutomaticStop ||
		got.Contract == nil || got.Contract.BindingPeriods != 12 || !got.PermanentDiscount.IsZero() {
		t.Errorf("template fields not copied: %+v", got)
	}
	bp := got.BillingPlan
	if bp.Name != "Monthly invoice" || bp.Interval() != (period.Interval{Unit: period.Month, Count: 1}) || bp.MinimumDueDays != 14 || bp.PaymentTermsDays != 14 {
		t.Errorf("billing plan not copied: %+v", bp)
	}
	p := got.AdditionalProducts[0]
	if p.Name != "Sunday edition" || p.Category != "print" || p.Share != nil || !p.VATRate.IsZero() {
		t.Errorf("product not copied: %+v", p)
	}
	if got.Products[0].Share == nil || got.Products[0].Share.String() != "70" {
		t.Errorf("share not copied: %+v", got.Products[0])
	}
	if got.SubscriptionPackageChainID != nil || got.ChainStepOrder != nil || got.ChainStepPeriods != nil {
		t.Errorf("unchained template got chain fields: %+v", got)
	}
}

func TestMergeInvalidChoices(t *testing.T) {
	archived := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		choices Choices
		edit    func(*TemplatePackage)
		fields  []string
	}{
		{name: "billing plan not offered", choices: Choices{BillingPlanID: idYearly}, fields: []string{"billingPlanId"}},
		{name: "unknown billing plan", choices: Choices{BillingPlanID: idUnknown}, fields: []string{"billingPlanId"}},
		{name: "too few units", choices: Choices{Units: intp(0)}, fields: []string{"units"}},
		{name: "too many units", choices: Choices{Units: intp(6)}, fields: []string{"units"}},
		{name: "units on a fixed-units package", choices: Choices{Units: intp(2)},
			edit: func(tp *TemplatePackage) { tp.AllowedChoices.MinUnits, tp.AllowedChoices.MaxUnits = 1, 1 }, fields: []string{"units"}},
		{name: "additional product not offered", choices: Choices{AdditionalProducts: []string{idDigital}}, fields: []string{"additionalProducts[0].productId"}},
		{name: "additional product unknown", choices: Choices{AdditionalProducts: []string{idMagazine, idUnknown}}, fields: []string{"additionalProducts[1].productId"}},
		{name: "additional product twice", choices: Choices{AdditionalProducts: []string{idMagazine, idMagazine}}, fields: []string{"additionalProducts[1].productId"}},
		{name: "additional product empty", choices: Choices{AdditionalProducts: []string{""}}, fields: []string{"additionalProducts[0].productId"}},
		{name: "product not in the package", choices: Choices{Products: []string{idPrint, idMagazine}}, fields: []string{"products[1].productId"}},
		{name: "product unknown", choices: Choices{Products: []string{idUnknown}}, fields: []string{"products[0].productId"}},
		{name: "product twice", choices: Choices{Products: []string{idPrint, idPrint}}, fields: []string{"products[1].productId"}},
		{name: "product empty", choices: Choices{Products: []string{""}}, fields: []string{"products[0].productId"}},
		{name: "no products", choices: Choices{Products: []string{}}, fields: []string{"products"}},
		{name: "price override not allowed", choices: Choices{Price: dec("100")},
			edit: func(tp *TemplatePackage) { tp.AllowedChoices.PriceOverride = false }, fields: []string{"price"}},
		{name: "price with too many decimals", choices: Choices{Price: dec("100.005")}, fields: []string{"price"}},
		{name: "negative price", choices: Choices{Price: dec("-1")}, fields: []string{"price"}},
		{name: "discount override not allowed", choices: Choices{PermanentDiscount: dec("10")}, fields: []string{"permanentDiscount"}},
		{name: "discount above 100", choices: Choices{PermanentDiscount: dec("100.5")},
			edit: func(tp *TemplatePackage) { tp.AllowedChoices.DiscountOverride = true }, fields: []string{"permanentDiscount"}},
		{name: "archived template", edit: func(tp *TemplatePackage) { tp.ArchivedAt = &archived }, fields: []string{"id"}},
		{name: "every problem at once",
			choices: Choices{BillingPlanID: idYearly, Units: intp(9), AdditionalProducts: []string{idUnknown}, Price: dec("1.001"), PermanentDiscount: dec("5")},
			edit:    func(tp *TemplatePackage) { tp.ArchivedAt = &archived },
			fields:  []string{"id", "billingPlanId", "units", "price", "permanentDiscount", "additionalProducts[0].productId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := bundleInput(t)
			if tt.edit != nil {
				tt.edit(&in.Template)
			}
			in.Choices = tt.choices
			_, err := Merge(in)
			if got := fields(err); !slices.Equal(got, tt.fields) {
				t.Errorf("fields %v, want %v (%v)", got, tt.fields, err)
			}
		})
	}
}

// fields returns the field names of a validation.Errors error, or fails
// the comparison with a marker when err is something else.
func fields(err error) []string {
	verrs, ok := err.(validation.Errors)
	if !ok {
		if err == nil {
			return nil
		}
		return []string{"not validation.Errors: " + err.Error()}
	}
	var out []string
	for _, fe := range verrs {
		out = append(out, fe.Field)
	}
	return out
}

func TestMergeArchivedForChainRenewal(t *testing.T) {
	in := bundleInput(t)
	at := time.Now()
	in.Template.ArchivedAt = &at
	in.AllowArchived = true
	if _, err := Merge(in); err != nil {
		t.Fatalf("chain renewal onto an archived step: %v", err)
	}
}

// TestMergeRounding checks the permanent discount is applied once to the
// full price and rounded half away from zero to the currency's minor unit.
func TestMergeRounding(t *testing.T) {
	tests := []struct {
		currency, price string
		units           int
		discount        string
		want            string
	}{
		{"NOK", "99.99", 1, "12.5", "87.49"},   // 87.49125
		{"NOK", "0.05", 1, "50", "0.03"},       // 0.025: half away from zero
		{"NOK", "199", 1, "0", "199.00"},       // no discount
		{"NOK", "199", 1, "100", "0.00"},       // free
		{"SEK", "149", 1, "33.3333", "99.33"},  // 99.333383
		{"SEK", "0.99", 3, "50", "1.49"},       // 1.485 on the full price (per unit would be 3 × 0.50)
		{"SEK", "79", 1, "33.3333", "52.67"},   // 52.666693
		{"DKK", "0.01", 1, "50", "0.01"},       // 0.005
		{"DKK", "125", 1, "10", "112.50"},      // exact
		{"DKK", "129.95", 1, "17.5", "107.21"}, // 107.20875
		{"EUR", "9.99", 3, "15", "25.47"},      // 25.4745
		{"EUR", "19.90", 1, "2.5", "19.40"},    // 19.4025
		{"EUR", "0.03", 1, "50", "0.02"},       // 0.015
		{"ISK", "1990", 1, "12.5", "1741"},     // 1741.25, no minor unit
		{"ISK", "3", 1, "50", "2"},             // 1.5
		{"KWD", "1.005", 1, "50", "0.503"},     // 0.5025, three decimals
	}
	for _, tt := range tests {
		name := tt.currency + " " + tt.price + "×" + string(rune('0'+tt.units)) + " −" + tt.discount + "%"
		t.Run(name, func(t *testing.T) {
			c := currency(t, tt.currency)
			in := bundleInput(t)
			in.Template.Currency = tt.currency
			in.Template.Price = amount(t, tt.price, c)
			in.Template.Units = tt.units
			in.Template.AllowedChoices = AllowedChoices{MinUnits: tt.units, MaxUnits: tt.units}
			in.Template.AdditionalProducts = nil
			in.Template.PermanentDiscount = *pct(tt.discount)
			got, err := Merge(in)
			if err != nil {
				t.Fatal(err)
			}
			if got.TotalPrice.String() != tt.want {
				t.Errorf("total %s, want %s", got.TotalPrice, tt.want)
			}
			checkSums(t, got)
		})
	}
}

func TestMergeChainStep(t *testing.T) {
	chain := &Chain{ID: idChain, PackageChain: ChainSteps{Steps: []ChainStep{
		{Step: 1, NextPackageID: idIntro99, Periods: 1},
		{Step: 2, NextPackageID: idIntro149, Periods: 3},
		{Step: 3, NextPackageID: idRegular, Periods: 1},
	}}}
	tests := []struct {
		template    string
		chain       *Chain
		wantStep    int
		wantPeriods *int
		wantField   string
	}{
		{template: idIntro99, chain: chain, wantStep: 1, wantPeriods: intp(1)},
		{template: idIntro149, chain: chain, wantStep: 2, wantPeriods: intp(3)},
		{template: idRegular, chain: chain, wantStep: 3, wantPeriods: nil},
		{template: idBundle, chain: chain, wantField: "packageChainId"}, // not a step of its chain
		{template: idIntro99, chain: nil, wantField: "packageChainId"},  // chain gone
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			in := bundleInput(t)
			in.Template.ID = tt.template
			id := idChain
			in.Template.PackageChainID = &id
			in.Chain = tt.chain
			got, err := Merge(in)
			if tt.wantField != "" {
				if f := fields(err); !slices.Equal(f, []string{tt.wantField}) {
					t.Fatalf("fields %v, want %s", f, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.SubscriptionPackageChainID == nil || *got.SubscriptionPackageChainID != idChain ||
				got.ChainStepOrder == nil || *got.ChainStepOrder != tt.wantStep {
				t.Fatalf("chain %v step %v, want %s step %d", got.SubscriptionPackageChainID, got.ChainStepOrder, idChain, tt.wantStep)
			}
			if (got.ChainStepPeriods == nil) != (tt.wantPeriods == nil) || (tt.wantPeriods != nil && *got.ChainStepPeriods != *tt.wantPeriods) {
				t.Errorf("step periods %v, want %v", got.ChainStepPeriods, tt.wantPeriods)
			}
		})
	}
}

// TestInstanceIsADeepCopy changes everything the merge read, after the
// merge, and checks the instance did not move.
func TestInstanceIsADeepCopy(t *testing.T) {
	in := bundleInput(t)
	in.Template.ID = idIntro99
	chainID := idChain
	in.Template.PackageChainID = &chainID
	in.Chain = &Chain{ID: idChain, PackageChain: ChainSteps{Steps: []ChainStep{{Step: 1, NextPackageID: idIntro99, Periods: 1}, {Step: 2, NextPackageID: idRegular, Periods: 1}}}}
	got, err := Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(got)

	tp := &in.Template
	tp.Name, tp.Description = "Renamed", "Changed"
	tp.Price = amount(t, "1", nok(t))
	*tp.NumberOfEditions = 99
	*tp.Products[0].Share = PercentOf(10)
	tp.Products[0].ProductID = idUnknown
	tp.AdditionalProducts[1].Price = amount(t, "1000", nok(t))
	tp.BillingPlans[0] = idYearly
	tp.Contract.BindingPeriods = 1
	tp.Contract.Terms = "none"
	chainID = idUnknown
	tp.PermanentDiscount = PercentOf(90)
	for id, p := range in.Products {
		p.Name, p.VATRate = "Renamed", PercentOf(25)
		in.Products[id] = p
	}
	for id, p := range in.BillingPlans {
		p.Name, p.IntervalUnit, p.MinimumDueDays = "Renamed", period.Week, 1
		in.BillingPlans[id] = p
	}
	in.Chain.PackageChain.Steps[0].Step = 7
	in.Chain.PackageChain.Steps[0].Periods = 7

	after, _ := json.Marshal(got)
	if string(before) != string(after) {
		t.Errorf("instance changed with its template:\nbefore %s\nafter  %s", before, after)
	}
	// Also the other way round: editing the instance leaves the template.
	*got.NumberOfEditions = 1
	*got.Products[1].Share = PercentOf(1)
	got.Contract.Terms = "mine"
	if *tp.NumberOfEditions != 99 || tp.Products[1].Share.String() != "30" || tp.Contract.Terms != "none" {
		t.Errorf("template changed with its instance: %+v", tp)
	}
}

func TestAllocate(t *testing.T) {
	r := func(n int64) *big.Rat { return big.NewRat(n, 1) }
	tests := []struct {
		total   int64
		weights []*big.Rat
		want    []int64
	}{
		{100, []*big.Rat{r(1), r(1), r(1)}, []int64{34, 33, 33}},
		{2, []*big.Rat{r(1), r(1), r(1)}, []int64{1, 1, 0}},
		{101, []*big.Rat{r(1), r(2)}, []int64{34, 67}}, // 33.67, 67.33
		{7, []*big.Rat{r(0), r(3), r(4)}, []int64{0, 3, 4}},
		{0, []*big.Rat{r(5), r(5)}, []int64{0, 0}},
		{5, []*big.Rat{r(0), r(0)}, []int64{0, 0}},
		{10, []*big.Rat{big.NewRat(1, 3), big.NewRat(2, 3)}, []int64{3, 7}}, // 3.33, 6.67
	}
	for _, tt := range tests {
		if got := allocate(tt.total, tt.weights); !slices.Equal(got, tt.want) {
			t.Errorf("allocate(%d, %v) = %v, want %v", tt.total, tt.weights, got, tt.want)
		}
	}
}
