package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
)

// The print wing's schedule and calendar operations through a real server:
// set and read a product's weekdays, the tenant's days without paper, the
// editions they give, every bad input a 400 naming its field, and nothing
// of it visible to another tenant.
func TestDeliveryScheduleAPI(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		product := create(t, tn, "/product", map[string]any{"name": "Avisa Tue/Thu/Sat", "category": "print", "vatRate": 0})
		path := "/product/" + product + "/deliveryschedule"

		var sch struct {
			ProductID string
			Weekdays  []string
			UpdatedAt *string
		}
		if r := tn.Do("GET", path, nil); r.Status != http.StatusOK {
			t.Fatalf("GET unset: %d %s", r.Status, r.Body)
		} else if r.JSON(t, &sch); len(sch.Weekdays) != 0 || sch.UpdatedAt != nil {
			t.Fatalf("unset schedule: %+v", sch)
		}
		if r := tn.Do("PUT", path, map[string]any{"weekdays": []string{"sat", "Tue", "Thu"}}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		r := tn.Do("GET", path, nil)
		r.JSON(t, &sch)
		if strings.Join(sch.Weekdays, ",") != "Tue,Thu,Sat" || sch.ProductID != product || sch.UpdatedAt == nil {
			t.Fatalf("schedule: %+v", sch)
		}
		for _, c := range []struct {
			body  any
			field string
		}{
			{map[string]any{"weekdays": []string{"Tue", "Tue"}}, "weekdays"},
			{map[string]any{"weekdays": []string{"Tuesday"}}, "weekdays"},
			{map[string]any{}, "weekdays"},
		} {
			if r := tn.Do("PUT", path, c.body); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), c.field) {
				t.Errorf("PUT %v: %d %s", c.body, r.Status, r.Body)
			}
		}

		if r := tn.Do("PUT", "/deliverycalendar/2026-12-26", map[string]any{"name": "2. juledag"}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT day: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("PUT", "/deliverycalendar/2026-12-25", nil); r.Status != http.StatusNoContent {
			t.Fatalf("PUT day without a body: %d %s", r.Status, r.Body)
		}
		var days []struct{ Date, Name string }
		tn.Do("GET", "/deliverycalendar?From=2026-12-01&To=2027-01-01", nil).JSON(t, &days)
		if len(days) != 2 || days[0].Date != "2026-12-25" || days[1].Name != "2. juledag" {
			t.Fatalf("calendar: %+v", days)
		}
		var ed struct {
			Editions     int
			DeliveryDays []string
		}
		// December 2026 has 14 Tuesdays, Thursdays and Saturdays; the closed
		// Friday 25th is off the pattern, Saturday 26th is on it.
		tn.Do("GET", "/product/"+product+"/editions?From=2026-12-01&To=2027-01-01", nil).JSON(t, &ed)
		if ed.Editions != 13 || len(ed.DeliveryDays) != 13 || ed.DeliveryDays[0] != "2026-12-01" || ed.DeliveryDays[12] != "2026-12-31" {
			t.Fatalf("december editions: %+v", ed)
		}
		for _, q := range []struct{ query, field string }{
			{"From=2026-12-01", "To"},
			{"From=2026-02-30&To=2026-03-01", "From"},
			{"From=2026-12-01&To=2026-11-01", "To"},
			{"From=2026-01-01&To=2028-01-01", "To"},
		} {
			r := tn.Do("GET", "/product/"+product+"/editions?"+q.query, nil)
			if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), q.field) {
				t.Errorf("editions?%s: %d %s", q.query, r.Status, r.Body)
			}
		}
		if r := tn.Do("PUT", "/deliverycalendar/2026-13-01", nil); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "date") {
			t.Errorf("bad day: %d %s", r.Status, r.Body)
		}

		// Another tenant sees none of it.
		other := e.NewTenant("other-print", false)
		if r := other.Do("GET", path, nil); r.Status != http.StatusNotFound {
			t.Errorf("other tenant's GET: %d", r.Status)
		}
		if r := other.Do("PUT", path, map[string]any{"weekdays": []string{"Mon"}}); r.Status != http.StatusNotFound {
			t.Errorf("other tenant's PUT: %d", r.Status)
		}
		var none []any
		other.Do("GET", "/deliverycalendar?From=2026-12-01&To=2027-01-01", nil).JSON(t, &none)
		if len(none) != 0 {
			t.Errorf("other tenant's calendar: %v", none)
		}
		if r := other.Do("DELETE", "/deliverycalendar/2026-12-25", nil); r.Status != http.StatusNotFound {
			t.Errorf("other tenant's DELETE: %d", r.Status)
		}

		if r := tn.Do("DELETE", "/deliverycalendar/2026-12-26", nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE day: %d %s", r.Status, r.Body)
		}
		tn.Do("GET", "/product/"+product+"/editions?From=2026-12-01&To=2027-01-01", nil).JSON(t, &ed)
		if ed.Editions != 14 {
			t.Errorf("editions after reopening the 26th: %d", ed.Editions)
		}
		if r := tn.Do("PUT", path, map[string]any{"weekdays": []string{}}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT empty: %d %s", r.Status, r.Body)
		}
		tn.Do("GET", "/product/"+product+"/editions?From=2026-12-01&To=2027-01-01", nil).JSON(t, &ed)
		if ed.Editions != 0 {
			t.Errorf("editions of a product not delivered: %d", ed.Editions)
		}
	})
}

func TestDeliveryStopRulesAPI(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		org := create(t, tn, "/organization", map[string]any{"name": "Avishuset AS", "country": "NO", "currency": "NOK",
			"timeZone": "Europe/Oslo", "organizationNumber": "923609016"})
		path := "/organization/" + org + "/deliverystoprules"
		var v struct {
			IsDefault                    bool
			MinDays, MaxDays, CutoffHour int
			Credit                       string
			AlignToDeliveryDays          bool
		}
		tn.Do("GET", path, nil).JSON(t, &v)
		if !v.IsDefault || v.MinDays != 3 || v.MaxDays != 92 || v.CutoffHour != 12 || v.Credit != "PerEdition" || !v.AlignToDeliveryDays {
			t.Fatalf("defaults: %+v", v)
		}
		if r := tn.Do("PUT", path, map[string]any{"minDays": 5, "credit": "none", "alignToDeliveryDays": false}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		tn.Do("GET", path, nil).JSON(t, &v)
		if v.IsDefault || v.MinDays != 5 || v.MaxDays != 92 || v.Credit != "None" || v.AlignToDeliveryDays {
			t.Fatalf("set: %+v", v)
		}
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"credit": "Half"}, "credit"},
			{map[string]any{"minDays": 10, "maxDays": 5}, "maxDays"},
			{map[string]any{"cutoffHour": 25}, "cutoffHour"},
		} {
			if r := tn.Do("PUT", path, c.body); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), c.field) {
				t.Errorf("PUT %v: %d %s", c.body, r.Status, r.Body)
			}
		}
		other := e.NewTenant("other-rules", false)
		if r := other.Do("GET", path, nil); r.Status != http.StatusNotFound {
			t.Errorf("other tenant's GET: %d", r.Status)
		}
		if r := other.Do("PUT", path, map[string]any{}); r.Status != http.StatusNotFound {
			t.Errorf("other tenant's PUT: %d", r.Status)
		}
	})
}
