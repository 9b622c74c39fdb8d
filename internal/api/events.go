package api

import (
	"net/http"
	"strings"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webhook"
)

type eventListParams struct {
	apikit.ListParams
	EventType string `query:"eventType" description:"Only events of this kind, e.g. InvoiceIssued."`
	Subject   string `query:"subject" description:"Only events about this resource, e.g. /subscription/{id}."`
	ActorKind string `query:"actorKind" enum:"system,client,staff,subscriber" description:"Only events caused by this kind of actor: a machine client of the API, a staff user of the console, a subscriber, or Kadens itself (renewals, dunning, bank files; also every event recorded before actors were kept)."`
	ActorID   string `query:"actorId" description:"Only events caused by this actor: a client id, a staff user's or subscriber user's id (with actorKind)."`
	From      string `query:"from" format:"date-time" description:"Only events recorded at or after this time (createdAt, RFC 3339)."`
	Until     string `query:"until" format:"date-time" description:"Only events recorded before this time (createdAt, RFC 3339)."`
}

func (s *Server) eventRoutes() {
	s.add(route{method: http.MethodGet, path: "/events", id: "listEvents", tag: "Events",
		summary: "List the tenant's events, oldest first",
		desc: "Every change records its events in the same transaction (" + strings.Join(webhook.Kinds, ", ") + "). " +
			"Page with the Link header to poll for new ones; eventTime is business time (a test tenant's clock), " +
			"createdAt when it was recorded. Webhooks deliver the same events (see the Webhook operations for payloads). " +
			"Each event names its actor, who caused it, so the list filtered by actor and time is the tenant's audit log.",
		request:   new(eventListParams),
		responses: common(response{status: http.StatusOK, body: new([]store.Event)}),
		handle:    s.listEvents})
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := store.EventFilter{EventType: q.Get("eventType"), Subject: q.Get("subject")}
	param := func(name string) *string {
		v := q.Get(name)
		return &v
	}
	f.ActorKind = actor.Kind(apikit.OneOf(&errs, "actorKind", param("actorKind"), "",
		string(actor.System), string(actor.Client), string(actor.Staff), string(actor.Subscriber)))
	f.ActorID = apikit.Text(&errs, "actorId", param("actorId"), 200, false)
	if t := apikit.TimeField(&errs, "from", param("from")); t != nil {
		f.From = *t
	}
	if t := apikit.TimeField(&errs, "until", param("until")); t != nil {
		f.Until = *t
	}
	if err := errs.Err(); err != nil {
		return err
	}
	events, next, err := s.app.Events(r.Context(), f, p)
	if err != nil {
		return err
	}
	if events == nil {
		events = []store.Event{}
	}
	s.writeList(w, r, events, next)
	return nil
}
