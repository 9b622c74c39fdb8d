package catalog

import (
	"slices"
	"testing"
)

func chainPackages(t *testing.T) map[string]TemplatePackage {
	c := nok(t)
	sek := currency(t, "SEK")
	return map[string]TemplatePackage{
		idIntro99:  {ID: idIntro99, Currency: "NOK", Price: amount(t, "99", c)},
		idIntro149: {ID: idIntro149, Currency: "NOK", Price: amount(t, "149", c)},
		idRegular:  {ID: idRegular, Currency: "NOK", Price: amount(t, "199", c)},
		idBundle:   {ID: idBundle, Currency: "SEK", Price: amount(t, "199", sek)},
	}
}

func steps(s ...ChainStep) Chain {
	return Chain{Name: "Intro", PackageChain: ChainSteps{Steps: s}}
}

func TestCheckChain(t *testing.T) {
	tests := []struct {
		name   string
		chain  Chain
		fields []string
	}{
		{"intro chain", steps(ChainStep{1, idIntro99, 1}, ChainStep{2, idIntro149, 3}, ChainStep{3, idRegular, 1}), nil},
		{"steps in any order", steps(ChainStep{3, idRegular, 1}, ChainStep{1, idIntro99, 1}, ChainStep{2, idIntro149, 3}), nil},
		{"a package in two steps", steps(ChainStep{1, idIntro99, 1}, ChainStep{2, idRegular, 1}, ChainStep{3, idIntro99, 1}), nil},
		{"no steps", steps(), []string{"packageChain.steps"}},
		{"gap", steps(ChainStep{1, idIntro99, 1}, ChainStep{3, idRegular, 1}),
			[]string{"packageChain.steps[1].step"}},
		{"not starting at 1", steps(ChainStep{2, idIntro99, 1}, ChainStep{3, idRegular, 1}),
			[]string{"packageChain.steps[1].step"}},
		{"duplicate step", steps(ChainStep{1, idIntro99, 1}, ChainStep{2, idIntro149, 3}, ChainStep{2, idRegular, 1}),
			[]string{"packageChain.steps[2].step"}},
		{"step 0", steps(ChainStep{0, idIntro99, 1}, ChainStep{1, idRegular, 1}),
			[]string{"packageChain.steps[0].step"}},
		{"unknown package (or another tenant's)", steps(ChainStep{1, idIntro99, 1}, ChainStep{2, idUnknown, 1}),
			[]string{"packageChain.steps[1].nextPackageId"}},
		{"missing package id", steps(ChainStep{1, "", 1}),
			[]string{"packageChain.steps[0].nextPackageId"}},
		{"package id not a uuid", steps(ChainStep{1, "intro", 1}),
			[]string{"packageChain.steps[0].nextPackageId"}},
		{"mixed currency", steps(ChainStep{1, idIntro99, 1}, ChainStep{2, idBundle, 1}, ChainStep{3, idRegular, 1}),
			[]string{"packageChain.steps[1].nextPackageId"}},
		{"mixed currency is judged from step 1 whatever the order", steps(ChainStep{2, idIntro99, 1}, ChainStep{1, idBundle, 1}),
			[]string{"packageChain.steps[0].nextPackageId"}},
		{"periods out of range", steps(ChainStep{1, idIntro99, 0}, ChainStep{2, idRegular, 1201}),
			[]string{"packageChain.steps[0].periods", "packageChain.steps[1].periods"}},
		{"every problem at once", steps(ChainStep{1, idIntro99, 1}, ChainStep{1, idUnknown, 1}, ChainStep{5, idBundle, 1}),
			[]string{"packageChain.steps[1].step", "packageChain.steps[1].nextPackageId", "packageChain.steps[2].step", "packageChain.steps[2].nextPackageId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := CheckChain(tt.chain, chainPackages(t))
			if got := fields(errs.Err()); !slices.Equal(got, tt.fields) {
				t.Errorf("fields %v, want %v (%v)", got, tt.fields, errs)
			}
		})
	}
}

func TestChainSortAndStepOf(t *testing.T) {
	c := steps(ChainStep{3, idRegular, 1}, ChainStep{1, idIntro99, 1}, ChainStep{2, idIntro149, 3}, ChainStep{4, idIntro99, 1})
	c.SortSteps()
	if got := c.PackageIDs(); !slices.Equal(got, []string{idIntro99, idIntro149, idRegular, idIntro99}) {
		t.Errorf("sorted steps %v", got)
	}
	if s, ok := c.StepOf(idIntro99); !ok || s.Step != 1 {
		t.Errorf("StepOf(intro99) = %v, %v; want the lowest step, 1", s, ok)
	}
	if _, ok := c.StepOf(idBundle); ok {
		t.Error("StepOf found a package that is not a step")
	}
	if c.Last(3) || !c.Last(4) {
		t.Error("Last is wrong")
	}
}

func TestCheckChainCurrencyWithoutValidSteps(t *testing.T) {
	errs := CheckChain(steps(ChainStep{0, idIntro99, 1}), chainPackages(t))
	if got := fields(errs.Err()); !slices.Equal(got, []string{"packageChain.steps[0].step"}) {
		t.Errorf("fields %v", got)
	}
	errs = CheckChain(steps(ChainStep{0, idIntro99, 1}, ChainStep{-1, idBundle, 1}), chainPackages(t))
	if got := fields(errs.Err()); !slices.Equal(got, []string{"packageChain.steps[0].step", "packageChain.steps[1].step", "packageChain.steps[1].nextPackageId"}) {
		t.Errorf("fields %v", got)
	}
}
