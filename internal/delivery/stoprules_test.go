package delivery

import (
	"strings"
	"testing"
	"time"
)

// Each rule of a vacation stop, at its boundaries: a Tue/Thu/Sat title in
// Europe/Oslo, asked on Monday 30 November 2026.
func TestStopRules(t *testing.T) {
	oslo, err := time.LoadLocation("Europe/Oslo")
	if err != nil {
		t.Fatal("no tzdata (Debian: apt-get install tzdata):", err)
	}
	tts := Schedule{Weekdays: days(t, "Tue", "Thu", "Sat")}
	at := func(day string, h, m int) time.Time {
		dd := d(day)
		return time.Date(dd.Year, dd.Month, dd.Day, h, m, 0, 0, oslo)
	}
	bound := at("2027-01-01", 0, 0)
	monday := at("2026-11-30", 10, 0)
	noCredit := DefaultStopRules
	noCredit.Credit = CreditNone
	unaligned := DefaultStopRules
	unaligned.AlignToDeliveryDays = false
	capped := DefaultStopRules
	capped.MaxCreditedPerYear = 3
	bindingOK := DefaultStopRules
	bindingOK.AllowDuringBinding = true
	noNotice := DefaultStopRules
	noNotice.NoticeDeliveryDays, noNotice.CutoffHour = 0, 24
	for _, c := range []struct {
		name        string
		rules       StopRules
		now         time.Time
		s           Schedule
		first, last string
		binding     *time.Time
		credited    map[int]int
		rule, field string // the refusal; "" allowed
		missed      string // allowed: the missed days, and the credited ones
		credit      string
	}{
		{name: "allowed, three days", rules: DefaultStopRules, now: monday, s: tts, first: "2026-12-03", last: "2026-12-05",
			missed: "2026-12-03,2026-12-05", credit: "2026-12-03,2026-12-05"},
		{name: "notice: two delivery days ahead before the cut-off", rules: DefaultStopRules, now: monday, s: tts,
			first: "2026-12-01", last: "2026-12-03", rule: "notice", field: "firstDate"},
		{name: "notice: at 11:59 on Wednesday, Saturday is the earliest", rules: DefaultStopRules, now: at("2026-12-02", 11, 59), s: tts,
			first: "2026-12-05", last: "2026-12-08", missed: "2026-12-05,2026-12-08", credit: "2026-12-05,2026-12-08"},
		{name: "notice: at 12:00 on Wednesday, Saturday is too soon", rules: DefaultStopRules, now: at("2026-12-02", 12, 0), s: tts,
			first: "2026-12-05", last: "2026-12-08", rule: "notice", field: "firstDate"},
		{name: "notice: at 12:00 on Wednesday, Tuesday the 8th is allowed", rules: DefaultStopRules, now: at("2026-12-02", 12, 0), s: tts,
			first: "2026-12-08", last: "2026-12-10", missed: "2026-12-08,2026-12-10", credit: "2026-12-08,2026-12-10"},
		{name: "no notice: starting today", rules: noNotice, now: at("2026-12-01", 23, 0), s: tts,
			first: "2026-12-01", last: "2026-12-03", missed: "2026-12-01,2026-12-03", credit: "2026-12-01,2026-12-03"},
		{name: "minDays: one day", rules: DefaultStopRules, now: monday, s: tts, first: "2026-12-03", last: "2026-12-03", rule: "minDays", field: "lastDate"},
		{name: "maxDays: 92 days allowed", rules: DefaultStopRules, now: monday, s: tts, first: "2026-12-03", last: "2027-03-04"},
		{name: "maxDays: 93 days refused", rules: DefaultStopRules, now: monday, s: tts, first: "2026-12-03", last: "2027-03-05", rule: "maxDays", field: "lastDate"},
		{name: "order", rules: DefaultStopRules, now: monday, s: tts, first: "2026-12-05", last: "2026-12-03", rule: "order", field: "lastDate"},
		{name: "alignment: ends on a Monday", rules: DefaultStopRules, now: monday, s: tts, first: "2026-12-03", last: "2026-12-07",
			rule: "alignToDeliveryDays", field: "lastDate"},
		{name: "alignment: starts on a Friday", rules: DefaultStopRules, now: monday, s: tts, first: "2026-12-04", last: "2026-12-08",
			rule: "alignToDeliveryDays", field: "firstDate"},
		{name: "alignment off: Friday to Monday misses Saturday", rules: unaligned, now: monday, s: tts, first: "2026-12-04", last: "2026-12-07",
			missed: "2026-12-05", credit: "2026-12-05"},
		{name: "editions: only a closed Saturday in the range", rules: unaligned, now: monday,
			s: Schedule{Weekdays: tts.Weekdays, Calendar: NewCalendar(d("2026-12-05"))}, first: "2026-12-04", last: "2026-12-07",
			rule: "editions", field: "lastDate"},
		{name: "a holiday in the stop is not missed", rules: DefaultStopRules, now: monday,
			s: Schedule{Weekdays: tts.Weekdays, Calendar: NewCalendar(d("2026-12-26"))}, first: "2026-12-24", last: "2026-12-29",
			missed: "2026-12-24,2026-12-29", credit: "2026-12-24,2026-12-29"},
		{name: "binding: refused before its end", rules: DefaultStopRules, now: monday, s: tts, first: "2026-12-03", last: "2026-12-05",
			binding: &bound, rule: "binding", field: "firstDate"},
		{name: "binding: allowed from its end", rules: DefaultStopRules, now: monday, s: tts, first: "2027-01-02", last: "2027-01-05",
			binding: &bound, missed: "2027-01-02,2027-01-05", credit: "2027-01-02,2027-01-05"},
		{name: "binding: allowed by the rules", rules: bindingOK, now: monday, s: tts, first: "2026-12-03", last: "2026-12-05",
			binding: &bound, missed: "2026-12-03,2026-12-05", credit: "2026-12-03,2026-12-05"},
		{name: "digital only", rules: DefaultStopRules, now: monday, s: Schedule{}, first: "2026-12-03", last: "2026-12-05",
			rule: "digitalOnly", field: "subscriptionId"},
		{name: "no credit", rules: noCredit, now: monday, s: tts, first: "2026-12-03", last: "2026-12-05",
			missed: "2026-12-03,2026-12-05", credit: ""},
		{name: "yearly cap across new year", rules: capped, now: monday, s: tts, first: "2026-12-29", last: "2027-01-02",
			credited: map[int]int{2026: 2}, missed: "2026-12-29,2026-12-31,2027-01-02", credit: "2026-12-29,2027-01-02"},
		{name: "yearly cap reached", rules: capped, now: monday, s: tts, first: "2026-12-03", last: "2026-12-05",
			credited: map[int]int{2026: 3}, missed: "2026-12-03,2026-12-05", credit: ""},
	} {
		dec, err := c.rules.Check(StopRequest{First: d(c.first), Last: d(c.last)},
			StopContext{Now: c.now, Loc: oslo, Schedule: c.s, BindingEndsAt: c.binding, CreditedByYear: c.credited})
		if c.rule != "" {
			if err == nil || !strings.Contains(err.Error(), "rule "+c.rule) || !strings.Contains(err.Error(), c.field) {
				t.Errorf("%s: %v, want rule %s on %s", c.name, err, c.rule, c.field)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if c.missed == "" {
			continue
		}
		if got := join(dec.Missed); got != c.missed {
			t.Errorf("%s: missed %s, want %s", c.name, got, c.missed)
		}
		if got := join(dec.Credited); got != c.credit {
			t.Errorf("%s: credited %s, want %s", c.name, got, c.credit)
		}
	}
}

func join(ds []Date) string {
	s := make([]string, len(ds))
	for i, x := range ds {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

func TestStopRulesValidate(t *testing.T) {
	if err := DefaultStopRules.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		edit  func(*StopRules)
	}{
		{"minDays", func(r *StopRules) { r.MinDays = 0 }},
		{"maxDays", func(r *StopRules) { r.MaxDays = 2 }},
		{"maxDays", func(r *StopRules) { r.MaxDays = 367 }},
		{"cutoffHour", func(r *StopRules) { r.CutoffHour = 25 }},
		{"noticeDeliveryDays", func(r *StopRules) { r.NoticeDeliveryDays = -1 }},
		{"credit", func(r *StopRules) { r.Credit = "Half" }},
		{"maxCreditedPerYear", func(r *StopRules) { r.MaxCreditedPerYear = -1 }},
	} {
		r := DefaultStopRules
		c.edit(&r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v", c.field, err)
		}
	}
}

// The credit of missed editions is the period's price shared by its
// editions, rounded once: all of them give the whole price back.
func TestEditionCredit(t *testing.T) {
	for _, c := range []struct {
		price            int64
		editions, missed int
		want             int64
		err              bool
	}{
		{39900, 13, 13, 39900, false},
		{39900, 13, 1, 3069, false}, // 306.923… øre
		{39900, 13, 6, 18415, false},
		{39900, 13, 0, 0, false},
		{100, 8, 1, 13, false}, // 12.5 rounds half away from zero
		{39900, 0, 0, 0, true},
		{39900, 13, 14, 0, true},
		{39900, 13, -1, 0, true},
	} {
		got, err := EditionCredit(c.price, c.editions, c.missed)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%d × %d/%d = %d %v, want %d", c.price, c.missed, c.editions, got, err, c.want)
		}
	}
}
