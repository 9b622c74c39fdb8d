package api

import (
	"encoding/json"
	"net/http"

	"github.com/swaggest/jsonschema-go"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/validation"
)

// BillingPlanInput is the body of POST and PUT /billingplan. Name and
// intervalUnit are required; a plan bills every 1 unit, issues its invoice
// 14 days before the period starts and gives 14 days to pay unless said
// otherwise.
type BillingPlanInput struct {
	Name             *string `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Monthly"`
	Description      *string `json:"description" maxLength:"2000" example:"Billed every month by invoice"`
	IntervalUnit     *string `json:"intervalUnit" required:"true" enum:"Day,Week,Month,Year" description:"Calendar unit of the billing period (case-insensitive on input)." example:"Month"`
	IntervalCount    *int    `json:"intervalCount" minimum:"1" maximum:"1200" default:"1" description:"Units per billing period: 3 with Month is quarterly." example:"1"`
	MinimumDueDays   *int    `json:"minimumDueDays" minimum:"0" maximum:"366" default:"14" description:"Days before a period starts that its invoice is issued."`
	PaymentTermsDays *int    `json:"paymentTermsDays" minimum:"0" maximum:"366" default:"14" description:"Days from issue until the invoice is due."`
	DunningProcessID *string `json:"dunningProcessId" format:"uuid" description:"The dunning process of this plan's invoices. Left out: the tenant's default process."`
}

// billingPlan validates in and returns the plan it describes, recording
// every problem at once.
func (in BillingPlanInput) billingPlan() (catalog.BillingPlan, error) {
	var (
		errs validation.Errors
		b    = catalog.BillingPlan{IntervalCount: 1, MinimumDueDays: 14, PaymentTermsDays: 14}
	)
	b.Name = apikit.Text(&errs, "name", in.Name, 200, true)
	b.Description = apikit.Text(&errs, "description", in.Description, 2000, false)
	if u := apikit.Trimmed(in.IntervalUnit); u == "" {
		errs.Add("intervalUnit", "is required")
	} else if unit, ok := period.ParseUnit(u); !ok {
		errs.Add("intervalUnit", "%q is not one of Day, Week, Month, Year", u)
	} else {
		b.IntervalUnit = unit
	}
	if in.IntervalCount != nil {
		b.IntervalCount = *in.IntervalCount
	}
	if b.IntervalCount < 1 || b.IntervalCount > 1200 {
		errs.Add("intervalCount", "must be from 1 to 1200")
	}
	days := func(field string, p *int, dst *int) {
		if p == nil {
			return
		}
		*dst = *p
		if *p < 0 || *p > catalog.MaxDueDays {
			errs.Add(field, "must be from 0 to %d days", catalog.MaxDueDays)
		}
	}
	days("minimumDueDays", in.MinimumDueDays, &b.MinimumDueDays)
	days("paymentTermsDays", in.PaymentTermsDays, &b.PaymentTermsDays)
	if id := normID(in.DunningProcessID); id != "" {
		b.DunningProcessID = &id
	}
	return b, errs.Err()
}

type billingPlanUpdate struct {
	apikit.IDParam
	BillingPlanInput
}

type billingPlanListParams struct {
	apikit.ListParams
	IntervalUnit string `query:"intervalUnit" enum:"Day,Week,Month,Year" description:"Only plans with this interval unit."`
}

func (s *Server) billingPlanRoutes() {
	const tag = "BillingPlan"
	s.add(route{
		method: http.MethodPost, path: "/billingplan", id: "createBillingPlan", tag: tag,
		summary: "Create a billing plan",
		desc: "A billing plan says how often a subscription is billed. Periods are calendar based in the organization's " +
			"time zone: a monthly plan started on 31 January renews on 28/29 February, 31 March, 30 April.",
		request: new(BillingPlanInput), responses: common(respCreated), handle: s.createBillingPlan,
	})
	s.add(route{
		method: http.MethodGet, path: "/billingplan", id: "listBillingPlans", tag: tag,
		summary: "List billing plans", request: new(billingPlanListParams),
		responses: common(respList(new([]catalog.BillingPlan))),
		handle:    s.listBillingPlans,
	})
	s.add(route{
		method: http.MethodGet, path: "/billingplan/{id}", id: "getBillingPlan", tag: tag,
		summary: "Get a billing plan", request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(catalog.BillingPlan)}, respNotFound),
		handle:    apikit.GetOne(s.app.BillingPlan),
	})
	s.add(route{
		method: http.MethodPut, path: "/billingplan/{id}", id: "updateBillingPlan", tag: tag,
		summary: "Replace a billing plan's fields",
		desc: "The interval of a plan that template packages offer cannot change (their prices are per billing period); " +
			"create a new plan instead. Subscription packages made earlier keep their copy of the plan.",
		request: new(billingPlanUpdate), responses: common(respNoContent, respNotFound), handle: s.updateBillingPlan,
	})
	s.add(route{
		method: http.MethodDelete, path: "/billingplan/{id}", id: "deleteBillingPlan", tag: tag,
		summary: "Delete a billing plan",
		desc:    "A plan that a template package (archived or not) offers is not deleted: the answer is a 400 naming `id` and the packages.",
		request: new(apikit.IDParam), responses: common(respNoContent, respNotFound), handle: s.deleteBillingPlan,
	})
}

func (s *Server) createBillingPlan(w http.ResponseWriter, r *http.Request) error {
	var in BillingPlanInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	b, err := in.billingPlan()
	if err != nil {
		return err
	}
	b, err = s.app.CreateBillingPlan(r.Context(), b)
	if err != nil {
		return err
	}
	s.created(w, "/billingplan/"+b.ID, b.ID)
	return nil
}

func (s *Server) listBillingPlans(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	var f catalogdb.BillingPlanFilter
	if v := r.URL.Query().Get("intervalUnit"); v != "" {
		if u, ok := period.ParseUnit(v); ok {
			f.IntervalUnit = u
		} else {
			errs.Add("intervalUnit", "%q is not one of Day, Week, Month, Year", v)
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	bs, next, err := s.app.BillingPlans(r.Context(), f, p)
	if err != nil {
		return err
	}
	if bs == nil {
		bs = []catalog.BillingPlan{}
	}
	s.writeList(w, r, bs, next)
	return nil
}

func (s *Server) updateBillingPlan(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := s.app.BillingPlan(r.Context(), id); err != nil {
		return err
	}
	var in BillingPlanInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	b, err := in.billingPlan()
	if err != nil {
		return err
	}
	b.ID = id
	if _, err := s.app.UpdateBillingPlan(r.Context(), b); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteBillingPlan(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.app.DeleteBillingPlan(r.Context(), id); err != nil {
		return catalogError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// PrepareJSONSchema adds a complete example to the BillingPlanInput schema.
func (BillingPlanInput) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithExamples(json.RawMessage(`{"name": "Monthly", "description": "Invoiced 14 days ahead", "intervalUnit": "Month", "intervalCount": 1, "minimumDueDays": 14, "paymentTermsDays": 14}`))
	return nil
}
