package delivery

import (
	"strings"
	"testing"
	"time"
)

// Each rule of a delivery address, at its boundaries: a Tue/Thu/Sat title
// in Europe/Oslo, asked on Monday 30 November 2026 at 10:00.
func TestAddressRules(t *testing.T) {
	oslo, err := time.LoadLocation("Europe/Oslo")
	if err != nil {
		t.Fatal("no tzdata (Debian: apt-get install tzdata):", err)
	}
	tts := Schedule{Weekdays: days(t, "Tue", "Thu", "Sat")}
	at := func(day string, h, m int) time.Time {
		dd := d(day)
		return time.Date(dd.Year, dd.Month, dd.Day, h, m, 0, 0, oslo)
	}
	monday := at("2026-11-30", 10, 0)
	ok := &PostalCode{Country: "NO", PostalCode: "3580", Carrier: "Hallingdal Bud", Route: "R7", Deliverable: true}
	islands := &PostalCode{Country: "NO", PostalCode: "8380", Carrier: "Posten", Deliverable: false, Reason: "no morning delivery on the islands"}
	temp := func(id, first, last string) AddressSpan {
		l := d(last)
		return AddressSpan{ID: id, Kind: AddressTemporary, First: d(first), Last: &l}
	}
	perm := func(id, first string) AddressSpan {
		return AddressSpan{ID: id, Kind: AddressPermanent, First: d(first)}
	}
	noNotice := DefaultAddressRules
	noNotice.NoticeDeliveryDays, noNotice.CutoffHour = 0, 24
	for _, c := range []struct {
		name        string
		rules       AddressRules
		now         time.Time
		s           Schedule
		kind        string
		first, last string // last "" for none
		postal      *PostalCode
		others      []AddressSpan
		rule, field string // the refusal; "" allowed
		editions    int    // allowed: the editions it receives
	}{
		{name: "temporary, two days (the shortest)", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-03", last: "2026-12-04", postal: ok, editions: 1},
		{name: "minDays: one day", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-03", last: "2026-12-03", postal: ok, rule: "minDays", field: "lastDate"},
		{name: "maxDays: 90 days allowed", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-03", last: "2027-03-02", postal: ok, editions: 39},
		{name: "maxDays: 91 days refused", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-03", last: "2027-03-03", postal: ok, rule: "maxDays", field: "lastDate"},
		{name: "order", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-05", last: "2026-12-03", postal: ok, rule: "order", field: "lastDate"},
		{name: "temporary without lastDate", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-05", postal: ok, field: "lastDate"},
		{name: "permanent with lastDate", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressPermanent,
			first: "2026-12-05", last: "2026-12-08", postal: ok, field: "lastDate"},
		{name: "permanent, any length", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressPermanent,
			first: "2026-12-03", postal: ok},
		{name: "unknown kind", rules: DefaultAddressRules, now: monday, s: tts, kind: "Forever", first: "2026-12-03", postal: ok, field: "kind"},
		{name: "notice: two delivery days ahead before the cut-off", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-01", last: "2026-12-03", postal: ok, rule: "notice", field: "firstDate"},
		{name: "notice: at 11:59 on Wednesday, Saturday is the earliest", rules: DefaultAddressRules, now: at("2026-12-02", 11, 59), s: tts,
			kind: AddressPermanent, first: "2026-12-05", postal: ok},
		{name: "notice: at 12:00 on Wednesday, Saturday is too soon", rules: DefaultAddressRules, now: at("2026-12-02", 12, 0), s: tts,
			kind: AddressPermanent, first: "2026-12-05", postal: ok, rule: "notice", field: "firstDate"},
		{name: "no notice: today", rules: noNotice, now: at("2026-12-01", 23, 0), s: tts, kind: AddressTemporary,
			first: "2026-12-01", last: "2026-12-02", postal: ok, editions: 1},
		{name: "postal code not in the table", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-03", last: "2026-12-05", rule: "deliverable", field: "postalCode"},
		{name: "postal code not deliverable, with its reason", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-03", last: "2026-12-05", postal: islands, rule: "no morning delivery on the islands", field: "postalCode"},
		{name: "digital only", rules: DefaultAddressRules, now: monday, kind: AddressTemporary,
			first: "2026-12-03", last: "2026-12-05", postal: ok, rule: "digitalOnly", field: "subscriptionId"},
		{name: "overlap: a temporary address's last day", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-10", last: "2026-12-12", postal: ok, others: []AddressSpan{temp("a", "2026-12-03", "2026-12-10")},
			rule: "overlap", field: "firstDate"},
		{name: "overlap: the day after is free", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressTemporary,
			first: "2026-12-11", last: "2026-12-12", postal: ok, others: []AddressSpan{temp("a", "2026-12-03", "2026-12-10")}, editions: 1},
		{name: "temporary over a permanent address: allowed (it wins for its days)", rules: DefaultAddressRules, now: monday, s: tts,
			kind: AddressTemporary, first: "2026-12-03", last: "2026-12-05", postal: ok, others: []AddressSpan{perm("p", "2026-12-01")}, editions: 2},
		{name: "permanent inside a temporary one: allowed", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressPermanent,
			first: "2026-12-05", postal: ok, others: []AddressSpan{temp("a", "2026-12-03", "2026-12-10")}},
		{name: "two permanent addresses from one day", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressPermanent,
			first: "2026-12-05", postal: ok, others: []AddressSpan{perm("p", "2026-12-05")}, rule: "overlap", field: "firstDate"},
		{name: "a later permanent address", rules: DefaultAddressRules, now: monday, s: tts, kind: AddressPermanent,
			first: "2026-12-08", postal: ok, others: []AddressSpan{perm("p", "2026-12-05")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := AddressRequest{Kind: c.kind, First: d(c.first), Address: PostalAddress{Country: "NO", PostalCode: "3580"}}
			if c.last != "" {
				l := d(c.last)
				req.Last = &l
			}
			dec, err := c.rules.Check(req, AddressContext{Now: c.now, Loc: oslo, Schedule: c.s, PostalCode: c.postal, Others: c.others})
			if c.field != "" {
				if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.rule) {
					t.Fatalf("got %v, want a refusal on %s (%s)", err, c.field, c.rule)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dec.Carrier != ok.Carrier || dec.Route != ok.Route || len(dec.Editions) != c.editions {
				t.Fatalf("decision %+v, want %s/%s and %d editions", dec, ok.Carrier, ok.Route, c.editions)
			}
		})
	}
}

func TestAddressRulesValidate(t *testing.T) {
	if err := DefaultAddressRules.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		edit  func(*AddressRules)
	}{
		{"minDays", func(r *AddressRules) { r.MinDays = 0 }},
		{"maxDays", func(r *AddressRules) { r.MaxDays = 1 }},
		{"maxDays", func(r *AddressRules) { r.MaxDays = 367 }},
		{"cutoffHour", func(r *AddressRules) { r.CutoffHour = 25 }},
		{"noticeDeliveryDays", func(r *AddressRules) { r.NoticeDeliveryDays = 31 }},
		{"surchargePerChangeMinor", func(r *AddressRules) { r.SurchargePerChange = -1 }},
		{"surchargePerEditionMinor", func(r *AddressRules) { r.SurchargePerEdition = maxSurcharge + 1 }},
	} {
		r := DefaultAddressRules
		c.edit(&r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v", c.field, err)
		}
	}
	if got := (AddressRules{SurchargePerChange: 4900, SurchargePerEdition: 500}).Surcharge(13); got != 4900+13*500 {
		t.Errorf("surcharge %d", got)
	}
}
