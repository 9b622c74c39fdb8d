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

// monthRow is one month of the MRR table.
type monthRow struct {
	reporting.Month
	Label string
	// ChurnRate is churned MRR / MRR at the month's start, SubscriberChurn
	// churned subscribers / subscribers at the start, as percentages with
	// one decimal ("" when nothing was there at the start).
	ChurnRate, SubscriberChurn string
}

type currencyMonths struct {
	Currency string
	Chart    chart
	Rows     []monthRow
}

type dashboardView struct {
	// Query is the search form's (empty on the dashboard).
	Query    string
	At       time.Time
	Months   []currencyMonths
	Packages chart
	Package  []reporting.PackageCount
	Ages     chart
	Age      []ageRow
	Payments []reporting.ProviderMonth
	PayChart chart
	Funnel   chart
	Window   time.Time
}

type ageRow struct {
	reporting.AgeBucket
	Label, Href string
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
	lang := c.language(w, r)
	tx := texts[lang]
	if table := r.URL.Query().Get("csv"); table != "" {
		c.dashboardCSV(w, r, s, d, table, tx)
		return
	}
	c.render(w, r, s, http.StatusOK, "home", page{Data: c.dashboardView(d, tx)})
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

func (c *Console) dashboardView(d reporting.Dashboard, tx map[string]string) dashboardView {
	v := dashboardView{At: d.At, Window: d.WindowStart, Package: d.Packages, Payments: d.Payments}
	for _, m := range d.Months {
		if len(v.Months) == 0 || v.Months[len(v.Months)-1].Currency != m.Currency {
			v.Months = append(v.Months, currencyMonths{Currency: m.Currency})
		}
		cm := &v.Months[len(v.Months)-1]
		cm.Rows = append(cm.Rows, monthRow{Month: m, Label: c.monthLabel(m.Start, tx),
			ChurnRate: percent(m.Churn, m.MRRStart), SubscriberChurn: percent(m.ChurnedSubscribers, m.SubscribersStart)})
	}
	for i := range v.Months {
		cm := &v.Months[i]
		var rows []bar
		for _, m := range cm.Rows {
			rows = append(rows, bar{Label: m.Label, Value: m.MRREnd, Text: amount(m.MRREnd, m.Currency)})
		}
		cm.Chart = newChart("mrr-"+cm.Currency, fmt.Sprintf(tx["mrrChartTitle"], cm.Currency), tx["mrrChartDesc"], rows)
	}
	var rows []bar
	for _, p := range d.Packages {
		rows = append(rows, bar{Label: p.Package + " (" + p.Currency + ")", Value: p.Count, Text: strconv.FormatInt(p.Count, 10)})
	}
	v.Packages = newChart("packages", tx["packagesTitle"], tx["packagesDesc"], rows)
	rows = nil
	for _, a := range d.Ages {
		label := ageLabel(a.From, a.To, tx)
		v.Age = append(v.Age, ageRow{AgeBucket: a, Label: label, Href: ageHref(a.From, a.To, "")})
		rows = append(rows, bar{Label: label + " (" + a.Currency + ")", Value: a.Amount,
			Text: fmt.Sprintf("%s · %d", amount(a.Amount, a.Currency), a.Count)})
	}
	v.Ages = newChart("ages", tx["agesTitle"], tx["agesDesc"], rows)
	rows = nil
	type pk struct{ provider, currency string }
	var order []pk
	sums := map[pk]int64{}
	for _, p := range d.Payments {
		k := pk{p.Provider, p.Currency}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
		}
		sums[k] += p.Amount
	}
	for _, k := range order {
		rows = append(rows, bar{Label: k.provider, Value: sums[k], Text: amount(sums[k], k.currency)})
	}
	v.PayChart = newChart("payments", tx["paymentsTitle"], tx["paymentsDesc"], rows)
	f := d.Funnel
	rows = []bar{{Label: tx["funnel.overdue"], Value: f.Overdue, Text: strconv.FormatInt(f.Overdue, 10), Href: ageHref(1, -1, "")}}
	for i, n := range f.Reminders {
		rows = append(rows, bar{Label: fmt.Sprintf(tx["funnel.reminder"], i+1), Value: n, Text: strconv.FormatInt(n, 10)})
	}
	rows = append(rows, bar{Label: tx["funnel.paid"], Value: f.PaidAfterReminder, Text: strconv.FormatInt(f.PaidAfterReminder, 10)},
		bar{Label: tx["funnel.stopped"], Value: f.PaymentStopped, Text: strconv.FormatInt(f.PaymentStopped, 10)})
	v.Funnel = newChart("funnel", tx["funnelTitle"], tx["funnelDesc"], rows)
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

// invoiceListLimit bounds the outstanding-invoice list: the page shows
// this many, the CSV ten times as many.
const invoiceListLimit = 1000

type invoiceListView struct {
	Label      string
	Rows       []reporting.Outstanding
	More       bool
	CSV        string
	From, To   int
	HasTo      bool
	TotalCount int
}

// invoices lists the invoices still to be paid by days overdue
// (overdueFrom..overdueTo; no overdueTo: no upper bound; 0..0 not due
// yet): the rows behind the dashboard's outstanding-by-age chart and its
// funnel, as a page or (format=csv) a download.
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
	asCSV := q.Get("format") == "csv"
	if bad || (q.Get("format") != "" && !asCSV) {
		c.fail(w, r, s, http.StatusBadRequest, "badFilter")
		return
	}
	now, err := c.app.Now(r.Context())
	if err != nil {
		c.fail(w, r, s, http.StatusInternalServerError, "failed")
		return
	}
	limit := invoiceListLimit
	if asCSV {
		limit *= 10
	}
	rows, err := c.app.OutstandingInvoices(r.Context(), now, from, to, limit+1)
	if err != nil {
		c.log.ErrorContext(r.Context(), "console invoices", "err", err)
		c.fail(w, r, s, http.StatusInternalServerError, "failed")
		return
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	tx := texts[c.language(w, r)]
	if asCSV {
		out := [][]string{{tx["invoiceNumber"], tx["name"], tx["due"], tx["daysOverdue"], tx["currency"], tx["outstanding"], tx["reminders"], tx["id"]}}
		for _, o := range rows {
			out = append(out, []string{strconv.FormatInt(o.InvoiceNumber, 10), o.Subscriber, o.DueAt.In(c.zone).Format("2006-01-02"),
				strconv.Itoa(daysOverdue(o.DueAt, now)), o.Currency, csvAmount(o.Amount, o.Currency), strconv.FormatInt(o.Reminders, 10), o.InvoiceID})
		}
		writeCSV(w, "kadens-invoices-"+now.In(c.zone).Format("2006-01-02"), out)
		return
	}
	c.render(w, r, s, http.StatusOK, "invoices", page{Data: invoiceListView{Label: ageLabel(from, to, tx), Rows: rows, More: more,
		CSV: ageHref(from, to, "csv"), From: from, To: to, HasTo: to >= 0}})
}

// daysOverdue is 0 until due, then the days since due rounded up.
func daysOverdue(due, now time.Time) int {
	if !due.Before(now) {
		return 0
	}
	return int((now.Sub(due) + 24*time.Hour - 1) / (24 * time.Hour))
}
