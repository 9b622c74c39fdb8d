package catalog

import (
	"slices"
	"testing"
)

func refs() Refs {
	return Refs{Products: products(), BillingPlans: plans(), ChainFound: true}
}

func TestCheckTemplate(t *testing.T) {
	chain := idChain
	badChain := "chain-1"
	tests := []struct {
		name   string
		edit   func(*TemplatePackage, *Refs)
		fields []string
	}{
		{"valid bundle", nil, nil},
		{"valid with a chain", func(tp *TemplatePackage, _ *Refs) { tp.PackageChainID = &chain }, nil},
		{"no shares at all is fine", func(tp *TemplatePackage, _ *Refs) {
			tp.Products[0].Share, tp.Products[1].Share = nil, nil
		}, nil},
		{"units", func(tp *TemplatePackage, _ *Refs) { tp.Units = 0; tp.AllowedChoices.MinUnits = 0 }, []string{"Units"}},
		{"units outside the allowed range", func(tp *TemplatePackage, _ *Refs) { tp.Units = 6 }, []string{"allowedChoices.maxUnits"}},
		{"min units above units", func(tp *TemplatePackage, _ *Refs) { tp.AllowedChoices.MinUnits = 2 }, []string{"allowedChoices.minUnits"}},
		{"max units too large", func(tp *TemplatePackage, _ *Refs) { tp.AllowedChoices.MaxUnits = MaxUnits + 1 }, []string{"allowedChoices.maxUnits"}},
		{"editions", func(tp *TemplatePackage, _ *Refs) { tp.NumberOfEditions = intp(-1) }, []string{"NumberOfEditions"}},
		{"no products", func(tp *TemplatePackage, _ *Refs) { tp.Products = nil }, []string{"products"}},
		{"unknown product", func(tp *TemplatePackage, _ *Refs) { tp.Products[1].ProductID = idUnknown }, []string{"products[1].productId"}},
		{"product id not a uuid", func(tp *TemplatePackage, _ *Refs) { tp.Products[1].ProductID = "print" }, []string{"products[1].productId"}},
		{"product id missing", func(tp *TemplatePackage, _ *Refs) { tp.Products[1].ProductID = "" }, []string{"products[1].productId"}},
		{"product twice", func(tp *TemplatePackage, _ *Refs) { tp.Products[1].ProductID = idPrint }, []string{"products[1].productId"}},
		{"product both included and additional", func(tp *TemplatePackage, _ *Refs) { tp.AdditionalProducts[0].ProductID = idDigital },
			[]string{"additionalProducts[0].productId"}},
		{"inactive product", func(tp *TemplatePackage, r *Refs) {
			p := r.Products[idMagazine]
			p.Active = false
			r.Products[idMagazine] = p
		}, []string{"additionalProducts[0].productId"}},
		{"inactive product already in the package may stay", func(tp *TemplatePackage, r *Refs) {
			p := r.Products[idMagazine]
			p.Active = false
			r.Products[idMagazine] = p
			r.Kept = map[string]bool{idMagazine: true}
		}, nil},
		{"shares not adding up", func(tp *TemplatePackage, _ *Refs) { tp.Products[1].Share = pct("29.9999") }, []string{"products"}},
		{"shares for some products only", func(tp *TemplatePackage, _ *Refs) { tp.Products[1].Share = nil }, []string{"products[1].share"}},
		{"no billing plans", func(tp *TemplatePackage, _ *Refs) { tp.BillingPlans = nil }, []string{"BillingPlans"}},
		{"billing plan problems", func(tp *TemplatePackage, _ *Refs) {
			tp.BillingPlans = []string{idInvoice, idUnknown, "", "monthly", idInvoice}
		}, []string{"BillingPlans[1]", "BillingPlans[2]", "BillingPlans[3]", "BillingPlans[4]"}},
		{"billing plans with different intervals", func(tp *TemplatePackage, _ *Refs) { tp.BillingPlans = []string{idInvoice, idYearly} },
			[]string{"BillingPlans[1]"}},
		{"contract", func(tp *TemplatePackage, _ *Refs) { tp.Contract.BindingPeriods = 0 }, []string{"contract.bindingPeriods"}},
		{"unknown chain", func(tp *TemplatePackage, r *Refs) { tp.PackageChainID = &chain; r.ChainFound = false }, []string{"packageChainId"}},
		{"chain id not a uuid", func(tp *TemplatePackage, _ *Refs) { tp.PackageChainID = &badChain }, []string{"packageChainId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, r := bundle(t), refs()
			if tt.edit != nil {
				tt.edit(&tp, &r)
			}
			errs := CheckTemplate(tp, r)
			if got := fields(errs.Err()); !slices.Equal(got, tt.fields) {
				t.Errorf("fields %v, want %v (%v)", got, tt.fields, errs)
			}
		})
	}
}

func TestProductIDs(t *testing.T) {
	if got := bundle(t).ProductIDs(); !slices.Equal(got, []string{idPrint, idDigital, idMagazine, idSunday}) {
		t.Errorf("ProductIDs = %v", got)
	}
}
