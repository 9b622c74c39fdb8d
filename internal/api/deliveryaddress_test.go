package api_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	deliverywing "github.com/kadens/kadens/internal/delivery"
	"github.com/kadens/kadens/internal/seed"
)

type addressView struct {
	ID, SubscriptionID, AskedOnSubscriptionID string
	Kind, FirstDate, State                    string
	LastDate                                  *string
	Name, Line1, PostalCode, City, Country    string
	Carrier, Route                            string
	Charge                                    *struct {
		SubscriptionID string
		Editions       int
		AmountMinor    int64
		ChargeItemID   *string
	}
}

// addressFixture is the stops' fixture (a Tue/Thu/Sat title at 399.00 a
// month from 1 January 2030, the clock on Monday 17 December 2029 at 10:00
// in Oslo) with a postal code table: Geilo delivered by Hallingdal Bud on
// route R7, Røst not delivered.
func newAddressFixture(t *testing.T, tn apitest.Tenant) *stopFixture {
	t.Helper()
	f := newStopFixture(t, tn)
	for code, body := range map[string]map[string]any{
		"NO/3580": {"carrier": "Hallingdal Bud", "route": "R7", "deliverable": true},
		"NO/8064": {"carrier": "Posten", "deliverable": false, "reason": "no morning delivery on the islands"},
	} {
		if r := tn.Do("PUT", "/deliverypostalcode/"+code, body); r.Status != http.StatusNoContent {
			t.Fatalf("postal code %s: %d %s", code, r.Status, r.Body)
		}
	}
	return f
}

func addressBody(kind, first, last string) map[string]any {
	b := map[string]any{"kind": kind, "firstDate": first, "name": "Kari Nordmann", "line1": "Hyttevegen 3", "postalCode": "3580",
		"city": "Geilo", "country": "NO"}
	if last != "" {
		b["lastDate"] = last
	}
	return b
}

func (f *stopFixture) address(sub, kind, first, last string) string {
	f.t.Helper()
	return create(f.t, f.tn, "/subscription/"+sub+"/deliveryaddress", addressBody(kind, first, last))
}

func (f *stopFixture) getAddress(sub, id string) addressView {
	f.t.Helper()
	r := f.tn.Do("GET", "/subscription/"+sub+"/deliveryaddress/"+id, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET address %s: %d %s", id, r.Status, r.Body)
	}
	var v addressView
	r.JSON(f.t, &v)
	return v
}

func (f *stopFixture) addressRules(body map[string]any) {
	f.t.Helper()
	if r := f.tn.Do("PUT", "/organization/"+f.org+"/deliveryaddressrules", body); r.Status != http.StatusNoContent {
		f.t.Fatalf("address rules: %d %s", r.Status, r.Body)
	}
}

// The tenant's postal code table: set, read, paged, deleted; each bad
// input a 400 naming the field; another tenant sees none of it.
func TestDeliveryPostalCodeAPI(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		for _, code := range []string{"0150", "0151", "3580"} {
			if r := tn.Do("PUT", "/deliverypostalcode/no/"+code, map[string]any{"carrier": "Bud", "route": "R" + code, "deliverable": true}); r.Status != http.StatusNoContent {
				t.Fatalf("PUT %s: %d %s", code, r.Status, r.Body)
			}
		}
		var one struct {
			Country, PostalCode, Carrier, Route string
			Deliverable                         bool
		}
		tn.Do("GET", "/deliverypostalcode/NO/3580", nil).JSON(t, &one)
		if one.Country != "NO" || one.PostalCode != "3580" || one.Route != "R3580" || !one.Deliverable {
			t.Fatalf("GET: %+v", one)
		}
		// Paged by country and code: two pages of two and one.
		var seen []string
		path := "/deliverypostalcode?limit=2"
		for path != "" {
			r := tn.Do("GET", path, nil)
			var page []struct{ PostalCode string }
			r.JSON(t, &page)
			for _, p := range page {
				seen = append(seen, p.PostalCode)
			}
			path = ""
			if l := r.Header.Get("Link"); l != "" {
				path = l[strings.Index(l, "/deliverypostalcode"):strings.Index(l, ">")]
			}
		}
		if strings.Join(seen, ",") != "0150,0151,3580" {
			t.Fatalf("pages: %v", seen)
		}
		wantFields(t, "bad cursor", tn.Do("GET", "/deliverypostalcode?cursor=xyz", nil), "cursor")
		wantFields(t, "bad limit", tn.Do("GET", "/deliverypostalcode?limit=0", nil), "limit")
		wantFields(t, "bad country", tn.Do("PUT", "/deliverypostalcode/XX/0150", map[string]any{"carrier": "Bud", "deliverable": true}), "country")
		wantFields(t, "bad code", tn.Do("PUT", "/deliverypostalcode/NO/01%2A50", map[string]any{"carrier": "Bud", "deliverable": true}), "postalCode")
		wantFields(t, "no deliverable", tn.Do("PUT", "/deliverypostalcode/NO/0150", map[string]any{"carrier": "Bud"}), "deliverable")
		wantFields(t, "no carrier", tn.Do("PUT", "/deliverypostalcode/NO/0150", map[string]any{"deliverable": true}), "carrier")
		wantFields(t, "no reason", tn.Do("PUT", "/deliverypostalcode/NO/0150", map[string]any{"carrier": "Bud", "deliverable": false}), "reason")
		wantFields(t, "unknown property", tn.Do("PUT", "/deliverypostalcode/NO/0150", map[string]any{"carrier": "Bud", "deliverable": true, "zone": 1}), "zone")

		// Another tenant: 404 for the rows, its list empty, its PUT its own.
		other := e.NewTenant("other-postal", false)
		for _, m := range []string{"GET", "DELETE"} {
			if r := other.Do(m, "/deliverypostalcode/NO/3580", nil); r.Status != http.StatusNotFound {
				t.Errorf("other tenant's %s: %d", m, r.Status)
			}
		}
		var list []any
		other.Do("GET", "/deliverypostalcode", nil).JSON(t, &list)
		if len(list) != 0 {
			t.Errorf("other tenant lists %v", list)
		}
		if r := other.Do("PUT", "/deliverypostalcode/NO/3580", map[string]any{"carrier": "Annen", "deliverable": false, "reason": "x"}); r.Status != http.StatusNoContent {
			t.Fatalf("other tenant's PUT: %d", r.Status)
		}
		tn.Do("GET", "/deliverypostalcode/NO/3580", nil).JSON(t, &one)
		if one.Carrier != "Bud" || !one.Deliverable {
			t.Errorf("another tenant's PUT changed this tenant's row: %+v", one)
		}

		if r := tn.Do("DELETE", "/deliverypostalcode/NO/0151", nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE: %d", r.Status)
		}
		for _, m := range []string{"GET", "DELETE"} {
			if r := tn.Do(m, "/deliverypostalcode/NO/0151", nil); r.Status != http.StatusNotFound {
				t.Errorf("%s deleted: %d", m, r.Status)
			}
		}
	})
}

// Delivery addresses through a real server on both engines, cell by cell
// of the states × events table in docs/PRINT.md, with the surcharges the
// renewals' invoices carry, over January–April 2030 of a Tue/Thu/Sat title.
func TestDeliveryAddressAPI(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newAddressFixture(t, tn)
		s1 := f.order(f.printPkg, f.subscriber)
		s2 := f.order(f.printPkg, f.other)
		web := f.order(f.digital, f.other)
		path := "/subscription/" + s1 + "/deliveryaddress"
		var owner struct{ Address map[string]any }
		tn.Do("GET", "/subscriber/"+f.subscriber, nil).JSON(t, &owner)

		// The rules: defaults until set; a bad one is a 400 naming it.
		var rules struct {
			IsDefault        bool
			MinDays, MaxDays int
		}
		tn.Do("GET", "/organization/"+f.org+"/deliveryaddressrules", nil).JSON(t, &rules)
		if !rules.IsDefault || rules.MinDays != 2 || rules.MaxDays != 90 {
			t.Fatalf("default rules: %+v", rules)
		}
		for field, v := range map[string]any{"surchargePerChangeMinor": -1, "minDays": 0, "cutoffHour": 25} {
			wantFields(t, "rule "+field, tn.Do("PUT", "/organization/"+f.org+"/deliveryaddressrules", map[string]any{field: v}), field)
		}

		// Input: each bad field a 400 naming it.
		bad := func(what string, edit func(map[string]any), field, rule string) {
			t.Helper()
			b := addressBody("Temporary", "2030-01-15", "2030-01-19")
			edit(b)
			f.refused(what, tn.Do("POST", path, b), field, rule)
		}
		bad("no kind", func(b map[string]any) { delete(b, "kind") }, "kind", "required")
		bad("bad kind", func(b map[string]any) { b["kind"] = "Forever" }, "kind", "Forever")
		bad("no firstDate", func(b map[string]any) { delete(b, "firstDate") }, "firstDate", "required")
		bad("bad firstDate", func(b map[string]any) { b["firstDate"] = "2030-02-30" }, "firstDate", "")
		bad("bad lastDate", func(b map[string]any) { b["lastDate"] = "15.01.2030" }, "lastDate", "")
		bad("temporary without lastDate", func(b map[string]any) { delete(b, "lastDate") }, "lastDate", "required")
		bad("permanent with lastDate", func(b map[string]any) { b["kind"] = "Permanent" }, "lastDate", "Permanent")
		bad("no name", func(b map[string]any) { delete(b, "name") }, "name", "required")
		bad("no line1", func(b map[string]any) { b["line1"] = " " }, "line1", "required")
		bad("no city", func(b map[string]any) { delete(b, "city") }, "city", "required")
		bad("long line2", func(b map[string]any) { b["line2"] = strings.Repeat("x", 201) }, "line2", "200")
		bad("no postalCode", func(b map[string]any) { delete(b, "postalCode") }, "postalCode", "required")
		bad("bad postalCode", func(b map[string]any) { b["postalCode"] = "35<80" }, "postalCode", "")
		bad("bad country", func(b map[string]any) { b["country"] = "XX" }, "country", "XX")
		bad("unknown property", func(b map[string]any) { b["floor"] = 3 }, "floor", "")
		bad("a rule", func(b map[string]any) { b["lastDate"] = "2030-01-15" }, "lastDate", "rule minDays")
		bad("not in the table", func(b map[string]any) { b["postalCode"] = "9999" }, "postalCode", "rule deliverable")
		bad("not deliverable, with the reason", func(b map[string]any) { b["postalCode"] = "8064" }, "postalCode", "no morning delivery on the islands")
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			wantFields(t, m+" a bad address id", tn.Do(m, path+"/not-an-id", addressBody("Temporary", "2030-01-15", "2030-01-19")), "addressId")
		}
		wantFields(t, "a bad subscription id", tn.Do("POST", "/subscription/x/deliveryaddress", addressBody("Temporary", "2030-01-15", "2030-01-19")), "id")
		f.refused("digital only", tn.Do("POST", "/subscription/"+web+"/deliveryaddress", addressBody("Temporary", "2030-01-15", "2030-01-19")),
			"subscriptionId", "rule digitalOnly")

		// T1 temporary and P1 permanent, made without surcharges.
		t1 := f.address(s1, "Temporary", "2030-01-15", "2030-01-26")
		if v := f.getAddress(s1, t1); v.State != "Planned" || v.Carrier != "Hallingdal Bud" || v.Route != "R7" || v.SubscriptionID != s1 ||
			v.LastDate == nil || *v.LastDate != "2030-01-26" || v.Charge != nil {
			t.Fatalf("T1: %+v", v)
		}
		// create overlapping × planned: refused, naming the rule.
		f.refused("overlap with a planned address", tn.Do("POST", path, addressBody("Temporary", "2030-01-26", "2030-01-29")), "firstDate", "rule overlap")
		p1 := f.address(s1, "Permanent", "2030-01-22", "")
		// change × planned: checked again, its own old days not in the way.
		if r := tn.Do("PUT", path+"/"+t1, addressBody("Temporary", "2030-01-15", "2030-01-24")); r.Status != http.StatusNoContent {
			t.Fatalf("change planned: %d %s", r.Status, r.Body)
		}
		if v := f.getAddress(s1, t1); *v.LastDate != "2030-01-24" {
			t.Fatalf("changed T1: %+v", v)
		}
		f.refused("change to undeliverable", tn.Do("PUT", path+"/"+t1, func() map[string]any {
			b := addressBody("Temporary", "2030-01-15", "2030-01-24")
			b["postalCode"] = "8064"
			return b
		}()), "postalCode", "islands")
		// delete × planned; then deleted: 404 to GET, PUT, DELETE, and its
		// days are free (create × deleted).
		d := f.address(s1, "Temporary", "2030-02-05", "2030-02-09")
		if r := tn.Do("DELETE", path+"/"+d, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete planned: %d %s", r.Status, r.Body)
		}
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			if r := tn.Do(m, path+"/"+d, addressBody("Temporary", "2030-02-05", "2030-02-09")); r.Status != http.StatusNotFound {
				t.Errorf("%s deleted address: %d %s", m, r.Status, r.Body)
			}
		}

		// From here the title charges 49.00 per change and 5.00 per
		// edition; addresses made before keep what they were made with.
		f.addressRules(map[string]any{"surchargePerChangeMinor": 4900, "surchargePerEditionMinor": 500})
		// T3 over D's freed days and over a vacation stop: allowed; the stop
		// wins for its days (3 of T3's 6 editions), so 3 editions are charged.
		t3 := f.address(s1, "Temporary", "2030-02-05", "2030-02-16")
		f.stop(s1, "2030-02-05", "2030-02-09")
		// P2 permanent from 5 March (P1 ends then); T5 active and uncharged
		// at the plan change (it starts after the March renewal), T4 planned.
		p2 := f.address(s1, "Permanent", "2030-03-05", "")
		t5 := f.address(s1, "Temporary", "2030-03-19", "2030-03-23")
		t4 := f.address(s1, "Temporary", "2030-04-02", "2030-04-06")

		// Another tenant reaches none of it.
		other := e.NewTenant("other-addresses", false)
		for _, m := range []string{"GET", "POST"} {
			if r := other.Do(m, path, addressBody("Temporary", "2030-03-19", "2030-03-23")); r.Status != http.StatusNotFound {
				t.Errorf("other tenant's %s list: %d", m, r.Status)
			}
		}
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			if r := other.Do(m, path+"/"+t1, addressBody("Temporary", "2030-03-19", "2030-03-23")); r.Status != http.StatusNotFound {
				t.Errorf("other tenant's %s: %d", m, r.Status)
			}
		}
		for _, m := range []string{"GET", "PUT"} {
			if r := other.Do(m, "/organization/"+f.org+"/deliveryaddressrules", map[string]any{}); r.Status != http.StatusNotFound {
				t.Errorf("other tenant's %s rules: %d", m, r.Status)
			}
		}
		// Another series' address is not found under this one.
		if r := tn.Do("GET", "/subscription/"+s2+"/deliveryaddress/"+t1, nil); r.Status != http.StatusNotFound {
			t.Errorf("address of another series: %d", r.Status)
		}

		// The second series, cancelled on 16 January from the 25th: E2 has
		// ended then (uncharged: no renewal since), A2 is active, B2
		// planned but starting before the effect, C2 after; D2 deleted.
		e2 := f.address(s2, "Temporary", "2030-01-01", "2030-01-05")
		a2 := f.address(s2, "Temporary", "2030-01-15", "2030-01-19")
		b2 := f.address(s2, "Temporary", "2030-01-22", "2030-02-02")
		c2 := f.address(s2, "Temporary", "2030-03-05", "2030-03-09")
		d2 := f.address(s2, "Temporary", "2030-02-05", "2030-02-09")
		if r := tn.Do("DELETE", "/subscription/"+s2+"/deliveryaddress/"+d2, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete D2: %d %s", r.Status, r.Body)
		}

		f.advance(time.Date(2030, 1, 16, 10, 0, 0, 0, osloZone))
		// change/delete/create × active.
		f.refused("change active", tn.Do("PUT", path+"/"+t1, addressBody("Temporary", "2030-01-22", "2030-01-24")), "firstDate", "applies since")
		f.refused("delete active", tn.Do("DELETE", path+"/"+t1, nil), "firstDate", "applies since")
		f.refused("overlap with an active address", tn.Do("POST", path, addressBody("Temporary", "2030-01-24", "2030-01-29")), "firstDate", "rule overlap")

		// cancellation × ended, active and planned: the surcharges of the
		// addresses that apply before the effect are booked at once, their
		// editions counted up to it: E2 and A2 4900 + 3 × 500, B2 4900 +
		// 2 × 500 (the 22nd and 24th); C2 never applies and books nothing,
		// nor does the deleted D2.
		if r := tn.Do("POST", "/subscription/"+s2+"/cancel", map[string]any{"cancellationTime": "2030-01-25T00:00:00+01:00"}); r.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		for _, c := range []struct {
			id       string
			editions int
			amount   int64
		}{{e2, 3, 6400}, {a2, 3, 6400}, {b2, 2, 5900}} {
			v := f.getAddress(s2, c.id)
			if v.Charge == nil || v.Charge.Editions != c.editions || v.Charge.AmountMinor != c.amount || v.Charge.ChargeItemID == nil {
				t.Errorf("address %s after the cancellation: %+v", c.id, v.Charge)
			}
		}
		if v := f.getAddress(s2, c2); v.Charge != nil || v.State != "Planned" {
			t.Errorf("C2 after the cancellation: %+v", v)
		}
		if r := tn.Do("GET", "/subscription/"+s2+"/deliveryaddress/"+d2, nil); r.Status != http.StatusNotFound {
			t.Errorf("deleted address after the cancellation: %d", r.Status)
		}
		// A planned address charged by the cancellation is fixed.
		f.refused("change charged", tn.Do("PUT", "/subscription/"+s2+"/deliveryaddress/"+b2, addressBody("Temporary", "2030-01-22", "2030-01-24")),
			"firstDate", "charged")
		f.refused("delete charged", tn.Do("DELETE", "/subscription/"+s2+"/deliveryaddress/"+b2, nil), "firstDate", "charged")
		f.refused("after the effect", tn.Do("POST", "/subscription/"+s2+"/deliveryaddress", addressBody("Temporary", "2030-01-26", "2030-01-29")),
			"firstDate", "ends on")

		// renewal × planned and active: on 18 January the series renews
		// into February; T1 (active), P1, T3, P2, T4 (planned) follow it.
		f.advance(time.Date(2030, 1, 18, 12, 0, 0, 0, osloZone))
		feb := f.next(s1)
		var list []addressView
		tn.Do("GET", "/subscription/"+feb+"/deliveryaddress", nil).JSON(t, &list)
		if len(list) != 6 || list[0].ID != t1 || list[0].State != "Active" || list[1].ID != p1 || list[1].State != "Planned" ||
			list[2].ID != t3 || list[3].ID != p2 || list[4].ID != t5 || list[5].ID != t4 {
			t.Fatalf("addresses after the January renewal: %+v", list)
		}
		for _, v := range list {
			if v.SubscriptionID != feb || v.Charge != nil {
				t.Errorf("address %s after the January renewal: %+v", v.ID, v)
			}
		}
		if r := tn.Do("GET", "/subscription/"+feb+"/deliveryaddress/"+d, nil); r.Status != http.StatusNotFound {
			t.Errorf("deleted address after the renewal: %d", r.Status)
		}
		if got := f.invoiceGross(feb); got != 39900 {
			t.Errorf("February invoice: %d, want 39900", got)
		}

		// × ended: on 25 January T1 has ended, P1 applies.
		f.advance(time.Date(2030, 1, 25, 10, 0, 0, 0, osloZone))
		if v := f.getAddress(feb, t1); v.State != "Ended" {
			t.Errorf("T1 on the 25th: %s", v.State)
		}
		if v := f.getAddress(feb, p1); v.State != "Active" {
			t.Errorf("P1 on the 25th: %s", v.State)
		}
		f.refused("change ended", tn.Do("PUT", path+"/"+t1, addressBody("Temporary", "2030-03-19", "2030-03-23")), "firstDate", "applies since")
		f.refused("delete ended", tn.Do("DELETE", path+"/"+t1, nil), "firstDate", "applies since")
		// create over an ended address's days: too late (notice).
		f.refused("over ended days", tn.Do("POST", path, addressBody("Temporary", "2030-01-20", "2030-01-22")), "firstDate", "rule notice")

		// renewal × ended and the surcharge: by 15 February T3 applies; its
		// surcharge (4900 + 3 × 500, the stopped editions not counted) is
		// on March's invoice, with the stop's credit (399 × 3/12 = 99.75).
		f.advance(time.Date(2030, 2, 15, 12, 0, 0, 0, osloZone))
		mar := f.next(feb)
		if v := f.getAddress(mar, t3); v.Charge == nil || v.Charge.Editions != 3 || v.Charge.AmountMinor != 6400 || v.Charge.SubscriptionID != mar {
			t.Fatalf("T3's surcharge: %+v", v.Charge)
		}
		if v := f.getAddress(mar, t1); v.State != "Ended" || v.SubscriptionID != mar || v.Charge != nil {
			t.Errorf("T1 after the February renewal: %+v", v)
		}
		if got := f.invoiceGross(mar); got != 39900+6400-9975 {
			t.Errorf("March invoice: %d, want %d", got, 39900+6400-9975)
		}
		// deactivation: the cancelled series ended; its addresses are still
		// listed, nothing new can be made on it.
		var ended []addressView
		tn.Do("GET", "/subscription/"+s2+"/deliveryaddress", nil).JSON(t, &ended)
		if len(ended) != 4 || ended[0].State != "Ended" || ended[1].State != "Ended" || ended[2].State != "Ended" ||
			ended[3].ID != c2 || ended[3].State != "Planned" {
			t.Errorf("addresses of the ended series: %+v", ended)
		}
		f.refused("deactivated", tn.Do("POST", "/subscription/"+s2+"/deliveryaddress", addressBody("Temporary", "2030-02-19", "2030-02-23")),
			"subscriptionId", "ended")
		// The uncharged planned address of the ended series can still go.
		if r := tn.Do("DELETE", "/subscription/"+s2+"/deliveryaddress/"+c2, nil); r.Status != http.StatusNoContent {
			t.Errorf("delete the uncharged planned address: %d %s", r.Status, r.Body)
		}

		// The permanent address from 5 March: P1 ended, P2 charged 49.00 on
		// April's invoice.
		f.advance(time.Date(2030, 3, 18, 12, 0, 0, 0, osloZone))
		apr := f.next(mar)
		if v := f.getAddress(apr, p1); v.State != "Ended" || v.Charge != nil {
			t.Errorf("P1 in March: %+v", v)
		}
		if v := f.getAddress(apr, p2); v.State != "Active" || v.Charge == nil || v.Charge.AmountMinor != 4900 || v.Charge.Editions != 0 {
			t.Errorf("P2 in March: %+v", v)
		}
		if got := f.invoiceGross(apr); got != 39900+4900 {
			t.Errorf("April invoice: %d, want %d", got, 39900+4900)
		}

		// plan change × active (P2) and × planned (T4): an Immediately
		// change to the digital package on 20 March begins a new series;
		// both follow it; T4 is not charged (it starts after the change).
		f.advance(time.Date(2030, 3, 20, 10, 0, 0, 0, osloZone))
		if r := tn.Do("POST", "/subscription/"+apr+"/scheduledchange", map[string]any{"processingType": "Immediately", "templatePackageId": f.digital}); r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("plan change: %d %s", r.Status, r.Body)
		}
		f.advance(time.Date(2030, 3, 20, 10, 1, 0, 0, osloZone))
		var after []addressView
		tn.Do("GET", "/subscription/"+mar+"/deliveryaddress", nil).JSON(t, &after)
		if len(after) != 6 || after[5].ID != t4 || after[5].SubscriptionID == apr || after[5].SubscriptionID == mar || after[5].Charge != nil {
			t.Fatalf("addresses after the plan change: %+v", after)
		}
		for _, v := range after {
			if v.SubscriptionID != after[5].SubscriptionID {
				t.Errorf("address %s (%s) did not follow the plan change: %s", v.ID, v.State, v.SubscriptionID)
			}
		}
		if after[0].ID != t1 || after[0].State != "Ended" || after[1].ID != p1 || after[1].State != "Ended" {
			t.Errorf("ended addresses after the plan change: %+v", after[:2])
		}
		if r := tn.Do("GET", "/subscription/"+mar+"/deliveryaddress/"+d, nil); r.Status != http.StatusNotFound {
			t.Errorf("deleted address after the plan change: %d", r.Status)
		}
		if v := f.getAddress(mar, p2); v.State != "Active" || v.Charge == nil || v.Charge.AmountMinor != 4900 {
			t.Errorf("P2 after the plan change: %+v", v)
		}
		// T5, active and not yet charged, is charged at the change: its
		// editions before it (Tuesday 19 March), 4900 + 1 × 500.
		if v := f.getAddress(mar, t5); v.State != "Active" || v.Charge == nil || v.Charge.Editions != 1 || v.Charge.AmountMinor != 5400 {
			t.Errorf("T5 after the plan change: %+v", v.Charge)
		}

		// The invoice address never moved.
		var now struct{ Address map[string]any }
		tn.Do("GET", "/subscriber/"+f.subscriber, nil).JSON(t, &now)
		if len(now.Address) == 0 || len(now.Address) != len(owner.Address) {
			t.Errorf("subscriber address %v, was %v", now.Address, owner.Address)
		}
		for k, v := range owner.Address {
			if now.Address[k] != v {
				t.Errorf("subscriber address %s: %v, was %v", k, now.Address[k], v)
			}
		}

		// The events: one kind, an action per create, change and delete.
		var evs []struct {
			Subject string
			Data    struct{ Action, DeliveryAddressID string }
		}
		tn.Do("GET", "/events?eventType=DeliveryAddressChanged", nil).JSON(t, &evs)
		actions := map[string]int{}
		for _, ev := range evs {
			actions[ev.Data.Action]++
		}
		if actions["Created"] != 12 || actions["Changed"] != 1 || actions["Deleted"] != 3 || len(evs) != 16 {
			t.Errorf("DeliveryAddressChanged events: %v (%d)", actions, len(evs))
		}
		// Every charge is named back by its address's row.
		ledgerClean(t, e, tn)
	})
}

// An address's surcharge, booked from 8 goroutines at once (a retry, a
// second worker, the renewal): one charge and one account item, on both
// engines; the renewal after books nothing more.
func TestDeliveryAddressSurchargeOnce(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newAddressFixture(t, tn)
		f.addressRules(map[string]any{"surchargePerChangeMinor": 4900, "surchargePerEditionMinor": 500})
		sub := f.order(f.printPkg, f.subscriber)
		id := f.address(sub, "Temporary", "2030-01-15", "2030-01-19")
		f.advance(time.Date(2030, 1, 16, 10, 0, 0, 0, osloZone))
		ctx := tenantCtx(tn)
		at := time.Date(2030, 1, 16, 10, 0, 0, 0, osloZone)
		var wg sync.WaitGroup
		var mu sync.Mutex
		booked := 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := deliverywing.BookSurcharge(ctx, e.Store, sub, id, at)
				if err != nil {
					t.Errorf("book: %v", err)
				}
				if ok {
					mu.Lock()
					booked++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if booked != 1 {
			t.Errorf("booked %d times", booked)
		}
		f.advance(time.Date(2030, 1, 18, 12, 0, 0, 0, osloZone))
		feb := f.next(sub)
		if v := f.getAddress(feb, id); v.Charge == nil || v.Charge.AmountMinor != 4900+3*500 {
			t.Fatalf("charge: %+v", v.Charge)
		}
		var items int
		if err := e.Store.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM account_items WHERE tenant_id = $1 AND source_kind = $2`,
			tn.ID, deliverywing.ItemSourceAddress).Scan(&items); err != nil || items != 1 {
			t.Errorf("charges: %d %v", items, err)
		}
		if got := f.invoiceGross(feb); got != 39900+4900+3*500 {
			t.Errorf("February invoice: %d", got)
		}
		ledgerClean(t, e, tn)
	})
}

// chain step × planned/active: an address across a chain's step follows
// the series into the next step's package.
func TestDeliveryAddressChainStep(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newAddressFixture(t, tn)
		plan := tn.Seed(t).Plan(seed.Plan{Name: "Monthly chain", Unit: "Month", MinimumDueDays: seed.Days(14), PaymentTermsDays: seed.Days(10)})
		intro := create(t, tn, "/package", contractPackage("Papir intro", "99.00", f.print, plan))
		full := create(t, tn, "/package", contractPackage("Papir", "399.00", f.print, plan))
		chain := create(t, tn, "/packagechain", map[string]any{"name": "Intro", "packageChain": map[string]any{
			"steps": []map[string]any{{"step": 1, "nextPackageId": intro, "periods": 1}, {"step": 2, "nextPackageId": full}}}})
		linked := strings.Replace(contractPackage("Papir intro", "99.00", f.print, plan), `"packageChainId": null`, `"packageChainId": "`+chain+`"`, 1)
		if r := tn.Do("PUT", "/package/"+intro, linked); r.Status != http.StatusNoContent {
			t.Fatalf("link: %d %s", r.Status, r.Body)
		}
		jan := f.order(intro, f.subscriber)
		active := f.address(jan, "Temporary", "2030-01-15", "2030-01-26")
		planned := f.address(jan, "Temporary", "2030-01-29", "2030-02-09")
		f.advance(time.Date(2030, 1, 18, 12, 0, 0, 0, osloZone))
		feb := f.next(jan)
		for _, id := range []string{active, planned} {
			if v := f.getAddress(feb, id); v.SubscriptionID != feb || v.AskedOnSubscriptionID != jan {
				t.Errorf("address after the chain step: %+v", v)
			}
		}
		if v := f.getAddress(jan, active); v.State != "Active" {
			t.Errorf("read through the first period: %+v", v)
		}
	})
}
