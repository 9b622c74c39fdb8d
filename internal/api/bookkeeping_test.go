package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
)

// TestBookkeepingAPI: the chart set through the API (checked, each problem
// named by its field), the example chart installed, an order's invoice
// posted by the outbox consumer of the running server so that the books
// reconcile with the documents, recognition and periods with their input
// rules, the journal as CSV, and another tenant seeing none of it.
func TestBookkeepingAPI(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newBillingFixture(t, e, tn)
		chart := "/bookkeeping/chart/" + f.org
		if r := tn.Do("GET", chart, nil); r.Status != http.StatusNotFound {
			t.Fatalf("chart before any: %d %s", r.Status, r.Body)
		}
		bad := map[string]any{"accounts": []map[string]any{{"number": "15x", "name": "Kunder", "type": "Asset", "groupingCategory": "", "groupingCode": ""}},
			"vatCodes": []any{}, "receivableAccount": "15x", "deferredAccount": "2900", "rules": []any{}}
		if r := tn.Do("PUT", chart, bad); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "accounts[0].number") ||
			!strings.Contains(string(r.Body), "deferredAccount") {
			t.Fatalf("bad chart: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("POST", chart+"/example", map[string]any{"country": "DK"}); r.Status != http.StatusBadRequest {
			t.Fatalf("example DK: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("POST", chart+"/example", map[string]any{"country": "NO"}); r.Status != http.StatusNoContent {
			t.Fatalf("example NO: %d %s", r.Status, r.Body)
		}
		var got struct {
			ReceivableAccount string `json:"receivableAccount"`
			Accounts          []any  `json:"accounts"`
		}
		r := tn.Do("GET", chart, nil)
		r.JSON(t, &got)
		if r.Status != http.StatusOK || got.ReceivableAccount != "1500" || len(got.Accounts) == 0 {
			t.Fatalf("chart: %d %s", r.Status, r.Body)
		}
		// The chart round-trips: what GET answers, PUT takes.
		if r := tn.Do("PUT", chart, r.Body); r.Status != http.StatusNoContent {
			t.Fatalf("put back: %d %s", r.Status, r.Body)
		}

		f.order(nil)
		// The consumer runs beside the request, after the order's commit;
		// wait until it has posted (the reconciliation says what is left).
		var rec struct {
			Unposted    int64 `json:"unposted"`
			Differences int64 `json:"differences"`
			NetLedger   int64 `json:"netLedger"`
		}
		for deadline := time.Now().Add(20 * time.Second); ; {
			r := tn.Do("GET", "/bookkeeping/reconciliation/"+f.org, nil)
			r.JSON(t, &rec)
			if rec.Unposted == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if rec.Unposted != 0 || rec.Differences != 0 || rec.NetLedger == 0 {
			t.Fatalf("reconciliation %+v", rec)
		}
		csv := tn.Do("GET", "/bookkeeping/journal/"+f.org, nil)
		if csv.Status != http.StatusOK || !strings.Contains(string(csv.Body), "SALES,1,") {
			t.Fatalf("journal: %d %s", csv.Status, csv.Body)
		}
		saft := tn.Do("GET", "/bookkeeping/saft/"+f.org+"?from=2000-01-01&to=2099-12-31", nil)
		if saft.Status != http.StatusOK || !strings.Contains(string(saft.Body), "<GeneralLedgerEntries><NumberOfEntries>1<") ||
			!strings.Contains(saft.Header.Get("Content-Disposition"), "SAF-T Financial_923609016_") {
			t.Fatalf("saft: %d %v %s", saft.Status, saft.Header, saft.Body)
		}
		if r := tn.Do("GET", "/bookkeeping/saft/"+f.org+"?from=2000-01-01", nil); r.Status != http.StatusBadRequest ||
			!strings.Contains(string(r.Body), "to") {
			t.Fatalf("saft without to: %d %s", r.Status, r.Body)
		}
		if sie := tn.Do("GET", "/bookkeeping/sie/"+f.org+"?from=2000-01-01&to=2099-12-31", nil); sie.Status != http.StatusOK ||
			!strings.Contains(string(sie.Body), "#SIETYP 4\r\n") || !strings.Contains(string(sie.Body), "#KSUMMA ") {
			t.Fatalf("sie: %d %s", sie.Status, sie.Body)
		}
		if r := tn.Do("GET", "/bookkeeping/sie/"+f.org+"?from=2000-01-01&to=2099-12-31&type=X", nil); r.Status != http.StatusBadRequest {
			t.Fatalf("sie type X: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("GET", "/bookkeeping/journal/"+f.org+"?from=yesterday", nil); r.Status != http.StatusBadRequest ||
			!strings.Contains(string(r.Body), "from") {
			t.Fatalf("journal bad from: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("POST", "/bookkeeping/recognize/"+f.org, map[string]any{"through": "31.01.2027"}); r.Status != http.StatusBadRequest {
			t.Fatalf("recognize bad date: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("POST", "/bookkeeping/recognize/"+f.org, map[string]any{"through": "2099-12-31"}); r.Status != http.StatusOK {
			t.Fatalf("recognize: %d %s", r.Status, r.Body)
		}
		var deferred []struct {
			Currency string `json:"currency"`
			Amount   int64  `json:"amountMinor"`
		}
		if r := tn.Do("GET", "/bookkeeping/deferred/"+f.org+"?at=2099-12-31", nil); r.Status != http.StatusOK {
			t.Fatalf("deferred: %d %s", r.Status, r.Body)
		} else if r.JSON(t, &deferred); len(deferred) != 1 || deferred[0].Amount != 0 {
			t.Errorf("deferred after recognising everything: %s", r.Body)
		}
		if r := tn.Do("GET", "/bookkeeping/deferred/"+f.org, nil); r.Status != http.StatusBadRequest {
			t.Errorf("deferred without at: %d %s", r.Status, r.Body)
		}
		var revenue []struct {
			Amount int64 `json:"amountMinor"`
		}
		if r := tn.Do("GET", "/bookkeeping/revenue/"+f.org, nil); r.Status != http.StatusOK {
			t.Fatalf("revenue: %d %s", r.Status, r.Body)
		} else if r.JSON(t, &revenue); len(revenue) == 0 {
			t.Errorf("no revenue after recognising everything: %s", r.Body)
		}
		if r := tn.Do("PUT", "/bookkeeping/period/"+f.org+"/2027-13", map[string]any{"closed": true}); r.Status != http.StatusBadRequest {
			t.Fatalf("period 13: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("PUT", "/bookkeeping/period/"+f.org+"/2020-01", map[string]any{"closed": true}); r.Status != http.StatusNoContent {
			t.Fatalf("close period: %d %s", r.Status, r.Body)
		}

		other := e.NewTenant("bookkeeping-other", false)
		for _, path := range []string{chart, "/bookkeeping/reconciliation/" + f.org, "/bookkeeping/journal/" + f.org,
			"/bookkeeping/saft/" + f.org + "?from=2000-01-01&to=2099-12-31"} {
			if r := other.Do("GET", path, nil); r.Status != http.StatusNotFound {
				t.Errorf("other tenant GET %s: %d %s", path, r.Status, r.Body)
			}
		}
		if r := other.Do("POST", chart+"/example", map[string]any{"country": "NO"}); r.Status != http.StatusNotFound {
			t.Errorf("other tenant installs a chart on the organization: %d %s", r.Status, r.Body)
		}
	})
}
