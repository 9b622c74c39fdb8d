package billing

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
)

func cur(t *testing.T, code string) money.Currency {
	t.Helper()
	c, ok := money.LookupCurrency(code)
	if !ok {
		t.Fatalf("no currency %s", code)
	}
	return c
}

func pkg(c money.Currency, units int, lines ...catalog.Line) catalog.SubscriptionPackage {
	p := catalog.SubscriptionPackage{Currency: c.Code, Units: units, Products: lines}
	return p
}

func line(c money.Currency, name string, rate int64, full, amount int64) catalog.Line {
	return catalog.Line{ProductID: "p-" + name, Name: name, VATRate: catalog.PercentOf(rate),
		FullAmount: catalog.NewAmount(full, c), Amount: catalog.NewAmount(amount, c)}
}

var (
	start = time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC)
	end   = time.Date(2027, 2, 28, 23, 0, 0, 0, time.UTC)
)

// TestRounding checks per-line VAT, rounded half away from zero, in the
// four Nordic currencies, with prices including and excluding VAT.
func TestRounding(t *testing.T) {
	cases := []struct {
		name      string
		currency  string
		inclVAT   bool
		rate      int64
		price     int64 // line price in minor units (gross if inclVAT)
		net, vat  int64
		wantGross int64
	}{
		// 199.00 incl. 25 %: VAT = 199 × 25/125 = 39.80 exactly.
		{"NOK incl 25", "NOK", true, 25, 19900, 15920, 3980, 19900},
		// 99.99 incl. 25 %: VAT = 19.998 → 20.00; net 79.99.
		{"NOK incl 25 rounds up", "NOK", true, 25, 9999, 7999, 2000, 9999},
		// 149.00 incl. 12 %: VAT = 149 × 12/112 = 15.9642… → 15.96.
		{"SEK incl 12", "SEK", true, 12, 14900, 13304, 1596, 14900},
		// 0 %: all net.
		{"DKK incl 0", "DKK", true, 0, 12345, 12345, 0, 12345},
		// 10.02 net + 25 % = 2.505 → 2.51 (half away from zero).
		{"EUR excl 25 half up", "EUR", false, 25, 1002, 1002, 251, 1253},
		// 9.99 net + 12 % = 1.1988 → 1.20.
		{"SEK excl 12", "SEK", false, 12, 999, 999, 120, 1119},
		// 0.04 net + 12 % = 0.0048 → 0.00.
		{"NOK excl 12 tiny", "NOK", false, 12, 4, 4, 0, 4},
		{"DKK excl 25", "DKK", false, 25, 7990, 7990, 1998, 9988},
		{"EUR excl 0", "EUR", false, 0, 1234, 1234, 0, 1234},
		// 0.02 incl 25 %: VAT = 0.004 → 0.00.
		{"EUR incl 25 tiny", "EUR", true, 25, 2, 2, 0, 2},
		// 0.05 incl. 25 %: VAT = 0.01 exactly.
		{"NOK incl 25 small", "NOK", true, 25, 5, 4, 1, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cur(t, tc.currency)
			doc, err := Build(Input{Currency: c, PricesIncludeVAT: tc.inclVAT, Package: pkg(c, 1, line(c, "A", tc.rate, tc.price, tc.price)),
				PeriodStart: start, PeriodEnd: end})
			if err != nil {
				t.Fatal(err)
			}
			l := doc.Lines[0]
			if l.Net.Minor != tc.net || l.VAT.Minor != tc.vat || l.Gross.Minor != tc.wantGross {
				t.Fatalf("net/vat/gross = %d/%d/%d, want %d/%d/%d", l.Net.Minor, l.VAT.Minor, l.Gross.Minor, tc.net, tc.vat, tc.wantGross)
			}
			if l.Net.Minor+l.VAT.Minor != l.Gross.Minor || doc.Gross != l.Gross.Minor || doc.Net != l.Net.Minor || doc.VAT != l.VAT.Minor {
				t.Fatalf("line and totals disagree: %+v %+v", l, doc)
			}
			if l.Net.Digits != c.Digits || l.UnitPrice.Minor != tc.price {
				t.Fatalf("amount form: %+v", l)
			}
		})
	}
}

// TestLinesAndVATTotals: several products at different rates, rounded per
// line; totals are sums of lines; VAT totals group by rate, highest first.
func TestLinesAndVATTotals(t *testing.T) {
	c := cur(t, "NOK")
	p := pkg(c, 2, line(c, "Digital", 0, 20000, 18000), line(c, "Papir", 12, 13333, 12000))
	p.AdditionalProducts = []catalog.Line{line(c, "Magasin", 25, 4900, 4410)}
	doc, err := Build(Input{Currency: c, PricesIncludeVAT: true, Package: p, PeriodStart: start, PeriodEnd: end})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Lines) != 3 {
		t.Fatalf("lines: %+v", doc.Lines)
	}
	d := doc.Lines[0]
	if d.Quantity != 2 || d.UnitPrice.Minor != 10000 || d.Discount.Minor != 2000 || d.Kind != LineProduct || *d.PeriodStart != start {
		t.Fatalf("digital line: %+v", d)
	}
	// 133.33 does not divide by 2 units: quantity 1 at the full amount.
	if pl := doc.Lines[1]; pl.Quantity != 1 || pl.UnitPrice.Minor != 13333 || pl.Discount.Minor != 1333 {
		t.Fatalf("paper line: %+v", pl)
	}
	// 120.00 incl. 12 %: VAT 12.857… → 12.86. 44.10 incl. 25 %: 8.82.
	if doc.Lines[1].VAT.Minor != 1286 || doc.Lines[2].VAT.Minor != 882 || doc.Lines[2].Kind != LineAdditionalProduct {
		t.Fatalf("vat: %+v", doc.Lines)
	}
	if doc.Gross != 18000+12000+4410 || doc.VAT != 1286+882 || doc.Net != doc.Gross-doc.VAT {
		t.Fatalf("totals: %+v", doc)
	}
	rates := []string{}
	for _, v := range doc.VATTotals {
		rates = append(rates, v.VATRate.String())
		if v.Net.Minor+v.VAT.Minor != v.Gross.Minor {
			t.Fatalf("vat total does not add up: %+v", v)
		}
	}
	if len(rates) != 3 || rates[0] != "25" || rates[1] != "12" || rates[2] != "0" {
		t.Fatalf("vat totals order: %v", rates)
	}
}

// TestChargesAndAllowances: charges are billed as lines; allowances reduce
// the total but never below zero, and report what they used.
func TestChargesAndAllowances(t *testing.T) {
	c := cur(t, "NOK")
	p := pkg(c, 1, line(c, "Digital", 0, 10000, 10000))
	items := []Item{
		{ID: "c1", Kind: ItemCharge, Description: "Fee", Remaining: 5000, VATRate: catalog.PercentOf(25)},
		{ID: "a1", Kind: ItemAllowance, Description: "Goodwill", Remaining: 12000, VATRate: catalog.PercentOf(0)},
		{ID: "a2", Kind: ItemAllowance, Description: "More", Remaining: 9000, VATRate: catalog.PercentOf(0)},
	}
	doc, err := Build(Input{Currency: c, PricesIncludeVAT: false, Package: p, PeriodStart: start, PeriodEnd: end, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	// 100.00 net (0 %) + charge 50.00 gross at 25 % (40.00 + 10.00) = 150.00;
	// a1 applies 120.00, a2 the remaining 30.00; total 0.
	if doc.Gross != 0 || len(doc.Lines) != 4 {
		t.Fatalf("doc: %+v", doc)
	}
	ch := doc.Lines[1]
	if ch.Kind != LineCharge || ch.Net.Minor != 4000 || ch.VAT.Minor != 1000 || ch.Gross.Minor != 5000 || ch.UnitPrice.Minor != 4000 || ch.PeriodStart != nil {
		t.Fatalf("charge line: %+v", ch)
	}
	if doc.Lines[2].Gross.Minor != -12000 || doc.Lines[3].Gross.Minor != -3000 || doc.Lines[3].Kind != LineAllowance {
		t.Fatalf("allowance lines: %+v", doc.Lines[2:])
	}
	want := []Use{{"c1", ItemCharge, 5000}, {"a1", ItemAllowance, 12000}, {"a2", ItemAllowance, 3000}}
	if len(doc.Uses) != len(want) {
		t.Fatalf("uses: %+v", doc.Uses)
	}
	for i := range want {
		if doc.Uses[i] != want[i] {
			t.Fatalf("uses: %+v, want %+v", doc.Uses, want)
		}
	}
	// With nothing to reduce, allowances are not used at all.
	free := pkg(c, 1, line(c, "Free", 0, 0, 0))
	doc, _ = Build(Input{Currency: c, Package: free, PeriodStart: start, PeriodEnd: end, Items: items[1:]})
	if doc.Gross != 0 || len(doc.Uses) != 0 || len(doc.Lines) != 1 {
		t.Fatalf("free: %+v", doc)
	}
}

func TestDueAt(t *testing.T) {
	oslo, _ := time.LoadLocation("Europe/Oslo")
	issue := time.Date(2027, 1, 18, 23, 0, 0, 0, time.UTC)
	periodStart := time.Date(2027, 2, 1, 23, 0, 0, 0, time.UTC)
	if got := DueAt(issue, periodStart, 14, oslo); !got.Equal(periodStart) {
		t.Fatalf("renewal due %s, want the period start", got)
	}
	// Period already begun: payment terms from the issue time, in local
	// calendar days (across the DST change on 28 March 2027).
	issue = time.Date(2027, 3, 20, 10, 0, 0, 0, time.UTC)
	got := DueAt(issue, time.Date(2027, 3, 19, 23, 0, 0, 0, time.UTC), 14, oslo)
	if want := time.Date(2027, 4, 3, 9, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("due %s, want %s", got, want)
	}
	if LocalDate(periodStart, oslo) != "2027-02-02" {
		t.Fatalf("local date %s", LocalDate(periodStart, oslo))
	}
}

func TestStatus(t *testing.T) {
	due := time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		stored string
		now    time.Time
		want   string
	}{
		{InvoiceIssued, due, InvoiceIssued},
		{InvoiceIssued, due.Add(time.Second), InvoiceOverdue},
		{InvoicePartiallyPaid, due.Add(time.Second), InvoiceOverdue},
		{InvoicePaid, due.Add(time.Hour), InvoicePaid},
		{InvoiceCredited, due.Add(time.Hour), InvoiceCredited},
		{DemandOpen, due.Add(time.Hour), DemandOverdue},
		{DemandOpen, due.Add(-time.Hour), DemandOpen},
	} {
		if got := Status(tc.stored, due, tc.now); got != tc.want {
			t.Errorf("Status(%s, %s) = %s, want %s", tc.stored, tc.now, got, tc.want)
		}
	}
}
