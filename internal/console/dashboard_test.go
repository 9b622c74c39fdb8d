package console

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestDashboardPage: any staff role sees the dashboard under the search
// form, with figures from App.Dashboard formatted the Nordic way; each
// CSV download is UTF-8 with a BOM, semicolon-separated, quoted where
// needed and with decimal commas; the list behind an age bucket holds the
// bucket's invoices and amount; bad list filters are a 400 page; the
// other tenant sees none of it.
func TestDashboardPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := tenancy.With(context.Background(), f.tenant.ID)
		now, err := f.app.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d, err := f.app.Dashboard(ctx, now, f.console.zone)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Months) == 0 || len(d.Packages) == 0 {
			t.Fatalf("the demo tenant's dashboard has no MRR or packages: %+v", d)
		}
		last := d.Months[len(d.Months)-1]
		for _, r := range []staff.Role{staff.RoleSupport, staff.RoleFinance, staff.RoleAdmin} {
			a := f.as(t, r).get("/console/?lang=nb")
			if a.status != http.StatusOK || !strings.Contains(a.body, `id="q"`) || strings.Count(a.body, `role="img"`) < 4 ||
				!strings.Contains(a.body, amount(last.MRREnd, last.Currency)) || !strings.Contains(a.body, "Månedlig gjentakende inntekt") {
				t.Errorf("dashboard as %s: %d, want the search form, the charts and the MRR %s: %.2000s", r, a.status, amount(last.MRREnd, last.Currency), a.body)
			}
		}
		b := f.as(t, staff.RoleSupport)
		for _, table := range []string{"mrr", "packages", "ages", "payments", "funnel"} {
			a := b.get("/console/?csv=" + table + "&lang=nb")
			if a.status != http.StatusOK || a.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
				!strings.HasPrefix(a.header.Get("Content-Disposition"), `attachment; filename="kadens-`+table) || !strings.HasPrefix(a.body, "\ufeff") {
				t.Errorf("csv %s: %d %v %.200q", table, a.status, a.header, a.body)
				continue
			}
			r := csv.NewReader(strings.NewReader(strings.TrimPrefix(a.body, "\ufeff")))
			r.Comma = ';'
			rows, err := r.ReadAll()
			if err != nil || len(rows) < 1 || (table != "payments" && len(rows) < 2) {
				t.Errorf("csv %s does not read back: %v %q", table, err, a.body)
			}
			if table == "mrr" && len(rows) == len(d.Months)+1 {
				lastRow := rows[len(rows)-1]
				if lastRow[8] != csvAmount(last.MRREnd, last.Currency) || !strings.Contains(lastRow[8], ",") {
					t.Errorf("csv mrr last row %q, want MRR %s with a decimal comma", lastRow, csvAmount(last.MRREnd, last.Currency))
				}
			}
		}
		if a := b.get("/console/?csv=nope"); a.status != http.StatusBadRequest {
			t.Errorf("an unknown table: %d, want 400", a.status)
		}
		for _, bk := range d.Ages {
			path := ageHref(bk.From, bk.To, "csv")
			a := b.get(path)
			r := csv.NewReader(strings.NewReader(strings.TrimPrefix(a.body, "\ufeff")))
			r.Comma = ';'
			rows, err := r.ReadAll()
			if a.status != http.StatusOK || err != nil || int64(len(rows)-1) != bk.Count {
				t.Errorf("%s: %d, %d rows (%v), want %d", path, a.status, len(rows)-1, err, bk.Count)
				continue
			}
			var sum int64
			for _, row := range rows[1:] {
				minor, err := strconv.ParseInt(strings.Replace(row[5], ",", "", 1), 10, 64)
				if err != nil {
					t.Errorf("%s: amount %q: %v", path, row[5], err)
				}
				sum += minor
			}
			if sum != bk.Amount {
				t.Errorf("%s sums to %d, the chart says %d", path, sum, bk.Amount)
			}
			if page := b.get(ageHref(bk.From, bk.To, "")); page.status != http.StatusOK || strings.Count(page.body, `href="/console/invoice/`) != int(bk.Count) {
				t.Errorf("the list page of %d..%d: %d, want %d invoices", bk.From, bk.To, page.status, bk.Count)
			}
		}
		// The lists behind the MRR and package charts and the payments.
		for _, path := range []string{"/console/subscriptions", "/console/subscriptions?package=" + url.QueryEscape(d.Packages[0].Package),
			"/console/subscriptions?month=" + d.Months[0].Start.In(f.console.zone).Format("2006-01"), "/console/payments"} {
			if a := b.get(path); a.status != http.StatusOK || !strings.Contains(a.body, `format=csv`) {
				t.Errorf("%s: %d %.300s", path, a.status, a.body)
			}
		}
		a := b.get("/console/subscriptions?format=csv")
		cr := csv.NewReader(strings.NewReader(strings.TrimPrefix(a.body, "\ufeff")))
		cr.Comma = ';'
		rows, err := cr.ReadAll()
		var sum int64
		for _, row := range rows[1:] {
			minor, _ := strconv.ParseInt(strings.ReplaceAll(row[5], ",", ""), 10, 64)
			sum += minor
		}
		if err != nil || sum != last.MRREnd {
			t.Errorf("the active subscriptions' CSV sums to %d (%v), MRR now is %d", sum, err, last.MRREnd)
		}
		for _, q := range []string{"/console/subscriptions?month=2027-13", "/console/payments?month=x", "/console/payments?format=xlsx"} {
			if a := b.get(q); a.status != http.StatusBadRequest {
				t.Errorf("%s: %d, want 400", q, a.status)
			}
		}
		for _, q := range []string{"overdueFrom=x", "overdueFrom=5&overdueTo=2", "overdueFrom=-1", "format=xlsx"} {
			if a := b.get("/console/invoices?" + q); a.status != http.StatusBadRequest {
				t.Errorf("invoices?%s: %d, want 400", q, a.status)
			}
		}
		// A field with the separator, a quote or a line break is quoted.
		w := httptest.NewRecorder()
		writeCSV(w, "x", [][]string{{`Nordmann; Kari "K"`, "1 234,50"}})
		if got := w.Body.String(); got != "\ufeff\"Nordmann; Kari \"\"K\"\"\";\"1 234,50\"\r\n" && got != "\ufeff\"Nordmann; Kari \"\"K\"\"\";1 234,50\r\n" {
			t.Errorf("quoting: %q", got)
		}
		if got := csvAmount(-123450, "NOK"); got != "-1234,50" {
			t.Errorf("csvAmount: %q", got)
		}
	})
}
