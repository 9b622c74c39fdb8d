package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/substatus"
	"github.com/kadens/kadens/internal/validation"
)

// SubscriptionView is a subscription period as the API shows it: the
// stored period plus its status at the tenant's current time.
type SubscriptionView struct {
	store.Subscription
	Status string `json:"status" enum:"Pending,Active,Completed,Cancelled"`
	// StartTime and EndTime are the names INFO-Subscription clients read
	// (docs/MIGRATION.md).
	StartTime time.Time `json:"startTime" description:"The same as periodStart, under the name INFO-Subscription clients read."`
	EndTime   time.Time `json:"endTime" description:"When this period stops giving access: periodEnd, or cancelEffectiveAt when a cancellation ends it earlier."`
	// BindingEndsAt and ScheduledCancelEffectiveAt show the series'
	// binding period (docs/ORDERS.md, "Binding periods").
	BindingEndsAt              *time.Time `json:"bindingEndsAt" description:"When the series' binding period ends; null when it has none or it has ended. A cancellation before then follows the package's contract.earlyCancellation."`
	ScheduledCancelEffectiveAt *time.Time `json:"scheduledCancelEffectiveAt" description:"A cancellation asked during an EndOfBinding binding waits for the binding end: the series renews until then and ends at this time (the binding end). null when none waits."`
}

func view(sub store.Subscription, now time.Time) SubscriptionView {
	v := SubscriptionView{Subscription: sub, Status: engine.Status(sub, now), StartTime: sub.PeriodStart, EndTime: endTime(&sub)}
	v.BindingEndsAt, v.ScheduledCancelEffectiveAt = bindingTimes(&sub, now)
	return v
}

// bindingTimes are the binding end while it is ahead of now and, when a
// cancellation waits for it, the time that cancellation takes effect (the
// same end); nil when there is none (docs/ORDERS.md, "Binding periods").
func bindingTimes(sub *store.Subscription, now time.Time) (bindingEnd, scheduledCancel *time.Time) {
	if b := sub.BindingEnd; b != nil && b.After(now) {
		end := b.UTC()
		bindingEnd = &end
		if sub.ScheduledCancelAt != nil && sub.CancelledAt == nil {
			scheduledCancel = &end
		}
	}
	return bindingEnd, scheduledCancel
}

// endTime is when sub stops giving access.
func endTime(sub *store.Subscription) time.Time {
	if e := sub.CancelEffectiveAt; e != nil && e.Before(sub.PeriodEnd) {
		if e.Before(sub.PeriodStart) {
			return sub.PeriodStart // cancelled before it started: no access at all
		}
		return *e
	}
	return sub.PeriodEnd
}

type subscriptionListParams struct {
	apikit.ListParams
	SubscriberID   string `query:"subscriberId" format:"uuid"`
	OrganizationID string `query:"organizationId" format:"uuid"`
	Status         string `query:"status" enum:"Pending,Active,Completed,Cancelled"`
	ActiveAt       string `query:"activeAt" format:"date-time" description:"Only periods running at this time."`
	expandPackageParam
}

type scheduledListParams struct {
	apikit.ListParams
	Until string `query:"until" format:"date-time" description:"Renewals due up to this time; default 31 days from now."`
	expandPackageParam
}

// expandPackageParam is the expand parameter of subscription lists.
type expandPackageParam struct {
	Expand string `query:"expand" enum:"package" description:"package: list items carry the whole package instead of its summary (GET /subscription/{id} always does)."`
}

// CancelInput is the body of POST /subscription/{id}/cancel.
type CancelInput struct {
	Mode   *string `json:"mode" enum:"Immediately,EndOfPeriod" description:"Immediately ends the subscription now; EndOfPeriod (default) lets the current period run out and stops the renewal."`
	Reason *string `json:"reason" maxLength:"500"`
	// CancellationTime is INFO-Subscription's chosen time of cancellation
	// (docs/MIGRATION.md).
	CancellationTime *string `json:"cancellationTime" format:"date-time" example:"2025-02-10T00:00:00+01:00" description:"Instead of mode: the subscription ends at the start of this local day (organization time zone), a later day than today within the periods billed so far (this period, or the one a renewal created ahead of it). The period it falls in is prorated from that day by its proration policy; a period created ahead of it is cancelled at once."`
}

type cancelRequest struct {
	apikit.IDParam
	CancelInput
}

// ChangeInput is the body of POST /subscription/{id}/scheduledchange.
type ChangeInput struct {
	ProcessingType         *string                 `json:"processingType" required:"true" enum:"Immediately,OnScheduledTime,OnRenewal"`
	ScheduledTime          *string                 `json:"scheduledTime" format:"date-time" description:"Required with OnScheduledTime: when the change runs (proration is computed then)."`
	TemplatePackageID      *string                 `json:"templatePackageId" required:"true" format:"uuid"`
	TemplatePackageChoices *TemplatePackageChoices `json:"templatePackageChoices"`
}

type changeRequest struct {
	apikit.IDParam
	ChangeInput
}

type changeIDParams struct {
	apikit.IDParam
	ChangeID string `path:"changeId" format:"uuid"`
}

func (s *Server) subscriptionRoutes() {
	const tag = "Subscription"
	s.add(route{method: http.MethodGet, path: "/subscription", id: "listSubscriptions", tag: tag,
		summary: "List subscription periods", desc: "Items carry a summary of their package unless `expand=package` asks for the whole one.",
		request: new(subscriptionListParams), responses: common(respOK(new([]SubscriptionListItem))), handle: s.listSubscriptions})
	s.add(route{method: http.MethodGet, path: "/subscription/scheduled", id: "listScheduledRenewals", tag: tag,
		summary: "List upcoming renewals", desc: "Subscription periods that will renew up to `until`, with their renewAt. Items carry a summary of their package unless `expand=package` asks for the whole one.",
		request: new(scheduledListParams), responses: common(respOK(new([]SubscriptionListItem))), handle: s.listScheduled})
	s.add(route{method: http.MethodGet, path: "/subscription/{id}", id: "getSubscription", tag: tag,
		summary: "Get a subscription period", request: new(apikit.IDParam),
		responses: common(respOK(new(SubscriptionView)), respNotFound), handle: s.getSubscription})
	s.add(route{method: http.MethodPost, path: "/subscription/{id}/cancel", id: "cancelSubscription", tag: tag,
		summary: "Cancel a subscription", desc: "Records SubscriptionCancelled now and SubscriptionDeactivated when the cancellation takes effect. A period created ahead by a renewal is cancelled at once.",
		request: new(cancelRequest), responses: common(respOK(new(SubscriptionView)), respNotFound), handle: s.cancelSubscription})
	s.add(route{method: http.MethodPost, path: "/subscription/{id}/cancel/undo", id: "undoCancellation", tag: tag,
		summary: "Undo a cancellation that has not taken effect",
		desc: "Takes back a cancellation at the end of the running period (or of the period a renewal created ahead), or one waiting for an EndOfBinding binding's end: the series renews again, and SubscriptionCancellationRemoved is recorded. " +
			"Any period id of the series may be named. 400 naming id when nothing waits, when the series has ended, or when the cancellation settled money that undoing would have to give back " +
			"(a period ahead cancelled and credited with it, an effect inside a period, a ChargeRemainder binding's remainder charged); plan changes it revoked stay revoked.",
		request: new(apikit.IDParam), responses: common(respOK(new(SubscriptionView)), respNotFound), handle: s.undoCancellation})
	s.add(route{method: http.MethodPost, path: "/subscription/{id}/scheduledchange", id: "createScheduledChange", tag: tag,
		summary: "Change the plan of a subscription",
		desc: "Immediately: the current subscription is cancelled now and a new one generated with the new plan, starting at the start of today (organization time zone); the old period is prorated up to that midnight. " +
			"OnScheduledTime: the same at scheduledTime (prorated then, from the start of that local day). OnRenewal: the next renewal uses the new plan; nothing is cancelled and nothing prorated. " +
			"A series has at most one registered change: registering a second OnScheduledTime/OnRenewal change is a 400 naming the pending one; an Immediately change supersedes it. " +
			"A change that could never run (another currency, OnRenewal on an AutomaticStop subscription, OnScheduledTime after it stops) is a 400.",
		request: new(changeRequest), responses: common(respCreated, respNotFound), handle: s.createChange})
	s.add(route{method: http.MethodGet, path: "/subscription/{id}/scheduledchange", id: "listScheduledChanges", tag: tag,
		summary:   "List the plan changes of a subscription",
		desc:      "Every change registered on any period of the series (every period linked to this one), oldest first, with the period it was registered on (subscriptionId), its state and the period it produced.",
		request:   new(apikit.IDParam),
		responses: common(respOK(new([]store.ScheduledChange)), respNotFound), handle: s.listChanges})
	s.add(route{method: http.MethodGet, path: "/subscription/{id}/scheduledchange/{changeId}", id: "getScheduledChange", tag: tag,
		summary: "Get a plan change", desc: "Any period of the series the change belongs to finds it (the Location of its create).",
		request: new(changeIDParams), responses: common(respOK(new(store.ScheduledChange)), respNotFound), handle: s.getChange})
	s.add(route{method: http.MethodDelete, path: "/subscription/{id}/scheduledchange/{changeId}", id: "deleteScheduledChange", tag: tag,
		summary: "Revoke a plan change before it runs", desc: "Registered → Revoked (reason RevokedByClient). A change that already ran, was revoked or expired: 400.",
		request: new(changeIDParams), responses: common(respNoContent, respNotFound), handle: s.revokeChange})
}

func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request) error {
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := store.SubscriptionFilter{SubscriberID: q.Get("subscriberId"), OrganizationID: q.Get("organizationId"), Now: now}
	for name, v := range map[string]string{"subscriberId": f.SubscriberID, "organizationId": f.OrganizationID} {
		if v != "" && !store.ValidID(v) {
			errs.Add(name, "must be a uuid")
		}
	}
	switch st := q.Get("status"); st {
	case "", substatus.Pending, substatus.Active, substatus.Completed, substatus.Cancelled:
		f.Status = st
	default:
		errs.Add("status", "must be Pending, Active, Completed or Cancelled")
	}
	if v := q.Get("activeAt"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			errs.Add("activeAt", "must be an RFC 3339 time")
		}
		f.ActiveAt = &t
	}
	expand := expandParam(r, &errs, "package")
	if err := errs.Err(); err != nil {
		return err
	}
	subs, next, err := s.app.Subscriptions(r.Context(), f, p, expand["package"])
	if err != nil {
		return err
	}
	s.writeSubscriptionList(w, r, subs, now, next)
	return nil
}

func (s *Server) listScheduled(w http.ResponseWriter, r *http.Request) error {
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	until := now.AddDate(0, 0, 31)
	if v := r.URL.Query().Get("until"); v != "" {
		if until, err = time.Parse(time.RFC3339, v); err != nil {
			errs.Add("until", "must be an RFC 3339 time")
		}
	}
	expand := expandParam(r, &errs, "package")
	if err := errs.Err(); err != nil {
		return err
	}
	subs, next, err := s.app.Subscriptions(r.Context(), store.SubscriptionFilter{RenewingBefore: &until}, p, expand["package"])
	if err != nil {
		return err
	}
	s.writeSubscriptionList(w, r, subs, now, next)
	return nil
}

func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	sub, err := s.app.Subscription(r.Context(), id)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, view(sub, now))
	return nil
}

func (s *Server) cancelSubscription(w http.ResponseWriter, r *http.Request) error {
	id, c, err := cancellationOf(r)
	if err != nil {
		return err
	}
	sub, now, err := s.app.CancelSubscription(r.Context(), id, c)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, view(sub, now))
	return nil
}

func (s *Server) undoCancellation(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	sub, now, err := s.app.UndoCancellation(r.Context(), id)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, view(sub, now))
	return nil
}

// cancellationOf reads a cancel request's path id and body (POST
// /subscription/{id}/cancel and its preview).
func cancellationOf(r *http.Request) (string, app.Cancellation, error) {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return "", app.Cancellation{}, err
	}
	var in CancelInput
	if err := apikit.DecodeOptionalJSON(r, &in); err != nil {
		return "", app.Cancellation{}, err
	}
	var errs validation.Errors
	mode := engine.CancelEndOfPeriod
	if m := apikit.Trimmed(in.Mode); m != "" {
		mode = m
	}
	if mode != engine.CancelEndOfPeriod && mode != engine.CancelImmediately {
		errs.Add("mode", "must be Immediately or EndOfPeriod")
	}
	reason := apikit.Text(&errs, "reason", in.Reason, 500, false)
	at := apikit.TimeField(&errs, "cancellationTime", in.CancellationTime)
	if at != nil && apikit.Trimmed(in.Mode) != "" {
		errs.Add("cancellationTime", "give mode or cancellationTime, not both")
	}
	if err := errs.Err(); err != nil {
		return "", app.Cancellation{}, err
	}
	return id, app.Cancellation{Mode: mode, At: at, Reason: reason}, nil
}

func (s *Server) createChange(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in ChangeInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	req := engine.ChangeRequest{ProcessingType: apikit.Trimmed(in.ProcessingType)}
	req.ScheduledAt = apikit.TimeField(&errs, "scheduledTime", in.ScheduledTime)
	if req.ProcessingType == "" {
		errs.Add("processingType", "is required")
	}
	req.TemplatePackageID = strings.ToLower(apikit.Trimmed(in.TemplatePackageID))
	if !store.ValidID(req.TemplatePackageID) {
		errs.Add("templatePackageId", "must be the id of a template package")
	}
	if in.TemplatePackageChoices != nil {
		c, cerrs := in.TemplatePackageChoices.choices()
		for _, fe := range cerrs {
			errs.Add("templatePackageChoices."+fe.Field, "%s", fe.Message)
		}
		req.Choices = c
	}
	if err := errs.Err(); err != nil {
		return err
	}
	c, err := s.app.RegisterChange(r.Context(), id, req)
	if err != nil {
		return prefixChoiceErrors(err)
	}
	s.created(w, "/subscription/"+id+"/scheduledchange/"+c.ID, c.ID)
	return nil
}

// prefixChoiceErrors names merge errors as the fields of this body.
func prefixChoiceErrors(err error) error {
	verrs, ok := err.(validation.Errors)
	if !ok {
		return err
	}
	out := make(validation.Errors, len(verrs))
	for i, fe := range verrs {
		switch fe.Field {
		case "processingType", "scheduledTime", "templatePackageId", "id", "changeId", "bindingPeriod":
			out[i] = fe
		default:
			out[i] = validation.FieldError{Field: "templatePackageChoices." + fe.Field, Message: fe.Message}
		}
	}
	return out
}

func (s *Server) listChanges(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	changes, err := s.app.ChangesOfSeries(r.Context(), id)
	if err != nil {
		return err
	}
	if changes == nil {
		changes = []store.ScheduledChange{}
	}
	apikit.WriteJSON(w, http.StatusOK, changes)
	return nil
}

// changePath reads the {id} and {changeId} of a plan change's path.
func changePath(r *http.Request) (id, changeID string, err error) {
	if id, err = apikit.PathID(r, "id"); err != nil {
		return
	}
	changeID, err = apikit.PathID(r, "changeId")
	return
}

func (s *Server) getChange(w http.ResponseWriter, r *http.Request) error {
	id, changeID, err := changePath(r)
	if err != nil {
		return err
	}
	c, err := s.app.Change(r.Context(), id, changeID)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) revokeChange(w http.ResponseWriter, r *http.Request) error {
	id, changeID, err := changePath(r)
	if err != nil {
		return err
	}
	if err := s.app.RevokeChange(r.Context(), id, changeID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
