package catalog

import (
	"fmt"
	"time"
)

// ChainInstance is a package chain frozen for one subscription: the
// chain's steps as they were when the subscription was ordered, each with
// the subscription package it gets on that step (the step's template
// merged with the order's choices, or with the template's defaults where
// the choices do not fit it). Renewals walk the instance, so later edits
// of the chain or of any step's template never change what a running
// subscription pays (the contract's template rule 3). A subscription
// package's SubscriptionPackageChainID is its instance's id.
type ChainInstance struct {
	ID string `json:"id"`
	// ChainID is the chain definition the instance was made from; the
	// definition may since have changed or been deleted.
	ChainID   string         `json:"packageChainId"`
	Name      string         `json:"name"`
	Steps     []InstanceStep `json:"steps"`
	CreatedAt time.Time      `json:"createdAt"`
}

// InstanceStep is one frozen step: the template it was merged from, how
// many billing periods it lasts (the last step lasts until changed), the
// package and the choices that package was merged with (the zero Choices
// when the order's did not fit the step's template).
type InstanceStep struct {
	Step              int                 `json:"step"`
	TemplatePackageID string              `json:"templatePackageId"`
	Periods           int                 `json:"periods"`
	Package           SubscriptionPackage `json:"package"`
	Choices           Choices             `json:"-"`
}

// Last reports whether step is the instance's last step.
func (c ChainInstance) Last(step int) bool { return step >= len(c.Steps) }

// Step returns step n (1-based).
func (c ChainInstance) Step(n int) (InstanceStep, bool) {
	if n < 1 || n > len(c.Steps) {
		return InstanceStep{}, false
	}
	return c.Steps[n-1], true
}

// Instantiate freezes chain (steps sorted, as the store returns them) as
// instance id for a subscription with choices. inputs holds the merge input
// of every step's template. The step of startTemplate (the ordered
// template, 0 < startStep) is merged strictly: its errors are returned as
// they are, because they are the order's; every other step is merged with
// the choices where they fit and with its template's defaults where they
// do not, and archived step templates are fine (a chain keeps serving its
// steps). startStep 0 merges every step leniently (an existing
// subscription's chain being frozen).
//
// Each step's package names the instance in SubscriptionPackageChainID,
// its own step in ChainStepOrder and its length in ChainStepPeriods (nil
// on the last step).
func Instantiate(id string, chain Chain, inputs map[string]MergeInput, startStep int, choices Choices, now time.Time) (ChainInstance, error) {
	if len(chain.PackageChain.Steps) == 0 {
		return ChainInstance{}, fmt.Errorf("catalog: package chain %s has no steps", chain.ID)
	}
	inst := ChainInstance{ID: id, ChainID: chain.ID, Name: chain.Name, CreatedAt: now.UTC(),
		Steps: make([]InstanceStep, 0, len(chain.PackageChain.Steps))}
	for i, s := range chain.PackageChain.Steps {
		n := i + 1
		in, ok := inputs[s.NextPackageID]
		if !ok {
			return ChainInstance{}, fmt.Errorf("catalog: package chain %s step %d: template package %s not given", chain.ID, n, s.NextPackageID)
		}
		// The step's own chain link is not this merge's business: the
		// instance says which step the package is.
		in.Template.PackageChainID, in.Chain = nil, nil
		in.Choices = choices
		in.AllowArchived = n != startStep
		used := choices
		pkg, err := Merge(in)
		if err != nil && n != startStep {
			in.Choices, used = Choices{}, Choices{}
			pkg, err = Merge(in)
		}
		if err != nil && n == startStep {
			return ChainInstance{}, err // the order's choices, named as Merge names them
		}
		if err != nil {
			return ChainInstance{}, fmt.Errorf("catalog: package chain %s step %d: %w", chain.ID, n, err)
		}
		instID, order := id, n
		pkg.SubscriptionPackageChainID, pkg.ChainStepOrder, pkg.ChainStepPeriods = &instID, &order, nil
		periods := max(s.Periods, 1)
		if n < len(chain.PackageChain.Steps) {
			p := periods
			pkg.ChainStepPeriods = &p
		}
		inst.Steps = append(inst.Steps, InstanceStep{Step: n, TemplatePackageID: s.NextPackageID, Periods: periods, Package: pkg, Choices: used})
	}
	return inst, nil
}
