package api

import (
	"net/http"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// PriceChangeInput is the body of POST /package/{id}/pricechange (and its
// preview).
type PriceChangeInput struct {
	TargetTemplatePackageID *string `json:"targetTemplatePackageId" required:"true" format:"uuid" description:"The template the running subscriptions move to; same currency."`
	EffectiveFrom           *string `json:"effectiveFrom" required:"true" format:"date-time" description:"Each subscription moves at its first renewal whose new period starts at or after this time. It must leave the notice period from now."`
	NoticeDays              *int    `json:"noticeDays" minimum:"0" maximum:"365" default:"30" description:"Days before effectiveFrom that subscribers are notified (PriceChangeNotified) and the changes registered."`
}

type priceChangeRequest struct {
	apikit.IDParam
	PriceChangeInput
}

type priceChangeIDParams struct {
	apikit.IDParam
	PriceChangeID string `path:"priceChangeId" format:"uuid"`
}

func (s *Server) priceChangeRoutes() {
	const tag = "Package"
	s.add(route{method: http.MethodPost, path: "/package/{id}/pricechange", id: "createPriceChange", tag: tag,
		summary: "Schedule a price change of a template's running subscriptions",
		desc: "Moves every running subscription ordered from this template (or changed to it; chains included) to the target template at its first renewal " +
			"from effectiveFrom on. noticeDays (default 30) before effectiveFrom each subscription gets an OnRenewal plan change and its subscriber a " +
			"PriceChangeNotified event; until then the price change can be revoked. Subscriptions with a plan change of their own pending, and those that stop automatically, are left alone. " +
			"Editing a template never changes running subscriptions; this is how their price changes.",
		request: new(priceChangeRequest), responses: common(respCreated, respNotFound), handle: s.createPriceChange})
	s.add(route{method: http.MethodPost, path: "/package/{id}/pricechange/preview", id: "previewPriceChange", tag: tag,
		summary: "Preview a price change", desc: "What the price change would do if it started now: how many subscriptions move, and their monthly revenue before and after. Nothing is stored.",
		request: new(priceChangeRequest), responses: common(respOK(new(engine.PriceChangePreview)), respNotFound), handle: s.previewPriceChange})
	s.add(route{method: http.MethodGet, path: "/package/{id}/pricechange", id: "listPriceChanges", tag: tag,
		summary: "List the price changes of a template", request: new(apikit.IDParam),
		responses: common(respOK(new([]store.PriceChange)), respNotFound), handle: s.listPriceChanges})
	s.add(route{method: http.MethodGet, path: "/package/{id}/pricechange/{priceChangeId}", id: "getPriceChange", tag: tag,
		summary: "Get a price change", request: new(priceChangeIDParams),
		responses: common(respOK(new(store.PriceChange)), respNotFound), handle: s.getPriceChange})
	s.add(route{method: http.MethodDelete, path: "/package/{id}/pricechange/{priceChangeId}", id: "revokePriceChange", tag: tag,
		summary: "Revoke a price change before it starts", desc: "Scheduled → Revoked. Once started (noticeDays before effectiveFrom): 400; its plan changes can then be revoked one by one.",
		request: new(priceChangeIDParams), responses: common(respNoContent, respNotFound), handle: s.revokePriceChange})
}

// priceChangeInput decodes and checks the body of a price change.
func priceChangeInput(r *http.Request) (engine.PriceChangeRequest, error) {
	var in PriceChangeInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return engine.PriceChangeRequest{}, err
	}
	var errs validation.Errors
	req := engine.PriceChangeRequest{NoticeDays: engine.DefaultNoticeDays}
	req.TargetTemplatePackageID = requiredID(&errs, "targetTemplatePackageId", in.TargetTemplatePackageID)
	if in.EffectiveFrom == nil {
		errs.Add("effectiveFrom", "is required")
	} else if t := apikit.TimeField(&errs, "effectiveFrom", in.EffectiveFrom); t != nil {
		req.EffectiveFrom = *t
	}
	if in.NoticeDays != nil {
		req.NoticeDays = *in.NoticeDays
	}
	return req, errs.Err()
}

// templateOf returns the {id} of a price change route, 404 when no such
// template exists in the tenant.
func (s *Server) templateOf(r *http.Request) (string, error) {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return "", err
	}
	if _, err := s.app.OrderableTemplate(r.Context(), id); err != nil {
		return "", err
	}
	return id, nil
}

// priceChangeCall reads what creating and previewing a price change share:
// the template of the path and the body.
func (s *Server) priceChangeCall(r *http.Request) (id string, req engine.PriceChangeRequest, err error) {
	if id, err = s.templateOf(r); err != nil {
		return
	}
	req, err = priceChangeInput(r)
	return
}

func (s *Server) createPriceChange(w http.ResponseWriter, r *http.Request) error {
	id, req, err := s.priceChangeCall(r)
	if err != nil {
		return err
	}
	p, err := s.app.SchedulePriceChange(r.Context(), id, req)
	if err != nil {
		return err
	}
	s.created(w, "/package/"+id+"/pricechange/"+p.ID, p.ID)
	return nil
}

func (s *Server) previewPriceChange(w http.ResponseWriter, r *http.Request) error {
	id, req, err := s.priceChangeCall(r)
	if err != nil {
		return err
	}
	p, err := s.app.PreviewPriceChange(r.Context(), id, req)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) listPriceChanges(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	list, err := s.app.PriceChanges(r.Context(), id)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, list)
	return nil
}

// priceChangePath reads the {id} and {priceChangeId} of a price change's
// path.
func priceChangePath(r *http.Request) (id, pcID string, err error) {
	if id, err = apikit.PathID(r, "id"); err != nil {
		return
	}
	pcID, err = apikit.PathID(r, "priceChangeId")
	return
}

func (s *Server) getPriceChange(w http.ResponseWriter, r *http.Request) error {
	id, pcID, err := priceChangePath(r)
	if err != nil {
		return err
	}
	p, err := s.app.PriceChange(r.Context(), id, pcID)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) revokePriceChange(w http.ResponseWriter, r *http.Request) error {
	id, pcID, err := priceChangePath(r)
	if err != nil {
		return err
	}
	if err := s.app.RevokePriceChange(r.Context(), id, pcID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
