package api

import (
	"net/http"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/catalog"
)

// SubscriptionChainView is GET /subscription/{id}/packagechain: the chain
// instance a subscription period follows, with the period's place in it.
type SubscriptionChainView struct {
	ID             string `json:"id" description:"The chain instance: the subscription package's subscriptionPackageChainId."`
	PackageChainID string `json:"packageChainId" description:"The package chain (definition) the instance was frozen from; it may since have been edited or deleted, which does not change the instance."`
	Name           string `json:"name"`
	SubscriptionID string `json:"subscriptionId" description:"The subscription period asked about."`
	CurrentStep    int    `json:"currentStep" description:"The step the period is on."`
	CurrentPeriod  int    `json:"currentStepPeriod" description:"Which billing period of its step the period is (1 = the first)."`
	// PeriodsLeft is nil on the last step, which lasts until changed.
	PeriodsLeft *int                    `json:"periodsLeftInStep" description:"Billing periods of the current step after this one; null on the last step, which lasts until the subscription is changed or cancelled."`
	Frozen      bool                    `json:"frozen" description:"false only for a period ordered before chain instances existed: it still names the chain definition, the steps shown are merged from the definition as it is now, and the instance is frozen at the period's next step change."`
	Steps       []SubscriptionChainStep `json:"steps"`
	CreatedAt   time.Time               `json:"createdAt" description:"When the instance was frozen (the order's completion)."`
}

// SubscriptionChainStep is one step of a chain instance.
type SubscriptionChainStep struct {
	Step              int               `json:"step"`
	TemplatePackageID string            `json:"templatePackageId" description:"The template the step's package was merged from, at the time the instance was frozen."`
	Periods           int               `json:"periods" description:"Billing periods the step lasts; the last step lasts until changed, whatever this says."`
	Current           bool              `json:"current"`
	Package           ChainPackageBrief `json:"package"`
}

// ChainPackageBrief is what a chain step's frozen package costs and how
// it is billed.
type ChainPackageBrief struct {
	Name        string           `json:"name"`
	Currency    string           `json:"currency"`
	Units       int              `json:"units"`
	Price       catalog.Amount   `json:"price" description:"The unit price."`
	TotalPrice  catalog.Amount   `json:"totalPrice" description:"What one billing period of the step costs (after the permanent discount)."`
	BillingPlan catalog.PlanCopy `json:"billingPlan"`
}

func (s *Server) subscriptionChainRoutes() {
	s.add(route{method: http.MethodGet, path: "/subscription/{id}/packagechain", id: "getSubscriptionPackageChain", tag: "Subscription",
		summary: "Get the chain instance a subscription follows",
		desc: "An order from a chained template freezes the chain: each step's template merged with the order's choices " +
			"(a step whose template the choices do not fit gets its defaults). Renewals walk these frozen steps; editing the " +
			"chain or a step's template later never changes them. Shows the steps with their packages, the step this period is " +
			"on and how many periods of it are left. 404 for a period that follows no chain.",
		request: new(apikit.IDParam), responses: common(response{status: http.StatusOK, body: new(SubscriptionChainView)}, respNotFound),
		handle: s.getSubscriptionChain})
}

func (s *Server) getSubscriptionChain(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	sc, err := s.app.SubscriptionChain(r.Context(), id)
	if err != nil {
		return err
	}
	sub, inst, frozen := sc.Subscription, sc.Instance, sc.Frozen
	v := SubscriptionChainView{ID: inst.ID, PackageChainID: inst.ChainID, Name: inst.Name, SubscriptionID: sub.ID,
		CurrentStep: *sub.ChainStep, CurrentPeriod: sub.StepPeriod, Frozen: frozen, CreatedAt: inst.CreatedAt,
		Steps: make([]SubscriptionChainStep, len(inst.Steps))}
	for i, st := range inst.Steps {
		p := st.Package
		v.Steps[i] = SubscriptionChainStep{Step: st.Step, TemplatePackageID: st.TemplatePackageID, Periods: st.Periods,
			Current: st.Step == *sub.ChainStep,
			Package: ChainPackageBrief{Name: p.Name, Currency: p.Currency, Units: p.Units, Price: p.Price, TotalPrice: p.TotalPrice, BillingPlan: p.BillingPlan}}
	}
	if !inst.Last(*sub.ChainStep) {
		if st, ok := inst.Step(*sub.ChainStep); ok {
			left := max(st.Periods-sub.StepPeriod, 0)
			v.PeriodsLeft = &left
		}
	}
	apikit.WriteJSON(w, http.StatusOK, v)
	return nil
}
