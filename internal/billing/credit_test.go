package billing

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/validation"
)

func eur(t *testing.T) money.Currency {
	t.Helper()
	c, ok := money.LookupCurrency("EUR")
	if !ok {
		t.Fatal("no EUR")
	}
	return c
}

func productLine(t *testing.T, n int, kind string, gross int64, rate string) Line {
	t.Helper()
	p, err := catalog.ParsePercentText(rate)
	if err != nil {
		t.Fatal(err)
	}
	c := eur(t)
	net, vat := money.SplitGross(gross, p.Decimal())
	return Line{LineNumber: n, Kind: kind, Description: "line", Quantity: 1, VATRate: p,
		UnitPrice: catalog.NewAmount(gross, c), Net: catalog.NewAmount(net, c), VAT: catalog.NewAmount(vat, c), Gross: catalog.NewAmount(gross, c)}
}

func TestProrationDays(t *testing.T) {
	oslo, err := time.LoadLocation("Europe/Oslo")
	if err != nil {
		t.Fatal(err)
	}
	local := func(d, h int) time.Time { return time.Date(2027, 3, d, h, 0, 0, 0, oslo) }
	start, end := local(1, 0), local(31, 0) // 30 days, across the DST change of 28 March
	for _, tc := range []struct {
		name       string
		at         time.Time
		used, want int
	}{
		{"before start", local(1, 0).Add(-time.Hour), 0, 30},
		{"at start", start, 0, 30},
		{"an hour in: the first day is not charged", local(1, 1), 0, 30},
		{"after 14 days", local(15, 0), 14, 30},
		{"during day 15: billed to its midnight", local(15, 10), 14, 30},
		{"late on day 15", local(15, 23), 14, 30},
		{"on the DST day (23 hours)", local(28, 12), 27, 30},
		{"after DST change", local(29, 0), 28, 30},
		{"last day", local(30, 22), 29, 30},
		{"at end", end, 30, 30},
		{"after end", end.Add(time.Hour), 30, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			used, total := ProrationDays(start, end, tc.at, oslo)
			if used != tc.used || total != tc.want {
				t.Fatalf("ProrationDays = %d of %d, want %d of %d", used, total, tc.used, tc.want)
			}
		})
	}
}

// The worked examples of the billing issue.
func TestWorkedExamples(t *testing.T) {
	t.Run("paid 90 for 30 days, 14 used: allowance 48.00", func(t *testing.T) {
		lines := []Line{productLine(t, 1, LineProduct, 9000, "25")}
		got, err := PeriodAllowance(lines, nil, 14, 30)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Gross != 4800 || got[0].VATRate.String() != "25" {
			t.Fatalf("allowance = %+v, want 48.00 at 25%%", got)
		}
		// A credit note took 30.00 off before: only the 60.00 paid is prorated.
		got, err = PeriodAllowance(lines, map[int]int64{1: 3000}, 14, 30)
		if err != nil || len(got) != 1 || got[0].Gross != 3200 {
			t.Fatalf("allowance after a credit = %+v, %v; want 32.00", got, err)
		}
	})
	t.Run("invoiced 84 for 28 days, 9 used: invoice adjusted to 27.00", func(t *testing.T) {
		lines := []Line{productLine(t, 1, LineProduct, 8400, "25")}
		reqs, err := PeriodCredit(lines, nil, 9, 28)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := BuildCredit(eur(t), lines, nil, reqs)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Gross != 5700 || 8400-doc.Gross != 2700 {
			t.Fatalf("credit %d leaves %d, want 5700 leaving 2700", doc.Gross, 8400-doc.Gross)
		}
		if doc.Net+doc.VAT != doc.Gross || doc.VAT != 1140 {
			t.Fatalf("credit net %d vat %d gross %d", doc.Net, doc.VAT, doc.Gross)
		}
	})
}

func TestPeriodCredit(t *testing.T) {
	lines := []Line{
		productLine(t, 1, LineProduct, 10001, "25"),
		productLine(t, 2, LineAdditionalProduct, 4999, "12"),
		productLine(t, 3, LineCharge, 3500, "0"),
		productLine(t, 4, LineAllowance, -2000, "25"),
	}
	t.Run("never started credits the period lines whole, not charges", func(t *testing.T) {
		reqs, err := PeriodCredit(lines, nil, 0, 31)
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) != 2 || reqs[0] != (CreditRequest{1, 10001}) || reqs[1] != (CreditRequest{2, 4999}) {
			t.Fatalf("requests = %+v", reqs)
		}
	})
	t.Run("rounds per line half away from zero", func(t *testing.T) {
		// 10001 × 1/2 = 5000.5 → 5001; 4999 × 1/2 = 2499.5 → 2500.
		reqs, err := PeriodCredit(lines, nil, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if reqs[0].Gross != 5001 || reqs[1].Gross != 2500 {
			t.Fatalf("requests = %+v", reqs)
		}
	})
	t.Run("capped by earlier credits", func(t *testing.T) {
		reqs, err := PeriodCredit(lines, map[int]int64{1: 9000, 2: 4999}, 0, 30)
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) != 1 || reqs[0] != (CreditRequest{1, 1001}) {
			t.Fatalf("requests = %+v", reqs)
		}
	})
	t.Run("all used credits nothing", func(t *testing.T) {
		reqs, err := PeriodCredit(lines, nil, 30, 30)
		if err != nil || len(reqs) != 0 {
			t.Fatalf("requests = %+v, %v", reqs, err)
		}
	})
}

func TestBuildCreditRejects(t *testing.T) {
	lines := []Line{productLine(t, 1, LineProduct, 9000, "25"), productLine(t, 2, LineAllowance, -1000, "25")}
	for _, tc := range []struct {
		name  string
		reqs  []CreditRequest
		field string
	}{
		{"unknown line", []CreditRequest{{Line: 7, Gross: 1}}, "lines[0].lineNumber"},
		{"allowance line", []CreditRequest{{Line: 2, Gross: 100}}, "lines[0].amount"},
		{"too much", []CreditRequest{{Line: 1, Gross: 9001}}, "lines[0].amount"},
		{"zero", []CreditRequest{{Line: 1, Gross: 0}}, "lines[0].amount"},
		{"twice", []CreditRequest{{Line: 1, Gross: 1}, {Line: 1, Gross: 1}}, "lines[1].lineNumber"},
		{"nothing", nil, "lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildCredit(eur(t), lines, nil, tc.reqs)
			var verrs validation.Errors
			if !errors.As(err, &verrs) || verrs[0].Field != tc.field {
				t.Fatalf("err = %v, want a validation error on %s", err, tc.field)
			}
		})
	}
}

// GivenBack counts a cancellation's unused-days allowance against the
// invoice's lines at its VAT rate, period lines first and each up to what
// is left, so Creditable leaves exactly the rest; what finds no line at its
// rate still shrinks the rest.
func TestGivenBack(t *testing.T) {
	pct := func(s string) catalog.Percent {
		p, err := catalog.ParsePercentText(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	lines := []Line{
		productLine(t, 1, LineCharge, 1000, "25"),
		productLine(t, 2, LineProduct, 6000, "25"),
		productLine(t, 3, LineAdditionalProduct, 3000, "25"),
		productLine(t, 4, LineProduct, 5000, "0"),
		productLine(t, 5, LineAllowance, -500, "25"),
	}
	for _, tc := range []struct {
		name       string
		credited   map[int]int64
		allowances []RateAmount
		want       map[int]int64 // Creditable afterwards
	}{
		{"the worked example: 90.00, 48.00 back", nil, []RateAmount{{pct("25"), 4800}},
			map[int]int64{1: 1000, 2: 1200, 3: 3000, 4: 5000}},
		{"past the first period line into the next", map[int]int64{2: 1000}, []RateAmount{{pct("25"), 6000}},
			map[int]int64{1: 1000, 3: 2000, 4: 5000}},
		{"per rate", nil, []RateAmount{{pct("25"), 8000}, {pct("0"), 2500}},
			map[int]int64{1: 1000, 3: 1000, 4: 2500}},
		{"then the other lines of the rate", nil, []RateAmount{{pct("25"), 9500}},
			map[int]int64{1: 500, 4: 5000}},
		{"no line at the rate", nil, []RateAmount{{pct("12"), 1500}},
			map[int]int64{2: 5500, 3: 3000, 4: 5000}},
		{"more than the invoice", nil, []RateAmount{{pct("25"), 20000}}, map[int]int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Creditable(lines, GivenBack(lines, tc.credited, tc.allowances))
			if !maps.Equal(got, tc.want) {
				t.Fatalf("creditable %v, want %v", got, tc.want)
			}
		})
	}
	// The credit notes' map is not changed.
	credited := map[int]int64{2: 100}
	GivenBack(lines, credited, []RateAmount{{pct("25"), 4800}})
	if len(credited) != 1 || credited[2] != 100 {
		t.Fatalf("credited changed: %v", credited)
	}
}
