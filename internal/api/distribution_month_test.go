package api_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	deliverywing "github.com/kadens/kadens/internal/delivery"
)

// A month of a Tue/Thu/Sat title on a test clock, on both engines (issue
// 31's "must show"): Kari has two vacation stops, one credited and one made
// while the title credits nothing; Ola has a temporary address for a week
// and a permanent one from the last week. The invoices credit exactly the
// missed editions of the credited stop, and each publishing day's list and
// delta hold exactly the copies, addresses, carriers and changes the model
// below says. 15 January's three views are checked against golden files
// (testdata/distribution-2030-01-15-*.csv, ids substituted; -update
// rewrites them).
func TestDistributionMonth(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newAddressFixture(t, tn)
		for code, body := range map[string]map[string]any{
			"NO/0155": {"carrier": "Oslo Bud", "route": "R1", "deliverable": true},
			"NO/0257": {"carrier": "Oslo Bud", "route": "R2", "deliverable": true},
		} {
			if r := tn.Do("PUT", "/deliverypostalcode/"+code, body); r.Status != http.StatusNoContent {
				t.Fatalf("postal code %s: %d %s", code, r.Status, r.Body)
			}
		}
		home := func(id, name, email, line1, code string) {
			if r := tn.Do("PUT", "/subscriber/"+id, map[string]any{"name": name, "email": email, "country": "NO",
				"address": map[string]any{"line1": line1, "postalCode": code, "city": "Oslo", "country": "NO"}}); r.Status != http.StatusNoContent {
				t.Fatalf("subscriber %s: %d %s", name, r.Status, r.Body)
			}
		}
		home(f.subscriber, "Kari Nordmann", "kari@example.no", "Storgata 1", "0155")
		// Ola's own postal code is not in the table: his copy is listed
		// without a carrier, never dropped.
		home(f.other, "Ola Nordmann", "ola@example.no", "Kirkeveien 5", "0368")
		kari := f.order(f.printPkg, f.subscriber)
		ola := f.order(f.printPkg, f.other)

		// Stop X, credited: Tue 8, Thu 10, Sat 12 — 3 of January's 14
		// editions, 399.00 × 3/14 = 85.50.
		x := f.stop(kari, "2030-01-08", "2030-01-12")
		// Stop Y, not credited: made while the title credits nothing.
		if r := tn.Do("PUT", "/organization/"+f.org+"/deliverystoprules", map[string]any{"credit": "None"}); r.Status != http.StatusNoContent {
			t.Fatalf("rules: %d %s", r.Status, r.Body)
		}
		y := f.stop(kari, "2030-01-22", "2030-01-26")
		if r := tn.Do("PUT", "/organization/"+f.org+"/deliverystoprules", map[string]any{}); r.Status != http.StatusNoContent {
			t.Fatalf("rules: %d %s", r.Status, r.Body)
		}
		// Ola in Geilo for a week (Hallingdal Bud, R7), then moving for good
		// to Bygdøy allé (Oslo Bud, R2) from Tue 29.
		geilo := addressBody("Temporary", "2030-01-15", "2030-01-19")
		geilo["name"] = "Ola Nordmann"
		create(t, tn, "/subscription/"+ola+"/deliveryaddress", geilo)
		create(t, tn, "/subscription/"+ola+"/deliveryaddress", map[string]any{"kind": "Permanent", "firstDate": "2030-01-29",
			"name": "Ola Nordmann", "line1": "Bygdøy allé 2", "postalCode": "0257", "city": "Oslo", "country": "NO"})

		// The model: who gets a paper on day d, from where, and what changed
		// since the title's previous publishing day.
		type where struct{ source, postalCode, carrier, route string }
		kariStopped := func(d int) bool { return (d >= 8 && d <= 12) || (d >= 22 && d <= 26) }
		olaAt := func(d int) where {
			switch {
			case d >= 15 && d <= 19:
				return where{deliverywing.AddressTemporary, "3580", "Hallingdal Bud", "R7"}
			case d >= 29:
				return where{deliverywing.AddressPermanent, "0257", "Oslo Bud", "R2"}
			}
			return where{deliverywing.AddressSubscriber, "0368", "", ""}
		}
		deltas := map[int][]string{
			1:  {"New:Kari", "New:Ola"},
			8:  {"Stopped:Kari"},
			15: {"Moved:Ola", "Resumed:Kari"},
			22: {"Moved:Ola", "Stopped:Kari"},
			29: {"Moved:Ola", "Resumed:Kari"},
		}
		who := map[string]string{f.subscriber: "Kari", f.other: "Ola"}
		days := 0
		for d := 1; d <= 31; d++ {
			day := time.Date(2030, 1, d, 0, 0, 0, 0, time.UTC)
			ds := day.Format(time.DateOnly)
			// The clock on the morning of the day: the list is printed from
			// what is true then (the February renewal runs on the 18th).
			f.advance(time.Date(2030, 1, d, 5, 0, 0, 0, osloZone))
			list := f.distribution(ds, "list")
			delta := f.distribution(ds, "delta")
			if wd := day.Weekday(); wd != time.Tuesday && wd != time.Thursday && wd != time.Saturday {
				if len(list)+len(delta) != 0 {
					t.Errorf("%s (%s): %d copies, %d changes on a day without the title", ds, wd, len(list), len(delta))
				}
				continue
			}
			days++
			var got, want []string
			for _, l := range list {
				got = append(got, who[l.SubscriberID]+" "+l.AddressSource+" "+l.Address.PostalCode+" "+l.Address.Carrier+" "+l.Address.Route)
			}
			if !kariStopped(d) {
				want = append(want, "Kari Subscriber 0155 Oslo Bud R1")
			}
			w := olaAt(d)
			want = append(want, "Ola "+w.source+" "+w.postalCode+" "+w.carrier+" "+w.route)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("list of %s: %q, want %q", ds, got, want)
			}
			var changes []string
			for _, l := range delta {
				changes = append(changes, l.Change+":"+who[l.SubscriberID])
			}
			slices.Sort(changes)
			if !slices.Equal(changes, deltas[d]) {
				t.Errorf("delta of %s: %q, want %q", ds, changes, deltas[d])
			}
			// Each period delivering the day is the one that covers it, also
			// after the February renewal has been made.
			for _, l := range list {
				if want := map[string]string{"Kari": kari, "Ola": ola}[who[l.SubscriberID]]; l.SubscriptionID != want {
					t.Errorf("%s: %s's copy on period %s, want January's %s", ds, who[l.SubscriberID], l.SubscriptionID, want)
				}
			}
			if d == 15 {
				distributionGolden(t, f, ds, kari, ola)
			}
		}
		if days != 14 {
			t.Errorf("%d publishing days in January, want 14", days)
		}

		// The February invoices (made on the 18th): Kari's credits stop X's
		// three editions, Ola's is whole (no surcharge by default); stop Y
		// credits nothing, also not on March's invoice.
		if got := f.invoiceGross(f.next(kari)); got != 39900-8550 {
			t.Errorf("Kari's February invoice: %d, want %d", got, 39900-8550)
		}
		if got := f.invoiceGross(f.next(ola)); got != 39900 {
			t.Errorf("Ola's February invoice: %d, want 39900", got)
		}
		f.advance(time.Date(2030, 2, 15, 12, 0, 0, 0, osloZone))
		if got := f.invoiceGross(f.next(f.next(kari))); got != 39900 {
			t.Errorf("Kari's March invoice: %d, want 39900 (stop Y is not credited)", got)
		}
		if v := f.get(f.next(kari), x); len(v.Credits) != 1 || v.Credits[0].CreditedEditions != 3 || v.Credits[0].AmountMinor != 8550 {
			t.Errorf("stop X's credits: %+v", v.Credits)
		}
		if v := f.get(f.next(kari), y); len(v.MissedDays) != 3 || len(v.CreditedDays) != 0 || len(v.Credits) != 0 {
			t.Errorf("stop Y: %+v", v)
		}
	})
}

// distributionGolden compares the CSV of day's three views with the golden
// files, each series' ids replaced by names. The lines are compared sorted:
// their order follows the orders' ids, random per run, and is checked by
// TestDistributionList; what is held here is every column's content.
func distributionGolden(t *testing.T, f *stopFixture, day, kari, ola string) {
	t.Helper()
	orderOf := func(sub string) string {
		var v struct{ OrderID string }
		f.tn.Do("GET", "/subscription/"+sub, nil).JSON(t, &v)
		return v.OrderID
	}
	names := strings.NewReplacer(
		deliverywing.CopyID(orderOf(kari), f.print), "COPY-KARI", deliverywing.CopyID(orderOf(ola), f.print), "COPY-OLA",
		orderOf(kari), "ORDER-KARI", orderOf(ola), "ORDER-OLA", kari, "SUBSCRIPTION-KARI", ola, "SUBSCRIPTION-OLA",
		f.subscriber, "SUBSCRIBER-KARI", f.other, "SUBSCRIBER-OLA", f.print, "PRODUCT-PAPER")
	for _, view := range []string{"list", "delta", "counts"} {
		r := f.tn.Do("GET", "/distribution/"+day+"?view="+view+"&format=csv", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s %s: %d %s", day, view, r.Status, r.Body)
		}
		lines := strings.Split(strings.TrimSuffix(names.Replace(string(r.Body)), "\r\n"), "\r\n")
		slices.Sort(lines[1:])
		got := []byte(strings.Join(lines, "\r\n") + "\r\n")
		path := filepath.Join("testdata", "distribution-"+day+"-"+view+".csv")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestDistributionMonth -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s's %s view differs from %s:\n%s\nwant\n%s", day, view, path, got, want)
		}
	}
}
