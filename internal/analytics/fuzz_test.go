package analytics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/analytics"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// FuzzQuery sends arbitrary $filter, $orderby, $select, $expand and $apply
// values to the handler over a real SQLite database: every answer is 200,
// 400 or 404, never a 500 (a query the translator let through that the
// database then refused) and never a panic.
func FuzzQuery(f *testing.F) {
	s := storetest.Open(f, store.SQLite)
	ctx := seed.Tenant(f, s, "fuzz", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	w := seed.NewStore(f, s, ctx, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	w.Subscriber(seed.Kari)
	h := analytics.New(analytics.Options{DB: s.ReadDB(), URL: "http://x/analytics", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	tenant, _ := tenancy.From(ctx)
	seeds := [][6]string{
		{"Subscribers", "Country eq 'NO' and contains(Name,'a')", "Name desc", "Name,Email", "Payments($top=1)", ""},
		{"Payments", "Subscriber/Country eq 'NO' and Amount gt 1.5", "PaidAt", "", "Subscriber", ""},
		{"InvoiceLines", "", "", "", "", "compute(year(IssueDate) as Y)/groupby((Y,ProductId),aggregate(Net with sum as R))"},
		{"Subscriptions", "Status eq 'Active' or date(PeriodStart) ge 2027-01-01", "Price desc,ChainStep", "", "Invoices($expand=Lines)", ""},
		{"Invoices", "year(IssueDate) eq 2027 and Status in ('Paid','Issued')", "", "", "", "aggregate(Gross with average as A,$count as N)"},
	}
	for _, sd := range seeds {
		f.Add(sd[0], sd[1], sd[2], sd[3], sd[4], sd[5])
	}
	f.Fuzz(func(t *testing.T, set, filter, orderby, sel, expand, apply string) {
		q := url.Values{}
		for k, v := range map[string]string{"$filter": filter, "$orderby": orderby, "$select": sel, "$expand": expand, "$apply": apply} {
			if v != "" {
				q.Set(k, v)
			}
		}
		req := httptest.NewRequest("GET", "/x", nil)
		req.URL.Path = "/" + set
		req.URL.RawQuery = q.Encode()
		req = req.WithContext(tenancy.With(context.Background(), tenant))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusNotFound, http.StatusNoContent:
		default:
			t.Fatalf("%s?%s: %d %s", set, req.URL.RawQuery, rec.Code, rec.Body)
		}
	})
}
