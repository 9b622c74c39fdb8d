package api

import (
	"net/http"
	"strings"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webhook"
)

type eventListParams struct {
	apikit.ListParams
	EventType string `query:"eventType" description:"Only events of this kind, e.g. InvoiceIssued."`
	Subject   string `query:"subject" description:"Only events about this resource, e.g. /subscription/{id}."`
}

func (s *Server) eventRoutes() {
	s.add(route{method: http.MethodGet, path: "/events", id: "listEvents", tag: "Events",
		summary: "List the tenant's events, oldest first",
		desc: "Every change records its events in the same transaction (" + strings.Join(webhook.Kinds, ", ") + "). " +
			"Page with the Link header to poll for new ones; eventTime is business time (a test tenant's clock), " +
			"createdAt when it was recorded. Webhooks deliver the same events (see the Webhook operations for payloads).",
		request:   new(eventListParams),
		responses: common(response{status: http.StatusOK, body: new([]store.Event)}),
		handle:    s.listEvents})
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	q := r.URL.Query()
	events, next, err := s.app.Events(r.Context(), store.EventFilter{EventType: q.Get("eventType"), Subject: q.Get("subject")}, p)
	if err != nil {
		return err
	}
	if events == nil {
		events = []store.Event{}
	}
	s.writeList(w, r, events, next)
	return nil
}
