package api

import (
	"net/http"
	"time"

	"github.com/kadens/kadens/internal/apikit"
)

// TimelineEntryView is one entry of a subscription's timeline.
type TimelineEntryView struct {
	At   time.Time `json:"at" description:"When it happened: a period when it was created (a renewal creates the next period ahead of its start), an invoice or credit note when issued, a payment when paid, an event at its eventTime."`
	Kind string    `json:"kind" enum:"planChange,period,chainStep,invoice,payment,creditNote,reminder,cancellation,event"`
	// Label is short text for people; its wording may change.
	Label    string `json:"label" description:"A short description for people (dates, package, amount); its wording may change."`
	ID       string `json:"id" description:"The record the entry is about (period, plan change, invoice, payment, credit note, reminder or event)."`
	Path     string `json:"path,omitempty" description:"The record's resource path, as events name their subjects."`
	Cause    string `json:"cause,omitempty" description:"Why it happened where the data says so: order, renewal, plan change, chain step, dunning, a credit note's or cancellation's reason, an event's type."`
	PeriodID string `json:"subscriptionId,omitempty" description:"The period of the series the entry belongs to."`
}

func (s *Server) timelineRoutes() {
	s.add(route{method: http.MethodGet, path: "/subscription/{id}/timeline", id: "getSubscriptionTimeline", tag: "Subscription",
		summary: "A subscription's history on one time axis",
		desc: "Every period of the series (every period linked to this one by renewals and plan changes, before and after), " +
			"its plan changes and chain steps, the periods' invoices with the payments, credit notes and reminders on them, " +
			"cancellations and the events about the periods, oldest first; at the same instant a plan change comes before " +
			"the period it produced and a period before its invoice. It reads the records as they are now.",
		request: new(apikit.IDParam), responses: common(respOK(new([]TimelineEntryView)), respNotFound), handle: s.getTimeline})
}

func (s *Server) getTimeline(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	entries, err := s.app.Timeline(r.Context(), id)
	if err != nil {
		return err
	}
	out := make([]TimelineEntryView, len(entries))
	for i, e := range entries {
		out[i] = TimelineEntryView{At: e.At.UTC(), Kind: e.Kind, Label: e.Label, ID: e.ID, Path: e.Path, Cause: e.Cause, PeriodID: e.PeriodID}
	}
	apikit.WriteJSON(w, http.StatusOK, out)
	return nil
}
