package bookkeeping

import (
	"errors"
	"mime"
	"net/http"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

type orgParam struct {
	OrganizationID string `path:"organizationId" format:"uuid"`
}

type chartPut struct {
	orgParam
	Chart
}

// ExampleChartInput names the country whose example chart to install.
type ExampleChartInput struct {
	orgParam
	Country string `json:"country" required:"true" enum:"NO,SE"`
}

// RecognizeInput is a recognition run's last day.
type RecognizeInput struct {
	orgParam
	Through string `json:"through" required:"true" format:"date" description:"The last day recognised (inclusive)."`
}

// RecognizeResult says how much the run moved, in minor units.
type RecognizeResult struct {
	RecognizedMinor int64 `json:"recognizedMinor" description:"Moved from unearned revenue to revenue, in minor units of the currency."`
}

// PeriodInput closes or reopens a month.
type PeriodInput struct {
	orgParam
	Month  string `path:"month" description:"YYYY-MM"`
	Closed bool   `json:"closed"`
}

type journalParams struct {
	orgParam
	From string `query:"from" format:"date" description:"The first accounting date (inclusive)."`
	To   string `query:"to" format:"date" description:"The last accounting date (inclusive)."`
}

// ReconciliationView is the ledger against its documents, minor units.
type ReconciliationView struct {
	ReceivableLedger    int64 `json:"receivableLedger"`
	ReceivableDocuments int64 `json:"receivableDocuments"`
	VATLedger           int64 `json:"vatLedger"`
	VATDocuments        int64 `json:"vatDocuments"`
	NetLedger           int64 `json:"netLedger"`
	NetDocuments        int64 `json:"netDocuments"`
	Unposted            int64 `json:"unposted"`
	Differences         int64 `json:"differences" description:"Zero when the books agree with the documents."`
}

// Routes are the bookkeeping API's operations (docs/BOOKKEEPING.md).
func Routes(env apikit.Env) []apikit.Route {
	h := handlers{env}
	const tag = "Bookkeeping"
	return []apikit.Route{
		{Method: http.MethodPut, Path: "/bookkeeping/chart/{organizationId}", ID: "setBookkeepingChart", Tag: tag,
			Summary: "Set an organization's chart of accounts, VAT codes and mapping rules",
			Desc:    "Replaces the chart whole. Documents issued from then on post to the general ledger.",
			Request: new(chartPut), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: h.setChart},
		{Method: http.MethodGet, Path: "/bookkeeping/chart/{organizationId}", ID: "getBookkeepingChart", Tag: tag,
			Summary: "Get an organization's chart of accounts", Request: new(orgParam),
			Responses: []apikit.Response{apikit.OK(new(Chart)), apikit.NotFound}, Handle: h.getChart},
		{Method: http.MethodPost, Path: "/bookkeeping/chart/{organizationId}/example", ID: "installBookkeepingExampleChart", Tag: tag,
			Summary: "Install the example chart of a Norwegian or Swedish media house", Request: new(ExampleChartInput),
			Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: h.installExample},
		{Method: http.MethodPost, Path: "/bookkeeping/recognize/{organizationId}", ID: "recognizeRevenue", Tag: tag,
			Summary: "Move earned deferred revenue to revenue through a date",
			Desc:    "Pro rata by day; a rerun through the same date moves nothing.", Request: new(RecognizeInput),
			Responses: []apikit.Response{apikit.OK(new(RecognizeResult)), apikit.NotFound}, Handle: h.recognize},
		{Method: http.MethodPut, Path: "/bookkeeping/period/{organizationId}/{month}", ID: "setAccountingPeriod", Tag: tag,
			Summary: "Close or reopen an accounting period (a month)",
			Desc:    "Nothing posts into a closed period: entries dated in it post on the first day of the first open period after it, with a note.",
			Request: new(PeriodInput), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: h.setPeriod},
		{Method: http.MethodGet, Path: "/bookkeeping/reconciliation/{organizationId}", ID: "getBookkeepingReconciliation", Tag: tag,
			Summary: "The ledger against the documents it was posted from", Request: new(orgParam),
			Responses: []apikit.Response{apikit.OK(new(ReconciliationView)), apikit.NotFound}, Handle: h.reconcile},
		{Method: http.MethodGet, Path: "/bookkeeping/deferred/{organizationId}", ID: "getDeferredRevenue", Tag: tag,
			Summary: "Unearned revenue at the end of a day, per currency (minor units)", Request: new(deferredParams),
			Responses: []apikit.Response{apikit.OK(new([]DeferredView)), apikit.NotFound}, Handle: h.deferred},
		{Method: http.MethodGet, Path: "/bookkeeping/revenue/{organizationId}", ID: "getRevenueByMonth", Tag: tag,
			Summary: "Revenue by month × product × VAT rate (minor units)", Request: new(journalParams),
			Responses: []apikit.Response{apikit.OK(new([]RevenueRow)), apikit.NotFound}, Handle: h.revenue},
		{Method: http.MethodGet, Path: "/bookkeeping/journal/{organizationId}", ID: "getBookkeepingJournal", Tag: tag,
			Summary: "The journal as CSV, one line per posting", Request: new(journalParams),
			Responses: []apikit.Response{{Status: http.StatusOK, ContentType: "text/csv", Desc: "The journal."}, apikit.NotFound},
			Handle:    h.journal},
		{Method: http.MethodGet, Path: "/bookkeeping/saft/{organizationId}", ID: "exportSAFT", Tag: tag,
			Summary: "The SAF-T Financial file (Norway, v1.30) of a period",
			Desc: "Streamed; the file name follows the Norwegian rule (SAF-T Financial_<organization number>_<time>_1_1.xml). " +
				"from and to are required.",
			Request: new(journalParams),
			Responses: []apikit.Response{{Status: http.StatusOK, ContentType: "application/xml", Desc: "The file.",
				Headers: map[string]string{"Content-Disposition": "attachment; filename=\"SAF-T Financial_923609016_20270402103000_1_1.xml\""}}, apikit.NotFound},
			Handle: h.saft},
		{Method: http.MethodGet, Path: "/bookkeeping/sie/{organizationId}", ID: "exportSIE", Tag: tag,
			Summary: "The SIE 4 file (Sweden) of a financial year",
			Desc:    "SIE 4E (balances and vouchers), or 4I (vouchers only) with type=I; CP437, #KSUMMA computed. from and to are required.",
			Request: new(sieParams),
			Responses: []apikit.Response{{Status: http.StatusOK, ContentType: apikit.MediaOctet, Desc: "The file.",
				Headers: map[string]string{"Content-Disposition": "attachment; filename=SIE4.se"}}, apikit.NotFound},
			Handle: h.sie},
	}
}

type handlers struct{ env apikit.Env }

type deferredParams struct {
	orgParam
	At string `query:"at" required:"true" format:"date" description:"The day at whose end the balance is taken."`
}

// DeferredView is unearned revenue in one currency.
type DeferredView struct {
	Currency string `json:"currency"`
	Amount   int64  `json:"amountMinor" description:"Minor units of the currency."`
}

func dateParams(q map[string][]string, required bool, names ...string) error {
	var errs validation.Errors
	for _, f := range names {
		v := ""
		if vs := q[f]; len(vs) > 0 {
			v = vs[0]
		}
		if v == "" && !required {
			continue
		}
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			errs.Add(f, "must be a date (YYYY-MM-DD)")
		}
	}
	return errs.Err()
}

func (h handlers) deferred(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	if err := dateParams(r.URL.Query(), true, "at"); err != nil {
		return err
	}
	m, err := DeferredBalance(r.Context(), h.env.Store, org, r.URL.Query().Get("at"))
	if err != nil {
		return notFound(err)
	}
	out := []DeferredView{}
	for cur, a := range m {
		out = append(out, DeferredView{Currency: cur, Amount: a})
	}
	apikit.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) revenue(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if err := dateParams(q, false, "from", "to"); err != nil {
		return err
	}
	from, to := q.Get("from"), q.Get("to")
	if from == "" {
		from = "0000-01-01"
	}
	if to == "" {
		to = "9999-12-31"
	}
	rows, err := RevenueByMonth(r.Context(), h.env.Store, org, from, to)
	if err != nil {
		return notFound(err)
	}
	apikit.WriteJSON(w, http.StatusOK, rows)
	return nil
}

type sieParams struct {
	journalParams
	Type string `query:"type" enum:"E,I" description:"E (default): export with balances; I: vouchers for import."`
}

func (h handlers) sie(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var errs validation.Errors
	for _, f := range []string{"from", "to"} {
		if _, err := time.Parse(time.DateOnly, q.Get(f)); err != nil {
			errs.Add(f, "is required, a date (YYYY-MM-DD)")
		}
	}
	kind := q.Get("type")
	if kind != "" && kind != "E" && kind != "I" {
		errs.Add("type", "must be E or I")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if _, err := h.env.Store.Organization(r.Context(), org); err != nil {
		return err
	}
	if _, err := GetChart(r.Context(), h.env.Store, org); err != nil {
		return notFound(err)
	}
	name := "SIE4.se"
	if kind == "I" {
		name = "SIE4.si"
	}
	w.Header().Set("Content-Type", apikit.MediaOctet)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	_, err = WriteSIE(r.Context(), h.env.Store, org, q.Get("from"), q.Get("to"), kind == "I", h.env.Now(), w)
	return err
}

func (h handlers) saft(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var errs validation.Errors
	for _, f := range []string{"from", "to"} {
		if _, err := time.Parse(time.DateOnly, q.Get(f)); err != nil {
			errs.Add(f, "is required, a date (YYYY-MM-DD)")
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	o, err := h.env.Store.Organization(r.Context(), org)
	if err != nil {
		return err
	}
	if _, err := GetChart(r.Context(), h.env.Store, org); err != nil {
		return notFound(err)
	}
	now := h.env.Now()
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": SAFTFileName(o.OrganizationNumber, now)}))
	_, err = WriteSAFT(r.Context(), h.env.Store, org, q.Get("from"), q.Get("to"), now, w)
	return err
}

// notFound turns a missing chart into the 404 of the organization's books.
func notFound(err error) error {
	if errors.Is(err, ErrNoChart) {
		return store.ErrNotFound
	}
	return err
}

func (h handlers) setChart(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	var in chartPut
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	if err := SetChart(r.Context(), h.env.Store, org, in.Chart, h.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) getChart(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	c, err := GetChart(r.Context(), h.env.Store, org)
	if err != nil {
		return notFound(err)
	}
	apikit.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h handlers) installExample(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	var in ExampleChartInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	c, ok := Example(in.Country)
	if !ok {
		return validation.Field("country", "must be NO or SE")
	}
	if err := SetChart(r.Context(), h.env.Store, org, c, h.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) recognize(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	var in RecognizeInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	if _, err := time.Parse(time.DateOnly, in.Through); err != nil {
		return validation.Field("through", "must be a date (YYYY-MM-DD)")
	}
	moved, err := Recognize(r.Context(), h.env.Store, org, in.Through, h.env.Now())
	if err != nil {
		return notFound(err)
	}
	apikit.WriteJSON(w, http.StatusOK, RecognizeResult{RecognizedMinor: moved})
	return nil
}

func (h handlers) setPeriod(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	month := r.PathValue("month")
	if t, err := time.Parse("2006-01", month); err != nil || t.Format("2006-01") != month {
		return validation.Field("month", "must be a month (YYYY-MM)")
	}
	var in PeriodInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	if _, err := GetChart(r.Context(), h.env.Store, org); err != nil {
		return notFound(err)
	}
	if err := ClosePeriod(r.Context(), h.env.Store, org, month, !in.Closed, h.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) reconcile(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	rc, err := Reconcile(r.Context(), h.env.Store, org)
	if err != nil {
		return notFound(err)
	}
	apikit.WriteJSON(w, http.StatusOK, ReconciliationView{ReceivableLedger: rc.ReceivableLedger, ReceivableDocuments: rc.ReceivableDocuments,
		VATLedger: rc.VATLedger, VATDocuments: rc.VATDocuments, NetLedger: rc.NetLedger, NetDocuments: rc.NetDocuments,
		Unposted: rc.Unposted, Differences: rc.Differences()})
	return nil
}

func (h handlers) journal(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var errs validation.Errors
	for _, f := range []string{"from", "to"} {
		if v := q.Get(f); v != "" {
			if _, err := time.Parse(time.DateOnly, v); err != nil {
				errs.Add(f, "must be a date (YYYY-MM-DD)")
			}
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if _, err := GetChart(r.Context(), h.env.Store, org); err != nil {
		return notFound(err)
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	return WriteCSV(r.Context(), h.env.Store, org, q.Get("from"), q.Get("to"), w)
}
