package catalog

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/validation"
)

// Chain is a package chain: the sequence of template packages a subscription
// moves through at renewal, e.g. "1 month at 99, then 3 months at 149, then
// 199 a month". Step n is served by the template package NextPackageID; it
// lasts Periods billing periods of that package's billing plan, after
// which the subscription renews onto step n+1. The last step lasts until
// the subscription is changed or cancelled, whatever its Periods says.
type Chain struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Description  string     `json:"description"`
	PackageChain ChainSteps `json:"packageChain"`
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
}

// ChainSteps holds the steps, as the contract nests them (packageChain.steps).
type ChainSteps struct {
	Steps []ChainStep `json:"steps"`
}

// ChainStep is one step of a chain.
type ChainStep struct {
	Step          int    `json:"step"`
	NextPackageID string `json:"nextPackageId"`
	// Periods is how many billing periods the step lasts (1 if not given).
	Periods int `json:"periods"`
}

// PackageIDs returns the template package ids the chain's steps use.
func (c Chain) PackageIDs() []string {
	ids := make([]string, 0, len(c.PackageChain.Steps))
	for _, s := range c.PackageChain.Steps {
		ids = append(ids, s.NextPackageID)
	}
	return ids
}

// StepOf returns the step a subscription on template package id is on:
// the lowest step that uses the package.
func (c Chain) StepOf(id string) (ChainStep, bool) {
	var (
		best  ChainStep
		found bool
	)
	for _, s := range c.PackageChain.Steps {
		if s.NextPackageID == id && (!found || s.Step < best.Step) {
			best, found = s, true
		}
	}
	return best, found
}

// Last reports whether step is the chain's last step.
func (c Chain) Last(step int) bool { return step >= len(c.PackageChain.Steps) }

// SortSteps orders the steps by step number; CheckChain accepts them in
// any order.
func (c *Chain) SortSteps() {
	slices.SortFunc(c.PackageChain.Steps, func(a, b ChainStep) int { return a.Step - b.Step })
}

// CheckChain checks a chain's steps: numbered 1..n without gaps or
// duplicates, each naming a template package of the chain's tenant
// (packages holds those that were found; another tenant's id is simply not
// there), all in one currency, each lasting 1..1200 periods. Archived
// templates may be steps: a step that only the chain should reach (the
// 149 step of an intro offer) is often archived so that it cannot be
// ordered directly. Every problem is reported, named like
// packageChain.steps[1].nextPackageId (the index is the position in the
// request's array).
func CheckChain(c Chain, packages map[string]TemplatePackage) validation.Errors {
	var errs validation.Errors
	steps := c.PackageChain.Steps
	switch {
	case len(steps) == 0:
		errs.Add("packageChain.steps", "at least one step is required")
		return errs
	case len(steps) > MaxChainSteps:
		errs.Add("packageChain.steps", "at most %d steps", MaxChainSteps)
		return errs
	}
	n := len(steps)
	firstAt := map[int]int{} // step number → index of its first use
	for i, s := range steps {
		if _, ok := firstAt[s.Step]; !ok {
			firstAt[s.Step] = i
		}
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if _, ok := firstAt[k]; !ok {
			missing = append(missing, fmt.Sprint(k))
		}
	}

	// The currency every step must share: that of the lowest-numbered step
	// whose package was found (the first found one if no step number is
	// valid).
	var (
		currency     string
		currencyStep = 0
		found        = false
	)
	for _, s := range steps {
		p, ok := packages[s.NextPackageID]
		if !ok {
			continue
		}
		better := s.Step >= 1 && (currencyStep < 1 || s.Step < currencyStep)
		if !found || better {
			currency, currencyStep, found = p.Currency, s.Step, true
		}
	}

	for i, s := range steps {
		field := func(name string) string { return fmt.Sprintf("packageChain.steps[%d].%s", i, name) }
		switch first := firstAt[s.Step]; {
		case s.Step < 1:
			errs.Add(field("step"), "must be at least 1; steps are numbered 1 to %d", n)
		case first != i:
			errs.Add(field("step"), "step %d appears twice (also packageChain.steps[%d])", s.Step, first)
		case s.Step > n:
			errs.Add(field("step"), "steps must be numbered 1 to %d without gaps; step %d leaves a gap (missing: %s)",
				n, s.Step, strings.Join(missing, ", "))
		}
		if s.Periods < 1 || s.Periods > MaxStepPeriods {
			errs.Add(field("periods"), "must be from 1 to %d billing periods", MaxStepPeriods)
		}
		switch p, ok := packages[s.NextPackageID]; {
		case s.NextPackageID == "":
			errs.Add(field("nextPackageId"), "is required")
		case !validID(s.NextPackageID):
			errs.Add(field("nextPackageId"), "must be a uuid")
		case !ok:
			errs.Add(field("nextPackageId"), "no template package %s in this tenant", s.NextPackageID)
		case p.Currency != currency:
			errs.Add(field("nextPackageId"), "template package %s is in %s, but step %d's package is in %s: all steps of a chain must have one currency",
				s.NextPackageID, p.Currency, currencyStep, currency)
		}
	}
	return errs
}
