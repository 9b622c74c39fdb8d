package console

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/reporting"
	"github.com/kadens/kadens/internal/webui"
)

// The dashboard (docs/CONSOLE.md, "The dashboard"): the figures come from
// App.Dashboard (computed in SQL by internal/reporting); this file turns
// them into bar charts drawn as inline SVG on the server, the tables
// beside them and their CSV downloads.

// chart is one horizontal bar chart: a row per bar, a label above it, the
// bar scaled to the largest value and the value as text after it. Drawn
// in a viewBox that scales to the page's width (no overflow on a phone).
type chart struct {
	ID, Title, Desc string
	Rows            []bar
	Height          int
}

type bar struct {
	Label, Text string
	Value       int64
	// Y is the row's top, W the bar's width in the viewBox (0..chartBarMax).
	Y, W int
	// Href is the list of the rows behind the bar ("" for none).
	Href string
}

const (
	chartWidth  = 320
	chartBarMax = 200
	chartRow    = 38
)

func newChart(id, title, desc string, rows []bar) chart {
	var top int64
	for _, r := range rows {
		top = max(top, r.Value)
	}
	for i := range rows {
		rows[i].Y = i * chartRow
		if top > 0 && rows[i].Value > 0 {
			rows[i].W = max(1, int(rows[i].Value*chartBarMax/top))
		}
	}
	return chart{ID: id, Title: title, Desc: desc, Rows: rows, Height: len(rows)*chartRow + 4}
}

// section is one figure of the dashboard: its chart, the same numbers
// as a table (folded into a <details> when long), and links to the rows
// behind it and to its CSV.
type section struct {
	ID, Title, Empty string
	Chart            chart
	Head             []cell
	Rows             [][]cell
	// Folded puts the table in a <details> with Summary.
	Folded  bool
	Summary string
	Links   []cell
}

type dashboardView struct {
	// Query is the search form's (empty on the dashboard).
	Query    string
	At       time.Time
	Sections []section
}

func (c *Console) home(w http.ResponseWriter, r *http.Request, s *session) {
	now, err := c.app.Now(r.Context())
	if err != nil {
		c.log.ErrorContext(r.Context(), "console dashboard time", "err", err)
		c.fail(w, r, s, http.StatusInternalServerError, "failed")
		return
	}
	d, err := c.app.Dashboard(r.Context(), now, c.zone)
	if err != nil {
		c.log.ErrorContext(r.Context(), "console dashboard", "err", err)
		c.fail(w, r, s, http.StatusInternalServerError, "failed")
		return
	}
	lang := c.languages().Choose(w, r)
	tx := texts[lang]
	if table := r.URL.Query().Get("csv"); table != "" {
		c.dashboardCSV(w, r, s, d, table, tx)
		return
	}
	c.render(w, r, s, http.StatusOK, "home", page{Page: webui.Page{Data: c.dashboardView(d, tx)}})
}

func (c *Console) monthLabel(t time.Time, tx map[string]string) string {
	l := t.In(c.zone)
	return tx[fmt.Sprintf("month.%d", int(l.Month()))] + " " + strconv.Itoa(l.Year())
}

func amount(minor int64, currency string) string {
	cur, ok := money.LookupCurrency(currency)
	digits := 2
	if ok {
		digits = cur.Digits
	}
	return formatMoney(catalog.Amount{Minor: minor, Digits: digits}, currency)
}

// percent is n/d in per cent with one decimal and a decimal comma ("" for
// d = 0).
func percent(n, d int64) string {
	if d == 0 {
		return ""
	}
	tenths := (n*1000 + d/2) / d
	return fmt.Sprintf("%d,%d\u00a0%%", tenths/10, tenths%10)
}

func ageHref(from, to int, format string) string {
	q := url.Values{"overdueFrom": {strconv.Itoa(from)}}
	if to >= 0 {
		q.Set("overdueTo", strconv.Itoa(to))
	}
	if format != "" {
		q.Set("format", format)
	}
	return Prefix + "/invoices?" + q.Encode()
}

func ageLabel(from, to int, tx map[string]string) string {
	switch {
	case to == 0:
		return tx["age.notDue"]
	case to < 0:
		return fmt.Sprintf(tx["age.over"], from-1)
	}
	return fmt.Sprintf(tx["age.range"], from, to)
}

// heads are the table headers of text keys; a "#" prefix marks a number.
func heads(tx map[string]string, keys ...string) []cell {
	out := make([]cell, len(keys))
	for i, k := range keys {
		out[i] = cell{Text: tx[strings.TrimPrefix(k, "#")], Num: strings.HasPrefix(k, "#")}
	}
	return out
}

func num(s string) cell { return cell{Text: s, Num: true} }

func count(n int64) cell { return num(strconv.FormatInt(n, 10)) }

func (c *Console) dashboardView(d reporting.Dashboard, tx map[string]string) dashboardView {
	v := dashboardView{At: d.At}
	csvLink := func(table string) cell { return cell{Text: tx["downloadCSV"], Href: Prefix + "/?csv=" + table} }
	// MRR, one section per currency.
	var mrr *section
	for _, m := range d.Months {
		if mrr == nil || mrr.ID != "mrr-"+m.Currency {
			v.Sections = append(v.Sections, section{ID: "mrr-" + m.Currency, Title: fmt.Sprintf(tx["mrrChartTitle"], m.Currency), Folded: true,
				Summary: tx["mrrTable"], Head: heads(tx, "month", "#mrrStart", "#mov.new", "#mov.expansion", "#mov.reactivation", "#mov.contraction",
					"#mov.churn", "#mrrEnd", "#churnRate", "#subscriberChurn"),
				Links: []cell{{Text: tx["rowsMRR"], Href: Prefix + "/subscriptions"}, {Text: tx["downloadMRR"], Href: Prefix + "/?csv=mrr"}}})
			mrr = &v.Sections[len(v.Sections)-1]
			mrr.Chart.ID = mrr.ID
		}
		label, cur := c.monthLabel(m.Start, tx), m.Currency
		mrr.Chart.Rows = append(mrr.Chart.Rows, bar{Label: label, Value: m.MRREnd, Text: amount(m.MRREnd, cur)})
		mrr.Rows = append(mrr.Rows, []cell{{Text: label, Href: Prefix + "/subscriptions?month=" + m.Start.In(c.zone).Format("2006-01")},
			num(amount(m.MRRStart, cur)), num(amount(m.New, cur)), num(amount(m.Expansion, cur)), num(amount(m.Reactivation, cur)),
			num(amount(m.Contraction, cur)), num(amount(m.Churn, cur)), num(amount(m.MRREnd, cur)), num(percent(m.Churn, m.MRRStart)),
			num(fmt.Sprintf("%s (%d/%d)", percent(m.ChurnedSubscribers, m.SubscribersStart), m.ChurnedSubscribers, m.SubscribersStart))})
	}
	for i := range v.Sections {
		sc := &v.Sections[i]
		sc.Chart = newChart(sc.ID, sc.Title, tx["mrrChartDesc"], sc.Chart.Rows)
	}
	if len(v.Sections) == 0 {
		v.Sections = append(v.Sections, section{ID: "mrr", Title: tx["mrr"], Empty: tx["noMRR"]})
	}

	pk := section{ID: "packages", Title: tx["packagesTitle"], Empty: tx["noSubscriptions"], Folded: true, Summary: tx["asTable"],
		Head: heads(tx, "package", "#activeCount", "#mrr"), Links: []cell{{Text: tx["activeNow"], Href: Prefix + "/subscriptions"}, csvLink("packages")}}
	var bars []bar
	for _, p := range d.Packages {
		bars = append(bars, bar{Label: p.Package + " (" + p.Currency + ")", Value: p.Count, Text: strconv.FormatInt(p.Count, 10)})
		pk.Rows = append(pk.Rows, []cell{{Text: p.Package, Href: Prefix + "/subscriptions?package=" + url.QueryEscape(p.Package)}, count(p.Count),
			num(amount(p.MRR, p.Currency))})
	}
	pk.Chart = newChart(pk.ID, pk.Title, tx["packagesDesc"], bars)

	ages := section{ID: "ages", Title: tx["agesTitle"], Empty: tx["nothingOutstanding"], Summary: tx["asTable"], Head: heads(tx, "age", "#count", "#amount"),
		Links: []cell{csvLink("ages")}}
	bars = nil
	for _, a := range d.Ages {
		label := ageLabel(a.From, a.To, tx)
		bars = append(bars, bar{Label: label + " (" + a.Currency + ")", Value: a.Amount, Text: fmt.Sprintf("%s · %d", amount(a.Amount, a.Currency), a.Count)})
		ages.Rows = append(ages.Rows, []cell{{Text: label, Href: ageHref(a.From, a.To, "")}, count(a.Count), num(amount(a.Amount, a.Currency))})
	}
	ages.Chart = newChart(ages.ID, ages.Title, tx["agesDesc"], bars)

	pay := section{ID: "payments", Title: tx["paymentsTitle"], Empty: tx["noPayments"], Folded: true, Summary: tx["perMonth"],
		Head: heads(tx, "month", "provider", "#count", "#amount"), Links: []cell{{Text: tx["rowsPayments"], Href: Prefix + "/payments"}, csvLink("payments")}}
	type key struct{ provider, currency string }
	var order []key
	sums := map[key]int64{}
	for _, p := range d.Payments {
		k := key{p.Provider, p.Currency}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
		}
		sums[k] += p.Amount
		month := p.Start.In(c.zone).Format("2006-01")
		pay.Rows = append(pay.Rows, []cell{{Text: c.monthLabel(p.Start, tx)},
			{Text: p.Provider, Href: Prefix + "/payments?" + url.Values{"provider": {p.Provider}, "month": {month}}.Encode()}, count(p.Count),
			num(amount(p.Amount, p.Currency))})
	}
	bars = nil
	for _, k := range order {
		bars = append(bars, bar{Label: k.provider, Value: sums[k], Text: amount(sums[k], k.currency)})
	}
	pay.Chart = newChart(pay.ID, pay.Title, tx["paymentsDesc"], bars)

	f := d.Funnel
	bars = []bar{{Label: tx["funnel.overdue"], Value: f.Overdue, Href: ageHref(1, -1, "")}}
	for i, n := range f.Reminders {
		bars = append(bars, bar{Label: fmt.Sprintf(tx["funnel.reminder"], i+1), Value: n})
	}
	bars = append(bars, bar{Label: tx["funnel.paid"], Value: f.PaidAfterReminder}, bar{Label: tx["funnel.stopped"], Value: f.PaymentStopped})
	fun := section{ID: "funnel", Title: tx["funnelTitle"], Summary: tx["asTable"], Head: heads(tx, "step", "#count"), Links: []cell{csvLink("funnel")}}
	for i := range bars {
		bars[i].Text = strconv.FormatInt(bars[i].Value, 10)
		fun.Rows = append(fun.Rows, []cell{{Text: bars[i].Label, Href: bars[i].Href}, count(bars[i].Value)})
	}
	fun.Chart = newChart(fun.ID, fun.Title, tx["funnelDesc"], bars)
	v.Sections = append(v.Sections, pk, ages, pay, fun)
	return v
}

// csvAmount writes minor units the Nordic spreadsheet way: a decimal
// comma, no thousands separator, a minus sign for negative amounts
// ("-1234,50"), so Excel and LibreOffice in a Nordic locale read a number.
func csvAmount(minor int64, currency string) string {
	cur, ok := money.LookupCurrency(currency)
	digits := 2
	if ok {
		digits = cur.Digits
	}
	s := catalog.Amount{Minor: minor, Digits: digits}.Decimal().StringFixed(int32(digits))
	return strings.Replace(s, ".", ",", 1)
}

// writeCSV answers rows as a CSV download: UTF-8 with a byte order mark
// (Excel reads UTF-8 only with it), semicolons between fields (the list
// separator of Nordic locales, where the comma is the decimal sign),
// CRLF line ends, fields quoted when they need it (encoding/csv).
func writeCSV(w http.ResponseWriter, name string, rows [][]string) {
	var buf bytes.Buffer
	buf.WriteString("\ufeff")
	cw := csv.NewWriter(&buf)
	cw.Comma, cw.UseCRLF = ';', true
	_ = cw.WriteAll(rows)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.csv"`)
	_, _ = w.Write(buf.Bytes())
}

func (c *Console) dashboardCSV(w http.ResponseWriter, r *http.Request, s *session, d reporting.Dashboard, table string, tx map[string]string) {
	day := func(t time.Time) string { return t.In(c.zone).Format("2006-01-02") }
	var rows [][]string
	switch table {
	case "mrr":
		rows = append(rows, []string{tx["month"], tx["currency"], tx["mrrStart"], tx["mov.new"], tx["mov.expansion"], tx["mov.reactivation"],
			tx["mov.contraction"], tx["mov.churn"], tx["mrrEnd"], tx["subscribersStart"], tx["churnedSubscribers"]})
		for _, m := range d.Months {
			rows = append(rows, []string{m.Start.In(c.zone).Format("2006-01"), m.Currency, csvAmount(m.MRRStart, m.Currency), csvAmount(m.New, m.Currency),
				csvAmount(m.Expansion, m.Currency), csvAmount(m.Reactivation, m.Currency), csvAmount(m.Contraction, m.Currency),
				csvAmount(m.Churn, m.Currency), csvAmount(m.MRREnd, m.Currency), strconv.FormatInt(m.SubscribersStart, 10),
				strconv.FormatInt(m.ChurnedSubscribers, 10)})
		}
	case "packages":
		rows = append(rows, []string{tx["package"], tx["currency"], tx["activeCount"], tx["mrr"]})
		for _, p := range d.Packages {
			rows = append(rows, []string{p.Package, p.Currency, strconv.FormatInt(p.Count, 10), csvAmount(p.MRR, p.Currency)})
		}
	case "ages":
		rows = append(rows, []string{tx["age"], tx["currency"], tx["count"], tx["amount"]})
		for _, a := range d.Ages {
			rows = append(rows, []string{ageLabel(a.From, a.To, tx), a.Currency, strconv.FormatInt(a.Count, 10), csvAmount(a.Amount, a.Currency)})
		}
	case "payments":
		rows = append(rows, []string{tx["month"], tx["provider"], tx["currency"], tx["count"], tx["amount"]})
		for _, p := range d.Payments {
			rows = append(rows, []string{p.Start.In(c.zone).Format("2006-01"), p.Provider, p.Currency, strconv.FormatInt(p.Count, 10), csvAmount(p.Amount, p.Currency)})
		}
	case "funnel":
		rows = append(rows, []string{tx["step"], tx["count"]}, []string{tx["funnel.overdue"], strconv.FormatInt(d.Funnel.Overdue, 10)})
		for i, n := range d.Funnel.Reminders {
			rows = append(rows, []string{fmt.Sprintf(tx["funnel.reminder"], i+1), strconv.FormatInt(n, 10)})
		}
		rows = append(rows, []string{tx["funnel.paid"], strconv.FormatInt(d.Funnel.PaidAfterReminder, 10)},
			[]string{tx["funnel.stopped"], strconv.FormatInt(d.Funnel.PaymentStopped, 10)})
	default:
		c.fail(w, r, s, http.StatusBadRequest, "badTable")
		return
	}
	writeCSV(w, "kadens-"+table+"-"+day(d.At), rows)
}

// listLimit bounds a list behind a chart: the page shows this many, the
// CSV ten times as many.
const listLimit = 1000

// cell is one cell of a list page: text, and the page it links to.
type cell struct {
	Text, Href string
	Num        bool
}

// listView is a list page behind a chart: a title, a hint, the columns,
// the rows, whether there were more, and the CSV of the same rows.
type listView struct {
	Title, Hint, CSV, Empty string
	Head                    []cell
	Rows                    [][]cell
	More                    bool
}

// list is one list behind a chart: its columns, how to read it and how
// each row shows on the page and in the CSV.
type list[T any] struct {
	title, hint, empty, file string
	head                     []string // text keys; a "#" prefix marks a number column
	load                     func(limit int) ([]T, error)
	cells                    func(T) []cell
	csv                      func(T) []string
}

// serveList answers l as its page, or with format=csv as a download of
// the same rows (more of them). Any other format is a 400 page.
func serveList[T any](c *Console, w http.ResponseWriter, r *http.Request, s *session, l list[T]) {
	format := r.URL.Query().Get("format")
	if format != "" && format != "csv" {
		c.fail(w, r, s, http.StatusBadRequest, "badFilter")
		return
	}
	limit := listLimit
	if format == "csv" {
		limit *= 10
	}
	rows, err := l.load(limit + 1)
	if err != nil {
		c.log.ErrorContext(r.Context(), "console list", "list", l.file, "err", err)
		c.fail(w, r, s, http.StatusInternalServerError, "failed")
		return
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	tx := texts[c.languages().Choose(w, r)]
	var head []cell
	var csvHead []string
	for _, k := range l.head {
		num := strings.HasPrefix(k, "#")
		k = strings.TrimPrefix(k, "#")
		head = append(head, cell{Text: tx[k], Num: num})
		csvHead = append(csvHead, tx[k])
	}
	if format == "csv" {
		out := [][]string{csvHead}
		for _, row := range rows {
			out = append(out, l.csv(row))
		}
		writeCSV(w, "kadens-"+l.file, out)
		return
	}
	v := listView{Title: l.title, Hint: l.hint, Empty: tx[l.empty], Head: head, More: more}
	for _, row := range rows {
		v.Rows = append(v.Rows, l.cells(row))
	}
	q := r.URL.Query()
	q.Del("lang")
	q.Set("format", "csv")
	v.CSV = r.URL.Path + "?" + q.Encode()
	c.render(w, r, s, http.StatusOK, "list", page{Page: webui.Page{Title: l.title, Data: v}})
}

// invoices lists the invoices still to be paid by days overdue
// (overdueFrom..overdueTo; no overdueTo: no upper bound; 0..0 not due
// yet): the rows behind the dashboard's outstanding-by-age chart and its
// funnel.
func (c *Console) invoices(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	from, to := 0, -1
	bad := false
	if v := q.Get("overdueFrom"); v != "" {
		n, err := strconv.Atoi(v)
		bad = bad || err != nil || n < 0 || n > 100000
		from = n
	}
	if v := q.Get("overdueTo"); v != "" {
		n, err := strconv.Atoi(v)
		bad = bad || err != nil || n < from || n > 100000
		to = n
	}
	now, ok := c.listTime(w, r, s, bad)
	if !ok {
		return
	}
	tx := texts[c.languages().Choose(w, r)]
	serveList(c, w, r, s, list[reporting.Outstanding]{
		title: tx["invoicesOutstanding"] + ": " + ageLabel(from, to, tx), empty: "noOutstanding", file: "invoices-" + now.In(c.zone).Format("2006-01-02"),
		head: []string{"invoiceNumber", "name", "due", "#daysOverdue", "currency", "#outstanding", "#reminders"},
		load: func(limit int) ([]reporting.Outstanding, error) {
			return c.app.OutstandingInvoices(r.Context(), now, from, to, limit)
		},
		cells: func(o reporting.Outstanding) []cell {
			return []cell{{Text: strconv.FormatInt(o.InvoiceNumber, 10), Href: Prefix + "/invoice/" + o.InvoiceID},
				{Text: o.Subscriber, Href: Prefix + "/subscriber/" + o.SubscriberID}, {Text: c.day(o.DueAt)},
				{Text: strconv.Itoa(daysOverdue(o.DueAt, now)), Num: true}, {Text: o.Currency}, {Text: amount(o.Amount, o.Currency), Num: true},
				{Text: strconv.FormatInt(o.Reminders, 10), Num: true}}
		},
		csv: func(o reporting.Outstanding) []string {
			return []string{strconv.FormatInt(o.InvoiceNumber, 10), o.Subscriber, c.day(o.DueAt), strconv.Itoa(daysOverdue(o.DueAt, now)),
				o.Currency, csvAmount(o.Amount, o.Currency), strconv.FormatInt(o.Reminders, 10)}
		},
	})
}

// listTime is the tenant's time for a list, or false when the request's
// filters were bad (a 400 page) or the time could not be read (a 500).
func (c *Console) listTime(w http.ResponseWriter, r *http.Request, s *session, bad bool) (time.Time, bool) {
	if bad {
		c.fail(w, r, s, http.StatusBadRequest, "badFilter")
		return time.Time{}, false
	}
	now, err := c.app.Now(r.Context())
	if err != nil {
		c.log.ErrorContext(r.Context(), "console list time", "err", err)
		c.fail(w, r, s, http.StatusInternalServerError, "failed")
		return time.Time{}, false
	}
	return now, true
}

func (c *Console) day(t time.Time) string { return t.In(c.zone).Format("2006-01-02") }

// daysOverdue is 0 until due, then the days since due rounded up.
func daysOverdue(due, now time.Time) int {
	if !due.Before(now) {
		return 0
	}
	return int((now.Sub(due) + 24*time.Hour - 1) / (24 * time.Hour))
}

// monthAnd reads a list's month=YYYY-MM (zero times when none) and the
// filter named key (at most 200 bytes), with the tenant's time; false
// when the page has answered (a 400 for a bad filter).
func (c *Console) monthAnd(w http.ResponseWriter, r *http.Request, s *session, key string) (from, until, now time.Time, value string, ok bool) {
	q := r.URL.Query()
	good := true
	if m := q.Get("month"); m != "" {
		from, until, good = c.monthParam(m)
	}
	value = q.Get(key)
	now, ok = c.listTime(w, r, s, !good || len(value) > 200)
	return from, until, now, value, ok
}

// monthParam reads month=YYYY-MM: the month's first instant and the
// next month's, in the console's zone; ok false when it is malformed.
func (c *Console) monthParam(v string) (from, until time.Time, ok bool) {
	t, err := time.ParseInLocation("2006-01", v, c.zone)
	if err != nil {
		return time.Time{}, time.Time{}, false
	}
	return t.UTC(), t.AddDate(0, 1, 0).UTC(), true
}

// subscriptionsList lists the periods active at an instant with their
// MRR: now, or the end of month=YYYY-MM (now for the current month), of
// package= or all: the rows behind the MRR chart (a month) and the
// package chart (a package).
func (c *Console) subscriptionsList(w http.ResponseWriter, r *http.Request, s *session) {
	_, until, now, pkg, ok := c.monthAnd(w, r, s, "package")
	if !ok {
		return
	}
	tx := texts[c.languages().Choose(w, r)]
	at, title := now, tx["activeNow"]
	if !until.IsZero() {
		if until.Before(now) {
			at = until
		}
		title = fmt.Sprintf(tx["activeAtEnd"], c.monthLabel(until.AddDate(0, 0, -1), tx))
	}
	if pkg != "" {
		title += ": " + pkg
	}
	serveList(c, w, r, s, list[reporting.ActivePeriod]{
		title: title, hint: tx["activeHint"] + " " + at.In(c.zone).Format("2006-01-02 15:04") + ".", empty: "noSubscriptions",
		file: "subscriptions-" + c.day(at), head: []string{"name", "package", "periodStart", "periodEnd", "currency", "#mrr"},
		load: func(limit int) ([]reporting.ActivePeriod, error) {
			return c.app.ActiveSubscriptions(r.Context(), at, pkg, limit)
		},
		cells: func(p reporting.ActivePeriod) []cell {
			return []cell{{Text: p.Subscriber, Href: Prefix + "/subscriber/" + p.SubscriberID}, {Text: p.Package, Href: Prefix + "/subscription/" + p.SubscriptionID},
				{Text: c.day(p.PeriodStart)}, {Text: c.day(p.PeriodEnd)}, {Text: p.Currency}, {Text: amount(p.MRR, p.Currency), Num: true}}
		},
		csv: func(p reporting.ActivePeriod) []string {
			return []string{p.Subscriber, p.Package, c.day(p.PeriodStart), c.day(p.PeriodEnd), p.Currency, csvAmount(p.MRR, p.Currency)}
		},
	})
}

// paymentsList lists the succeeded payments of month=YYYY-MM (or the
// dashboard's 12 months), of provider= or all: the rows behind the
// payments chart.
func (c *Console) paymentsList(w http.ResponseWriter, r *http.Request, s *session) {
	from, until, now, provider, ok := c.monthAnd(w, r, s, "provider")
	if !ok {
		return
	}
	tx := texts[c.languages().Choose(w, r)]
	title := tx["paymentsTitle"]
	if from.IsZero() {
		from, until = reporting.Points(now, c.zone)[0], now
	} else {
		title = tx["payments"] + " " + c.monthLabel(from, tx)
	}
	if provider != "" {
		title += ": " + provider
	}
	stamp := func(t time.Time) string { return t.In(c.zone).Format("2006-01-02 15:04") }
	serveList(c, w, r, s, list[reporting.PaymentRow]{
		title: title, empty: "noPayments", file: "payments-" + from.In(c.zone).Format("2006-01"),
		head: []string{"paidAt", "invoiceNumber", "name", "provider", "currency", "#amount"},
		load: func(limit int) ([]reporting.PaymentRow, error) {
			return c.app.SucceededPayments(r.Context(), from, until, provider, limit)
		},
		cells: func(p reporting.PaymentRow) []cell {
			return []cell{{Text: stamp(p.PaidAt)}, {Text: strconv.FormatInt(p.InvoiceNumber, 10), Href: Prefix + "/invoice/" + p.InvoiceID},
				{Text: p.Subscriber, Href: Prefix + "/subscriber/" + p.SubscriberID}, {Text: p.Provider}, {Text: p.Currency}, {Text: amount(p.Amount, p.Currency), Num: true}}
		},
		csv: func(p reporting.PaymentRow) []string {
			return []string{stamp(p.PaidAt), strconv.FormatInt(p.InvoiceNumber, 10), p.Subscriber, p.Provider, p.Currency, csvAmount(p.Amount, p.Currency)}
		},
	})
}
