package delivery

import (
	"net/http"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/validation"
)

// The distribution list's operation (docs/PRINT.md, "The distribution
// list"): a streamed file, not a JSON document, so it is written as the
// rows arrive and a million copies take no more memory than ten.

type distributionParams struct {
	dateParam
	Carrier *string `query:"carrier" maxLength:"100" description:"Only this carrier's copies (\"\" for copies whose postal code has no carrier). All carriers when left out."`
	View    string  `query:"view" enum:"list,delta,counts" default:"list" description:"list: the copies to deliver; delta: the changes since each product's previous delivery day; counts: copies per carrier, route, postal code and product."`
	Format  string  `query:"format" enum:"csv,jsonl" default:"csv" description:"CSV (RFC 4180, a header row) or JSON Lines."`
}

// DistributionRoutes are the distribution list's operations, registered by
// internal/api beside Routes.
func DistributionRoutes(env apikit.Env) []apikit.Route {
	s := handlers{env}
	return []apikit.Route{
		{Method: http.MethodGet, Path: "/distribution/{date}", ID: "getDistributionList", Tag: "Delivery",
			Summary: "The day's distribution list: what to print and deliver, per carrier",
			Desc: "Every print copy delivered on the day with its delivery address for that day (a temporary address, a " +
				"permanent change in effect, or the subscriber's address) and the carrier and route of its postal code; " +
				"or the delta against each product's previous delivery day (New, Stopped, Resumed, Moved, Ended); or the " +
				"counts per route and postal code for the print run. Copy ids are stable while a series delivers a product. " +
				"Ordered deterministically and streamed (docs/PRINT.md).",
			Request: new(distributionParams),
			Responses: []apikit.Response{{Status: http.StatusOK, ContentType: "text/csv", Desc: "The view as CSV (format=csv)."},
				{Status: http.StatusOK, ContentType: "application/jsonl", Desc: "The view as JSON Lines (format=jsonl)."}},
			Handle: s.distribution},
		{Method: http.MethodPost, Path: "/distribution/{date}/publish", ID: "publishDistributionList", Tag: "Delivery",
			Summary: "Publish the day's distribution list to the carriers",
			Desc: "Counts the day's copies per carrier and records DistributionListAvailable (subject /distribution/{date}), " +
				"so the carriers' systems fetch the list. Publishing the day again (a correction after a late change) raises " +
				"its revision. Run it at the print deadline, from a timer (`kadens distribution publish`) or by hand.",
			Request: new(dateParam), Responses: []apikit.Response{apikit.OK(new(Publication))}, Handle: s.publish},
	}
}

func (s handlers) publish(w http.ResponseWriter, r *http.Request) error {
	day, err := pathDate(r)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	p, err := PublishDistribution(r.Context(), s.env.Store, day, now)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, p)
	return nil
}

// ParseDistribution checks a distribution request's parts, as the API and
// the CLI take them; an empty view or format takes the default.
func ParseDistribution(date, view, format string) (DistributionRequest, string, error) {
	var errs validation.Errors
	req := DistributionRequest{View: view}
	d, err := ParseDate(date)
	if err != nil {
		errs.Add("date", "must be a date (YYYY-MM-DD)")
	}
	req.Day = d
	switch req.View {
	case "":
		req.View = ViewList
	case ViewList, ViewDelta, ViewCounts:
	default:
		errs.Add("view", "must be list, delta or counts")
	}
	switch format {
	case "":
		format = FormatCSV
	case FormatCSV, FormatJSONL:
	default:
		errs.Add("format", "must be csv or jsonl")
	}
	return req, format, errs.Err()
}

func (s handlers) distribution(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req, format, err := ParseDistribution(r.PathValue("date"), q.Get("view"), q.Get("format"))
	if err != nil {
		return err
	}
	if c, ok := q["carrier"]; ok {
		if len(c[0]) > 100 {
			var errs validation.Errors
			errs.Add("carrier", "is longer than 100 characters")
			return errs.Err()
		}
		req.Carrier = &c[0]
	}
	d, err := LoadDistribution(r.Context(), s.env.Store, req.Day)
	if err != nil {
		return err
	}
	enc, err := NewEncoder(w, format)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", ContentType(format))
	w.WriteHeader(http.StatusOK)
	_, err = d.Write(r.Context(), s.env.Store, req, enc)
	return err
}
