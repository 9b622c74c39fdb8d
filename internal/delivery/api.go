package delivery

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/country"
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
	routes := []apikit.Route{
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
	return append(routes, s.addressRoutes()...)
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

// ---- Delivery addresses (docs/PRINT.md, "Delivery addresses"): the
// tenant's postal code table, the organizations' address rules and the
// addresses of a series.

// DeliveryPostalCodeInput is the body of PUT
// /deliverypostalcode/{country}/{postalCode}.
type DeliveryPostalCodeInput struct {
	Carrier     *string `json:"carrier" required:"true" maxLength:"100" example:"Morgenlevering Oslo" description:"Who delivers the code's copies."`
	Route       *string `json:"route" maxLength:"100" example:"R-017" description:"The carrier's route the code belongs to."`
	Deliverable *bool   `json:"deliverable" required:"true" description:"Whether copies are delivered there; false refuses delivery addresses in it."`
	Reason      *string `json:"reason" maxLength:"500" example:"No morning delivery on the islands" description:"Why the code is not delivered (shown to the client on a refusal); required when deliverable is false."`
}

type postalCodeParams struct {
	Country    string `path:"country" pattern:"^[A-Za-z]{2}$" example:"NO" description:"ISO 3166-1 alpha-2."`
	PostalCode string `path:"postalCode" maxLength:"20" example:"0150" description:"The postal code (letters, digits, spaces and hyphens; case does not matter)."`
}

type postalCodeUpdate struct {
	postalCodeParams
	DeliveryPostalCodeInput
}

// DeliveryPostalCodeView is a row of the tenant's postal code table.
type DeliveryPostalCodeView struct {
	Country     string    `json:"country"`
	PostalCode  string    `json:"postalCode"`
	Carrier     string    `json:"carrier"`
	Route       string    `json:"route"`
	Deliverable bool      `json:"deliverable"`
	Reason      string    `json:"reason"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// DeliveryAddressRules are a title's delivery address rules: the body of
// PUT /organization/{id}/deliveryaddressrules (an omitted field takes the
// default).
type DeliveryAddressRules struct {
	MinDays             *int   `json:"minDays" minimum:"1" example:"2" description:"Shortest temporary address in calendar days, first and last day counted. Default 2."`
	MaxDays             *int   `json:"maxDays" maximum:"366" example:"90" description:"Longest temporary address in calendar days. Default 90."`
	CutoffHour          *int   `json:"cutoffHour" minimum:"0" maximum:"24" example:"12" description:"An address asked at or after this hour (the organization's time) counts as asked the next day. Default 12; 24: no cut-off."`
	NoticeDeliveryDays  *int   `json:"noticeDeliveryDays" minimum:"0" maximum:"30" example:"2" description:"An address applies from this many delivery days after the day it is asked at the earliest. Default 2."`
	SurchargePerChange  *int64 `json:"surchargePerChangeMinor" minimum:"0" example:"4900" description:"Charged once per address saved, in minor units of the subscription's currency. Default 0 (none)."`
	SurchargePerEdition *int64 `json:"surchargePerEditionMinor" minimum:"0" example:"500" description:"Charged per edition a temporary address receives, in minor units. Default 0 (none)."`
}

// DeliveryAddressRulesView is an organization's address rules.
type DeliveryAddressRulesView struct {
	OrganizationID      string `json:"organizationId"`
	IsDefault           bool   `json:"isDefault" description:"The organization set no rules of its own; these are the defaults."`
	MinDays             int    `json:"minDays"`
	MaxDays             int    `json:"maxDays"`
	CutoffHour          int    `json:"cutoffHour"`
	NoticeDeliveryDays  int    `json:"noticeDeliveryDays"`
	SurchargePerChange  int64  `json:"surchargePerChangeMinor"`
	SurchargePerEdition int64  `json:"surchargePerEditionMinor"`
}

type addressRulesUpdate struct {
	apikit.IDParam
	DeliveryAddressRules
}

// DeliveryAddressInput is the body of POST /subscription/{id}/deliveryaddress
// and of PUT /subscription/{id}/deliveryaddress/{addressId}.
type DeliveryAddressInput struct {
	Kind       *string `json:"kind" required:"true" enum:"Temporary,Permanent" description:"Temporary: from firstDate through lastDate. Permanent: from firstDate (the effective date) on."`
	FirstDate  *string `json:"firstDate" required:"true" format:"date" example:"2030-07-01" description:"The first day copies go to this address (included)."`
	LastDate   *string `json:"lastDate" format:"date" example:"2030-07-31" description:"The last day (included): required for Temporary, left out for Permanent."`
	Name       *string `json:"name" required:"true" maxLength:"200" example:"Kari Nordmann" description:"Who the copy is addressed to."`
	Line1      *string `json:"line1" required:"true" maxLength:"200" example:"Hyttevegen 3"`
	Line2      *string `json:"line2" maxLength:"200"`
	PostalCode *string `json:"postalCode" required:"true" maxLength:"20" example:"3580" description:"Must be a deliverable code of the tenant's postal code table."`
	City       *string `json:"city" required:"true" maxLength:"100" example:"Geilo"`
	Country    *string `json:"country" required:"true" pattern:"^[A-Z]{2}$" example:"NO" description:"ISO 3166-1 alpha-2."`
}

type addressCreate struct {
	apikit.IDParam
	DeliveryAddressInput
}

type addressParams struct {
	apikit.IDParam
	AddressID string `path:"addressId" format:"uuid" description:"The address."`
}

type addressChange struct {
	addressParams
	DeliveryAddressInput
}

// DeliveryAddressView is a delivery address of a subscription series.
type DeliveryAddressView struct {
	ID                  string                     `json:"id"`
	SubscriptionID      string                     `json:"subscriptionId" description:"The series' last period: an address belongs to the series and follows its renewals."`
	AskedOnID           string                     `json:"askedOnSubscriptionId" description:"The period the address was made on."`
	Kind                string                     `json:"kind" enum:"Temporary,Permanent"`
	FirstDate           string                     `json:"firstDate" format:"date"`
	LastDate            *string                    `json:"lastDate" format:"date" description:"Null for a Permanent address."`
	State               string                     `json:"state" enum:"Planned,Active,Ended" description:"On the organization's day: Planned before the first day, then Active; a Temporary address Ended after its last day, a Permanent one once a later Permanent one began."`
	Name                string                     `json:"name"`
	Line1               string                     `json:"line1"`
	Line2               string                     `json:"line2"`
	PostalCode          string                     `json:"postalCode"`
	City                string                     `json:"city"`
	Country             string                     `json:"country"`
	Carrier             string                     `json:"carrier" description:"From the postal code table when the address was saved."`
	Route               string                     `json:"route"`
	SurchargePerChange  int64                      `json:"surchargePerChangeMinor" description:"The organization's rules when the address was saved."`
	SurchargePerEdition int64                      `json:"surchargePerEditionMinor"`
	Charge              *DeliveryAddressChargeView `json:"charge" description:"The surcharge booked, once the address applies; null before, or when there is none."`
	CreatedAt           time.Time                  `json:"createdAt"`
	UpdatedAt           time.Time                  `json:"updatedAt"`
}

// DeliveryAddressChargeView is the booked surcharge of an address.
type DeliveryAddressChargeView struct {
	PeriodID     string    `json:"subscriptionId" description:"The period it was booked with."`
	Editions     int       `json:"editions" description:"The editions a temporary address received (less stopped days); 0 for a Permanent one."`
	Amount       int64     `json:"amountMinor" description:"Per change + per edition × editions, in minor units."`
	ChargeItemID *string   `json:"chargeItemId" description:"The charge on the subscriber account; null when the amount is 0."`
	BookedAt     time.Time `json:"bookedAt"`
}

func addressView(v AddressView) DeliveryAddressView {
	out := DeliveryAddressView{ID: v.ID, SubscriptionID: v.SubscriptionID, AskedOnID: v.AskedOnID, Kind: v.Kind, FirstDate: v.First.String(),
		State: v.State, Name: v.Name, Line1: v.Line1, Line2: v.Line2, PostalCode: v.PostalCode, City: v.City, Country: v.Country,
		Carrier: v.Carrier, Route: v.Route, SurchargePerChange: v.SurchargePerChange, SurchargePerEdition: v.SurchargePerEdition,
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
	if v.Last != nil {
		l := v.Last.String()
		out.LastDate = &l
	}
	if c := v.Charge; c != nil {
		out.Charge = &DeliveryAddressChargeView{PeriodID: c.PeriodID, Editions: c.Editions, Amount: c.Amount, ChargeItemID: c.ChargeItemID,
			BookedAt: c.BookedAt}
	}
	return out
}

func (s handlers) addressRoutes() []apikit.Route {
	const tag = "Delivery"
	return []apikit.Route{
		{Method: http.MethodPut, Path: "/deliverypostalcode/{country}/{postalCode}", ID: "setDeliveryPostalCode", Tag: tag,
			Summary: "Set a postal code's carrier, route and deliverability",
			Desc: "Adds or replaces the row of the tenant's postal code table. Delivery addresses are checked against it when " +
				"saved (not in the table, or not deliverable: 400 on postalCode); addresses saved before keep their carrier and route.",
			Request: new(postalCodeUpdate), Responses: []apikit.Response{apikit.NoContent}, Handle: s.setPostalCode},
		{Method: http.MethodGet, Path: "/deliverypostalcode/{country}/{postalCode}", ID: "getDeliveryPostalCode", Tag: tag,
			Summary: "Get a postal code of the tenant's table", Request: new(postalCodeParams),
			Responses: []apikit.Response{apikit.OK(new(DeliveryPostalCodeView)), apikit.NotFound}, Handle: s.getPostalCode},
		{Method: http.MethodGet, Path: "/deliverypostalcode", ID: "listDeliveryPostalCodes", Tag: tag,
			Summary: "List the tenant's postal code table", Desc: "By country and postal code, paged.",
			Request: new(apikit.ListParams), Responses: []apikit.Response{apikit.List(new([]DeliveryPostalCodeView))}, Handle: s.listPostalCodes},
		{Method: http.MethodDelete, Path: "/deliverypostalcode/{country}/{postalCode}", ID: "deleteDeliveryPostalCode", Tag: tag,
			Summary: "Remove a postal code from the tenant's table", Desc: "New addresses there are refused; saved ones keep their carrier and route.",
			Request: new(postalCodeParams), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.deletePostalCode},
		{Method: http.MethodPut, Path: "/organization/{id}/deliveryaddressrules", ID: "setDeliveryAddressRules", Tag: tag,
			Summary: "Set an organization's delivery address rules",
			Desc:    "Replaces the rules its subscriptions' delivery addresses are checked against; an omitted field takes its default.",
			Request: new(addressRulesUpdate), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.setAddressRules},
		{Method: http.MethodGet, Path: "/organization/{id}/deliveryaddressrules", ID: "getDeliveryAddressRules", Tag: tag,
			Summary: "Get an organization's delivery address rules", Desc: "Its own, or the defaults (isDefault) when it set none.",
			Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.OK(new(DeliveryAddressRulesView)), apikit.NotFound},
			Handle: apikit.GetOne(func(ctx context.Context, id string) (DeliveryAddressRulesView, error) {
				r, own, err := GetAddressRules(ctx, s.env.Store, id)
				return DeliveryAddressRulesView{OrganizationID: id, IsDefault: !own, MinDays: r.MinDays, MaxDays: r.MaxDays,
					CutoffHour: r.CutoffHour, NoticeDeliveryDays: r.NoticeDeliveryDays, SurchargePerChange: r.SurchargePerChange,
					SurchargePerEdition: r.SurchargePerEdition}, err
			})},
		{Method: http.MethodPost, Path: "/subscription/{id}/deliveryaddress", ID: "createDeliveryAddress", Tag: tag,
			Summary: "Deliver print to another address, for a while or from a day on",
			Desc: "A Temporary address (firstDate through lastDate) or a Permanent one (from firstDate on), checked by the " +
				"organization's address rules (a refusal is a 400 naming the field and the rule): the postal code must be a deliverable " +
				"one of the tenant's table (else 400 on postalCode with the reason, so a client can offer a vacation stop instead), " +
				"temporary addresses may not overlap, a digital-only subscription is refused. The invoice address (the subscriber's " +
				"own) never changes. The address belongs to the series: it follows renewals. Records DeliveryAddressChanged.",
			Request: new(addressCreate), Responses: []apikit.Response{apikit.Created, apikit.NotFound}, Handle: s.createAddress},
		{Method: http.MethodGet, Path: "/subscription/{id}/deliveryaddress", ID: "listDeliveryAddresses", Tag: tag,
			Summary: "List a subscription's delivery addresses", Desc: "Every address of the series (deleted ones left out), by first day.",
			Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.OK(new([]DeliveryAddressView)), apikit.NotFound}, Handle: s.listAddresses},
		{Method: http.MethodGet, Path: "/subscription/{id}/deliveryaddress/{addressId}", ID: "getDeliveryAddress", Tag: tag,
			Summary: "Get a delivery address", Request: new(addressParams),
			Responses: []apikit.Response{apikit.OK(new(DeliveryAddressView)), apikit.NotFound}, Handle: s.getAddress},
		{Method: http.MethodPut, Path: "/subscription/{id}/deliveryaddress/{addressId}", ID: "changeDeliveryAddress", Tag: tag,
			Summary: "Change a delivery address that has not started",
			Desc:    "Checked again like a new one. An address that applies already is a 400 (firstDate). Records DeliveryAddressChanged.",
			Request: new(addressChange), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.changeAddress},
		{Method: http.MethodDelete, Path: "/subscription/{id}/deliveryaddress/{addressId}", ID: "deleteDeliveryAddress", Tag: tag,
			Summary: "Delete a delivery address that has not started",
			Desc:    "An address that applies already is a 400 (firstDate). Records DeliveryAddressChanged (action Deleted).",
			Request: new(addressParams), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.deleteAddress},
	}
}

// postalCodePattern: letters, digits, spaces and hyphens, as postal codes
// are written (0150, SW1A 1AA, 111 22, 1000-001).
func validPostalCode(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ' ' || r == '-') {
			return false
		}
	}
	return true
}

func postalCodePath(r *http.Request) (string, string, error) {
	var errs validation.Errors
	c := strings.ToUpper(strings.TrimSpace(r.PathValue("country")))
	if !country.Valid(c) {
		errs.Add("country", "%q is not an ISO 3166-1 alpha-2 country code", r.PathValue("country"))
	}
	p := NormalizePostalCode(r.PathValue("postalCode"))
	if !validPostalCode(p) {
		errs.Add("postalCode", "must be 1 to 20 letters, digits, spaces or hyphens")
	}
	return c, p, errs.Err()
}

func postalCodeView(p PostalCode) DeliveryPostalCodeView {
	return DeliveryPostalCodeView(p)
}

func (s handlers) setPostalCode(w http.ResponseWriter, r *http.Request) error {
	c, code, err := postalCodePath(r)
	if err != nil {
		return err
	}
	var in DeliveryPostalCodeInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	p := PostalCode{Country: c, PostalCode: code, Carrier: apikit.Text(&errs, "carrier", in.Carrier, 100, true),
		Route: apikit.Text(&errs, "route", in.Route, 100, false), Reason: apikit.Text(&errs, "reason", in.Reason, 500, false)}
	if in.Deliverable == nil {
		errs.Add("deliverable", "is required (true or false)")
	} else {
		p.Deliverable = *in.Deliverable
		if !p.Deliverable && p.Reason == "" {
			errs.Add("reason", "is required when deliverable is false: a refused address names it")
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := SetPostalCode(r.Context(), s.env.Store, p, s.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) getPostalCode(w http.ResponseWriter, r *http.Request) error {
	c, code, err := postalCodePath(r)
	if err != nil {
		return err
	}
	p, err := GetPostalCode(r.Context(), s.env.Store, c, code)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, postalCodeView(p))
	return nil
}

func (s handlers) deletePostalCode(w http.ResponseWriter, r *http.Request) error {
	c, code, err := postalCodePath(r)
	if err != nil {
		return err
	}
	if err := DeletePostalCode(r.Context(), s.env.Store, c, code); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// postalCodePage reads limit and cursor like apikit.Page; the table's
// key is (country, postal code), not an id, so its cursor is
// "country/postal code", opaque to clients all the same.
func postalCodePage(r *http.Request) (*PostalCodeCursor, int, error) {
	var errs validation.Errors
	q := r.URL.Query()
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			errs.Add("limit", "must be an integer from 1 to 1000")
		} else {
			limit = n
		}
	}
	var after *PostalCodeCursor
	if v := q.Get("cursor"); v != "" {
		raw, err := base64.RawURLEncoding.DecodeString(v)
		c, p, ok := strings.Cut(string(raw), "/")
		if err != nil || !ok || !country.Valid(c) || !validPostalCode(p) {
			errs.Add("cursor", "is not a cursor from a previous page")
		} else {
			after = &PostalCodeCursor{Country: c, PostalCode: p}
		}
	}
	return after, limit, errs.Err()
}

func (s handlers) listPostalCodes(w http.ResponseWriter, r *http.Request) error {
	after, limit, err := postalCodePage(r)
	if err != nil {
		return err
	}
	ps, next, err := ListPostalCodes(r.Context(), s.env.Store, after, limit)
	if err != nil {
		return err
	}
	out := make([]DeliveryPostalCodeView, len(ps))
	for i, p := range ps {
		out[i] = postalCodeView(p)
	}
	cursor := ""
	if next != nil {
		cursor = next.Country + "/" + next.PostalCode
	}
	s.env.WriteList(w, r, out, cursor)
	return nil
}

func (s handlers) setAddressRules(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in DeliveryAddressRules
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	rules := DefaultAddressRules
	for _, f := range []struct {
		p   *int
		dst *int
	}{{in.MinDays, &rules.MinDays}, {in.MaxDays, &rules.MaxDays}, {in.CutoffHour, &rules.CutoffHour},
		{in.NoticeDeliveryDays, &rules.NoticeDeliveryDays}} {
		if f.p != nil {
			*f.dst = *f.p
		}
	}
	if in.SurchargePerChange != nil {
		rules.SurchargePerChange = *in.SurchargePerChange
	}
	if in.SurchargePerEdition != nil {
		rules.SurchargePerEdition = *in.SurchargePerEdition
	}
	if err := SetAddressRules(r.Context(), s.env.Store, id, rules, s.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func addressRequest(in DeliveryAddressInput) (AddressRequest, error) {
	var errs validation.Errors
	var req AddressRequest
	req.Kind = apikit.OneOf(&errs, "kind", in.Kind, "", AddressTemporary, AddressPermanent)
	if req.Kind == "" && apikit.Trimmed(in.Kind) == "" {
		errs.Add("kind", "is required (%s or %s)", AddressTemporary, AddressPermanent)
	}
	if in.FirstDate == nil || strings.TrimSpace(*in.FirstDate) == "" {
		errs.Add("firstDate", "is required (YYYY-MM-DD)")
	} else if d, err := ParseDate(strings.TrimSpace(*in.FirstDate)); err != nil {
		errs.Add("firstDate", "%v", err)
	} else {
		req.First = d
	}
	if in.LastDate != nil && strings.TrimSpace(*in.LastDate) != "" {
		if d, err := ParseDate(strings.TrimSpace(*in.LastDate)); err != nil {
			errs.Add("lastDate", "%v", err)
		} else {
			req.Last = &d
		}
	}
	a := PostalAddress{Name: apikit.Text(&errs, "name", in.Name, 200, true), Line1: apikit.Text(&errs, "line1", in.Line1, 200, true),
		Line2: apikit.Text(&errs, "line2", in.Line2, 200, false), City: apikit.Text(&errs, "city", in.City, 100, true),
		PostalCode: NormalizePostalCode(apikit.Trimmed(in.PostalCode)), Country: strings.ToUpper(apikit.Trimmed(in.Country))}
	if a.PostalCode == "" {
		errs.Add("postalCode", "is required")
	} else if !validPostalCode(a.PostalCode) {
		errs.Add("postalCode", "must be 1 to 20 letters, digits, spaces or hyphens")
	}
	if a.Country == "" {
		errs.Add("country", "is required (ISO 3166-1 alpha-2)")
	} else if !country.Valid(a.Country) {
		errs.Add("country", "%q is not an ISO 3166-1 alpha-2 country code", a.Country)
	}
	req.Address = a
	return req, errs.Err()
}

func addressPath(r *http.Request) (sub, address string, err error) {
	if sub, err = apikit.PathID(r, "id"); err != nil {
		return "", "", err
	}
	address, err = apikit.PathID(r, "addressId")
	return sub, address, err
}

func (s handlers) createAddress(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in DeliveryAddressInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	req, err := addressRequest(in)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	a, err := CreateAddress(r.Context(), s.env.Store, id, req, now)
	if err != nil {
		return err
	}
	s.env.Created(w, "/subscription/"+id+"/deliveryaddress/"+a.ID, a.ID)
	return nil
}

func (s handlers) listAddresses(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	as, err := ListAddresses(r.Context(), s.env.Store, id, now)
	if err != nil {
		return err
	}
	out := make([]DeliveryAddressView, len(as))
	for i, v := range as {
		out[i] = addressView(v)
	}
	apikit.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s handlers) getAddress(w http.ResponseWriter, r *http.Request) error {
	sub, address, err := addressPath(r)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	v, err := GetAddress(r.Context(), s.env.Store, sub, address, now)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, addressView(v))
	return nil
}

func (s handlers) changeAddress(w http.ResponseWriter, r *http.Request) error {
	sub, address, err := addressPath(r)
	if err != nil {
		return err
	}
	var in DeliveryAddressInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	req, err := addressRequest(in)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	if _, err := ChangeAddress(r.Context(), s.env.Store, sub, address, req, now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) deleteAddress(w http.ResponseWriter, r *http.Request) error {
	sub, address, err := addressPath(r)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	if err := DeleteAddress(r.Context(), s.env.Store, sub, address, now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
