package catalog

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestInstantiate: every step is merged once, at instantiation; a step
// whose template the choices do not fit gets its defaults (and records
// that it did), the ordered step's errors are the order's, and each
// package names the instance and its own step.
func TestInstantiate(t *testing.T) {
	c := nok(t)
	tmpl := func(id, price string, maxUnits int, products ...string) TemplatePackage {
		var ps []PackageProduct
		for _, p := range products {
			ps = append(ps, PackageProduct{ProductID: p})
		}
		return TemplatePackage{ID: id, Name: "T" + id[len(id)-2:], Currency: "NOK", Price: amount(t, price, c), Units: 1,
			Products: ps, BillingPlans: []string{idInvoice}, AllowedChoices: AllowedChoices{MinUnits: 1, MaxUnits: maxUnits}}
	}
	archived := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	inputs := func() map[string]MergeInput {
		in := map[string]MergeInput{}
		chainID := idChain
		for _, tp := range []TemplatePackage{
			tmpl(idIntro99, "99", 3, idPrint, idDigital),
			tmpl(idIntro149, "149", 3, idPrint, idDigital, idSunday),
			tmpl(idRegular, "199", 1, idDigital),
		} {
			tp.PackageChainID = &chainID
			in[tp.ID] = MergeInput{Template: tp, Products: products(), BillingPlans: plans()}
		}
		r := in[idRegular]
		r.Template.ArchivedAt = &archived // archived steps keep serving the chain
		r.Template.PackageChainID = nil   // and need not link to it
		in[idRegular] = r
		return in
	}
	chain := Chain{ID: idChain, Name: "Intro", PackageChain: ChainSteps{Steps: []ChainStep{
		{Step: 1, NextPackageID: idIntro99, Periods: 1},
		{Step: 2, NextPackageID: idIntro149, Periods: 3},
		{Step: 3, NextPackageID: idRegular, Periods: 1},
	}}}
	tests := []struct {
		name    string
		start   int
		choices Choices
		want    string // step:total:periods:stepPeriods:defaults per step
		err     string
	}{
		{name: "defaults", start: 1, want: "1:99.00:1:1:false 2:149.00:3:3:false 3:199.00:1:nil:false"},
		{name: "units fit the first two steps only", start: 1, choices: Choices{Units: intp(2)},
			want: "1:198.00:1:1:false 2:298.00:3:3:false 3:199.00:1:nil:true"},
		{name: "a chosen product the last step lacks", start: 1, choices: Choices{Products: []string{idPrint}},
			// 99 × 1/2 = 49.50; 149 × 1/3 = 49.666… → 49.67
			want: "1:49.50:1:1:false 2:49.67:3:3:false 3:199.00:1:nil:true"},
		{name: "a product the first step lacks, ordered on step 2", start: 2, choices: Choices{Products: []string{idSunday}},
			want: "1:99.00:1:1:true 2:49.67:3:3:false 3:199.00:1:nil:true"},
		{name: "frozen for an existing series: every step lenient", start: 0, choices: Choices{Units: intp(9)},
			want: "1:99.00:1:1:true 2:149.00:3:3:true 3:199.00:1:nil:true"},
		{name: "the ordered step's errors are the order's", start: 1, choices: Choices{Units: intp(9)}, err: "units"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := Instantiate("inst", chain, inputs(), tt.start, tt.choices, archived)
			if tt.err != "" {
				if f := fields(err); len(f) != 1 || f[0] != tt.err {
					t.Fatalf("error %v, want one on %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range inst.Steps {
				p := s.Package
				if p.SubscriptionPackageChainID == nil || *p.SubscriptionPackageChainID != "inst" || p.ChainStepOrder == nil || *p.ChainStepOrder != s.Step {
					t.Errorf("step %d package names chain %v step %v", s.Step, p.SubscriptionPackageChainID, p.ChainStepOrder)
				}
				sp := "nil"
				if p.ChainStepPeriods != nil {
					sp = fmt.Sprint(*p.ChainStepPeriods)
				}
				defaults := s.Choices.Units == nil && s.Choices.Products == nil && (tt.choices.Units != nil || tt.choices.Products != nil)
				got = append(got, fmt.Sprintf("%d:%s:%d:%s:%t", s.Step, p.TotalPrice, s.Periods, sp, defaults))
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("steps\n got %s\nwant %s", g, tt.want)
			}
			if inst.ID != "inst" || inst.ChainID != idChain || inst.Name != "Intro" || inst.Last(2) || !inst.Last(3) {
				t.Errorf("instance %+v", inst)
			}
		})
	}
}
