package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/swaggest/jsonschema-go"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/validation"
)

// PackageChainInput is the body of POST and PUT /packagechain, as the
// contract names it: name, description and packageChain.steps.
type PackageChainInput struct {
	Name         *string            `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Intro offer"`
	Description  *string            `json:"description" maxLength:"2000" example:"1 month at 99, then 3 months at 149, then 199/month"`
	PackageChain *PackageChainSteps `json:"packageChain" required:"true"`
}

// PackageChainSteps holds a chain's steps.
type PackageChainSteps struct {
	Steps []PackageChainStepInput `json:"steps" required:"true" minItems:"1"`
}

// PackageChainStepInput is one step: step n uses template package
// nextPackageId for periods billing periods of its billing plan.
type PackageChainStepInput struct {
	Step          *int    `json:"step" required:"true" minimum:"1" description:"Order of the step; steps are numbered 1..n without gaps." example:"1"`
	NextPackageID *string `json:"nextPackageId" required:"true" format:"uuid" description:"The template package the subscription follows during this step."`
	Periods       *int    `json:"periods" minimum:"1" maximum:"1200" default:"1" description:"How many billing periods of the package's billing plan the step lasts. The last step lasts until changed." example:"3"`
}

// chain validates the shape of in; catalog.CheckChain then checks the
// steps against the tenant's packages.
func (in PackageChainInput) chain() (catalog.Chain, validation.Errors) {
	var (
		errs validation.Errors
		c    catalog.Chain
	)
	c.Name = apikit.Text(&errs, "name", in.Name, 200, true)
	c.Description = apikit.Text(&errs, "description", in.Description, 2000, false)
	c.PackageChain.Steps = []catalog.ChainStep{}
	if in.PackageChain == nil {
		errs.Add("packageChain", "is required")
		return c, errs
	}
	for i, st := range in.PackageChain.Steps {
		cs := catalog.ChainStep{NextPackageID: normID(st.NextPackageID), Periods: 1}
		if st.Step == nil {
			errs.Add(fmt.Sprintf("packageChain.steps[%d].step", i), "is required")
			cs.Step = -1 // reported; keep it out of the numbering checks
		} else {
			cs.Step = *st.Step
		}
		if st.Periods != nil {
			cs.Periods = *st.Periods
		}
		c.PackageChain.Steps = append(c.PackageChain.Steps, cs)
	}
	return c, errs
}

type packageChainUpdate struct {
	apikit.IDParam
	PackageChainInput
}

type packageChainListParams struct {
	apikit.ListParams
	PackageID string `query:"packageId" format:"uuid" description:"Only chains with a step that uses this template package."`
}

func (s *Server) packageChainRoutes() {
	const tag = "PackageChain"
	s.add(route{
		method: http.MethodPost, path: "/packagechain", id: "createPackageChain", tag: tag,
		summary: "Create a package chain",
		desc: "A chain moves a subscription through template packages at renewal, e.g. 1 month at 99, then 3 months " +
			"at 149, then 199/month. Steps are numbered 1..n without gaps; each `nextPackageId` is a template package " +
			"of the tenant, all in one currency. A step lasts `periods` billing periods of its package's billing plan; " +
			"the last step lasts until the subscription changes. Link the entry template to the chain with its " +
			"`packageChainId`.",
		request: new(PackageChainInput), responses: common(respCreated), handle: s.createPackageChain,
	})
	s.add(route{
		method: http.MethodGet, path: "/packagechain", id: "listPackageChains", tag: tag,
		summary: "List package chains", request: new(packageChainListParams),
		responses: common(respList(new([]catalog.Chain))),
		handle:    s.listPackageChains,
	})
	s.add(route{
		method: http.MethodGet, path: "/packagechain/{id}", id: "getPackageChain", tag: tag,
		summary: "Get a package chain", request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(catalog.Chain)}, respNotFound),
		handle:    apikit.GetOne(s.app.PackageChain),
	})
	s.add(route{
		method: http.MethodPut, path: "/packagechain/{id}", id: "updatePackageChain", tag: tag,
		summary: "Replace a package chain", request: new(packageChainUpdate),
		responses: common(respNoContent, respNotFound), handle: s.updatePackageChain,
	})
	s.add(route{
		method: http.MethodDelete, path: "/packagechain/{id}", id: "deletePackageChain", tag: tag,
		summary: "Delete a package chain",
		desc:    "A chain that template packages link to with `packageChainId` is not deleted: the answer is a 400 naming `id` and the packages.",
		request: new(apikit.IDParam), responses: common(respNoContent, respNotFound), handle: s.deletePackageChain,
	})
}

// chainInput decodes a chain body; the application layer checks it
// against the tenant's template packages.
func chainInput(r *http.Request) (app.ChainInput, error) {
	var in PackageChainInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return app.ChainInput{}, err
	}
	c, errs := in.chain()
	return app.ChainInput{Chain: c, Invalid: errs}, nil
}

func (s *Server) createPackageChain(w http.ResponseWriter, r *http.Request) error {
	in, err := chainInput(r)
	if err != nil {
		return err
	}
	c, err := s.app.CreatePackageChain(r.Context(), in)
	if err != nil {
		return catalogError(err)
	}
	s.created(w, "/packagechain/"+c.ID, c.ID)
	return nil
}

func (s *Server) listPackageChains(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	f := catalogdb.PackageChainFilter{PackageID: apikit.QueryID(r.URL.Query(), "packageId", &errs)}
	if err := errs.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	cs, next, err := s.app.PackageChains(ctx, f, p)
	if err != nil {
		return err
	}
	if cs == nil {
		cs = []catalog.Chain{}
	}
	s.writeList(w, r, cs, next)
	return nil
}

func (s *Server) updatePackageChain(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := s.app.PackageChain(r.Context(), id); err != nil {
		return err
	}
	in, err := chainInput(r)
	if err != nil {
		return err
	}
	if _, err := s.app.UpdatePackageChain(r.Context(), id, in); err != nil {
		return catalogError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deletePackageChain(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.app.DeletePackageChain(r.Context(), id); err != nil {
		return catalogError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// PrepareJSONSchema adds the intro-offer example to the chain schema: step
// 1 (99) lasts one month, step 2 (149) three, step 3 (199) until changed.
func (PackageChainInput) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithExamples(json.RawMessage(`{
  "name": "Intro offer",
  "description": "1 month at 99, then 3 months at 149, then 199/month",
  "packageChain": {"steps": [
    {"step": 1, "nextPackageId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d21", "periods": 1},
    {"step": 2, "nextPackageId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d22", "periods": 3},
    {"step": 3, "nextPackageId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d23"}
  ]}
}`))
	return nil
}
