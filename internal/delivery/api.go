package delivery

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/validation"
)

// The print operations of the contract (docs/PRINT.md): a product's
// delivery schedule, the tenant's publishing calendar and the editions a
// range of days holds.

// DeliveryScheduleUpdate is the body of PUT /product/{id}/deliveryschedule.
type DeliveryScheduleUpdate struct {
	Weekdays []string `json:"weekdays" required:"true" example:"[\"Tue\",\"Thu\",\"Sat\"]" description:"The days the product is delivered: Mon, Tue, Wed, Thu, Fri, Sat, Sun, each at most once. Empty: the product is not delivered (digital)."`
}

type deliveryScheduleUpdate struct {
	apikit.IDParam
	DeliveryScheduleUpdate
}

// DeliveryScheduleView is a product's delivery schedule.
type DeliveryScheduleView struct {
	ProductID string     `json:"productId"`
	Weekdays  []string   `json:"weekdays" description:"Monday first; empty for a product that is not delivered."`
	UpdatedAt *time.Time `json:"updatedAt" description:"When the schedule was last set; null if it never was."`
}

// EditionsView is the count of a product's editions in a range of days.
type EditionsView struct {
	ProductID    string   `json:"productId"`
	From         string   `json:"from" format:"date"`
	To           string   `json:"to" format:"date" description:"The first day after the range."`
	Editions     int      `json:"editions" description:"Delivery days in [from, to): the product's weekdays, less the tenant's non-publishing days."`
	DeliveryDays []string `json:"deliveryDays" description:"Those days in order (YYYY-MM-DD)."`
}

type editionsParams struct {
	apikit.IDParam
	From string `query:"From" required:"true" format:"date" description:"First day of the range."`
	To   string `query:"To" required:"true" format:"date" description:"First day after the range; at most 366 days after From."`
}

// NonPublishingDayUpdate is the body of PUT /deliverycalendar/{date}.
type NonPublishingDayUpdate struct {
	Name *string `json:"name" maxLength:"200" example:"Juledag" description:"What the day is (shown to staff)."`
}

type dateParam struct {
	Date string `path:"date" format:"date" description:"The day (YYYY-MM-DD)."`
}

type nonPublishingDayUpdate struct {
	dateParam
	NonPublishingDayUpdate
}

// NonPublishingDayView is a day without paper.
type NonPublishingDayView struct {
	Date string `json:"date" format:"date"`
	Name string `json:"name"`
}

type calendarParams struct {
	From string `query:"From" required:"true" format:"date" description:"First day listed."`
	To   string `query:"To" required:"true" format:"date" description:"First day not listed; at most 366 days after From."`
}

// maxRangeDays bounds the ranges read at once: a year and a day covers
// any billing period up to yearly.
const maxRangeDays = 366

// DeliveryStopRules are a title's vacation stop rules: the body of PUT
// /organization/{id}/deliverystoprules (an omitted field takes the
// default) and its answer.
type DeliveryStopRules struct {
	MinDays             *int    `json:"minDays" minimum:"1" example:"3" description:"Shortest stop in calendar days, first and last day counted. Default 3."`
	MaxDays             *int    `json:"maxDays" maximum:"366" example:"92" description:"Longest stop in calendar days. Default 92."`
	CutoffHour          *int    `json:"cutoffHour" minimum:"0" maximum:"24" example:"12" description:"A stop asked at or after this hour (the organization's time) counts as asked the next day. Default 12; 24: no cut-off."`
	NoticeDeliveryDays  *int    `json:"noticeDeliveryDays" minimum:"0" maximum:"30" example:"2" description:"A stop starts on this many delivery days after the day it is asked at the earliest. Default 2."`
	Credit              *string `json:"credit" enum:"PerEdition,None" description:"PerEdition: each missed edition is credited on the next invoice (the period's price divided by its editions). None: no credit. Default PerEdition."`
	MaxCreditedPerYear  *int    `json:"maxCreditedPerYear" minimum:"0" description:"Editions credited per subscription and calendar year at most; 0 (default): no bound. Editions past it are stopped without credit."`
	AlignToDeliveryDays *bool   `json:"alignToDeliveryDays" description:"The first and last day must be weekdays the product is delivered on. Default true."`
	AllowDuringBinding  *bool   `json:"allowDuringBinding" description:"Allow stops before a subscription's binding ends. Default false."`
}

// DeliveryStopRulesView is an organization's stop rules.
type DeliveryStopRulesView struct {
	OrganizationID      string `json:"organizationId"`
	IsDefault           bool   `json:"isDefault" description:"The organization set no rules of its own; these are the defaults."`
	MinDays             int    `json:"minDays"`
	MaxDays             int    `json:"maxDays"`
	CutoffHour          int    `json:"cutoffHour"`
	NoticeDeliveryDays  int    `json:"noticeDeliveryDays"`
	Credit              string `json:"credit" enum:"PerEdition,None"`
	MaxCreditedPerYear  int    `json:"maxCreditedPerYear"`
	AlignToDeliveryDays bool   `json:"alignToDeliveryDays"`
	AllowDuringBinding  bool   `json:"allowDuringBinding"`
}

type deliveryStopRulesUpdate struct {
	apikit.IDParam
	DeliveryStopRules
}

// DeliveryStopInput is the body of POST /subscription/{id}/deliverystop and
// of PUT /subscription/{id}/deliverystop/{stopId}.
type DeliveryStopInput struct {
	FirstDate *string `json:"firstDate" required:"true" format:"date" example:"2026-12-03" description:"The first day without paper (included)."`
	LastDate  *string `json:"lastDate" required:"true" format:"date" example:"2026-12-12" description:"The last day without paper (included)."`
}

type stopCreate struct {
	apikit.IDParam
	DeliveryStopInput
}

type stopParams struct {
	apikit.IDParam
	StopID string `path:"stopId" format:"uuid" description:"The stop."`
}

type stopChange struct {
	stopParams
	DeliveryStopInput
}

// DeliveryStopView is a vacation stop.
type DeliveryStopView struct {
	ID             string                   `json:"id"`
	SubscriptionID string                   `json:"subscriptionId" description:"The series' last period: a stop belongs to the series and follows its renewals."`
	AskedOnID      string                   `json:"askedOnSubscriptionId" description:"The period the stop was made on."`
	FirstDate      string                   `json:"firstDate" format:"date"`
	LastDate       string                   `json:"lastDate" format:"date"`
	State          string                   `json:"state" enum:"Planned,Active,Ended" description:"On the organization's day: Planned before the first day, Active through the last, then Ended."`
	MissedDays     []string                 `json:"missedDays" description:"The delivery days the stop takes out."`
	CreditedDays   []string                 `json:"creditedDays" description:"Those of them credited (all, up to the yearly bound, or none)."`
	Credits        []DeliveryStopCreditView `json:"credits" description:"The allowances booked for it, one per period of the series its credited days fall in, once that part has passed."`
	CreatedAt      time.Time                `json:"createdAt"`
	UpdatedAt      time.Time                `json:"updatedAt"`
}

// DeliveryStopCreditView is the credit of a stop's part in one period.
type DeliveryStopCreditView struct {
	PeriodID        string    `json:"subscriptionId" description:"The period whose editions were credited."`
	Editions        int       `json:"editions" description:"The period's editions, which its price is divided by."`
	Credited        int       `json:"creditedEditions"`
	Amount          int64     `json:"amountMinor" description:"The allowance in minor units: price × credited / editions, rounded once."`
	AllowanceItemID *string   `json:"allowanceItemId" description:"The allowance on the subscriber account; null when the credit rounds to nothing."`
	BookedAt        time.Time `json:"bookedAt"`
}

func stopView(v StopView) DeliveryStopView {
	dates := func(ds []Date) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.String()
		}
		return out
	}
	credits := make([]DeliveryStopCreditView, len(v.Credits))
	for i, c := range v.Credits {
		credits[i] = DeliveryStopCreditView{PeriodID: c.PeriodID, Editions: c.Editions, Credited: c.Credited, Amount: c.Amount,
			AllowanceItemID: c.AllowanceItemID, BookedAt: c.BookedAt}
	}
	return DeliveryStopView{ID: v.ID, Credits: credits, SubscriptionID: v.SubscriptionID, AskedOnID: v.AskedOnID, FirstDate: v.First.String(),
		LastDate: v.Last.String(), State: v.State, MissedDays: dates(v.Missed), CreditedDays: dates(v.Credited),
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
}

type handlers struct{ env apikit.Env }

// Routes are the print wing's operations, registered by internal/api.
func Routes(env apikit.Env) []apikit.Route {
	s := handlers{env}
	const tag = "Delivery"
	return []apikit.Route{
		{Method: http.MethodPut, Path: "/product/{id}/deliveryschedule", ID: "setDeliverySchedule", Tag: tag,
			Summary: "Set the weekdays a print product is delivered",
			Desc: "Replaces the product's pattern (e.g. Fri and Sat for a weekend title). The tenant's non-publishing days " +
				"apply on top of it. An empty list makes the product one that is not delivered.",
			Request: new(deliveryScheduleUpdate), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.setSchedule},
		{Method: http.MethodGet, Path: "/product/{id}/deliveryschedule", ID: "getDeliverySchedule", Tag: tag,
			Summary: "Get a product's delivery schedule", Request: new(apikit.IDParam),
			Responses: []apikit.Response{apikit.OK(new(DeliveryScheduleView)), apikit.NotFound},
			Handle: apikit.GetOne(func(ctx context.Context, id string) (DeliveryScheduleView, error) {
				ps, err := GetSchedule(ctx, env.Store, id)
				return scheduleView(ps), err
			})},
		{Method: http.MethodGet, Path: "/product/{id}/editions", ID: "getProductEditions", Tag: tag,
			Summary: "Count a product's editions in a range of days",
			Desc: "The product's delivery days in [From, To) under the tenant's calendar: the number of editions a period " +
				"holds, which per-edition prices and credits divide by.",
			Request: new(editionsParams), Responses: []apikit.Response{apikit.OK(new(EditionsView)), apikit.NotFound}, Handle: s.editions},
		{Method: http.MethodGet, Path: "/deliverycalendar", ID: "listNonPublishingDays", Tag: tag,
			Summary: "List the tenant's days without paper", Request: new(calendarParams),
			Responses: []apikit.Response{apikit.OK(new([]NonPublishingDayView))}, Handle: s.listDays},
		{Method: http.MethodPut, Path: "/deliverycalendar/{date}", ID: "setNonPublishingDay", Tag: tag,
			Summary: "Mark a day as one without paper", Desc: "No product is delivered on it. Setting a day again renames it.",
			Request: new(nonPublishingDayUpdate), Responses: []apikit.Response{apikit.NoContent}, Handle: s.setDay},
		{Method: http.MethodDelete, Path: "/deliverycalendar/{date}", ID: "deleteNonPublishingDay", Tag: tag,
			Summary: "Make a day a publishing day again", Request: new(dateParam),
			Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.deleteDay},
		{Method: http.MethodPut, Path: "/organization/{id}/deliverystoprules", ID: "setDeliveryStopRules", Tag: tag,
			Summary: "Set an organization's vacation stop rules",
			Desc:    "Replaces the rules its subscriptions' stops are checked against; an omitted field takes its default.",
			Request: new(deliveryStopRulesUpdate), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.setStopRules},
		{Method: http.MethodGet, Path: "/organization/{id}/deliverystoprules", ID: "getDeliveryStopRules", Tag: tag,
			Summary: "Get an organization's vacation stop rules", Desc: "Its own, or the defaults (isDefault) when it set none.",
			Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.OK(new(DeliveryStopRulesView)), apikit.NotFound},
			Handle: apikit.GetOne(func(ctx context.Context, id string) (DeliveryStopRulesView, error) {
				r, own, err := GetStopRules(ctx, env.Store, id)
				return DeliveryStopRulesView{OrganizationID: id, IsDefault: !own, MinDays: r.MinDays, MaxDays: r.MaxDays,
					CutoffHour: r.CutoffHour, NoticeDeliveryDays: r.NoticeDeliveryDays, Credit: r.Credit,
					MaxCreditedPerYear: r.MaxCreditedPerYear, AlignToDeliveryDays: r.AlignToDeliveryDays,
					AllowDuringBinding: r.AllowDuringBinding}, err
			})},
		{Method: http.MethodPost, Path: "/subscription/{id}/deliverystop", ID: "createDeliveryStop", Tag: tag,
			Summary: "Stop print delivery for a holiday",
			Desc: "Checked by the organization's stop rules (a refusal is a 400 naming the field and the rule), against the " +
				"series' other stops (no overlap) and its print schedule (a digital-only subscription is refused). Digital access " +
				"continues. The stop belongs to the series: it follows renewals. Its credited editions are booked as an allowance " +
				"once each period's part of it has passed (docs/PRINT.md). Records DeliveryStopCreated.",
			Request: new(stopCreate), Responses: []apikit.Response{apikit.Created, apikit.NotFound}, Handle: s.createStop},
		{Method: http.MethodGet, Path: "/subscription/{id}/deliverystop", ID: "listDeliveryStops", Tag: tag,
			Summary: "List a subscription's vacation stops", Desc: "Every stop of the series (deleted ones left out), by first day.",
			Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.OK(new([]DeliveryStopView)), apikit.NotFound}, Handle: s.listStops},
		{Method: http.MethodGet, Path: "/subscription/{id}/deliverystop/{stopId}", ID: "getDeliveryStop", Tag: tag,
			Summary: "Get a vacation stop", Request: new(stopParams),
			Responses: []apikit.Response{apikit.OK(new(DeliveryStopView)), apikit.NotFound}, Handle: s.getStop},
		{Method: http.MethodPut, Path: "/subscription/{id}/deliverystop/{stopId}", ID: "changeDeliveryStop", Tag: tag,
			Summary: "Change the days of a vacation stop that has not started",
			Desc:    "Checked again like a new stop. A stop that started or ended is a 400 (firstDate). Records DeliveryStopChanged.",
			Request: new(stopChange), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.changeStop},
		{Method: http.MethodDelete, Path: "/subscription/{id}/deliverystop/{stopId}", ID: "deleteDeliveryStop", Tag: tag,
			Summary: "Delete a vacation stop that has not started",
			Desc:    "A stop that started or ended is a 400 (firstDate). Records DeliveryStopDeleted.",
			Request: new(stopParams), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.deleteStop},
	}
}

func scheduleView(ps ProductSchedule) DeliveryScheduleView {
	v := DeliveryScheduleView{ProductID: ps.ProductID, Weekdays: ps.Weekdays.Names()}
	if !ps.UpdatedAt.IsZero() {
		t := ps.UpdatedAt
		v.UpdatedAt = &t
	}
	return v
}

func (s handlers) setSchedule(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in DeliveryScheduleUpdate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.Weekdays == nil {
		return validation.Field("weekdays", "is required (an empty list for a product that is not delivered)")
	}
	wd, err := ParseWeekdays(in.Weekdays)
	if err != nil {
		return validation.Field("weekdays", "%v", err)
	}
	if err := SetSchedule(r.Context(), s.env.Store, id, wd, s.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// dateRange reads the From and To query parameters.
func dateRange(r *http.Request, errs *validation.Errors) (Date, Date) {
	q := r.URL.Query()
	var out [2]Date
	for i, name := range []string{"From", "To"} {
		v := strings.TrimSpace(q.Get(name))
		if v == "" {
			errs.Add(name, "is required (YYYY-MM-DD)")
			continue
		}
		d, err := ParseDate(v)
		if err != nil {
			errs.Add(name, "%v", err)
			continue
		}
		out[i] = d
	}
	if !out[0].IsZero() && !out[1].IsZero() {
		if n := out[0].DaysUntil(out[1]); n < 0 {
			errs.Add("To", "is before From")
		} else if n > maxRangeDays {
			errs.Add("To", "is %d days after From; at most %d", n, maxRangeDays)
		}
	}
	return out[0], out[1]
}

func (s handlers) editions(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var errs validation.Errors
	from, to := dateRange(r, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	sch, err := LoadSchedule(r.Context(), s.env.Store, id, from, to)
	if err != nil {
		return err
	}
	dd := sch.DeliveryDays(from, to)
	v := EditionsView{ProductID: id, From: from.String(), To: to.String(), Editions: sch.Editions(from, to), DeliveryDays: make([]string, len(dd))}
	for i, d := range dd {
		v.DeliveryDays[i] = d.String()
	}
	apikit.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (s handlers) listDays(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	from, to := dateRange(r, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	days, err := NonPublishingDays(r.Context(), s.env.Store, from, to)
	if err != nil {
		return err
	}
	out := make([]NonPublishingDayView, len(days))
	for i, d := range days {
		out[i] = NonPublishingDayView{Date: d.Date.String(), Name: d.Name}
	}
	apikit.WriteJSON(w, http.StatusOK, out)
	return nil
}

func pathDate(r *http.Request) (Date, error) {
	d, err := ParseDate(r.PathValue("date"))
	if err != nil {
		return Date{}, validation.Field("date", "%v", err)
	}
	return d, nil
}

func (s handlers) setDay(w http.ResponseWriter, r *http.Request) error {
	day, err := pathDate(r)
	if err != nil {
		return err
	}
	var in NonPublishingDayUpdate
	if err := apikit.DecodeOptionalJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	name := apikit.Text(&errs, "name", in.Name, 200, false)
	if err := errs.Err(); err != nil {
		return err
	}
	if err := SetNonPublishingDay(r.Context(), s.env.Store, day, name, s.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) deleteDay(w http.ResponseWriter, r *http.Request) error {
	day, err := pathDate(r)
	if err != nil {
		return err
	}
	if err := DeleteNonPublishingDay(r.Context(), s.env.Store, day); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) setStopRules(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in DeliveryStopRules
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	rules := DefaultStopRules
	for _, f := range []struct {
		p   *int
		dst *int
	}{{in.MinDays, &rules.MinDays}, {in.MaxDays, &rules.MaxDays}, {in.CutoffHour, &rules.CutoffHour},
		{in.NoticeDeliveryDays, &rules.NoticeDeliveryDays}, {in.MaxCreditedPerYear, &rules.MaxCreditedPerYear}} {
		if f.p != nil {
			*f.dst = *f.p
		}
	}
	var errs validation.Errors
	rules.Credit = apikit.OneOf(&errs, "credit", in.Credit, DefaultStopRules.Credit, CreditPerEdition, CreditNone)
	if err := errs.Err(); err != nil {
		return err
	}
	if in.AlignToDeliveryDays != nil {
		rules.AlignToDeliveryDays = *in.AlignToDeliveryDays
	}
	if in.AllowDuringBinding != nil {
		rules.AllowDuringBinding = *in.AllowDuringBinding
	}
	if err := SetStopRules(r.Context(), s.env.Store, id, rules, s.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func stopRequest(in DeliveryStopInput) (StopRequest, error) {
	var errs validation.Errors
	var out [2]Date
	for i, f := range []struct {
		name string
		v    *string
	}{{"firstDate", in.FirstDate}, {"lastDate", in.LastDate}} {
		if f.v == nil || strings.TrimSpace(*f.v) == "" {
			errs.Add(f.name, "is required (YYYY-MM-DD)")
			continue
		}
		d, err := ParseDate(strings.TrimSpace(*f.v))
		if err != nil {
			errs.Add(f.name, "%v", err)
			continue
		}
		out[i] = d
	}
	return StopRequest{First: out[0], Last: out[1]}, errs.Err()
}

func stopPath(r *http.Request) (sub, stop string, err error) {
	if sub, err = apikit.PathID(r, "id"); err != nil {
		return "", "", err
	}
	stop, err = apikit.PathID(r, "stopId")
	return sub, stop, err
}

func (s handlers) createStop(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in DeliveryStopInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	req, err := stopRequest(in)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	st, err := CreateStop(r.Context(), s.env.Store, id, req, now)
	if err != nil {
		return err
	}
	s.env.Created(w, "/subscription/"+id+"/deliverystop/"+st.ID, st.ID)
	return nil
}

func (s handlers) listStops(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	stops, err := ListStops(r.Context(), s.env.Store, id, now)
	if err != nil {
		return err
	}
	out := make([]DeliveryStopView, len(stops))
	for i, v := range stops {
		out[i] = stopView(v)
	}
	apikit.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s handlers) getStop(w http.ResponseWriter, r *http.Request) error {
	sub, stop, err := stopPath(r)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	v, err := GetStop(r.Context(), s.env.Store, sub, stop, now)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, stopView(v))
	return nil
}

func (s handlers) changeStop(w http.ResponseWriter, r *http.Request) error {
	sub, stop, err := stopPath(r)
	if err != nil {
		return err
	}
	var in DeliveryStopInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	req, err := stopRequest(in)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	if _, err := ChangeStop(r.Context(), s.env.Store, sub, stop, req, now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) deleteStop(w http.ResponseWriter, r *http.Request) error {
	sub, stop, err := stopPath(r)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	if err := DeleteStop(r.Context(), s.env.Store, sub, stop, now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
