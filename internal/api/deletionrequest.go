package api

import (
	"net/http"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/privacy"
	"github.com/kadens/kadens/internal/validation"
)

// DeletionRequestInput is the body of POST /subscriber/{id}/deletionrequest.
type DeletionRequestInput struct {
	Message *string `json:"message" maxLength:"2000" description:"What the subscriber wrote with the request."`
}

type deletionRequestCreate struct {
	apikit.IDParam
	DeletionRequestInput
}

// DeletionResolveInput is the body of POST /deletionrequest/{id}/resolve.
type DeletionResolveInput struct {
	Status     *string `json:"status" required:"true" enum:"Completed,Rejected"`
	Resolution *string `json:"resolution" maxLength:"2000" description:"What was deleted, or why nothing could be (required with Rejected): the answer the subscriber is given."`
}

type deletionResolveRequest struct {
	apikit.IDParam
	DeletionResolveInput
}

type deletionRequestListParams struct {
	apikit.ListParams
	Status       string `query:"status" enum:"Open,Completed,Rejected"`
	SubscriberID string `query:"subscriberId" format:"uuid"`
}

func (s *Server) deletionRequestRoutes() {
	const tag = "Subscriber"
	s.add(route{method: http.MethodPost, path: "/subscriber/{id}/deletionrequest", id: "requestSubscriberDeletion", tag: tag,
		summary: "Record a subscriber's request to delete their data",
		desc: "For a merchant's own self-service portal (Min side records the same). A task for the merchant's staff, answered within a month (GDPR art. 12(3)); " +
			"nothing is deleted by it. Records SubscriberDeletionRequested. 201 with the new request's id; 200 with the id of the request already open for the subscriber (one task per subscriber).",
		request: new(deletionRequestCreate), responses: common(respCreated, respOK(new(string)), respNotFound), handle: s.requestDeletion})
	s.add(route{method: http.MethodGet, path: "/deletionrequest", id: "listDeletionRequests", tag: tag,
		summary: "List deletion requests", desc: "Oldest first: the one to answer first on top.",
		request: new(deletionRequestListParams), responses: common(respList(new([]privacy.Request))), handle: s.listDeletionRequests})
	s.add(route{method: http.MethodGet, path: "/deletionrequest/{id}", id: "getDeletionRequest", tag: tag,
		summary: "Get a deletion request", request: new(apikit.IDParam),
		responses: common(respOK(new(privacy.Request)), respNotFound), handle: s.getDeletionRequest})
	s.add(route{method: http.MethodPost, path: "/deletionrequest/{id}/resolve", id: "resolveDeletionRequest", tag: tag,
		summary: "Close a deletion request",
		desc: "Completed: what could be deleted was (billing records the bookkeeping rules keep stay); Rejected: nothing could, and the resolution says why. " +
			"Records SubscriberDeletionResolved. 400 naming id when it is closed already.",
		request: new(deletionResolveRequest), responses: common(respOK(new(privacy.Request)), respNotFound), handle: s.resolveDeletionRequest})
}

func (s *Server) requestDeletion(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in DeletionRequestInput
	if err := apikit.DecodeOptionalJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	msg := apikit.Text(&errs, "message", in.Message, privacy.MaxText, false)
	if err := errs.Err(); err != nil {
		return err
	}
	req, created, err := s.app.RequestDeletion(r.Context(), id, msg)
	if err != nil {
		return err
	}
	if created {
		s.created(w, "/deletionrequest/"+req.ID, req.ID)
		return nil
	}
	w.Header().Set("Location", "/deletionrequest/"+req.ID)
	apikit.WriteJSON(w, http.StatusOK, req.ID)
	return nil
}

func (s *Server) listDeletionRequests(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	status := q.Get("status")
	f := privacy.Filter{Status: apikit.OneOf(&errs, "status", &status, "", privacy.StatusOpen, privacy.StatusCompleted, privacy.StatusRejected),
		SubscriberID: apikit.QueryID(q, "subscriberId", &errs)}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := s.app.DeletionRequests(r.Context(), f, p)
	if err != nil {
		return err
	}
	s.writeList(w, r, list, next)
	return nil
}

func (s *Server) getDeletionRequest(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	req, err := s.app.DeletionRequest(r.Context(), id)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, req)
	return nil
}

func (s *Server) resolveDeletionRequest(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in DeletionResolveInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	if apikit.Trimmed(in.Status) == "" {
		errs.Add("status", "is required: Completed or Rejected")
	}
	status := apikit.OneOf(&errs, "status", in.Status, "", privacy.StatusCompleted, privacy.StatusRejected)
	resolution := apikit.Text(&errs, "resolution", in.Resolution, privacy.MaxText, false)
	if err := errs.Err(); err != nil {
		return err
	}
	req, err := s.app.ResolveDeletionRequest(r.Context(), id, status, resolution)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, req)
	return nil
}
